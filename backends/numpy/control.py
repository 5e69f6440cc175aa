"""Control flow and debugging ops in the NumPy backend: ``scf.for``/``if``/``while``,
``tile.print``, ``tile.assert``, ``tile.check_bounds``, and which kernels must run one program at a time.

A region op's builder compiles its nested blocks once with ``Kernel.compile_block`` (slots
are numbered over the whole function); its impl binds the block arguments in the batch's
environment and runs the steps with ``Batch.run``. ``scf.yield`` and ``scf.condition``
hand their operands to the region op through ``batch.yielded``.

A batch takes each control decision (loop bounds, ``if`` and ``while`` conditions) once
for all its programs, which is right only when the decision is the same in every
program. ``needs_serial`` decides that per kernel with a small dependence analysis: a
value *varies* between programs when it comes from ``tile.program_id``, from memory
(loads, atomics) or from a varying value, including through loop-carried and yielded
values; constants, scalar arguments, ``tile.num_programs`` and ranges do not vary. A
kernel with any control decision on a varying value runs one program at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, SSAValue

from backends.numpy.kernel import KERNEL_BUILDERS, SERIAL_CHECKS, Impl, Kernel, np_dtype, shape
from compiler.context import source_loc
from compiler.errors import DeviceAssertionError, OutOfBoundsError, UnsupportedError


def _decision(x: np.ndarray) -> Any:
    """The one value a control operand has in every program of the batch."""
    if len(x) > 1 and not (x == x[0]).all():
        raise AssertionError("a control decision differs between batched programs")
    return x[0].item()


def _bind(batch, slots: list[int], values: tuple) -> None:
    for slot, value in zip(slots, values, strict=True):
        batch.env[slot] = value


def _slots(kernel: Kernel, block: Block) -> list[int]:
    return [kernel.slot(a) for a in block.args]


# -- region ops -------------------------------------------------------------------------

def _for(op: scf.ForOp, kernel: Kernel) -> Impl:
    body = op.body.block
    steps = kernel.compile_block(body)
    iv, *carried = _slots(kernel, body)
    dt = np_dtype(op.lb.type)

    def impl(batch, lb, ub, step, *values) -> tuple:
        stride = _decision(step)
        if stride <= 0:  # scf.for counts up; the GPU would loop forever or not at all
            raise UnsupportedError(f"a loop step must be positive at run time, got {stride}",
                                   source_loc(op))
        for i in range(_decision(lb), _decision(ub), stride):
            batch.env[iv] = np.full(1, i, dt)
            _bind(batch, carried, values)
            batch.run(steps)
            values = batch.yielded
        return tuple(values)
    return impl


def _if(op: scf.IfOp, kernel: Kernel) -> Impl:
    then = kernel.compile_block(op.true_region.block)
    other = kernel.compile_block(op.false_region.block) if op.false_region.blocks else None

    def impl(batch, cond) -> tuple:
        steps = then if _decision(cond) else other
        if steps is None:
            return ()
        batch.run(steps)
        return tuple(batch.yielded)
    return impl


def _while(op: scf.WhileOp, kernel: Kernel) -> Impl:
    before, after = op.before_region.block, op.after_region.block
    test, body = kernel.compile_block(before), kernel.compile_block(after)
    before_slots, after_slots = _slots(kernel, before), _slots(kernel, after)

    def impl(batch, *values) -> tuple:
        while True:
            _bind(batch, before_slots, values)
            batch.run(test)
            cond, *values = batch.yielded
            if not _decision(cond):
                return tuple(values)
            _bind(batch, after_slots, tuple(values))
            batch.run(body)
            values = batch.yielded
    return impl


def _terminator(op: Operation, kernel: Kernel) -> Impl:
    def impl(batch, *values) -> tuple:
        batch.yielded = values
        return ()
    return impl


# -- debugging ops ----------------------------------------------------------------------

def _per_program(values: tuple[np.ndarray, ...], programs: int,
                 tile: tuple[int, ...]) -> list[np.ndarray]:
    """Each value as (programs, *tile); a scalar repeats over the tile."""
    out = []
    for v in values:
        v = v.reshape(len(v), *v.shape[1:], *(1,) * (len(tile) + 1 - v.ndim))
        out.append(np.broadcast_to(v, (programs, *tile)))
    return out


def _text(x: Any) -> str:
    return str(int(x)) if isinstance(x, np.bool_ | bool) else str(x)


def _print(op: Operation, kernel: Kernel) -> Impl:
    """One line per program and element: ``pid (x, y, z) idx (i, j) <prefix> <values>``."""
    prefix = op.prefix.data  # pyright: ignore[reportAttributeAccessIssue]
    prefix = prefix if not prefix or prefix[-1].isspace() else prefix + " "
    tile = max((shape(a.type) for a in op.operands), key=len, default=())

    def impl(batch, *values) -> tuple:
        programs = batch.pid.shape[1]
        per = _per_program(values, programs, tile)
        lines = []
        for p in range(programs):
            pid = ", ".join(str(int(a)) for a in batch.pid[:, p])
            for idx in np.ndindex(*tile):
                text = ", ".join(_text(v[(p, *idx)]) for v in per)
                lines.append(f"pid ({pid}) idx ({', '.join(map(str, idx))}) {prefix}{text}")
        print("\n".join(lines), flush=True)
        return ()
    return impl


def _assert(op: Operation, kernel: Kernel) -> Impl:
    message = op.message.data  # pyright: ignore[reportAttributeAccessIssue]
    loc = source_loc(op)

    def impl(batch, cond: np.ndarray) -> tuple:
        if cond.all():
            return ()
        programs = batch.pid.shape[1]
        (ok,) = _per_program((cond,), programs, cond.shape[1:])
        flat = ok.reshape(programs, -1)
        p = int(np.argmin(flat.all(axis=1)))  # the first failing program of the batch
        idx = np.unravel_index(int(np.argmin(flat[p])), cond.shape[1:])
        pid = tuple(int(a) for a in batch.pid[:, p])
        where = f" at index {tuple(map(int, idx))}" if cond.ndim > 1 else ""
        raise DeviceAssertionError(f"device assertion failed in program {pid}{where}"
                                   + (f": {message}" if message else ""), loc)
    return impl


def _check_bounds(op: Operation, kernel: Kernel) -> Impl:
    """The report the NumPy backend gives for an out-of-bounds ``tile.load``/``store``."""
    what = f"{op.access.data} of {op.array.data}"  # pyright: ignore[reportAttributeAccessIssue]
    loc = source_loc(op)

    def impl(batch, offset: np.ndarray, extent: np.ndarray, *mask: np.ndarray) -> tuple:
        programs = batch.pid.shape[1]
        off, n, *on = _per_program((offset, extent, *mask), programs, offset.shape[1:])
        bad = (off < 0) | (off >= n)
        if on:
            bad &= on[0]
        if not bad.any():
            return ()
        k = int(np.argmax(bad))  # the first bad element, program-major
        p = k // max(bad[0].size, 1)
        pid = tuple(int(a) for a in batch.pid[:, p])
        raise OutOfBoundsError(f"out-of-bounds {what}[{int(off.flat[k])}] (array length "
                               f"{int(n.flat[k])}) in program {pid}", loc)
    return impl


KERNEL_BUILDERS.update({
    "scf.for": _for, "scf.if": _if, "scf.while": _while,
    "scf.yield": _terminator, "scf.condition": _terminator,
    "tile.print": _print, "tile.assert": _assert, "tile.check_bounds": _check_bounds,
})


# -- which kernels run one program at a time -------------------------------------------

def _is_source(op: Operation) -> bool:
    """Ops whose results may differ between programs whatever their operands."""
    return op.name == "tile.program_id" or op.name.startswith("tile.atomic") or \
        "load" in op.name


def _flows(op: Operation) -> list[tuple[list[SSAValue], list[SSAValue]]]:
    """(sources, targets) of a region op: where the values of its block arguments and
    results come from, beside its own operands."""
    if isinstance(op, scf.ForOp):
        body = op.body.block
        yielded = list(body.last_op.operands) if body.last_op else []
        return [([op.lb, op.ub, op.step], [body.args[0]]),
                *(([init, y], [arg, res]) for init, y, arg, res in
                  zip(op.iter_args, yielded, body.args[1:], op.results, strict=True))]
    if isinstance(op, scf.WhileOp):
        before, after = op.before_region.block, op.after_region.block
        cond, yielded = before.last_op, after.last_op
        assert cond is not None and yielded is not None
        return [*(([init, y], [arg]) for init, y, arg in
                  zip(op.arguments, yielded.operands, before.args, strict=True)),
                *(([cond.operands[0], c], [arg, res]) for c, arg, res in
                  zip(cond.operands[1:], after.args, op.results, strict=True))]
    if isinstance(op, scf.IfOp):
        ends = [r.block.last_op for r in op.regions if r.blocks]
        return [([op.cond, *(e.operands[i] for e in ends if e is not None)], [res])
                for i, res in enumerate(op.results)]
    return []


def varying_values(fn: func.FuncOp) -> set[SSAValue]:
    """The values of ``fn`` that may differ between programs (a fixed point: loops carry
    variation from their yields back to their arguments)."""
    varying: set[SSAValue] = set()
    size = -1
    while size != len(varying):
        size = len(varying)
        for op in fn.walk():
            if op is fn:
                continue
            if _is_source(op) or any(v in varying for v in op.operands):
                varying.update(op.results)
            for sources, targets in _flows(op):
                if any(v in varying for v in sources):
                    varying.update(targets)
    return varying


def _decisions(op: Operation) -> list[SSAValue]:
    """The operands a control op decides on."""
    if isinstance(op, scf.ForOp):
        return [op.lb, op.ub, op.step]
    if isinstance(op, scf.IfOp):
        return [op.cond]
    if isinstance(op, scf.ConditionOp):
        return [op.condition]
    return []


def needs_serial(fn: func.FuncOp) -> bool:
    """Whether some control decision of ``fn`` may differ between programs."""
    decisions = [v for op in fn.walk() for v in _decisions(op)]
    if not decisions:
        return False
    varying = varying_values(fn)
    return any(v in varying for v in decisions)


SERIAL_CHECKS.append(needs_serial)
