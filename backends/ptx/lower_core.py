"""The core of simt-to-ptx: ``Lowering`` (one kernel's state and the building blocks that
emit ptx-dialect ops), the dtype tables, and the handler table the feature modules
(``lower_*.py``) register into with ``@lowers(OpClass)``.

A handler takes the ``Lowering`` and one SIMT op and returns the op's lowered value (or
None). Handlers are found by the op's class or its nearest base in the table (tilec's
shaped arith casts subclass xDSL's). This module imports no feature module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xdsl.dialects import func, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from compiler.context import source_loc
from compiler.errors import UnsupportedError
from dialects import ptx, simt, tile
from dialects.tile import PtrType, element_type, like

Step = tuple  # (opcode, *float immediates appended to the step's operands)
Handler = Callable[["Lowering", Operation], "SSAValue | None"]

_DTYPES: dict[Attribute, str] = {
    IntegerType(1): "i1", IntegerType(8): "i8", IntegerType(16): "i16",
    IntegerType(32): "i32", IntegerType(64): "i64", Float16Type(): "f16",
    BFloat16Type(): "bf16", Float32Type(): "f32", Float64Type(): "f64",
}
ELEMS = {name: t for t, name in _DTYPES.items()}
INTS = ("i8", "i16", "i32", "i64")
BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4,
         "f64": 8}
# selp/mov move bit patterns; halves and bytes live in 16-bit registers.
BITS = {"i8": "b16", "i16": "b16", "f16": "b16", "bf16": "b16", "i32": "b32", "f32": "b32",
        "i64": "b64", "f64": "b64"}
_SREGS = {tile.ProgramIdOp: "%ctaid", tile.NumProgramsOp: "%nctaid"}

HANDLERS: dict[type, Handler] = {}


def lowers(*classes: type) -> Callable[[Callable], Callable]:
    """Register the decorated function as the handler of ops of ``classes``."""
    def register(handler: Callable) -> Callable:
        for cls in classes:
            HANDLERS[cls] = handler
        return handler
    return register


@functools.cache
def handler_class(cls: type) -> type | None:
    """The class the handler table knows ``cls`` by: itself or a base. (Cached: the table
    is complete once ``simt_to_ptx`` has imported the feature modules, before any lowering.)"""
    return next((c for c in cls.__mro__ if c in HANDLERS), None)


def dtype(t: Attribute) -> str:
    try:
        return _DTYPES[element_type(t)]
    except KeyError:
        raise UnsupportedError(f"type {t} is not supported by the ptx backend") from None


def int_type(dt: str, signed: bool) -> str:
    return f"{'s' if signed else 'u'}{dt[1:]}"


def unsupported(op: Operation, what: str) -> UnsupportedError:
    return UnsupportedError(f"{what} is not supported by the ptx backend", source_loc(op))


def shared_footprint(op: simt.SharedAllocOp) -> tuple[int, int]:
    """The bytes of a shared buffer and their alignment (at least 16)."""
    t = op.result.type
    align = 16 if op.align is None else max(16, op.align.value.data)
    return t.get_shape()[0] * BYTES[dtype(t.element_type)], align


class Lowering:
    """Lowers one kernel into a new entry block; all naming state is per kernel."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.block = Block(arg_types=kernel.body.block.arg_types)
        self.values: dict[SSAValue, SSAValue] = {}
        # Constants, lane picks and address offsets, reused within the kernel's one block
        # (the first definition dominates every later use).
        self.memo: dict[tuple, SSAValue] = {}
        self.location: Attribute | None = None
        self.labels = 0  # branch labels made so far (lower_control)

    def run(self) -> None:
        old = self.kernel.body.block
        for arg, new in zip(old.args, self.block.args, strict=True):
            new.name_hint = arg.name_hint
            self.values[arg] = self._param(new)
        for op in old.ops:
            self.location = op.location
            self.lower(op)
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
            elem = ELEMS[dt]
            attr = (FloatAttr(float(value), elem) if dt[0] in "fb"
                    else IntegerAttr(int(value), elem, truncate_bits=True))
            self.memo[key] = self.value(ptx.MovImmOp(attr))
        return self.memo[key]

    def chain(self, steps: tuple[Step, ...], args: list[SSAValue], rtype: Attribute) -> SSAValue:
        for opcode, *imms in steps:
            args = [self.inst(opcode, args + [self.const(i, "f32") for i in imms], rtype)]
        return args[0]

    def cvt(self, v: SSAValue, opcode: str, dt: str) -> SSAValue:
        return self.inst(opcode, [v], like(v.type, ELEMS[dt]))

    def low_half(self, v: SSAValue, dt: str) -> SSAValue:
        """The low 16 bits of 32-bit ``v`` as the ``dt`` (i8 or i16) lanes of a 16-bit
        register: ``mov.b32 {lo, hi}``, not ``cvt.u16.u32``. After that cvt, ptxas 13.0
        (sm_90) let a later ``rem.s16`` read the value zero-extended (-102 % 5 gave 4);
        the split measured right."""
        n = ptx.lanes(v.type)
        halves = self.value(ptx.RepackOp(v, VectorType(ELEMS[dt], [2 * n])))
        return self.value(ptx.LanesOp(halves, [2 * i for i in range(n)],
                                      like(v.type, ELEMS[dt])))

    def extend_i8(self, v: SSAValue, signed: bool) -> SSAValue:
        t = int_type("i8", signed)
        return self.cvt(v, f"cvt.{t[0]}16.{t}", "i8")

    def to_f32(self, v: SSAValue) -> SSAValue:
        return self.cvt(v, f"cvt.f32.{dtype(v.type)}", "f32")

    def from_f32(self, v: SSAValue, dt: str, rounding: str = "rn") -> SSAValue:
        return self.cvt(v, f"cvt.{rounding}.{dt}.f32", dt)

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """``cond ? a : b`` per lane; any of the three may be a scalar."""
        dt = dtype(a.type)
        widest = max((cond, a, b), key=lambda v: ptx.lanes(v.type)).type
        t = like(widest, ELEMS[dt])
        if dt != "i1":
            return self.inst(f"selp.{BITS[dt]}", [a, b, cond], t)
        both = self.inst("and.pred", [cond, a], t)
        other = self.inst("and.pred", [self.inst("not.pred", [cond], cond.type), b], t)
        return self.inst("or.pred", [both, other], t)

    def pick(self, v: SSAValue, stride: int) -> SSAValue:
        """Every ``stride``-th lane of ``v``: one register per wide access."""
        key = ("pick", v, stride)
        if stride > 1 and key not in self.memo:
            self.memo[key] = self.value(ptx.LanesOp(v, list(range(0, ptx.lanes(v.type), stride))))
        return self.memo.get(key, v)

    def args(self, op: Operation) -> list[SSAValue]:
        """The lowered values of ``op``'s operands."""
        return [self.values[v] for v in op.operands]

    # -- kernel parameters -------------------------------------------------------------

    def _param(self, arg: SSAValue) -> SSAValue:
        dt = dtype(arg.type.pointee if isinstance(arg.type, PtrType) else arg.type)
        reg = self.value(ptx.LdParamOp(arg))
        if isinstance(arg.type, PtrType):
            return self.inst("cvta.to.global.u64", [reg], reg.type)
        if dt == "i1":
            return self.inst("setp.ne.u16", [reg, self.const(0, "i8")], arg.type)
        return reg

    # -- dispatch ----------------------------------------------------------------------

    def lower(self, op: Operation) -> None:
        cls = handler_class(type(op))
        if cls is None:
            raise unsupported(op, f"operation {op.name}")
        try:
            result = HANDLERS[cls](self, op)
        except UnsupportedError as e:
            if e.loc is not None or source_loc(op) is None:
                raise
            raise UnsupportedError(e.message, source_loc(op)) from None
        if result is not None:
            self.values[op.results[0]] = result

    # -- ops every kernel has: ids, lane moves, return ----------------------------------

    @lowers(tile.ProgramIdOp, tile.NumProgramsOp)
    def _sreg(self, op: tile.ProgramIdOp | tile.NumProgramsOp) -> SSAValue:
        return self.value(ptx.SRegOp(f"{_SREGS[type(op)]}.{'xyz'[op.axis.value.data]}"))

    @lowers(simt.ThreadIdOp)
    def _thread_id(self, _op: simt.ThreadIdOp) -> SSAValue:
        return self.value(ptx.SRegOp("%tid.x"))

    @lowers(simt.WarpIdOp)
    def _warp_id(self, _op: simt.WarpIdOp) -> SSAValue:
        """``%tid.x / 32`` as lane 0 has it: from a broadcast ptxas knows every lane holds
        the same, and keeps what is computed from it in the warp's uniform registers."""
        warp = self.inst("shr.u32", [self.value(ptx.SRegOp("%tid.x")), self.const(5, "i32")],
                         i32)
        lanes = [self.const(0, "i32"), self.const(31, "i32"), self.const(-1, "i32")]
        return self.inst("shfl.sync.idx.b32", [warp, *lanes], i32)

    @lowers(vector.BroadcastOp)
    def _broadcast(self, op: vector.BroadcastOp) -> SSAValue:
        if isinstance(op.source.type, VectorType):
            raise unsupported(op, "vector.broadcast of a vector")
        lanes = [0] * ptx.lanes(op.vector.type)
        return self.value(ptx.LanesOp(self.values[op.source], lanes, op.vector.type))

    @lowers(vector.ShuffleOp)
    def _shuffle(self, op: vector.ShuffleOp) -> SSAValue:
        """Lanes picked by a constant mask: the same registers, renamed."""
        n, mask = ptx.lanes(op.v1.type), list(op.mask.get_values())
        if op.v1 != op.v2 and any(m >= n for m in mask):  # lanes of both: join them
            both = self.value(ptx.ConcatOp([self.values[op.v1], self.values[op.v2]]))
            return self.value(ptx.LanesOp(both, mask, op.result.type))
        picked = [m % n for m in mask]
        return self.value(ptx.LanesOp(self.values[op.v1], picked, op.result.type))

    @lowers(func.ReturnOp)
    def _return(self, op: func.ReturnOp) -> None:
        if op.operands:
            raise unsupported(op, "returning a value from a kernel")
        self.emit(func.ReturnOp())
