"""lower-fp8: tile IR -> the same with fp8 values held as their bits, in i8.

No GPU target computes on fp8 types: loads, stores, selects and shape ops only move
bytes. So every ``f8E4M3FN``/``f8E5M2`` type (of tiles, scalars, pointees, block and
function arguments) becomes ``i8``, constants become their bits, a ``bitcast`` between
fp8 and i8 disappears, and the conversions become ``tile.from_fp8``/``tile.to_fp8``
(``native=1``: PTX on sm_90 and newer, whose ``cvt`` converts fp8) or those expanded into
integer and f32 arithmetic every target has (``native=0``: WGSL, older GPUs). The
frontend converts fp8 only to and from f32 and computes nothing on it (arithmetic goes
through f32), so ``extf`` from fp8 and ``truncf`` to fp8 are all there is to convert;
another op on fp8 is refused. Both forms round as ``compiler.fp8`` does, which is what the
NumPy backend computes on the IR before this pass: to nearest even, saturating to the
largest finite value, NaN to 0x7F. Natively, a transposed fp8 tile that dots read as B
(attention's ``q @ k.T``) is converted first and transposed as f16, which costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    Float8E4M3FNType,
    Float8E5M2Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    f16,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker, TypeConversionPattern
from xdsl.rewriter import InsertPoint, Rewriter

import compiler.language as tl
from compiler.context import source_loc
from compiler.fp8 import fp8_bits
from compiler.passes import PassInputError
from compiler.passes.math_values import Emitter, F, I, bits, fabs, from_bits, iselect, rint
from dialects import arith_shaped as casts
from dialects import tile
from dialects.tile import element_type, like

i8 = IntegerType(8)
# fp8 type -> (format, dtype, explicit mantissa bits, exponent bias, largest finite code)
_FORMATS: dict[type, tuple[str, tl.dtype, int, int, int]] = {
    Float8E4M3FNType: ("e4m3", tl.float8e4nv, 3, 7, 0x7E),
    Float8E5M2Type: ("e5m2", tl.float8e5, 2, 15, 0x7B),
}
_SPEC = {fmt: (m, bias, top) for fmt, _, m, bias, top in _FORMATS.values()}
_NAN_ABOVE = {"e4m3": 0x7E, "e5m2": 0x7C}  # the magnitudes above these codes are NaN


def is_fp8(t: Attribute) -> bool:
    """Whether ``t`` is an fp8 type or a tile, pointer or tile of pointers to one."""
    e = element_type(t)
    return type(e.pointee if isinstance(e, tile.PtrType) else e) in _FORMATS


def _format(t: Attribute) -> str:
    return _FORMATS[type(element_type(t))][0]


class _Bits(TypeConversionPattern):
    """Every fp8 type, wherever it is nested, as i8."""

    def convert_type(self, typ: Attribute, /) -> Attribute | None:
        return i8 if type(typ) in _FORMATS else None


@dataclass(frozen=True)
class LowerFp8(ModulePass):
    """fp8 values as their bits, conversions as ``tile`` ops or arithmetic."""

    name = "lower-fp8"

    native: int = 0  # 1: the target converts fp8 itself (tile.from_fp8/to_fp8)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        touched, has_fp8 = _fp8_ops(op)
        if self.native and _transpose_converted_bs(touched):
            touched, has_fp8 = _fp8_ops(op)
        # the formats first: converting an op retypes the operands of the next ones
        formats = {o: _format(o.input.type if isinstance(o, arith.ExtFOp) else o.result.type)
                   for o in touched if isinstance(o, arith.ExtFOp | arith.TruncFOp)}
        for o in touched:
            if isinstance(o, arith.ConstantOp):
                continue  # below, once nothing reads their fp8 type
            if isinstance(o, arith.BitcastOp):  # fp8 <-> i8: the same bits once retyped
                o.result.replace_all_uses_with(o.input)
                Rewriter.erase_op(o)
            elif isinstance(o, arith.ExtFOp):
                self._convert(o, self._from_fp8(o, o.input, formats[o]))
            elif isinstance(o, arith.TruncFOp):
                self._convert(o, self._to_fp8(o, _float(o, o.input, f32), formats[o]))
            elif o.name.startswith(("arith.", "math.")) or isinstance(o, tile.CmpFOp):
                raise PassInputError(f"{o.name} on fp8 values: no target computes on fp8 "
                                     "(compute in float32)", source_loc(o))
        for o in touched:
            if isinstance(o, arith.ConstantOp):
                Rewriter.replace_op(o, _bits_constant(o))
        if touched or has_fp8:
            PatternRewriteWalker(_Bits(recursive=True),
                                 apply_recursively=False).rewrite_module(op)

    def _convert(self, old: Operation, new: SSAValue) -> None:
        old.results[0].replace_all_uses_with(new)
        Rewriter.erase_op(old)

    def _from_fp8(self, at: Operation, x: SSAValue, fmt: str) -> SSAValue:
        """The f32 value of ``x``, fp8 of format ``fmt``, then as ``at``'s result type.
        Natively, an f32 only narrowed to f16 (the frontend's fp8 -> f16, a dot's operands)
        is converted to f16 at once: PTX's conversion gives f16."""
        narrowed = [u.operation for u in at.results[0].uses]
        if self.native and narrowed and all(
                isinstance(n, arith.TruncFOp) and element_type(n.result.type) == f16
                for n in narrowed):
            half = _insert(at, tile.FromFp8Op(fmt, x, f16))
            for n in narrowed:
                self._convert(n, half)
            return half
        wide = _insert(at, tile.FromFp8Op(fmt, x)) if self.native else \
            _expand_from(Emitter(at, like(x.type, f32)), x, fmt)
        return _float(at, wide, element_type(at.results[0].type))

    def _to_fp8(self, at: Operation, x: SSAValue, fmt: str) -> SSAValue:
        """The bits of f32 ``x`` rounded to fp8 format ``fmt``."""
        if self.native:
            return _insert(at, tile.ToFp8Op(fmt, x))
        return _expand_to(Emitter(at, x.type), x, fmt)


def _fp8_ops(module: ModuleOp) -> tuple[list[Operation], bool]:
    """The ops with fp8 operands or results, and whether any block has an fp8 argument."""
    touched, has_fp8 = [], False
    for o in module.walk():
        if any(is_fp8(v.type) for v in (*o.operands, *o.results)):
            touched.append(o)
        has_fp8 = has_fp8 or any(is_fp8(a.type) for r in o.regions for blk in r.blocks
                                 for a in blk.args)
    return touched, has_fp8


def _transpose_converted_bs(touched: list[Operation]) -> bool:
    """``_transpose_converted`` on every fp8 ``extf``; whether one changed."""
    changed = False
    for o in touched:
        if isinstance(o, arith.ExtFOp) and _transpose_converted(o):
            changed = True
    return changed


def _transpose_converted(ext: arith.ExtFOp) -> bool:
    """``truncf(extf(trans(x)))`` to f16, read only as B of dots, as
    ``trans(truncf(extf(x)))`` (whether it was one): the transpose then moves nothing, as
    for an f16 B (wgmma reads B K-major from where it is staged), while a transpose of
    the fp8 bytes went through shared memory a byte at a time. In tutorial 06's fp8
    forward pass at 128x128 tiles those byte transposes, with an address register per
    byte held across the loop, were a third of the PTX and of the spills, and two thirds
    of ptxas' time."""
    trans, narrowed = ext.input.owner, [u.operation for u in ext.result.uses]
    if not isinstance(trans, tile.TransOp) or not trans.result.has_one_use() or not narrowed \
            or not all(_f16_dot_b(n) for n in narrowed):
        return False
    src = trans.src
    wide = _insert(ext, arith.ExtFOp(src, like(src.type, f32)))
    for n in narrowed:
        half = _insert(n, casts.TruncFOp(wide, like(src.type, f16)))
        new = tile.TransOp(half, trans.permutation)
        new.location = n.location
        Rewriter.replace_op(n, new)
    Rewriter.erase_op(ext)
    Rewriter.erase_op(trans)
    return True


def _f16_dot_b(op: Operation) -> bool:
    """Whether ``op`` narrows to f16 for B operands of dots only."""
    return isinstance(op, arith.TruncFOp) and element_type(op.result.type) == f16 and all(
        isinstance(u.operation, tile.DotOp) and u.index == 1 for u in op.result.uses)


def _insert(at: Operation, op: Operation) -> SSAValue:
    """``op``'s result, ``op`` put before ``at`` with its location."""
    op.location = at.location
    Rewriter.insert_op(op, InsertPoint.before(at))
    return op.results[0]


def _float(at: Operation, x: SSAValue, t: Attribute) -> SSAValue:
    """Float ``x`` as float type ``t``, one of them f32: exact for the values met here (fp8
    ones), but for an f64 rounded to fp8, which rounds to f32 first, as the frontend's
    casts do."""
    src = element_type(x.type)
    if src == t:
        return x
    assert isinstance(src, AnyFloat) and isinstance(t, AnyFloat)
    rt = like(x.type, t)
    return _insert(at, arith.ExtFOp(x, rt) if t.bitwidth > src.bitwidth else
                   casts.TruncFOp(x, rt))


def _bits_constant(op: arith.ConstantOp) -> arith.ConstantOp:
    """An fp8 constant as the i8 constant of its bits."""
    t = op.result.type
    d = _FORMATS[type(element_type(t))][1]
    value = op.value
    if isinstance(value, FloatAttr):
        return arith.ConstantOp(IntegerAttr(fp8_bits(value.value.data, d), i8,
                                            truncate_bits=True), i8)
    assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, TensorType)
    codes = [fp8_bits(v, d) for v in value.get_values()]
    rt = like(t, i8)
    return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(rt, [
        c - 256 if c > 127 else c for c in codes]), rt)


# -- the conversions as arithmetic ------------------------------------------------------

def _expand_from(e: Emitter, x: SSAValue, fmt: str) -> SSAValue:
    """fp8 bits -> f32: the exponent rebiased and the mantissa moved up for a normal
    value; a subnormal one is its integer mantissa times 2^(1 - bias - m), exactly (no f32
    subnormal is made, which a target may flush); infinity is e5m2's top exponent with a
    zero mantissa; NaN (e4m3's 0x7F, e5m2's other top codes) is the canonical quiet NaN
    PTX's conversion gives."""
    m, bias, _ = _SPEC[fmt]
    u = I(e, e.emit(casts.ExtUIOp(x, e.it)))
    mag = u & 0x7F
    normal = (mag << (23 - m)) + ((127 - bias) << 23)
    tiny = bits(F(e, e.emit(casts.SIToFPOp(mag.v, e.ft))) * 2.0 ** (1 - bias - m))
    out = iselect(mag < (1 << m), tiny, normal)
    if fmt == "e5m2":
        out = iselect(mag.eq(0x7C), 0x7F800000, out)
    out = out | ((u & 0x80) << 24)
    return from_bits(iselect(mag > _NAN_ABOVE[fmt], 0x7FFFFFFF, out)).v


def _expand_to(e: Emitter, x: SSAValue, fmt: str) -> SSAValue:
    """f32 -> fp8 bits, as ``cvt.rn.satfinite``: a normal result rounds the f32 bits to
    nearest even at the fp8 mantissa's last bit (a carry moves into the exponent, as it
    should); a subnormal one is |x| scaled to units of the smallest subnormal and rounded
    to an integer (``roundeven``, exact on every target); past the largest finite value
    (infinity too) the result is that value; NaN is 0x7F."""
    m, bias, top = _SPEC[fmt]
    xf = F(e, x)
    b = bits(xf)
    a = b & 0x7FFFFFFF
    drop = 23 - m
    normal = ((a + ((1 << (drop - 1)) - 1) + ((a >> drop) & 1)) >> drop) - ((127 - bias) << m)
    scaled = rint(fabs(xf) * 2.0 ** (bias - 1 + m))
    tiny = I(e, e.emit(casts.FPToSIOp(scaled.v, e.it)))
    code = iselect(a < ((128 - bias) << 23), tiny, normal)
    code = iselect(a > (top << drop) + ((127 - bias) << 23), top, code)
    code = iselect(a > 0x7F800000, 0x7F, code | ((b >> 24) & 0x80))
    return e.emit(casts.TruncIOp(code.v, like(x.type, i8)))
