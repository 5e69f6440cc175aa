"""Stages filled by Hopper's tensor memory accelerator (TMA) instead of per-thread copies,
and the barriers that say when a stage is full (Triton's ``async_tma_copy_global_to_local``
and ``init_barrier`` / ``barrier_expect`` / ``wait_barrier``).

``pipeline-loads`` writes these on sm_90 for the array-view loads (``tile.view_load``)
that feed a warpgroup dot: one thread copies a whole tile into a 128-byte-swizzled stage
of a ``tile.shared_alloc`` with a few bulk copies, and every thread waits on the stage's
barrier rather than on its own copies. A barrier completes a phase once every copy that
arrived on it has landed; phases alternate in parity, which is what a wait names.

``tma-stores`` writes ``tile.tma_store`` for an array-view store on sm_90: every thread
puts its part of the tile into a swizzled buffer and one thread has TMA copy it out.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I1, I32, IntegerAttr, MemRefType, TensorType, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.async_copy import SHARED, _buffer_shape
from dialects.tile.types import PtrType


def check_barriers(op: IRDLOperation, t: object) -> int:
    """The number of barriers in ``t``, a ``memref<N x i64, 3>`` (else a verify error)."""
    if (not isinstance(t, MemRefType) or t.element_type != i64 or len(t.get_shape()) != 1
            or t.memory_space != IntegerAttr(SHARED, i32)):
        raise VerifyException(f"{op.name}: barriers are a memref<N x i64, 3>")
    return t.get_shape()[0]


@irdl_op_definition
class BarrierAllocOp(IRDLOperation):
    """Barriers in shared memory, one per stage, each completing a phase when ``arrivals``
    copies have arrived and landed; ready for every thread once this returns."""

    name = "tile.barrier_alloc"
    arrivals = prop_def(IntegerAttr[I32])
    result = result_def(MemRefType)
    assembly_format = "`arrivals` $arrivals attr-dict `:` type($result)"

    def __init__(self, count: int, arrivals: int):
        super().__init__(result_types=[MemRefType(i64, [count],
                                                  memory_space=IntegerAttr(SHARED, i32))],
                         properties={"arrivals": IntegerAttr(arrivals, i32)})

    def verify_(self) -> None:
        check_barriers(self, self.result.type)
        if self.arrivals.value.data < 1:
            raise VerifyException("tile.barrier_alloc: arrivals must be >= 1")


class OnBarriers(IRDLOperation):
    """An op of the barriers ``bars`` alone (a ``memref<N x i64, 3>``)."""

    bars = operand_def(MemRefType)
    assembly_format = "$bars attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue):
        super().__init__(operands=[bars])

    def verify_(self) -> None:
        check_barriers(self, self.bars.type)


@irdl_op_definition
class BarrierReleaseOp(OnBarriers):
    """Once every thread gets here, the barriers are gone (every copy on them waited for)."""

    name = "tile.barrier_release"


MAX_RANK = 5  # dimensions of a tensor map


def _check_rank(op: IRDLOperation, sizes: Sequence[SSAValue], strides: Sequence[SSAValue],
                starts: Sequence[SSAValue]) -> None:
    """An array of 2 to 5 dimensions: one size, stride and start each."""
    if not 2 <= len(sizes) == len(strides) == len(starts) <= MAX_RANK:
        raise VerifyException(f"{op.name}: an array of 2 to {MAX_RANK} dimensions, one size, "
                              "stride and start each")


@irdl_op_definition
class TmaCopyOp(IRDLOperation):
    """If ``live``: start copying the 2-D tile of the array at ``base`` (``sizes`` and
    ``strides`` in elements, 2 to 5 dimensions; the tile is one element long in all but
    the last two) whose first element is at ``starts`` into stage ``stage`` of
    ``buffer``, zeros where it lies outside the array; one arrival on barrier ``stage``
    of ``bars``, complete when the tile has landed."""

    name = "tile.tma_copy"
    base = operand_def(PtrType)
    sizes = var_operand_def(I32)
    strides = var_operand_def(I32)
    starts = var_operand_def(I32)
    buffer = operand_def(MemRefType)
    stage = operand_def(I32)
    bars = operand_def(MemRefType)
    live = operand_def(I1)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$base `sizes` `[` $sizes `]` `strides` `[` $strides `]` `at` `[` $starts `]` `to`"
        " $buffer `[` $stage `]` `,` $bars `if` $live attr-dict `:` type($base) `,`"
        " type($buffer) `,` type($bars)")

    def __init__(self, base: SSAValue, sizes: list[SSAValue], strides: list[SSAValue],
                 starts: list[SSAValue], buffer: SSAValue, stage: SSAValue, bars: SSAValue,
                 live: SSAValue):
        super().__init__(operands=[base, sizes, strides, starts, buffer, stage, bars, live])

    def verify_(self) -> None:
        _buffer_shape(self, self.buffer.type)
        _check_rank(self, self.sizes, self.strides, self.starts)
        if self.base.type.pointee != self.buffer.type.element_type:  # pyright: ignore
            raise VerifyException("tile.tma_copy: the buffer must hold the pointee type")
        if self.buffer.owner.swizzle is None:  # pyright: ignore[reportAttributeAccessIssue]
            raise VerifyException("tile.tma_copy fills 128-byte-swizzled stages")
        check_barriers(self, self.bars.type)


@irdl_op_definition
class TmaStoreOp(IRDLOperation):
    """Write the 2-D tile ``value`` into the array at ``base`` (``sizes`` and ``strides``
    in elements, 2 to 5 dimensions: the tile spans the last two) from element ``starts``;
    the parts outside the array are dropped."""

    name = "tile.tma_store"
    base = operand_def(PtrType)
    sizes = var_operand_def(I32)
    strides = var_operand_def(I32)
    starts = var_operand_def(I32)
    value = operand_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$value `to` $base `sizes` `[` $sizes `]` `strides` `[` $strides `]` `at` `[` $starts"
        " `]` attr-dict `:` type($value) `,` type($base)")

    def __init__(self, value: SSAValue, base: SSAValue, sizes: list[SSAValue],
                 strides: list[SSAValue], starts: list[SSAValue]):
        super().__init__(operands=[base, sizes, strides, starts, value])

    def verify_(self) -> None:
        t = self.value.type
        assert isinstance(t, TensorType)
        if len(t.get_shape()) != 2:
            raise VerifyException("tile.tma_store stores 2-D tiles")
        _check_rank(self, self.sizes, self.strides, self.starts)
        if self.base.type.pointee != t.element_type:  # pyright: ignore
            raise VerifyException("tile.tma_store: the array must hold the tile's type")


@irdl_op_definition
class BarrierWaitOp(IRDLOperation):
    """Wait until barrier ``stage`` has completed its phase of parity ``phase``, then
    until every thread of the program gets here."""

    name = "tile.barrier_wait"
    bars = operand_def(MemRefType)
    stage = operand_def(I32)
    phase = operand_def(I32)
    assembly_format = "$bars `[` $stage `]` `,` $phase attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, stage: SSAValue, phase: SSAValue):
        super().__init__(operands=[bars, stage, phase])

    def verify_(self) -> None:
        check_barriers(self, self.bars.type)


__all__ = ["BarrierAllocOp", "BarrierReleaseOp", "BarrierWaitOp", "OnBarriers", "TmaCopyOp",
           "TmaStoreOp",
           "check_barriers"]
