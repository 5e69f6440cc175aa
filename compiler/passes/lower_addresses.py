"""Part of tile-to-simt: ``tile.int_to_ptr``/``tile.ptr_to_int`` (tile IR with layouts) ->
SIMT IR.

A SIMT access is (base pointer, element index), the base a kernel argument. A scalar
address cast to a pointer is a base too: the cast stays, and the pointers computed from
it are (cast, index), loaded and stored like an argument's. A tile of addresses has no
one base, so GPU targets refuse it (cast one address, add the offsets to the pointer).
A pointer cast back to an integer is its base's address plus its index in bytes, per
lane, in 64 bits: ``tile.ptr_to_int`` of the base, then ``arith``.
"""

from __future__ import annotations

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import TensorType, VectorType, i64

from compiler.context import source_loc
from compiler.errors import UnsupportedError
from compiler.passes.axis_info import bits_of
from compiler.passes.simt_lowering import Lowering, lowers, per_thread_type
from dialects import arith_shaped, tile
from dialects.tile import PtrType, element_type, like


@lowers(tile.IntToPtrOp)
def lower_int_to_ptr(lo: Lowering, op: tile.IntToPtrOp) -> None:
    """A scalar cast stays, as the base of the pointers made from it."""
    if isinstance(op.result.type, TensorType):
        raise UnsupportedError("a tile of addresses cast to pointers is not supported on GPU "
                               "backends: cast one address (a scalar) and add offsets to the "
                               "pointer", source_loc(op))
    lo.ptrs[op.result] = (op.result, None)


@lowers(tile.PtrToIntOp)
def lower_ptr_to_int(lo: Lowering, op: tile.PtrToIntOp) -> None:
    """The base's address plus the index times the element's bytes."""
    base, idx = lo.trace(op.x, op)
    address = lo.emit(tile.PtrToIntOp(base, i64), op)
    t = per_thread_type(op.result.type)
    if isinstance(t, VectorType):
        address = lo.emit(vector.BroadcastOp(address, t), op)
    if idx is not None:
        pointee = element_type(op.x.type)
        assert isinstance(pointee, PtrType)
        wide = lo.emit(arith_shaped.ExtSIOp(idx, like(idx.type, i64)), op)
        size = lo.const(max(1, bits_of(pointee.pointee) // 8), op, t)
        address = lo.emit(arith.AddiOp(address, lo.emit(arith.MuliOp(wide, size), op)), op)
    lo.replace(op, address)
