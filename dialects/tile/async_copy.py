"""Multi-stage buffers in shared memory, filled by asynchronous copies (Triton's
``local_alloc``, ``async_copy_global_to_local``, ``async_commit_group``, ``async_wait``
and ``local_load``).

``pipeline-loads`` writes these for a target that copies from global to shared memory
without passing through registers (PTX ``cp.async``, sm_80 and newer): a dot's operand is
loaded into stage ``s`` of a buffer of ``stages`` tiles some iterations ahead, and read back
from it by ``tile.shared_read`` (so is any tile that a loop reads whole, in a loop that
asks for pipelining). A buffer is a ``memref<stages x rows x row_len x T, 3>`` (memory
space 3, as ``simt.shared_alloc``); ``row_len`` may exceed the tile's columns (the padding
that keeps the rows of an ``ldmatrix`` in different banks). A 1-D tile is a stage's one
row.

The copies of one thread are ordered into groups: ``tile.async_commit`` closes the group of
the copies issued since the last one, and ``tile.async_wait`` waits until at most
``pending`` of the thread's groups are unfinished, then for every thread of the program
(so what any thread copied is visible to all, and every earlier read of the buffers is
done before the next copy).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, IntegerAttr, MemRefType, TensorType, i32
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from dialects.tile.memory import check_mask
from dialects.tile.types import PtrType, element_type

SHARED = 3  # the memref memory space of shared memory (as simt.SHARED)


def _buffer_shape(op: IRDLOperation, t: object) -> tuple[int, int, int]:
    if (not isinstance(t, MemRefType) or t.memory_space != IntegerAttr(SHARED, i32)
            or len(t.get_shape()) != 3):
        raise VerifyException(f"{op.name} needs a 3-D buffer in shared memory (memory space 3)")
    stages, rows, row_len = t.get_shape()
    return stages, rows, row_len


def _check_tile(op: IRDLOperation, buffer: SSAValue, t: object) -> None:
    """``t`` is a 2-D tile of the buffer's elements that fits in one stage, or a 1-D tile
    that fits in a stage of one row."""
    _, rows, row_len = _buffer_shape(op, buffer.type)
    if not isinstance(t, TensorType) or len(t.get_shape()) not in (1, 2):
        raise VerifyException(f"{op.name} moves 1-D or 2-D tiles")
    r, c = (1, *t.get_shape())[-2:]
    if r != rows or c > row_len:
        shape = "x".join(map(str, t.get_shape()))
        raise VerifyException(f"{op.name}: a {shape} tile does not fit a stage of "
                              f"{rows}x{row_len}")


SWIZZLE_BYTES = 128  # the swizzled stage layout: Hopper's 128-byte swizzle
# on a tile.dot: pipeline-loads left the stages it reads alone for one more iteration, so
# the dot may still be running when the next iteration starts (asynchronous wgmma)
ASYNC_DOT_ATTR = "tile.async_dot"
WARPGROUP = 4  # warps


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """A program-wide buffer of ``stages`` tiles in shared memory.

    Rows follow one another (``row_len`` elements each) unless ``swizzle = 128``: then a
    stage is the layout ``wgmma`` reads (TMA's 128-byte swizzle): the columns in atoms of
    128 bytes, each atom ``rows`` rows of 128 bytes, the 16-byte chunk ``c`` of row ``r``
    stored at chunk ``c ^ (r % 8)``. With ``warps = W`` too, the rows are permuted for a
    ``#tile.mma<version = 3, warps = [W, 1]>`` dot (``swizzled_row``). Where elements sit
    is invisible to the tile ops: ``async_copy`` and ``shared_read`` move tiles."""

    name = "tile.shared_alloc"
    result = result_def(MemRefType)
    swizzle = opt_prop_def(IntegerAttr[I32])
    warps = opt_prop_def(IntegerAttr[I32])
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, elem, stages: int, rows: int, row_len: int, swizzle: int = 0,
                 warps: int = 0):
        props = {k: IntegerAttr(v, i32) for k, v in (("swizzle", swizzle), ("warps", warps))
                 if v}
        super().__init__(result_types=[MemRefType(elem, [stages, rows, row_len],
                                                  memory_space=IntegerAttr(SHARED, i32))],
                         properties=props)

    def verify_(self) -> None:
        _, rows, row_len = _buffer_shape(self, self.result.type)
        if self.swizzle is None:
            if self.warps is not None:
                raise VerifyException("tile.shared_alloc: warps permute swizzled rows only")
            return
        bits = self.result.type.element_type.bitwidth  # pyright: ignore
        if self.swizzle.value.data != SWIZZLE_BYTES or row_len * bits % (8 * SWIZZLE_BYTES):
            raise VerifyException(f"tile.shared_alloc: swizzle = {SWIZZLE_BYTES} needs rows of "
                                  f"whole {SWIZZLE_BYTES}-byte atoms")
        warps = 0 if self.warps is None else self.warps.value.data
        if self.warps is not None and (warps % WARPGROUP or warps & (warps - 1)
                                       or rows % (16 * warps)):
            raise VerifyException("tile.shared_alloc: warps must be whole warpgroups, a power "
                                  "of two, with 16 rows each")


def swizzled_row(row: int, warps: int) -> int:
    """Where logical row ``row`` of a ``warps``-permuted stage is stored. Warp ``w`` of a
    ``#tile.mma`` accumulator holds rows ``r + 8 w + 8 W j`` (``r < 8``); its m16 tile ``t``
    is ``j = 2 t + h``. The wgmma of warpgroup ``g`` for tile ``t`` reads the 64 stored rows
    from ``64 (t G + g)``, giving warp ``w % 4`` rows ``16 (w % 4) + 8 h + r`` of them."""
    r, q = row % 8, row // 8
    w, j = q % warps, q // warps
    g, t, h = w // WARPGROUP, j // 2, j % 2
    return 64 * (t * (warps // WARPGROUP) + g) + 16 * (w % WARPGROUP) + 8 * h + r


def swizzled_place(row: int, col: int, rows: int, warps: int, bits: int) -> int:
    """The element of a 128-byte-swizzled stage of ``rows`` rows (``bits``-bit elements,
    rows permuted by ``swizzled_row`` when ``warps``) where element (``row``, ``col``) of
    the tile is: its row in the atom of its column, its 16-byte chunk XORed with the
    stored row's place in its 8."""
    atom, chunk = 8 * SWIZZLE_BYTES // bits, 128 // bits
    stored = swizzled_row(row, warps) if warps else row
    inner = (col % atom) ^ (stored % 8 * chunk)
    return stored * atom + inner + col // atom * rows * atom


@irdl_op_definition
class AsyncCopyOp(IRDLOperation):
    """Start copying the tile at ``ptr`` into stage ``stage`` of ``buffer``: where ``mask``
    is false the stage gets zeros. Done once a ``tile.async_wait`` says so."""

    name = "tile.async_copy"
    ptr = operand_def(TensorType)
    buffer = operand_def(MemRefType)
    stage = operand_def(I32)
    mask = opt_operand_def(TensorType)
    vec = opt_prop_def(IntegerAttr[I32])  # as tile.load's
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$ptr `,` $buffer `[` $stage `]` (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($ptr) `,` type($buffer)"
    )

    def __init__(self, ptr: SSAValue, buffer: SSAValue, stage: SSAValue,
                 mask: SSAValue | None = None):
        super().__init__(operands=[ptr, buffer, stage, mask])

    def verify_(self) -> None:
        pointee = element_type(self.ptr.type)
        if not isinstance(pointee, PtrType):
            raise VerifyException("tile.async_copy expects a tile of pointers")
        if pointee.pointee != self.buffer.type.element_type:  # pyright: ignore
            raise VerifyException("tile.async_copy: the buffer must hold the pointee type")
        _check_tile(self, self.buffer, self.ptr.type)
        check_mask(self, self.ptr, self.mask)


@irdl_op_definition
class AsyncCommitOp(IRDLOperation):
    """Close this thread's group of copies issued since the last commit."""

    name = "tile.async_commit"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class AsyncWaitOp(IRDLOperation):
    """Wait until at most ``pending`` groups of this thread's copies are unfinished, then
    until every thread of the program gets here."""

    name = "tile.async_wait"
    pending = prop_def(IntegerAttr[I32])
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i32)})

    def verify_(self) -> None:
        if self.pending.value.data < 0:
            raise VerifyException("tile.async_wait pending must be >= 0")


@irdl_op_definition
class SharedReadOp(IRDLOperation):
    """The tile in stage ``stage`` of ``buffer`` (its first columns, past a row's padding)."""

    name = "tile.shared_read"
    buffer = operand_def(MemRefType)
    stage = operand_def(I32)
    result = result_def(TensorType)
    assembly_format = "$buffer `[` $stage `]` attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer: SSAValue, stage: SSAValue, result_type: TensorType):
        super().__init__(operands=[buffer, stage], result_types=[result_type])

    def verify_(self) -> None:
        if self.result.type.element_type != self.buffer.type.element_type:  # pyright: ignore
            raise VerifyException("tile.shared_read gives the buffer's element type")
        _check_tile(self, self.buffer, self.result.type)
