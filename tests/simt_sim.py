"""A NumPy simulator of straight-line SIMT IR: all threads of one program at once.

A value is an array ``(1 or threads, lanes)`` (a scalar has one lane). Besides computing,
it checks what the IR promises: each access's ``vec`` (consecutive, aligned indices, one
mask value per group), global accesses in bounds, replicated threads storing equal
values, and shared memory used with barriers between writes and reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)

from dialects.tile import element_type


def np_type(t) -> np.dtype:
    e = element_type(t)
    if isinstance(e, IntegerType):
        return np.dtype({1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32,
                         64: np.int64}[e.width.data])
    return np.dtype(np.float16 if isinstance(e, Float16Type) else
                    np.float32 if isinstance(e, Float32Type) else np.float64)


def _c_div(a, b):
    return np.trunc(a.astype(np.float64) / b).astype(np.int64)


_INT = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.shli": np.left_shift, "arith.shrsi": np.right_shift,
    "arith.shrui": lambda a, b: (a.astype(np.int64) & 0xFFFFFFFF) >> b,
    "arith.divsi": _c_div, "arith.remsi": lambda a, b: a - b * _c_div(a, b),
    "arith.divui": lambda a, b: (a & 0xFFFFFFFF) // (b & 0xFFFFFFFF),
    "arith.remui": lambda a, b: (a & 0xFFFFFFFF) % (b & 0xFFFFFFFF),
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
}
_FLOAT = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
}
_CMP = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
        "sgt": np.greater, "sge": np.greater_equal, "olt": np.less, "ole": np.less_equal,
        "ogt": np.greater, "oge": np.greater_equal, "oeq": np.equal, "une": np.not_equal}


class Program:
    """One program of a lowered kernel; ``run`` executes it on the arrays in place."""

    def __init__(self, module: ModuleOp, arrays: dict, scalars: dict,
                 pid: tuple[int, ...] = (0,), grid: tuple[int, ...] = (1,)):
        self.f = next(op for op in module.walk() if isinstance(op, func.FuncOp))
        self.threads = 32 * self.f.attributes["simt.num_warps"].value.data
        self.pid = tuple(pid) + (0,) * (3 - len(pid))
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.env = {}
        for arg in self.f.body.blocks[0].args:
            name = arg.name_hint
            self.env[arg] = arrays[name] if name in arrays else np.array([[scalars[name]]])
        # buffer value -> [array, elements written, elements read] since the last barrier
        self.shared: dict = {}

    def run(self) -> None:
        self.block(self.f.body.blocks[0])

    def block(self, block) -> list:
        """Run a block's ops; the operands of its terminator (scf.yield)."""
        for op in block.ops:
            if op.name in ("func.return", "scf.yield"):
                return [self.env[v] for v in op.operands]
            self.reading(op)
            handler = self.HANDLERS.get(op.name)
            ins = [self.env.get(v) for v in op.operands]
            if handler is not None:
                vals = handler(self, op, *ins)
            elif op.name in _INT:
                vals = _INT[op.name](*(a.astype(np.int64) for a in ins))
            elif op.name in _FLOAT:
                vals = _FLOAT[op.name](*ins)
            else:
                raise AssertionError(f"the simulator lacks {op.name}")
            if not op.results:
                continue
            vals = vals if isinstance(vals, list) else [vals]
            for r, val in zip(op.results, vals, strict=True):
                self.env[r] = val if isinstance(r.type, MemRefType) else val.astype(
                    np_type(r.type))
        return []

    def reading(self, op) -> None:
        """Called before ``op`` runs: a simulator of asynchronous ops checks its operands."""

    def _for(self, op, lb, ub, step, *init):
        """scf.for with bounds the same in every thread (scalars of the program)."""
        carried = list(init)
        body = op.body.block
        for i in range(int(lb.item()), int(ub.item()), int(step.item())):
            self.env.update(zip(body.args, [np.array([[i]]), *carried], strict=True))
            carried = self.block(body)
        return carried

    def _if(self, op, cond):
        """scf.if on a condition the same in every thread (uniform, as the kernels' are)."""
        assert np.all(cond == cond.flat[0]), "scf.if on a condition that differs by thread"
        region = op.true_region if cond.flat[0] else op.false_region
        return self.block(region.block) if region.blocks else []

    def mask(self, op):
        return None if op.mask is None else self.env[op.mask]

    def lanes(self, op) -> int:
        t = op.results[0].type
        return t.get_shape()[0] if hasattr(t, "get_shape") else 1

    # -- handlers -------------------------------------------------------------------------

    def _constant(self, op):
        attr = op.value
        if isinstance(attr, DenseIntOrFPElementsAttr):
            vals = np.array(attr.get_values())
            return np.broadcast_to(vals, (self.lanes(op),))[None, :]
        assert isinstance(attr, IntegerAttr | FloatAttr)
        return np.array([[attr.value.data]])

    def _shuffle(self, op, a, b):
        rows = max(len(a), len(b))
        both = np.concatenate([np.broadcast_to(a, (rows, a.shape[1])),
                               np.broadcast_to(b, (rows, b.shape[1]))], axis=1)
        return both[:, list(op.mask.get_values())]

    def _cmp(self, op, a, b):
        return _CMP[op.predicate.data](a, b)

    def _load(self, op, base, index, *rest):
        mask = self._check_access(op, base, index, self.mask(op))
        other = 0 if op.other is None else self.env[op.other]
        return np.where(mask, base[np.where(mask, index, 0)], other)

    def _store(self, op, base, index, value, *rest):
        mask = self._check_access(op, base, index, self.mask(op))
        _scatter(base, index, value, mask)

    def _check_access(self, op, base, index, mask) -> np.ndarray:
        index = np.broadcast_to(index, (self.threads, index.shape[1]))
        mask = np.ones(index.shape, bool) if mask is None else np.broadcast_to(mask, index.shape)
        vec = op.width
        groups = index.reshape(len(index), -1, vec)
        assert (groups[..., 0] % vec == 0).all() and (np.diff(groups, axis=-1) == 1).all(), \
            f"{op.name}: lanes do not form aligned runs of {vec}"
        assert (mask.reshape(groups.shape) == mask.reshape(groups.shape)[..., :1]).all()
        assert (index[mask] >= 0).all() and (index[mask] < base.size).all(), "out of bounds"
        return mask

    def _alloc(self, op):
        buf = np.zeros(op.result.type.get_shape()[0], np_type(op.result.type.element_type))
        self.shared[op.result] = [buf, np.zeros(buf.size, bool), np.zeros(buf.size, bool)]
        return buf

    def reads(self, buffer, elements) -> None:
        """Record a read of shared ``elements``; none may have been written since the last
        barrier (per element: disjoint halves of one buffer may be used without one)."""
        _, written, read = self.shared[buffer]
        assert not written[elements].any(), "shared memory read without a barrier after its writes"
        read[elements] = True

    def writes(self, buffer, elements) -> None:
        _, written, read = self.shared[buffer]
        assert not read[elements].any(), "shared memory rewritten without a barrier after its reads"
        written[elements] = True

    def _shared_store(self, op, buf, index, value, *rest):
        mask = self._check_access(op, buf, index, None if op.mask is None else self.env[op.mask])
        self.writes(op.buffer, np.broadcast_to(index, mask.shape)[mask])
        _scatter(buf, index, value, mask)

    def _shared_load(self, op, buf, index):
        self._check_access(op, buf, index, None)
        self.reads(op.buffer, np.asarray(index).ravel())
        return buf[index]

    def _shuffle_threads(self, op, a):
        """``simt.shuffle_xor/up/down``: another thread's lanes, within its warp of 32."""
        t = np.arange(self.threads)
        n = next(iter(op.properties.values())).value.data  # the mask or the delta
        src = {"simt.shuffle_xor": t ^ n,
               "simt.shuffle_up": np.where(t % 32 >= n, t - n, t),
               "simt.shuffle_down": np.where(t % 32 + n < 32, t + n, t)}[op.name]
        return np.broadcast_to(a, (self.threads, a.shape[1]))[src]

    def _barrier(self, op):
        for _, written, read in self.shared.values():
            written[:] = read[:] = False

    HANDLERS: ClassVar[dict[str, Callable]] = {
        "simt.thread_id": lambda self, op: np.arange(self.threads)[:, None],
        "simt.warp_id": lambda self, op: np.arange(self.threads)[:, None] // 32,
        "tile.program_id": lambda self, op: np.array([[self.pid[op.axis.value.data]]]),
        "tile.num_programs": lambda self, op: np.array([[self.grid[op.axis.value.data]]]),
        "arith.constant": _constant,
        "vector.broadcast": lambda self, op, a: np.broadcast_to(a, (len(a), self.lanes(op))),
        "vector.shuffle": _shuffle,
        "vector.extract": lambda self, op, a: a[:, list(op.static_position.get_values())],
        "tile.cmpi": _cmp, "tile.cmpf": _cmp,
        "tile.select": lambda self, op, c, a, b: np.where(c, a, b),
        "arith.select": lambda self, op, c, a, b: np.where(c, a, b),
        "arith.extui": lambda self, op, a: a.astype(np.int64),
        "arith.sitofp": lambda self, op, a: a,
        "arith.bitcast": lambda self, op, a: np.ascontiguousarray(a).view(np_type(op.result.type)),
        "arith.negf": lambda self, op, a: -a,
        "math.exp2": lambda self, op, a: _quiet(np.exp2, a),
        "math.log2": lambda self, op, a: _quiet(np.log2, a),
        "simt.load": _load, "simt.store": _store, "simt.shared_alloc": _alloc,
        "simt.shared_store": _shared_store, "simt.shared_load": _shared_load,
        "simt.barrier": _barrier, "scf.for": _for, "scf.if": _if, "simt.shuffle_xor": _shuffle_threads,
        "simt.shuffle_up": _shuffle_threads, "simt.shuffle_down": _shuffle_threads,
    }


def _quiet(fn, a):
    """``fn(a)`` with IEEE results (inf, -inf) and no warning, as the GPU gives them."""
    with np.errstate(over="ignore", divide="ignore"):
        return fn(a)


def _scatter(mem: np.ndarray, index, value, mask) -> None:
    """``mem[index] = value`` where ``mask``; threads writing one address must agree."""
    index, value, mask = np.broadcast_arrays(index, value, mask)
    idx, val = index[mask], value[mask]
    order = np.argsort(idx, kind="stable")
    idx, val = idx[order], val[order]
    same = idx[1:] == idx[:-1]
    agree = (val[1:] == val[:-1]) | (val[1:] != val[1:])  # NaN agrees with NaN
    assert (agree | ~same).all(), "replicas store different values"
    mem[idx] = val


def run_grid(module: ModuleOp, arrays: dict, scalars: dict, grid: tuple[int, ...]) -> None:
    """Every program of ``grid``, one after the other."""
    for pid in np.ndindex(*reversed(grid)):
        Program(module, arrays, scalars, tuple(reversed(pid)), grid).run()
