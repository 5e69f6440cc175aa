"""Part of simt-to-ptx: elementwise ``arith``/``math`` ops, comparisons, selects and
constants -> the ptx dialect.

Elementwise ops are lowered by table: ``TABLE[(op class, dtype)]`` is a chain of PTX
steps; the first step takes the op's operands, each later step the previous result,
each followed by its float immediates. Half-precision ops missing from the table are
computed in f32 (the conversions are exact, and one f32 rounding followed by rounding
to f16 is the correctly rounded f16 result for + - * / and sqrt). Ops a chain cannot
express have a recipe (``_RECIPES``).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from backends.ptx.lower_core import (
    INTS,
    Lowering,
    Step,
    dtype,
    handler_class,
    int_type,
    lowers,
    unsupported,
)
from dialects import ptx, tile
from dialects.tile import like

_HALF = ("f16", "bf16")
LOG2E, LN2 = 1.4426950408889634, 0.6931471805599453

# Integer ops: {s}/{u}/{b} become the signed/unsigned/untyped type of the register width.
_INT_OPS = {
    arith.AddiOp: "add.{s}", arith.SubiOp: "sub.{s}", arith.MuliOp: "mul.lo.{s}",
    arith.DivSIOp: "div.{s}", arith.DivUIOp: "div.{u}", arith.RemSIOp: "rem.{s}",
    arith.RemUIOp: "rem.{u}", arith.AndIOp: "and.{b}", arith.OrIOp: "or.{b}",
    arith.XOrIOp: "xor.{b}", arith.ShLIOp: "shl.{b}", arith.ShRSIOp: "shr.{s}",
    arith.ShRUIOp: "shr.{u}", arith.MaxSIOp: "max.{s}", arith.MinSIOp: "min.{s}",
    arith.MaxUIOp: "max.{u}", arith.MinUIOp: "min.{u}", math.AbsIOp: "abs.{s}",
}
# An i8 register's upper bits are unspecified: these ops read them, so their operands
# are sign- (True) or zero- (False) extended first.
_READS_HIGH_BITS = {
    arith.DivSIOp: True, arith.RemSIOp: True, arith.ShRSIOp: True, arith.MaxSIOp: True,
    arith.MinSIOp: True, math.AbsIOp: True, arith.DivUIOp: False, arith.RemUIOp: False,
    arith.ShRUIOp: False, arith.MaxUIOp: False, arith.MinUIOp: False,
}
_SHIFTS = (arith.ShLIOp, arith.ShRSIOp, arith.ShRUIOp)  # PTX takes the amount as u32
# i1 is a predicate; signed i1 reads true as -1.
_PRED_OPS = {
    arith.AndIOp: "and.pred", arith.OrIOp: "or.pred", arith.XOrIOp: "xor.pred",
    arith.AddiOp: "xor.pred", arith.SubiOp: "xor.pred", arith.MuliOp: "and.pred",
    arith.MaxUIOp: "or.pred", arith.MinUIOp: "and.pred", arith.MaxSIOp: "and.pred",
    arith.MinSIOp: "or.pred",
}
# Float ops, IEEE-rounded (.rn also keeps ptxas from contracting mul+add into fma).
_FLOAT_OPS = {
    arith.AddfOp: "add.rn.{f}", arith.SubfOp: "sub.rn.{f}", arith.MulfOp: "mul.rn.{f}",
    arith.DivfOp: "div.rn.{f}", arith.NegfOp: "neg.{f}", math.AbsFOp: "abs.{f}",
    math.FmaOp: "fma.rn.{f}", math.SqrtOp: "sqrt.rn.{f}", math.FloorOp: "cvt.rmi.{f}.{f}",
    math.CeilOp: "cvt.rpi.{f}.{f}", math.TruncOp: "cvt.rzi.{f}.{f}",
    math.RoundEvenOp: "cvt.rni.{f}.{f}",
}
_NAN_MINMAX = {arith.MaximumfOp: "max.NaN.{f}", arith.MinimumfOp: "min.NaN.{f}"}
_NATIVE_F16 = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.NegfOp, math.AbsFOp,
               math.FmaOp, arith.MaximumfOp, arith.MinimumfOp)
# Transcendentals use the fast approximate instructions, as Triton does.
_F32_FAST: dict[type, tuple[Step, ...]] = {
    math.ExpOp: (("mul.f32", LOG2E), ("ex2.approx.ftz.f32",)),
    math.LogOp: (("lg2.approx.ftz.f32",), ("mul.f32", LN2)),
    math.Exp2Op: (("ex2.approx.ftz.f32",),),
    math.Log2Op: (("lg2.approx.ftz.f32",),),
    math.RsqrtOp: (("rsqrt.approx.ftz.f32",),),
    math.SinOp: (("sin.approx.ftz.f32",),),
    math.CosOp: (("cos.approx.ftz.f32",),),
}
_CMPI = {"eq": "eq.{u}", "ne": "ne.{u}", "slt": "lt.{s}", "sle": "le.{s}", "sgt": "gt.{s}",
         "sge": "ge.{s}", "ult": "lt.{u}", "ule": "le.{u}", "ugt": "gt.{u}", "uge": "ge.{u}"}
_CMPF = {"oeq": "eq", "one": "ne", "olt": "lt", "ole": "le", "ogt": "gt", "oge": "ge",
         "ord": "num", "ueq": "equ", "une": "neu", "ult": "ltu", "ule": "leu", "ugt": "gtu",
         "uge": "geu", "uno": "nan"}


def _build_table() -> dict[tuple[type, str], tuple[Step, ...]]:
    table: dict[tuple[type, str], tuple[Step, ...]] = {}
    for dt in INTS:
        w = 16 if dt == "i8" else int(dt[1:])
        for op, t in _INT_OPS.items():
            table[op, dt] = ((t.format(s=f"s{w}", u=f"u{w}", b=f"b{w}"),),)
    for op, t in _PRED_OPS.items():
        table[op, "i1"] = ((t,),)
    for op, t in (_FLOAT_OPS | _NAN_MINMAX).items():
        for dt in ("f32", "f64", "f16"):
            if (dt != "f16" or op in _NATIVE_F16) and (dt != "f64" or op not in _NAN_MINMAX):
                table[op, dt] = ((t.format(f=dt),),)
    table |= {(op, "f32"): chain for op, chain in _F32_FAST.items()}
    table[math.RsqrtOp, "f64"] = (("sqrt.rn.f64",), ("rcp.rn.f64",))
    table |= {(tile.UMulHiOp, dt): ((f"mul.hi.u{dt[1:]}",),) for dt in ("i32", "i64")}
    table |= {(tile.BrevOp, dt): ((f"brev.b{dt[1:]}",),) for dt in ("i32", "i64")}
    table |= {(cls, "i32"): ((opcode,),) for cls, opcode in (
        (math.CtPopOp, "popc.b32"), (math.CountLeadingZerosOp, "clz.b32"))}
    table[math.CountTrailingZerosOp, "i32"] = (("brev.b32",), ("clz.b32",))
    return table


TABLE = _build_table()


# -- recipes: ops no single chain expresses ---------------------------------------------

def _nan_minmax_f64(lo: Lowering, opcode: str, a: SSAValue, b: SSAValue) -> SSAValue:
    m = lo.inst(opcode, [a, b], a.type)
    nan = lo.inst("setp.nan.f64", [a, b], like(a.type, IntegerType(1)))
    return lo.select(nan, lo.inst("add.rn.f64", [a, b], a.type), m)


def _powf(lo: Lowering, x: SSAValue, y: SSAValue) -> SSAValue:
    """2^(y * log2|x|), with the sign and NaN rules of C pow for negative x."""
    t, p = x.type, like(x.type, IntegerType(1))
    r = lo.inst("lg2.approx.ftz.f32", [lo.inst("abs.f32", [x], t)], t)
    r = lo.inst("ex2.approx.ftz.f32", [lo.inst("mul.f32", [y, r], t)], t)
    whole = lo.inst("setp.eq.f32", [lo.inst("cvt.rzi.f32.f32", [y], t), y], p)
    half = lo.inst("mul.f32", [y, lo.const(0.5, "f32")], t)
    odd = lo.inst("and.pred", [whole, lo.inst(
        "setp.ne.f32", [lo.inst("cvt.rzi.f32.f32", [half], t), half], p)], p)
    neg = lo.inst("setp.lt.f32", [x, lo.const(0.0, "f32")], p)
    r = lo.select(lo.inst("and.pred", [neg, odd], p), lo.inst("neg.f32", [r], t), r)
    frac = lo.inst("and.pred", [neg, lo.inst("not.pred", [whole], p)], p)
    r = lo.select(frac, lo.const(float("nan"), "f32"), r)
    return lo.select(lo.inst("setp.eq.f32", [y, lo.const(0.0, "f32")], p),
                     lo.const(1.0, "f32"), r)


def _count64(lo: Lowering, x: SSAValue, *opcodes: str) -> SSAValue:
    """A bit count of an i64 (``popc.b64``/``clz.b64`` write a u32), widened back."""
    for opcode in opcodes[:-1]:
        x = lo.inst(opcode, [x], x.type)
    return lo.cvt(lo.inst(opcodes[-1], [x], like(x.type, IntegerType(32))), "cvt.u64.u32",
                  "i64")


_RECIPES: dict[tuple[type, str], Callable[..., SSAValue]] = {
    (arith.MaximumfOp, "f64"): lambda lo, a, b: _nan_minmax_f64(lo, "max.f64", a, b),
    (arith.MinimumfOp, "f64"): lambda lo, a, b: _nan_minmax_f64(lo, "min.f64", a, b),
    (math.PowFOp, "f32"): _powf,
    (math.CtPopOp, "i64"): lambda lo, x: _count64(lo, x, "popc.b64"),
    (math.CountLeadingZerosOp, "i64"): lambda lo, x: _count64(lo, x, "clz.b64"),
    (math.CountTrailingZerosOp, "i64"): lambda lo, x: _count64(lo, x, "brev.b64", "clz.b64"),
}


# -- elementwise ops, by table ----------------------------------------------------------

def _has_impl(cls: type, dt: str) -> bool:
    return (cls, dt) in TABLE or (cls, dt) in _RECIPES


def _apply(lo: Lowering, cls: type, dt: str, args: list[SSAValue], rtype: Attribute
           ) -> SSAValue:
    if (cls, dt) in TABLE:
        return lo.chain(TABLE[cls, dt], args, rtype)
    return _RECIPES[cls, dt](lo, *args)


# min/max ops for which op(a, op(a, b)) is op(a, b)
_ABSORBING = (arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp, arith.MinUIOp, arith.MaximumfOp,
              arith.MinimumfOp)


def _absorbed(op: Operation, cls: type) -> SSAValue | None:
    """The inner op's result where ``op`` is ``m(a, m(a, b))`` (in any operand order) for
    a min or max ``m``: the outer op changes nothing. Not emitting it is also what keeps
    ptxas 13.0 (sm_90) from miscompiling ``min(a, min(a, -a))``: it fuses the two into
    one three-way VIMNMX3 of ``a, a, a`` and loses the negation."""
    if cls not in _ABSORBING:
        return None
    for outer, inner in (op.operands, reversed(op.operands)):
        if handler_class(type(inner.owner)) is cls and outer in inner.owner.operands:
            return inner
    return None


def elementwise(lo: Lowering, op: Operation) -> SSAValue:
    cls = handler_class(type(op))
    assert cls is not None
    if (inner := _absorbed(op, cls)) is not None:
        return lo.values[inner]
    dt, rtype = dtype(op.operands[0].type), op.results[0].type
    args = lo.args(op)
    if dt == "i8" and cls in _READS_HIGH_BITS:
        args = [lo.extend_i8(a, _READS_HIGH_BITS[cls]) for a in args]
    if cls in _SHIFTS and dt != "i32":
        args[1] = lo.cvt(args[1], f"cvt.u32.{int_type(dt, False)}", "i32")
    if _has_impl(cls, dt):
        return _apply(lo, cls, dt, args, rtype)
    if dt in _HALF and _has_impl(cls, "f32"):
        wide = _apply(lo, cls, "f32", [lo.to_f32(a) for a in args], like(rtype, f32))
        return lo.from_f32(wide, dt)
    raise unsupported(op, f"{op.name} on {dt}")


# Every op class the table or a recipe knows, whatever its dtype (others are refused above).
lowers(*{cls for cls, _ in TABLE}, *{cls for cls, _ in _RECIPES})(elementwise)


# -- comparisons, selects, constants ------------------------------------------------------

@lowers(tile.CmpIOp)
def cmpi(lo: Lowering, op: tile.CmpIOp) -> SSAValue:
    a, b = lo.args(op)
    dt, pred, rtype = dtype(a.type), op.predicate.data, op.result.type
    if dt == "i1" and pred in ("eq", "ne"):
        ne = lo.inst("xor.pred", [a, b], rtype)
        return ne if pred == "ne" else lo.inst("not.pred", [ne], rtype)
    if dt not in INTS:
        raise unsupported(op, f"tile.cmpi {pred} on {dt}")
    w = 16 if dt == "i8" else int(dt[1:])
    if dt == "i8":
        a, b = (lo.extend_i8(v, pred[0] == "s") for v in (a, b))
    return lo.inst(f"setp.{_CMPI[pred].format(s=f's{w}', u=f'u{w}')}", [a, b], rtype)


@lowers(tile.CmpFOp)
def cmpf(lo: Lowering, op: tile.CmpFOp) -> SSAValue:
    a, b = lo.args(op)
    dt = dtype(a.type)
    if dt == "bf16":  # setp.bf16 needs sm_90; f32 compares the same values
        a, b = lo.to_f32(a), lo.to_f32(b)
        dt = "f32"
    return lo.inst(f"setp.{_CMPF[op.predicate.data]}.{dt}", [a, b], op.result.type)


@lowers(tile.SelectOp, arith.SelectOp)
def select(lo: Lowering, op: tile.SelectOp | arith.SelectOp) -> SSAValue:
    cond, a, b = lo.args(op)
    return lo.select(cond, a, b)


@lowers(arith.ConstantOp)
def constant(lo: Lowering, op: arith.ConstantOp) -> SSAValue:
    value = op.value
    dtype(op.result.type)  # rejects types PTX has no register for
    if not isinstance(value, DenseIntOrFPElementsAttr):
        return lo.value(ptx.MovImmOp(value))
    if value.is_splat():
        scalar = lo.value(ptx.MovImmOp(value.get_attrs()[0]))
        return lo.value(ptx.LanesOp(scalar, [0] * ptx.lanes(op.result.type), op.result.type))
    return lo.value(ptx.MovImmOp(value))



@lowers(tile.ArithFenceOp)
def arith_fence(lo: Lowering, op: tile.ArithFenceOp) -> SSAValue:
    """Nothing: ptxas does not rewrite ``.rn`` float arithmetic."""
    return lo.args(op)[0]
