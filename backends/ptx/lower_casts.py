"""Part of simt-to-ptx: ``arith`` casts (``extf``, ``truncf``, ``sitofp``, ``uitofp``,
``fptosi``, ``fptoui``, ``extsi``, ``extui``, ``trunci``, ``bitcast``) and the fp8
conversions (``tile.from_fp8``/``to_fp8``) -> the ptx dialect.

Most casts are one ``cvt`` with the rounding the op implies. i1 is a predicate, so casts
from it select between constants and casts to it compare; bf16 converts only to and
from f32 before sm_90, so other bf16 casts go through f32. fp8 converts in pairs, as
Triton's conversions do on sm_90 (``lower-fp8`` expands them into arithmetic for older
targets): ``cvt.rn.satfinite.e4m3x2.f32`` rounds two f32 into the two bytes of a 16-bit
register (here a zero into the upper byte, which an i8 register leaves unspecified),
``cvt.rn.f16x2.e4m3x2`` widens the two bytes to f16 (the low half is this byte's,
exactly), and ``cvt.f32.f16`` to f32 where f32 is asked for.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32
from xdsl.ir import Attribute, Operation, SSAValue

from backends.ptx.lower_core import BITS, BYTES, INTS, Lowering, dtype, int_type, lowers
from dialects import tile
from dialects.arith_shaped import rounds_toward_zero
from dialects.tile import like

_CASTS = (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp,
          arith.FPToUIOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, arith.BitcastOp)


def _ptx_type(dt: str, signed: bool = True) -> str:
    """The PTX type naming values of ``dt`` in a cvt (``s8``, ``u32``, ``f16``, ...)."""
    return dt if dt[0] in "fb" else int_type(dt, signed)


@lowers(*_CASTS)
def cast(lo: Lowering, op: Operation) -> SSAValue:
    (src,) = lo.args(op)
    s, d, rtype = dtype(src.type), dtype(op.results[0].type), op.results[0].type
    if isinstance(op, arith.BitcastOp):
        return lo.inst(f"mov.{BITS[d]}", [src], rtype)
    if s == "i1":
        one = -1 if isinstance(op, arith.ExtSIOp | arith.SIToFPOp) else 1
        return lo.select(src, lo.const(one, d), lo.const(0, d))
    if d == "i1":
        return _to_bool(lo, op, src, s, rtype)
    return _numeric_cast(lo, op, src, s, d)


def _to_bool(lo: Lowering, op: Operation, src: SSAValue, s: str, rtype: Attribute) -> SSAValue:
    """trunci keeps the low bit; fptosi/fptoui saturate to i1's range ([-1, 0] or
    [0, 1]), as they do for every integer type."""
    if s in INTS:
        w = BITS[s][1:]
        low = lo.inst(f"and.b{w}", [src, lo.const(1, s)], src.type)
        return lo.inst(f"setp.ne.b{w}", [low, lo.const(0, s)], rtype)
    wide = _numeric_cast(lo, op, src, s, "i32")
    if isinstance(op, arith.FPToSIOp):
        return lo.inst("setp.lt.s32", [wide, lo.const(0, "i32")], rtype)
    return lo.inst("setp.ne.s32", [wide, lo.const(0, "i32")], rtype)


def _numeric_cast(lo: Lowering, op: Operation, src: SSAValue, s: str, d: str) -> SSAValue:
    if "bf16" not in (s, d) or "f32" in (s, d):
        return _convert(lo, op, src, s, d)
    if d == "bf16":  # sm_80 converts bf16 only to and from f32
        return lo.from_f32(_convert(lo, op, src, s, "f32"), d, _narrowing(op))
    return _convert(lo, op, lo.to_f32(src), "f32", d)


def _convert(lo: Lowering, op: Operation, src: SSAValue, s: str, d: str) -> SSAValue:
    """One ``cvt`` from dtype ``s`` to dtype ``d`` with the rounding ``op`` implies."""
    signed = not isinstance(op, arith.UIToFPOp | arith.FPToUIOp | arith.ExtUIOp
                            | arith.TruncIOp)
    if s == d or (isinstance(op, arith.TruncIOp) and d == "i8" and s == "i16"):
        return lo.cvt(src, f"mov.{BITS[d]}", d)  # same register bits
    if isinstance(op, arith.TruncIOp) and s == "i32" and d in ("i8", "i16"):
        return lo.low_half(src, d)
    rounding = ""
    if s[0] in "fb" and d[0] == "i":
        rounding = ".rzi"
    elif d[0] in "fb" and (s[0] == "i" or BYTES[d] < BYTES[s]):
        rounding = f".{_narrowing(op)}"
    return lo.cvt(src, f"cvt{rounding}.{_ptx_type(d, signed)}.{_ptx_type(s, signed)}", d)


def _narrowing(op: Operation) -> str:
    """How a cast to a narrower float rounds: to nearest even, or toward zero for a
    ``truncf`` that says so (truncating twice, through f32 to bf16, truncates once)."""
    return "rz" if rounds_toward_zero(op) else "rn"


@lowers(tile.FromFp8Op)
def from_fp8(lo: Lowering, op: tile.FromFp8Op) -> SSAValue:
    (bits,) = lo.args(op)
    pair = lo.inst(f"cvt.rn.f16x2.{op.format.data}x2", [bits], like(bits.type, i32))
    half = lo.low_half(pair, "f16")
    return half if dtype(op.result.type) == "f16" else lo.to_f32(half)


@lowers(tile.ToFp8Op)
def to_fp8(lo: Lowering, op: tile.ToFp8Op) -> SSAValue:
    (x,) = lo.args(op)
    return lo.inst(f"cvt.rn.satfinite.{op.format.data}x2.f32", [lo.const(0.0, "f32"), x],
                   like(x.type, IntegerType(8)))
