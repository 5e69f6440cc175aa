"""The core of the ptx dialect: PTX instructions on typed virtual registers.

A register is an SSA value of a builtin scalar type (``i1`` is a predicate, ``i8`` lives
in a 16-bit register whose upper bits are unspecified). A ``vector<K x T>`` value is K
registers used lane-wise, so the IR stays as long as the SIMT IR it came from: the
printer expands a lane-wise op into K instructions, and a scalar operand of a lane-wise
op is broadcast to every lane. The kernel is a ``func.func`` whose arguments keep their
tilec types; only ``ptx.ld_param`` reads them.
"""

from __future__ import annotations

import re
from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    I64,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParamAttrConstraint,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException

from dialects.tile import PtrType, element_type

# Element type -> (PTX register class, register name prefix).
REGISTER_CLASSES: dict[Attribute, tuple[str, str]] = {
    IntegerType(1): ("pred", "%p"),
    IntegerType(8): ("b16", "%rs"),
    IntegerType(16): ("b16", "%rs"),
    IntegerType(32): ("b32", "%r"),
    IntegerType(64): ("b64", "%rd"),
    Float16Type(): ("b16", "%h"),
    BFloat16Type(): ("b16", "%h"),
    Float32Type(): ("f32", "%f"),
    Float64Type(): ("f64", "%fd"),
}

_LABEL = re.compile(r"[$%]?[A-Za-z_][A-Za-z0-9_$]*")

SPECIAL_REGISTERS = ("%tid.x", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                     "%nctaid.x", "%nctaid.y", "%nctaid.z")


def lanes(t: Attribute) -> int:
    """How many registers a value of type ``t`` stands for."""
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


def check_register(op: IRDLOperation, t: Attribute) -> None:
    if isinstance(t, VectorType) and len(t.get_shape()) != 1:
        raise VerifyException(f"{op.name}: register vectors must be 1-D, got {t}")
    if element_type(t) not in REGISTER_CLASSES:
        raise VerifyException(f"{op.name}: {t} is not a PTX register type")


def param_register_type(t: Attribute) -> Attribute:
    """The register a kernel parameter of type ``t`` is loaded into (bools as bytes)."""
    if isinstance(t, PtrType):
        return i64
    return IntegerType(8) if t == IntegerType(1) else t


@irdl_op_definition
class InstOp(IRDLOperation):
    """One PTX instruction ``opcode d, a, b, ...`` per lane; scalar operands broadcast.
    ``into``: ``d`` is the registers of that operand, which nothing reads after (a loop's
    accumulator scaled in place while a wgmma that writes it may still be running)."""

    name = "ptx.inst"
    opcode = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()
    into = opt_prop_def(IntegerAttr[I32])
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$opcode $args attr-dict `:` functional-type($args, $result)"
    traits = traits_def(Pure())

    def __init__(self, opcode: str, args: list[SSAValue], result_type: Attribute):
        super().__init__(operands=[args], result_types=[result_type],
                         properties={"opcode": StringAttr(opcode)})

    def verify_(self) -> None:
        if not self.opcode.data or " " in self.opcode.data:
            raise VerifyException(f"ptx.inst: bad opcode {self.opcode.data!r}")
        check_register(self, self.result.type)
        if self.into is not None and not (
                0 <= self.into.value.data < len(self.args)
                and self.args[self.into.value.data].type == self.result.type):
            raise VerifyException("ptx.inst: into names an operand of the result's type")
        k = lanes(self.result.type)
        for a in self.args:
            check_register(self, a.type)
            if lanes(a.type) not in (1, k):
                raise VerifyException("ptx.inst operands must be scalars or have the result's"
                                      " lanes")


@irdl_op_definition
class MovImmOp(IRDLOperation):
    """Immediate constants into registers: one scalar, or one value per lane."""

    name = "ptx.mov_imm"
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = prop_def(
        IntegerAttr.constr(type=T)
        | ParamAttrConstraint(FloatAttr, (AnyAttr(), T))
        | ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr()))
    )
    result = result_def(T)
    assembly_format = "attr-dict $value"
    traits = traits_def(Pure())

    def __init__(self, value: IntegerAttr | FloatAttr | DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.get_type()], properties={"value": value})

    def verify_(self) -> None:
        check_register(self, self.result.type)


@irdl_op_definition
class LanesOp(IRDLOperation):
    """Registers of ``source`` picked by lane index; prints nothing (registers are reused)."""

    name = "ptx.lanes"
    source = operand_def()
    indices = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    assembly_format = "$source $indices attr-dict `:` type($source) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, indices: list[int], rtype: Attribute | None = None):
        elem = element_type(source.type)
        if rtype is None:
            rtype = VectorType(elem, [len(indices)]) if len(indices) > 1 else elem
        super().__init__(operands=[source], result_types=[rtype],
                         properties={"indices": DenseArrayBase.from_list(i64, indices)})

    def verify_(self) -> None:
        check_register(self, self.result.type)
        idx = self.indices.get_values()
        if element_type(self.result.type) != element_type(self.source.type):
            raise VerifyException("ptx.lanes keeps the element type")
        if len(idx) != lanes(self.result.type):
            raise VerifyException("ptx.lanes needs one index per result lane")
        if any(not 0 <= i < lanes(self.source.type) for i in idx):
            raise VerifyException("ptx.lanes index out of range")


def register_source(v: SSAValue) -> SSAValue:
    """The value whose registers ``v`` reads (``ptx.lanes`` reuses registers)."""
    while isinstance(v.owner, LanesOp):
        v = v.owner.source
    return v


@irdl_op_definition
class LdParamOp(IRDLOperation):
    """``ld.param`` of a kernel argument into a register."""

    name = "ptx.ld_param"
    param = operand_def()
    result = result_def()
    assembly_format = "$param attr-dict `:` type($param) `->` type($result)"
    traits = traits_def(NoMemoryEffect())

    def __init__(self, param: SSAValue):
        super().__init__(operands=[param], result_types=[param_register_type(param.type)])

    def verify_(self) -> None:
        check_register(self, self.result.type)
        if not isinstance(self.param, BlockArgument):
            raise VerifyException("ptx.ld_param reads a kernel argument")
        if self.result.type != param_register_type(self.param.type):
            raise VerifyException(
                f"ptx.ld_param of {self.param.type} loads a {param_register_type(self.param.type)}")


@irdl_op_definition
class SRegOp(IRDLOperation):
    """A special register such as ``%tid.x`` or ``%ctaid.y``."""

    name = "ptx.sreg"
    reg = prop_def(StringAttr)
    result = result_def(I32)
    assembly_format = "$reg attr-dict `:` type($result)"
    traits = traits_def(NoMemoryEffect())

    def __init__(self, reg: str):
        super().__init__(result_types=[i32], properties={"reg": StringAttr(reg)})

    def verify_(self) -> None:
        if self.reg.data not in SPECIAL_REGISTERS:
            raise VerifyException(f"ptx.sreg: unknown special register {self.reg.data!r}")


def _check_access(op: IRDLOperation, addr: SSAValue, value_type: Attribute,
                  pred: SSAValue | None, vec: int, addr_type: Attribute = i64) -> None:
    """A memory access: one ``addr_type`` address (global i64, shared i32) per ``vec``."""
    check_register(op, value_type)
    if element_type(addr.type) != addr_type:
        raise VerifyException(f"{op.name} addresses must be {addr_type}")
    if element_type(value_type) == IntegerType(1):
        raise VerifyException(f"{op.name}: predicates are not memory types (use i8)")
    if vec not in (1, 2, 4) or lanes(addr.type) * vec != lanes(value_type):
        raise VerifyException(f"{op.name} needs one address per {vec} lanes")
    if vec * element_type(value_type).bitwidth > 128:
        raise VerifyException(f"{op.name} accesses are at most 128 bits wide")
    if pred is not None and (element_type(pred.type) != IntegerType(1)
                             or lanes(pred.type) not in (1, lanes(addr.type))):
        raise VerifyException(f"{op.name} predicate must be i1, one per address or scalar")


class _VecAccess(IRDLOperation):
    """An access of ``vec`` registers per address (``.vN``; absent is one)."""

    vec = opt_prop_def(IntegerAttr[I32])
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    @property
    def width(self) -> int:
        return 1 if self.vec is None else self.vec.value.data


@irdl_op_definition
class LdGlobalOp(_VecAccess):
    """``ld.global[.vN]`` per address, guarded by ``pred``; guarded-off lanes get ``other``."""

    name = "ptx.ld_global"
    T: ClassVar = VarConstraint("T", AnyAttr())
    addr = operand_def()
    pred = opt_operand_def()
    other = opt_operand_def(T)
    result = result_def(T)
    assembly_format = (
        "$addr (`if` $pred^ `:` type($pred))? (`other` $other^)? attr-dict"
        " `:` type($addr) `->` type($result)"
    )

    def __init__(self, addr: SSAValue, result_type: Attribute, pred: SSAValue | None = None,
                 other: SSAValue | None = None, vec: int = 1):
        super().__init__(operands=[addr, pred, other], result_types=[result_type],
                         properties={"vec": IntegerAttr(vec, i32)})

    def verify_(self) -> None:
        _check_access(self, self.addr, self.result.type, self.pred, self.width)


@irdl_op_definition
class StGlobalOp(_VecAccess):
    """``st.global[.vN]`` of ``value`` per address, guarded by ``pred``."""

    name = "ptx.st_global"
    addr = operand_def()
    value = operand_def()
    pred = opt_operand_def()
    assembly_format = (
        "$addr `,` $value (`if` $pred^ `:` type($pred))? attr-dict"
        " `:` type($addr) `,` type($value)"
    )

    def __init__(self, addr: SSAValue, value: SSAValue, pred: SSAValue | None = None,
                 vec: int = 1):
        super().__init__(operands=[addr, value, pred], properties={"vec": IntegerAttr(vec, i32)})

    def verify_(self) -> None:
        _check_access(self, self.addr, self.value.type, self.pred, self.width)


def _check_atomic(op: IRDLOperation, addr: SSAValue, result: SSAValue,
                  pred: SSAValue | None) -> None:
    _check_access(op, addr, result.type, pred, 1)


@irdl_op_definition
class AtomOp(IRDLOperation):
    """``opcode d, [addr], args...`` per address (an ``atom.global`` instruction), guarded
    by ``pred``; guarded-off lanes get 0."""

    name = "ptx.atom"
    opcode = prop_def(StringAttr)
    addr = operand_def()
    args = var_operand_def()
    pred = opt_operand_def()
    result = result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$opcode $addr `,` $args (`if` $pred^ `:` type($pred))? attr-dict"
        " `:` type($addr) `,` type($args) `->` type($result)"
    )

    def __init__(self, opcode: str, addr: SSAValue, args: list[SSAValue],
                 pred: SSAValue | None = None):
        super().__init__(operands=[addr, args, pred], result_types=[args[-1].type],
                         properties={"opcode": StringAttr(opcode)})

    def verify_(self) -> None:
        words = self.opcode.data.split(".")
        if words[0] != "atom" or "global" not in words:
            raise VerifyException(f"ptx.atom: {self.opcode.data!r} is not an atom.global")
        _check_atomic(self, self.addr, self.result, self.pred)
        if any(a.type != self.result.type for a in self.args):
            raise VerifyException("ptx.atom operands must have the result's type")


@irdl_op_definition
class AtomLoopOp(IRDLOperation):
    """Per address guarded by ``pred``, atomically ``*addr = combine(*addr, val)`` by an
    ``atom.global.cas`` retry loop (for what no ``atom`` computes, such as f32 max);
    ``combine`` is an instruction ``combine d, a, b``; ``order`` (``acq_rel.gpu``) is the
    compare-and-swap's sem and scope qualifiers. The result is the old value, 0 in
    guarded-off lanes."""

    name = "ptx.atom_loop"
    T: ClassVar = VarConstraint("T", AnyAttr())
    combine = prop_def(StringAttr)
    order = opt_prop_def(StringAttr)
    addr = operand_def()
    val = operand_def(T)
    pred = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$combine $addr `,` $val (`if` $pred^ `:` type($pred))? (`order` $order^)? attr-dict"
        " `:` type($addr) `,` type($val)"
    )

    def __init__(self, combine: str, addr: SSAValue, val: SSAValue,
                 pred: SSAValue | None = None, order: str | None = None):
        props = {"combine": combine} | ({"order": order} if order else {})
        super().__init__(operands=[addr, val, pred], result_types=[val.type],
                         properties={k: StringAttr(v) for k, v in props.items()})

    def verify_(self) -> None:
        _check_atomic(self, self.addr, self.result, self.pred)
        if element_type(self.result.type).bitwidth != 32:
            raise VerifyException("ptx.atom_loop works on 32-bit values")


@irdl_op_definition
class LabelOp(IRDLOperation):
    """A branch target, ``label:``."""

    name = "ptx.label"
    label = prop_def(StringAttr)
    assembly_format = "$label attr-dict"

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})

    def verify_(self) -> None:
        if not _LABEL.fullmatch(self.label.data):
            raise VerifyException(f"ptx.label: bad label {self.label.data!r}")


@irdl_op_definition
class BraOp(IRDLOperation):
    """``bra target``: where scalar ``pred`` holds (fails, if ``negated``), or always."""

    name = "ptx.bra"
    target = prop_def(StringAttr)
    pred = opt_operand_def(IntegerType(1))
    negated = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$target (`if` $pred^)? (`negated` $negated^)? attr-dict"

    def __init__(self, target: str, pred: SSAValue | None = None, negated: bool = False):
        super().__init__(operands=[pred], properties={"target": StringAttr(target)} | (
            {"negated": UnitAttr()} if negated else {}))

    def verify_(self) -> None:
        if not _LABEL.fullmatch(self.target.data):
            raise VerifyException(f"ptx.bra: bad label {self.target.data!r}")
        if self.negated is not None and self.pred is None:
            raise VerifyException("ptx.bra: only a guarded branch can be negated")


@irdl_op_definition
class RegOp(IRDLOperation):
    """Registers (one per lane) that ``ptx.assign`` writes, for what SSA cannot name: a
    loop-carried value or a branch's result. A use reads what was last assigned."""

    name = "ptx.reg"
    result = result_def()
    assembly_format = "attr-dict `:` type($result)"  # no traits: CSE must not merge two

    def __init__(self, result_type: Attribute):
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        check_register(self, self.result.type)


@irdl_op_definition
class AssignOp(IRDLOperation):
    """``mov`` of ``value`` into the registers of a ``ptx.reg``, lane by lane (a scalar
    fills every lane)."""

    name = "ptx.assign"
    reg = operand_def()
    value = operand_def()
    assembly_format = "$reg `,` $value attr-dict `:` type($reg) `,` type($value)"

    def __init__(self, reg: SSAValue, value: SSAValue):
        super().__init__(operands=[reg, value])

    def verify_(self) -> None:
        if not isinstance(self.reg.owner, RegOp):
            raise VerifyException("ptx.assign writes the result of a ptx.reg")
        if element_type(self.value.type) != element_type(self.reg.type) or \
                lanes(self.value.type) not in (1, lanes(self.reg.type)):
            raise VerifyException("ptx.assign value must have the register's element type "
                                  "and lanes (or be a scalar)")


@irdl_op_definition
class SharedOp(IRDLOperation):
    """A ``.shared`` array of ``size`` bytes, ``align``-byte aligned, declared in the kernel
    (at byte ``offset`` of the kernel's shared memory where it was placed); the result is
    its 32-bit shared-window address."""

    name = "ptx.shared"
    size = prop_def(IntegerAttr[I32])
    align = prop_def(IntegerAttr[I32])
    offset = opt_prop_def(IntegerAttr[I32])
    result = result_def(I32)
    assembly_format = "$size `align` $align (`at` $offset^)? attr-dict `:` type($result)"

    def __init__(self, size: int, align: int = 16, offset: int | None = None):
        props = {"size": IntegerAttr(size, i32), "align": IntegerAttr(align, i32)}
        if offset is not None:
            props["offset"] = IntegerAttr(offset, i32)
        super().__init__(result_types=[i32], properties=props)


def _vec(vec: int) -> dict[str, Attribute]:
    return {} if vec == 1 else {"vec": IntegerAttr(vec, i32)}


@irdl_op_definition
class LdSharedOp(_VecAccess):
    """``ld.shared[.vN]`` per 32-bit shared address."""

    name = "ptx.ld_shared"
    addr = operand_def()
    result = result_def()
    assembly_format = "$addr attr-dict `:` type($addr) `->` type($result)"

    def __init__(self, addr: SSAValue, result_type: Attribute, vec: int = 1):
        super().__init__(operands=[addr], result_types=[result_type],
                         properties=_vec(vec))

    def verify_(self) -> None:
        _check_access(self, self.addr, self.result.type, None, self.width, i32)


@irdl_op_definition
class StSharedOp(_VecAccess):
    """``st.shared[.vN]`` of ``value`` per 32-bit shared address, guarded by ``pred``."""

    name = "ptx.st_shared"
    addr = operand_def()
    value = operand_def()
    pred = opt_operand_def()
    assembly_format = (
        "$addr `,` $value (`if` $pred^ `:` type($pred))? attr-dict"
        " `:` type($addr) `,` type($value)"
    )

    def __init__(self, addr: SSAValue, value: SSAValue, pred: SSAValue | None = None,
                 vec: int = 1):
        super().__init__(operands=[addr, value, pred], properties=_vec(vec))

    def verify_(self) -> None:
        _check_access(self, self.addr, self.value.type, self.pred, self.width, i32)


@irdl_op_definition
class BarOp(IRDLOperation):
    """``bar.sync 0``: every thread of the program waits here; shared memory written
    before is visible after."""

    name = "ptx.bar"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class CpAsyncOp(IRDLOperation):
    """``cp.async.{ca|cg}.shared.global [dst], [src], bytes, size`` per lane: copy ``bytes``
    from the 64-bit global ``src`` to the 32-bit shared ``dst``, the first ``size`` of them
    read and the rest zeros."""

    name = "ptx.cp_async"
    dst = operand_def()
    src = operand_def()
    size = operand_def()
    bytes = prop_def(IntegerAttr[I32])
    assembly_format = (
        "$dst `,` $src `,` $bytes `,` $size attr-dict `:` type($dst) `,` type($src) `,`"
        " type($size)"
    )

    def __init__(self, dst: SSAValue, src: SSAValue, size: SSAValue, nbytes: int):
        super().__init__(operands=[dst, src, size],
                         properties={"bytes": IntegerAttr(nbytes, i32)})


@irdl_op_definition
class UserAsmOp(IRDLOperation):
    """A user's PTX text (``tl.inline_asm_elementwise``) per lane, in a scope of its own:
    ``$0``, ``$1``, ... the results' registers and then the operands' (scalars broadcast).
    Without ``pure`` it may have any effect, and stays."""

    name = "ptx.user_asm"
    text = prop_def(StringAttr)
    pure = opt_prop_def(UnitAttr)
    args = var_operand_def()
    outs = var_result_def()
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$text $args attr-dict `:` functional-type($args, results)"

    def __init__(self, text: str, args: list[SSAValue], result_types: list[Attribute],
                 pure: bool):
        super().__init__(operands=[args], result_types=[result_types],
                         properties={"text": StringAttr(text)}
                         | ({"pure": UnitAttr()} if pure else {}))

    def verify_(self) -> None:
        k = {lanes(r.type) for r in self.outs}
        if len(k) != 1:
            raise VerifyException("ptx.user_asm results have one number of lanes")
        for v in (*self.outs, *self.args):
            check_register(self, v.type)
            if lanes(v.type) not in (1, *k):
                raise VerifyException("ptx.user_asm operands must be scalars or have the "
                                      "results' lanes")


@irdl_op_definition
class PlainOp(IRDLOperation):
    """One instruction without operands, printed as it is (``cp.async.commit_group``)."""

    name = "ptx.plain"
    text = prop_def(StringAttr)
    assembly_format = "$text attr-dict"

    def __init__(self, text: str):
        super().__init__(properties={"text": StringAttr(text)})


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """The registers of ``sources`` joined, in order; prints nothing."""

    name = "ptx.concat"
    sources = var_operand_def()
    result = result_def()
    assembly_format = "$sources attr-dict `:` type($sources) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, sources: list[SSAValue]):
        elem = element_type(sources[0].type)
        super().__init__(operands=[sources], result_types=[
            VectorType(elem, [sum(lanes(s.type) for s in sources)])])

    def verify_(self) -> None:
        check_register(self, self.result.type)
        if any(element_type(s.type) != element_type(self.result.type) for s in self.sources):
            raise VerifyException("ptx.concat keeps the element type")
        if sum(lanes(s.type) for s in self.sources) != lanes(self.result.type):
            raise VerifyException("ptx.concat result must have the sources' lanes")
