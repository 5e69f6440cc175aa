"""simt-to-ptx: SIMT IR -> the ptx dialect.

Input: a ``func.func`` per kernel holding SIMT IR (``arith``, ``math``, ``vector.broadcast``,
``tile.program_id``/``num_programs``/``cmpi``/``cmpf``/``select``, ``simt.thread_id``/
``load``/``store``; values are scalars or ``vector<K x T>``). Output: the same function,
arguments unchanged, whose body is ptx-dialect instructions on virtual registers, with
``ptx.maxntid`` (threads per program) as a function attribute.

Elementwise ops are lowered by table: ``TABLE[(op class, dtype)]`` is a chain of PTX
steps; the first step takes the op's operands, each later step the previous result,
each followed by its float immediates. Half-precision ops missing from the table are
computed in f32 (the conversions are exact, and one f32 rounding followed by rounding
to f16 is the correctly rounded f16 result for + - * / and sqrt). Ops a chain cannot
express have a recipe method.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, math, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from compiler.context import source_loc
from compiler.errors import UnsupportedError
from compiler.passes import ptx_control, ptx_cross_thread
from dialects import ptx, simt, tile
from dialects.tile import PtrType, element_type, like

Step = tuple  # (opcode, *float immediates appended to the step's operands)

_DTYPES: dict[Attribute, str] = {
    IntegerType(1): "i1", IntegerType(8): "i8", IntegerType(16): "i16",
    IntegerType(32): "i32", IntegerType(64): "i64", Float16Type(): "f16",
    BFloat16Type(): "bf16", Float32Type(): "f32", Float64Type(): "f64",
}
_ELEMS = {name: t for t, name in _DTYPES.items()}
_INTS = ("i8", "i16", "i32", "i64")
_HALF = ("f16", "bf16")
_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4,
          "f64": 8}
# selp/mov move bit patterns; halves and bytes live in 16-bit registers.
_BITS = {"i8": "b16", "i16": "b16", "f16": "b16", "bf16": "b16", "i32": "b32", "f32": "b32",
         "i64": "b64", "f64": "b64"}
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


def _build_table() -> dict[tuple[type, str], tuple[Step, ...]]:
    table: dict[tuple[type, str], tuple[Step, ...]] = {}
    for dt in _INTS:
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
    return table


TABLE = _build_table()

_CMPI = {"eq": "eq.{u}", "ne": "ne.{u}", "slt": "lt.{s}", "sle": "le.{s}", "sgt": "gt.{s}",
         "sge": "ge.{s}", "ult": "lt.{u}", "ule": "le.{u}", "ugt": "gt.{u}", "uge": "ge.{u}"}
_CMPF = {"oeq": "eq", "one": "ne", "olt": "lt", "ole": "le", "ogt": "gt", "oge": "ge",
         "ord": "num", "ueq": "equ", "une": "neu", "ult": "ltu", "ule": "leu", "ugt": "gtu",
         "uge": "geu", "uno": "nan"}
_SREGS = {tile.ProgramIdOp: "%ctaid", tile.NumProgramsOp: "%nctaid"}
# Atomics: (kind, dtype) -> the atom.global operation and type. f32 max/min have no atom:
# an atom.global.cas loop applies the NaN-propagating max/min instead.
_ATOM = {("add", "i32"): "add.u32", ("add", "f32"): "add.f32", ("max", "i32"): "max.s32",
         ("min", "i32"): "min.s32", ("umax", "i32"): "max.u32", ("umin", "i32"): "min.u32",
         ("xchg", "i32"): "exch.b32", ("xchg", "f32"): "exch.b32", ("cas", "i32"): "cas.b32",
         ("cas", "f32"): "cas.b32"}
_ATOM_LOOP = {("max", "f32"): "max.NaN.f32", ("min", "f32"): "min.NaN.f32"}


def _dtype(t: Attribute) -> str:
    try:
        return _DTYPES[element_type(t)]
    except KeyError:
        raise UnsupportedError(f"type {t} is not supported by the ptx backend") from None


def _int_type(dt: str, signed: bool) -> str:
    return f"{'s' if signed else 'u'}{dt[1:]}"


def _ptx_type(dt: str, signed: bool = True) -> str:
    """The PTX type naming values of ``dt`` in a cvt (``s8``, ``u32``, ``f16``, ...)."""
    return dt if dt[0] in "fb" else _int_type(dt, signed)




def _unsupported(op: Operation, what: str) -> UnsupportedError:
    return UnsupportedError(f"{what} is not supported by the ptx backend", source_loc(op))


class _Lowering:
    """Lowers one kernel into a new entry block; all naming state is per kernel."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.block = Block(arg_types=kernel.body.block.arg_types)
        self.values: dict[SSAValue, SSAValue] = {}
        # Constants, lane picks and address offsets, reused within the kernel's one block
        # (the first definition dominates every later use).
        self.memo: dict[tuple, SSAValue] = {}
        self.location: Attribute | None = None
        self.labels = 0  # branch labels made so far (ptx_control)

    def run(self) -> None:
        old = self.kernel.body.block
        for arg, new in zip(old.args, self.block.args, strict=True):
            new.name_hint = arg.name_hint
            self.values[arg] = self._param(new)
        for op in old.ops:
            self.location = op.location
            self._lower(op)
        self.kernel.body.add_block(self.block)
        self.kernel.body.detach_block(old)
        warps = self.kernel.attributes.pop("simt.num_warps", None)  # else KernelInfo's 4
        threads = 32 * (warps.value.data if isinstance(warps, IntegerAttr) else 4)
        self.kernel.attributes["ptx.maxntid"] = IntegerAttr(threads, i32)

    # -- building blocks ---------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue | None:
        if self.location is not None:
            op.location = self.location
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def inst(self, opcode: str, args: list[SSAValue], rtype: Attribute) -> SSAValue:
        op = ptx.InstOp(opcode, args, rtype)
        self.emit(op)
        return op.result

    def value(self, op: Operation) -> SSAValue:
        self.emit(op)
        return op.results[0]

    def const(self, value: float, dt: str) -> SSAValue:
        """A scalar register holding ``value`` (scalars broadcast over lanes)."""
        key = ("const", repr(value), dt)  # repr: -0.0 is not 0.0
        if key not in self.memo:
            elem = _ELEMS[dt]
            attr = (FloatAttr(float(value), elem) if dt[0] in "fb"
                    else IntegerAttr(int(value), elem, truncate_bits=True))
            self.memo[key] = self.value(ptx.MovImmOp(attr))
        return self.memo[key]

    def chain(self, steps: tuple[Step, ...], args: list[SSAValue], rtype: Attribute) -> SSAValue:
        for opcode, *imms in steps:
            args = [self.inst(opcode, args + [self.const(i, "f32") for i in imms], rtype)]
        return args[0]

    def cvt(self, v: SSAValue, opcode: str, dt: str) -> SSAValue:
        return self.inst(opcode, [v], like(v.type, _ELEMS[dt]))

    def extend_i8(self, v: SSAValue, signed: bool) -> SSAValue:
        t = _int_type("i8", signed)
        return self.cvt(v, f"cvt.{t[0]}16.{t}", "i8")

    def to_f32(self, v: SSAValue) -> SSAValue:
        return self.cvt(v, f"cvt.f32.{_dtype(v.type)}", "f32")

    def from_f32(self, v: SSAValue, dt: str) -> SSAValue:
        return self.cvt(v, f"cvt.rn.{dt}.f32", dt)

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """``cond ? a : b`` per lane; any of the three may be a scalar."""
        dt = _dtype(a.type)
        widest = max((cond, a, b), key=lambda v: ptx.lanes(v.type)).type
        t = like(widest, _ELEMS[dt])
        if dt != "i1":
            return self.inst(f"selp.{_BITS[dt]}", [a, b, cond], t)
        both = self.inst("and.pred", [cond, a], t)
        other = self.inst("and.pred", [self.inst("not.pred", [cond], cond.type), b], t)
        return self.inst("or.pred", [both, other], t)

    def pick(self, v: SSAValue, stride: int) -> SSAValue:
        """Every ``stride``-th lane of ``v``: one register per wide access."""
        key = ("pick", v, stride)
        if stride > 1 and key not in self.memo:
            self.memo[key] = self.value(ptx.LanesOp(v, list(range(0, ptx.lanes(v.type), stride))))
        return self.memo.get(key, v)

    # -- kernel parameters -------------------------------------------------------------

    def _param(self, arg: SSAValue) -> SSAValue:
        dt = _dtype(arg.type.pointee if isinstance(arg.type, PtrType) else arg.type)
        reg = self.value(ptx.LdParamOp(arg))
        if isinstance(arg.type, PtrType):
            return self.inst("cvta.to.global.u64", [reg], reg.type)
        if dt == "i1":
            return self.inst("setp.ne.u16", [reg, self.const(0, "i8")], arg.type)
        return reg

    # -- dispatch ----------------------------------------------------------------------

    def _lower(self, op: Operation) -> None:
        cls = _table_class(type(op))
        if cls is None:
            raise _unsupported(op, f"operation {op.name}")
        try:
            result = _SPECIAL[cls](self, op) if cls in _SPECIAL else self._elementwise(op, cls)
        except UnsupportedError as e:
            if e.loc is not None or source_loc(op) is None:
                raise
            raise UnsupportedError(e.message, source_loc(op)) from None
        if result is not None:
            self.values[op.results[0]] = result

    def _args(self, op: Operation) -> list[SSAValue]:
        return [self.values[v] for v in op.operands]

    def _elementwise(self, op: Operation, cls: type) -> SSAValue:
        dt, rtype = _dtype(op.operands[0].type), op.results[0].type
        args = self._args(op)
        if dt == "i8" and cls in _READS_HIGH_BITS:
            args = [self.extend_i8(a, _READS_HIGH_BITS[cls]) for a in args]
        if cls in _SHIFTS and dt != "i32":
            args[1] = self.cvt(args[1], f"cvt.u32.{_int_type(dt, False)}", "i32")
        if _has_impl(cls, dt):
            return self._apply(cls, dt, args, rtype)
        if dt in _HALF and _has_impl(cls, "f32"):
            wide = self._apply(cls, "f32", [self.to_f32(a) for a in args], like(rtype, f32))
            return self.from_f32(wide, dt)
        raise _unsupported(op, f"{op.name} on {dt}")

    def _apply(self, cls: type, dt: str, args: list[SSAValue], rtype: Attribute) -> SSAValue:
        if (cls, dt) in TABLE:
            return self.chain(TABLE[cls, dt], args, rtype)
        return _RECIPES[cls, dt](self, *args)

    # -- recipes: ops no single chain expresses -----------------------------------------

    def _nan_minmax_f64(self, opcode: str, a: SSAValue, b: SSAValue) -> SSAValue:
        m = self.inst(opcode, [a, b], a.type)
        nan = self.inst("setp.nan.f64", [a, b], like(a.type, IntegerType(1)))
        return self.select(nan, self.inst("add.rn.f64", [a, b], a.type), m)

    def _powf(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """2^(y * log2|x|), with the sign and NaN rules of C pow for negative x."""
        t, p = x.type, like(x.type, IntegerType(1))
        r = self.inst("lg2.approx.ftz.f32", [self.inst("abs.f32", [x], t)], t)
        r = self.inst("ex2.approx.ftz.f32", [self.inst("mul.f32", [y, r], t)], t)
        whole = self.inst("setp.eq.f32", [self.inst("cvt.rzi.f32.f32", [y], t), y], p)
        half = self.inst("mul.f32", [y, self.const(0.5, "f32")], t)
        odd = self.inst("and.pred", [whole, self.inst(
            "setp.ne.f32", [self.inst("cvt.rzi.f32.f32", [half], t), half], p)], p)
        neg = self.inst("setp.lt.f32", [x, self.const(0.0, "f32")], p)
        r = self.select(self.inst("and.pred", [neg, odd], p), self.inst("neg.f32", [r], t), r)
        frac = self.inst("and.pred", [neg, self.inst("not.pred", [whole], p)], p)
        r = self.select(frac, self.const(float("nan"), "f32"), r)
        return self.select(self.inst("setp.eq.f32", [y, self.const(0.0, "f32")], p),
                           self.const(1.0, "f32"), r)

    # -- the other SIMT ops ----------------------------------------------------------------

    def _constant(self, op: arith.ConstantOp) -> SSAValue:
        value = op.value
        _dtype(op.result.type)  # rejects types PTX has no register for
        if not isinstance(value, DenseIntOrFPElementsAttr):
            return self.value(ptx.MovImmOp(value))
        if value.is_splat():
            scalar = self.value(ptx.MovImmOp(value.get_attrs()[0]))
            return self.value(ptx.LanesOp(scalar, [0] * ptx.lanes(op.result.type),
                                          op.result.type))
        return self.value(ptx.MovImmOp(value))

    def _broadcast(self, op: vector.BroadcastOp) -> SSAValue:
        if isinstance(op.source.type, VectorType):
            raise _unsupported(op, "vector.broadcast of a vector")
        lanes = [0] * ptx.lanes(op.vector.type)
        return self.value(ptx.LanesOp(self.values[op.source], lanes, op.vector.type))

    def _shuffle(self, op: vector.ShuffleOp) -> SSAValue:
        """Lanes picked by a constant mask: the same registers, renamed."""
        n, mask = ptx.lanes(op.v1.type), list(op.mask.get_values())
        if op.v1 != op.v2 and any(m >= n for m in mask):  # lanes of both: join them
            both = self.value(ptx.ConcatOp([self.values[op.v1], self.values[op.v2]]))
            return self.value(ptx.LanesOp(both, mask, op.result.type))
        picked = [m % n for m in mask]
        return self.value(ptx.LanesOp(self.values[op.v1], picked, op.result.type))

    def _sreg(self, op: tile.ProgramIdOp | tile.NumProgramsOp) -> SSAValue:
        return self.value(ptx.SRegOp(f"{_SREGS[type(op)]}.{'xyz'[op.axis.value.data]}"))

    def _thread_id(self, _op: simt.ThreadIdOp) -> SSAValue:
        return self.value(ptx.SRegOp("%tid.x"))

    def _cmpi(self, op: tile.CmpIOp) -> SSAValue:
        a, b = self._args(op)
        dt, pred, rtype = _dtype(a.type), op.predicate.data, op.result.type
        if dt == "i1" and pred in ("eq", "ne"):
            ne = self.inst("xor.pred", [a, b], rtype)
            return ne if pred == "ne" else self.inst("not.pred", [ne], rtype)
        if dt not in _INTS:
            raise _unsupported(op, f"tile.cmpi {pred} on {dt}")
        w = 16 if dt == "i8" else int(dt[1:])
        if dt == "i8":
            a, b = (self.extend_i8(v, pred[0] == "s") for v in (a, b))
        return self.inst(f"setp.{_CMPI[pred].format(s=f's{w}', u=f'u{w}')}", [a, b], rtype)

    def _cmpf(self, op: tile.CmpFOp) -> SSAValue:
        a, b = self._args(op)
        dt = _dtype(a.type)
        if dt == "bf16":  # setp.bf16 needs sm_90; f32 compares the same values
            a, b = self.to_f32(a), self.to_f32(b)
            dt = "f32"
        return self.inst(f"setp.{_CMPF[op.predicate.data]}.{dt}", [a, b], op.result.type)

    def _select(self, op: tile.SelectOp | arith.SelectOp) -> SSAValue:
        cond, a, b = self._args(op)
        return self.select(cond, a, b)

    def _cast(self, op: Operation) -> SSAValue:
        (src,) = self._args(op)
        s, d, rtype = _dtype(src.type), _dtype(op.results[0].type), op.results[0].type
        if isinstance(op, arith.BitcastOp):
            return self.inst(f"mov.{_BITS[d]}", [src], rtype)
        if s == "i1":
            one = -1 if isinstance(op, arith.ExtSIOp | arith.SIToFPOp) else 1
            return self.select(src, self.const(one, d), self.const(0, d))
        if d == "i1":
            return self._to_bool(op, src, s, rtype)
        return self._numeric_cast(op, src, s, d)

    def _to_bool(self, op: Operation, src: SSAValue, s: str, rtype: Attribute) -> SSAValue:
        """trunci keeps the low bit; fptosi/fptoui saturate to i1's range ([-1, 0] or
        [0, 1]), as they do for every integer type."""
        if s in _INTS:
            w = _BITS[s][1:]
            low = self.inst(f"and.b{w}", [src, self.const(1, s)], src.type)
            return self.inst(f"setp.ne.b{w}", [low, self.const(0, s)], rtype)
        wide = self._numeric_cast(op, src, s, "i32")
        if isinstance(op, arith.FPToSIOp):
            return self.inst("setp.lt.s32", [wide, self.const(0, "i32")], rtype)
        return self.inst("setp.ne.s32", [wide, self.const(0, "i32")], rtype)

    def _numeric_cast(self, op: Operation, src: SSAValue, s: str, d: str) -> SSAValue:
        if "bf16" not in (s, d) or "f32" in (s, d):
            return self._convert(op, src, s, d)
        if d == "bf16":  # sm_80 converts bf16 only to and from f32
            return self.from_f32(self._convert(op, src, s, "f32"), d)
        return self._convert(op, self.to_f32(src), "f32", d)

    def _convert(self, op: Operation, src: SSAValue, s: str, d: str) -> SSAValue:
        """One ``cvt`` from dtype ``s`` to dtype ``d`` with the rounding ``op`` implies."""
        signed = not isinstance(op, arith.UIToFPOp | arith.FPToUIOp | arith.ExtUIOp
                                | arith.TruncIOp)
        if s == d or (isinstance(op, arith.TruncIOp) and d == "i8" and s == "i16"):
            return self.cvt(src, f"mov.{_BITS[d]}", d)  # same register bits
        rounding = ""
        if s[0] in "fb" and d[0] == "i":
            rounding = ".rzi"
        elif d[0] in "fb" and (s[0] == "i" or _BYTES[d] < _BYTES[s]):
            rounding = ".rn"
        return self.cvt(src, f"cvt{rounding}.{_ptx_type(d, signed)}.{_ptx_type(s, signed)}", d)

    # -- memory ------------------------------------------------------------------------

    def _address(self, base: SSAValue, index: SSAValue, dt: str) -> SSAValue:
        """``base + index * sizeof(dt)`` per lane of ``index``."""
        wide, key = like(index.type, _ELEMS["i64"]), ("offset", index, _BYTES[dt])
        if key not in self.memo:
            if _dtype(index.type) == "i64":
                off = self.inst("mul.lo.s64", [index, self.const(_BYTES[dt], "i64")], wide)
            else:
                off = self.inst("mul.wide.s32", [index, self.const(_BYTES[dt], "i32")], wide)
            self.memo[key] = off
        return self.inst("add.s64", [base, self.memo[key]], wide)

    def _access(self, op: simt.LoadOp | simt.StoreOp, dt: str
                ) -> tuple[SSAValue, SSAValue | None, int]:
        """Addresses and guards of the accesses, and their width in lanes."""
        vec = min(op.width, 16 // _BYTES[dt])  # PTX accesses are at most 128 bits wide
        addr = self._address(self.values[op.base], self.pick(self.values[op.index], vec), dt)
        mask = None if op.mask is None else self.pick(self.values[op.mask], vec)
        return addr, mask, vec

    def _load(self, op: simt.LoadOp) -> SSAValue:
        dt, rtype = _dtype(op.result.type), op.result.type
        addr, mask, vec = self._access(op, dt)
        other = None if op.other is None else self.values[op.other]
        if dt != "i1":
            return self.value(ptx.LdGlobalOp(addr, rtype, mask, other, vec))
        byte_type = like(rtype, IntegerType(8))  # bools are bytes in memory
        if other is not None:
            other = self.select(other, self.const(1, "i8"), self.const(0, "i8"))
        raw = self.value(ptx.LdGlobalOp(addr, byte_type, mask, other, vec))
        return self.inst("setp.ne.u16", [raw, self.const(0, "i8")], rtype)

    def _store(self, op: simt.StoreOp) -> None:
        dt = _dtype(op.value.type)
        addr, mask, vec = self._access(op, dt)
        value = self.values[op.value]
        if dt == "i1":
            value = self.select(value, self.const(1, "i8"), self.const(0, "i8"))
        self.emit(ptx.StGlobalOp(addr, value, mask, vec))

    def _atomic(self, op: simt.AtomicRMWOp | simt.AtomicCASOp) -> SSAValue:
        dt = _dtype(op.result.type)
        kind = op.kind.data if isinstance(op, simt.AtomicRMWOp) else "cas"
        addr = self._address(self.values[op.base], self.values[op.index], dt)
        pred = None if op.mask is None else self.values[op.mask]
        val = self.values[op.val]
        if (kind, dt) in _ATOM_LOOP:
            return self.value(ptx.AtomLoopOp(_ATOM_LOOP[kind, dt], addr, val, pred))
        if (kind, dt) not in _ATOM:
            raise _unsupported(op, f"{op.name} {kind} on {dt}")
        args = [self.values[op.cmp], val] if kind == "cas" else [val]
        return self.value(ptx.AtomOp(f"atom.global.{_ATOM[kind, dt]}", addr, args, pred))

    def _return(self, op: func.ReturnOp) -> None:
        if op.operands:
            raise _unsupported(op, "returning a value from a kernel")
        self.emit(func.ReturnOp())


_CASTS = (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp,
          arith.FPToUIOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, arith.BitcastOp)
_SPECIAL = {
    arith.ConstantOp: _Lowering._constant, vector.BroadcastOp: _Lowering._broadcast,
    vector.ShuffleOp: _Lowering._shuffle,
    tile.ProgramIdOp: _Lowering._sreg, tile.NumProgramsOp: _Lowering._sreg,
    simt.ThreadIdOp: _Lowering._thread_id, tile.CmpIOp: _Lowering._cmpi,
    tile.CmpFOp: _Lowering._cmpf, tile.SelectOp: _Lowering._select,
    arith.SelectOp: _Lowering._select, simt.LoadOp: _Lowering._load,
    simt.StoreOp: _Lowering._store, func.ReturnOp: _Lowering._return,
    simt.AtomicRMWOp: _Lowering._atomic, simt.AtomicCASOp: _Lowering._atomic,
} | {c: _Lowering._cast for c in _CASTS} | ptx_control.HANDLERS | ptx_cross_thread.HANDLERS
_RECIPES = {
    (arith.MaximumfOp, "f64"): lambda lo, a, b: lo._nan_minmax_f64("max.f64", a, b),
    (arith.MinimumfOp, "f64"): lambda lo, a, b: lo._nan_minmax_f64("min.f64", a, b),
    (math.PowFOp, "f32"): _Lowering._powf,
}
_ELEMENTWISE = {cls for cls, _ in TABLE} | {cls for cls, _ in _RECIPES}


def _has_impl(cls: type, dt: str) -> bool:
    return (cls, dt) in TABLE or (cls, dt) in _RECIPES


@functools.cache
def _table_class(cls: type) -> type | None:
    """The class the tables know ``cls`` by: itself or a base (tilec's shaped arith casts
    subclass xDSL's)."""
    return next((c for c in cls.__mro__ if c in _SPECIAL or c in _ELEMENTWISE), None)


@dataclass(frozen=True)
class SimtToPtx(ModulePass):
    """Lower every kernel of a SIMT module to the ptx dialect."""

    name = "simt-to-ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.ops:
            if isinstance(kernel, func.FuncOp):
                _Lowering(kernel).run()
