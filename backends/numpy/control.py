"""Control flow and debugging ops in the NumPy backend: ``scf.for``/``if``/``while``,
``tile.print``, ``tile.assert``, ``tile.check_bounds``, and which kernels must run one program at a time.

A region op's builder compiles its nested blocks once with ``Kernel.compile_block`` (slots
are numbered over the whole function); its impl binds the block arguments in the batch's
environment and runs the steps with ``Batch.run``. ``scf.yield`` and ``scf.condition``
hand their operands to the region op through ``batch.yielded``.

A batch takes each control decision (loop bounds, ``if`` and ``while`` conditions) once
for all its programs where they agree. Where they do not (a trip count from the program
id, as in causal attention), the region op splits the batch: each set of programs that
decide alike runs the op as a batch of its own (``_split``: the values the op's regions
use, taken for those programs), and the op's results are put together again; a ``while``
lets the programs that leave first go, and goes on with the rest. The programs of a
batch then run a region in sets, not in program order: where two of them store to one
element, which one wins is as undefined as on a GPU.

``needs_serial`` still runs one program at a time a kernel whose split could not be put
together, found with a small dependence analysis: a value *varies* between programs when
it comes from ``tile.program_id``, from memory (loads, atomics) or from a varying value,
including through loop-carried and yielded values; constants, scalar arguments,
``tile.num_programs`` and ranges do not vary. A region op deciding on a varying value
and giving pointers (each set's may point into another argument) or a kernel with
shared-memory stages (not values of one program axis) runs serially.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, SSAValue

from backends.numpy.kernel import (
    KERNEL_BUILDERS,
    SERIAL_CHECKS,
    Batch,
    Impl,
    Kernel,
    Lazy,
    Ptr,
    np_dtype,
    shape,
)
from compiler.context import source_loc
from compiler.errors import DeviceAssertionError, OutOfBoundsError, UnsupportedError
from dialects.tile import PtrType, element_type


def _decision(x: np.ndarray) -> Any:
    """The one value a control operand has in every program of the batch."""
    if not _uniform(x):
        raise AssertionError("a control decision differs between batched programs")
    return x[0].item()


def _uniform(x: np.ndarray) -> bool:
    return len(x) == 1 or bool((x == x[0]).all())


def _bind(batch, slots: list[int], values: tuple) -> None:
    for slot, value in zip(slots, values, strict=True):
        batch.env[slot] = value


def _slots(kernel: Kernel, block: Block) -> list[int]:
    return [kernel.slot(a) for a in block.args]


# -- programs that decide apart --------------------------------------------------------

def _free_slots(kernel: Kernel, op: Operation) -> tuple[int, ...]:
    """The slots of the values ``op``'s regions use and do not define."""
    inner = {a for o in op.walk() for r in o.regions for b in r.blocks for a in b.args}
    inner.update(r for o in op.walk() if o is not op for r in o.results)
    return tuple(sorted({kernel.slot(v) for o in op.walk() if o is not op
                         for v in o.operands if v not in inner}))


def _take(value: Any, idx: np.ndarray) -> Any:
    """``value`` for the programs ``idx`` of its batch (a value of every program: itself)."""
    if isinstance(value, Lazy):
        value = value.dense()
    if isinstance(value, Ptr):
        return value if value.shape[0] == 1 else Ptr(value.buf, value.off[idx])
    if isinstance(value, np.ndarray) and len(value) > 1:
        return value[idx]
    return value


def _subset(batch: Batch, idx: np.ndarray, free: tuple[int, ...]) -> Batch:
    """A batch of the programs ``idx`` of ``batch``, holding the values ``free``."""
    env: list[Any] = [None] * len(batch.env)
    for slot in free:
        env[slot] = _take(batch.env[slot], idx)
    return Batch(batch.params, batch.bufs, batch.pid[:, idx], batch.num_programs, env,
                 batch.pool, batch.shared)


def _merge(parts: list[tuple[np.ndarray, tuple]], programs: int) -> tuple:
    """The results of a batch from its sets' ``(program indices, results)``."""
    merged = []
    for j, first in enumerate(parts[0][1]):
        pieces = [(idx, r[j].off if isinstance(first, Ptr) else
                   r[j].dense() if isinstance(r[j], Lazy) else r[j]) for idx, r in parts]
        whole = np.empty((programs, *pieces[0][1].shape[1:]), pieces[0][1].dtype)
        for idx, piece in pieces:
            whole[idx] = piece
        merged.append(Ptr(first.buf, whole) if isinstance(first, Ptr) else whole)
    return tuple(merged)


def _split(batch: Batch, free: tuple[int, ...], decisions: tuple[np.ndarray, ...],
           operands: tuple, run: Callable[[Batch, tuple], tuple]) -> tuple:
    """``run(sub_batch, operands)`` once for each set of programs whose ``decisions`` are
    equal, on a batch of those programs alone; its results put together."""
    programs = batch.pid.shape[1]
    keys = np.stack([np.broadcast_to(d, (programs,)) for d in decisions], axis=1)
    _, group = np.unique(keys, axis=0, return_inverse=True)
    parts = []
    for g in range(int(group.max()) + 1):
        idx = np.flatnonzero(group.reshape(-1) == g)
        sub = _subset(batch, idx, free)
        parts.append((idx, run(sub, tuple(_take(x, idx) for x in operands))))
        sub.release_all()
    return _merge(parts, programs)


# -- region ops -------------------------------------------------------------------------

def _for(op: scf.ForOp, kernel: Kernel) -> Impl:
    body = op.body.block
    steps = kernel.compile_block(body)
    iv, *carried = _slots(kernel, body)
    dt = np_dtype(op.lb.type)
    free = _free_slots(kernel, op)

    def impl(batch, lb, ub, step, *values) -> tuple:
        if not (_uniform(lb) and _uniform(ub) and _uniform(step)):
            return _split(batch, free, (lb, ub, step), (lb, ub, step, *values),
                          lambda sub, xs: loop(sub, *xs))
        return loop(batch, lb, ub, step, *values)

    def loop(batch, lb, ub, step, *values) -> tuple:
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
    free = _free_slots(kernel, op)

    def impl(batch, cond) -> tuple:
        if not _uniform(cond):
            return _split(batch, free, (cond,), (cond,), lambda sub, xs: impl(sub, *xs))
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
    free = _free_slots(kernel, op)

    def impl(batch, *values) -> tuple:
        """Where the programs decide apart, those that leave keep their values, and the
        loop goes on with a batch of the others."""
        done: list[tuple[np.ndarray, tuple]] = []
        running = np.arange(batch.pid.shape[1])  # the programs of ``now`` in ``batch``
        now = batch
        while True:
            _bind(now, before_slots, values)
            now.run(test)
            cond, *values = now.yielded
            if not _uniform(cond):
                stay = np.flatnonzero(np.broadcast_to(cond, running.shape))
                leave = np.flatnonzero(~np.broadcast_to(cond, running.shape))
                done.append((running[leave], tuple(_take(v, leave) for v in values)))
                values = [_take(v, stay) for v in values]
                running, parent = running[stay], now
                now = _subset(parent, stay, free)
                if parent is not batch:
                    parent.release_all()
            elif not _decision(cond):
                break
            _bind(now, after_slots, tuple(values))
            now.run(body)
            values = now.yielded
        if not done:
            return tuple(values)
        done.append((running, tuple(values)))
        if now is not batch:
            now.release_all()
        return _merge(done, batch.pid.shape[1])
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
    """The operands a region op decides on."""
    if isinstance(op, scf.ForOp):
        return [op.lb, op.ub, op.step]
    if isinstance(op, scf.IfOp):
        return [op.cond]
    if isinstance(op, scf.WhileOp):
        cond = op.before_region.block.last_op
        return [cond.condition] if isinstance(cond, scf.ConditionOp) else []
    return []


def _gives_pointers(op: Operation) -> bool:
    return any(isinstance(element_type(r.type), PtrType) for r in op.results)


def needs_serial(fn: func.FuncOp) -> bool:
    """Whether ``fn`` decides on a value that may differ between programs where a split
    batch could not be put together (the module docstring)."""
    splits = [op for op in fn.walk() if _decisions(op)]
    if not splits:
        return False
    varying = varying_values(fn)
    apart = [op for op in splits if any(v in varying for v in _decisions(op))]
    return bool(apart) and (any(_gives_pointers(op) for op in apart) or
                            any(op.name == "tile.shared_alloc" for op in fn.walk()))


SERIAL_CHECKS.append(needs_serial)
