"""Part of simt-to-ptx: the SIMT ops that move data between threads -> the ptx dialect.

- ``vector.extract`` -> ``ptx.lanes`` (a register renamed);
- ``simt.shared_alloc`` -> ``ptx.shared`` (a ``.shared`` byte array, its 32-bit address);
  ``shared_load``/``shared_store`` -> ``ptx.ld_shared``/``st_shared`` at ``base + index *
  size``, ``vec`` lanes per access as for global memory (``lower_memory``: at most 128
  bits, narrow lanes as 32-bit words, bools as bytes); ``simt.barrier`` -> ``bar.sync 0``;
- ``simt.shuffle_xor``/``shuffle_up``/``shuffle_down`` -> ``shfl.sync.bfly``/``up``/
  ``down.b32`` over the full warp. ``shfl`` moves 32 bits: 16-bit registers (and bools)
  travel widened, 64-bit values as two halves.
"""

from __future__ import annotations

from xdsl.dialects import vector
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.ir import Attribute, SSAValue

from backends.ptx.lower_core import BYTES, Lowering, dtype, lowers, shared_footprint
from backends.ptx.lower_memory import (
    I8,
    MAX_ELEMENTS,
    access_width,
    as_words,
    bool_of_byte,
    byte_of_bool,
    pack_words,
    unpack_words,
)
from dialects import ptx, simt
from dialects.tile import like

ShuffleOp = simt.ShuffleXorOp | simt.ShuffleUpOp | simt.ShuffleDownOp

# shfl mode and its ``c`` operand: the clamp lane (31 keeps a source inside the warp from
# above, 0 from below; lanes without a source keep their own value).
_SHFL = {simt.ShuffleXorOp: ("bfly", 31), simt.ShuffleUpOp: ("up", 0),
         simt.ShuffleDownOp: ("down", 31)}


@lowers(simt.SharedAllocOp)
def shared_alloc(lo: Lowering, op: simt.SharedAllocOp) -> SSAValue:
    size, align = shared_footprint(op)
    offset = None if op.offset is None else op.offset.value.data
    return lo.value(ptx.SharedOp(size, align, offset))


def _address(lo: Lowering, op: simt.SharedLoadOp | simt.SharedStoreOp, vec: int
             ) -> SSAValue:
    """``base + index * size`` per access of ``vec`` lanes."""
    size = BYTES[dtype(op.buffer.type.element_type)]  # pyright: ignore[reportAttributeAccessIssue]
    idx = lo.pick(lo.values[op.index], vec)
    return lo.inst("mad.lo.s32", [idx, lo.const(size, "i32"), lo.values[op.buffer]],
                   like(idx.type, i32))


@lowers(simt.SharedLoadOp)
def shared_load(lo: Lowering, op: simt.SharedLoadOp) -> SSAValue:
    rtype = op.result.type
    vec = access_width(op, dtype(rtype))
    addr = _address(lo, op, vec)
    if dtype(rtype) != "i1":
        return _ld(lo, addr, rtype, vec)
    return bool_of_byte(lo, _ld(lo, addr, like(rtype, I8), vec), rtype, vec)


def _ld(lo: Lowering, addr: SSAValue, rtype: Attribute, vec: int) -> SSAValue:
    """``ld.shared`` of ``vec`` lanes per address, as words where that is too many lanes."""
    if vec <= MAX_ELEMENTS:
        return lo.value(ptx.LdSharedOp(addr, rtype, vec))
    wtype, wvec = as_words(rtype, vec)
    return unpack_words(lo, lo.value(ptx.LdSharedOp(addr, wtype, wvec)), rtype)


@lowers(simt.SharedStoreOp)
def shared_store(lo: Lowering, op: simt.SharedStoreOp) -> None:
    value = lo.values[op.value]
    vec = access_width(op, dtype(value.type))
    addr = _address(lo, op, vec)
    pred = None if op.mask is None else lo.pick(lo.values[op.mask], vec)
    if dtype(value.type) == "i1":
        value = byte_of_bool(lo, value)
    if vec > MAX_ELEMENTS:  # as words: those of a word load of the value are reused
        value, vec = pack_words(lo, value), as_words(value.type, vec)[1]
    lo.emit(ptx.StSharedOp(addr, value, pred, vec))


@lowers(simt.BarrierOp)
def barrier(lo: Lowering, _op: simt.BarrierOp) -> None:
    lo.emit(ptx.BarOp())


@lowers(simt.ShuffleXorOp, simt.ShuffleUpOp, simt.ShuffleDownOp)
def shuffle(lo: Lowering, op: ShuffleOp) -> SSAValue:
    v = lo.values[op.value]
    dt = dtype(v.type)
    amount = (op.mask if isinstance(op, simt.ShuffleXorOp) else op.delta).value.data
    if dt in ("i32", "f32"):
        return _shfl(lo, op, v, amount)
    if dt in ("i64", "f64"):
        return _shuffle_64(lo, op, v, amount)
    wide = like(v.type, i32)
    if dt == "i1":
        moved = _shfl(lo, op, lo.select(v, lo.const(1, "i32"), lo.const(0, "i32")), amount)
        return lo.inst("setp.ne.u32", [moved, lo.const(0, "i32")], v.type)
    moved = _shfl(lo, op, lo.inst("cvt.u32.u16", [v], wide), amount)
    return lo.low_half(moved, dt)


def _shfl(lo: Lowering, op: ShuffleOp, v: SSAValue, amount: int) -> SSAValue:
    mode, clamp = _SHFL[type(op)]
    args = [v, lo.const(amount, "i32"), lo.const(clamp, "i32"), lo.const(-1, "i32")]
    return lo.inst(f"shfl.sync.{mode}.b32", args, v.type)


def _shuffle_64(lo: Lowering, op: ShuffleOp, v: SSAValue, amount: int) -> SSAValue:
    """Two 32-bit shuffles of the halves of the bit pattern."""
    bits_t, half_t = like(v.type, IntegerType(64)), like(v.type, i32)
    bits = lo.inst("mov.b64", [v], bits_t) if dtype(v.type) == "f64" else v
    low = lo.inst("cvt.u32.u64", [bits], half_t)
    high = lo.inst("cvt.u32.u64", [lo.inst("shr.u64", [bits, lo.const(32, "i32")], bits_t)],
                   half_t)
    low, high = (lo.inst("cvt.u64.u32", [_shfl(lo, op, h, amount)], bits_t)
                 for h in (low, high))
    high = lo.inst("shl.b64", [high, lo.const(32, "i32")], bits_t)
    out = lo.inst("or.b64", [high, low], bits_t)
    return lo.inst("mov.b64", [out], v.type) if dtype(v.type) == "f64" else out


@lowers(vector.ExtractOp)
def extract(lo: Lowering, op: vector.ExtractOp) -> SSAValue:
    """One lane of a vector: its register, renamed."""
    (pos,) = op.static_position.get_values()
    return lo.value(ptx.LanesOp(lo.values[op.vector], [pos], op.result.type))

