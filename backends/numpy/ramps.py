"""Index tiles ``splat(s) + range(a, b)`` (``pid * BLOCK + tl.arange(0, BLOCK)``) kept as
their row starts, for the NumPy backend's interpreter.

Over L programs such a tile is L * BLOCK integers, a pass to make and one more for each
use, while its usual uses need only the L starts: ``addptr`` points to rows of consecutive
elements (one run when the programs' blocks follow each other), and ``offs < n`` keeps a
prefix of every row (all of it, in all but the last program). ``Ramp`` holds the starts
and the operands, and makes the tile only for another use (``Kernel.compile_block`` has
such uses ask for it). A mask that keeps every element is one broadcast ``True``, which
``kernel.all_set`` reads without a pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType, i32
from xdsl.ir import Operation, SSAValue

from backends.numpy import ops  # noqa: F401 - registers the builders wrapped here
from backends.numpy.kernel import BUILDERS, LAZY_USERS, LAZY_VALUES, Builder, Impl, Lazy, Ptr
from dialects.tile import RangeOp, SplatOp

_MIN_ELEMENTS = 1 << 12  # smaller tiles cost less to make than a Ramp's bookkeeping
_I32 = (-(1 << 31), (1 << 31) - 1)


class Ramp(Lazy):
    """``start[l] + j`` for program l and column j < ``width``, as i32 that do not wrap."""

    __slots__ = ("_make", "_tile", "start", "width")

    def __init__(self, start: np.ndarray, width: int, make: Any):
        self.start, self.width, self._make, self._tile = start, width, make, None

    def dense(self) -> np.ndarray:
        if self._tile is None:
            self._tile = self._make()
        return self._tile


def is_ramp(v: SSAValue) -> bool:
    """Whether ``v`` is ``splat(scalar) + range`` of i32, in either order."""
    op, t = v.owner, v.type
    return isinstance(op, Operation) and op.name == "arith.addi" \
        and {type(x.owner) for x in op.operands} == {SplatOp, RangeOp} \
        and isinstance(t, TensorType) and len(t.get_shape()) == 1 \
        and t.get_element_type() == i32


def _addi(build: Builder) -> Builder:
    def builder(op: Operation) -> Impl:
        dense = build(op)
        if not is_ramp(op.results[0]):
            return dense
        split = 0 if isinstance(op.operands[0].owner, SplatOp) else 1

        def impl(batch, *xs: np.ndarray) -> tuple:
            s, r = xs[split], xs[1 - split]
            width = r.shape[-1]
            if s.shape[0] * width < _MIN_ELEMENTS:
                return dense(batch, *xs)
            start = s[:, 0].astype(np.int64) + int(r[0, 0])
            if start.min() < _I32[0] or start.max() + width - 1 > _I32[1]:
                return dense(batch, *xs)  # some offsets wrap: the tile says how
            return (Ramp(start, width, lambda: dense(batch, *xs)[0]),)
        return impl
    return builder


def _addptr(build: Builder) -> Builder:
    """A base pointer per program plus a ramp: a run, else rows of consecutive elements."""
    def builder(op: Operation) -> Impl:
        dense = build(op)

        def impl(batch, p: Ptr, off: Any) -> tuple:
            if type(off) is not Ramp:
                return dense(batch, p, off)
            if p.run is not None or p.rows is not None or p.off.ndim != 2 \
                    or p.off.strides[1]:
                return dense(batch, p, off.dense())
            starts = p.off[:, 0] + off.start
            tile = (len(starts), off.width)
            if len(starts) == 1 or (np.diff(starts) == off.width).all():
                return (Ptr.consecutive(p.buf, int(starts[0]), tile),)
            return (Ptr.of_rows(p.buf, starts, tile),)
        return impl
    return builder


def _cmpi(build: Builder) -> Builder:
    """``ramp < n``: start + j < n where j < n - start, a prefix of each row."""
    def builder(op: Operation) -> Impl:
        dense = build(op)
        slt = op.properties["predicate"].data == "slt"

        def impl(batch, a: Any, b: Any) -> tuple:
            if not slt or type(b) is Ramp or type(a) is not Ramp or any(b.strides[1:]):
                return dense(batch, *(x.dense() if type(x) is Ramp else x for x in (a, b)))
            kept = b[:, 0] - a.start
            shape = (len(kept), a.width)
            if kept.min() >= a.width:
                return (np.broadcast_to(np.True_, shape),)
            mask = batch.pool.empty(shape, np.dtype(np.bool_))
            np.less(np.arange(a.width), kept[:, None], out=mask)
            return (mask,)
        return impl
    return builder


LAZY_VALUES.append(is_ramp)
LAZY_USERS.update({"tile.addptr", "tile.cmpi"})
for name, wrap in (("arith.addi", _addi), ("tile.addptr", _addptr), ("tile.cmpi", _cmpi)):
    BUILDERS[name] = wrap(BUILDERS[name])
