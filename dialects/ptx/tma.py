"""Hopper's tensor memory accelerator (TMA) and ``mbarrier`` in the ptx dialect.

A kernel that copies by TMA takes one extra parameter per tensor map (128 bytes, made on
the host by ``cuTensorMapEncodeTiled``, ``__grid_constant__``): ``ptx.tensor_map_param``
gives its generic address and makes the printer declare it after the kernel's own
parameters. The copies and barrier operations are ``ptx.asm``: an instruction (or a few)
written as a template whose ``{i}`` is operand ``i``'s register, ``{r}`` the result's,
``{p}`` a scratch predicate and ``{label}`` a label unique to the op, so the retry loop of ``mbarrier.try_wait`` and the
operand syntax of ``cp.async.bulk.tensor`` need no op of their own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import I32, I64, DenseArrayBase, IntegerAttr, StringAttr, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dialects.ptx.core import check_register, lanes

TENSOR_MAP_BYTES = 128
TENSOR_MAP_ALIGN = 64
_FIELD = re.compile(r"\{(\d+|r|p|label)\}")


@irdl_op_definition
class TensorMapParamOp(IRDLOperation):
    """The generic address of tensor map ``slot`` (the ``slot``-th parameter after the
    kernel's own, ``.param .align 64 .b8 [128]``) and how the host makes it: the array at
    kernel parameter ``base`` of ``dtype`` with ``sizes`` and ``strides`` (row-major,
    elements; each a triple ``i, scale, divisor``: parameter ``i`` (-1: the number 1)
    times ``scale`` over ``divisor``), boxes of ``box``, ``swizzle`` bytes."""

    name = "ptx.tensor_map_param"
    slot = prop_def(IntegerAttr[I32])
    base = prop_def(IntegerAttr[I32])
    dtype = prop_def(StringAttr)
    sizes = prop_def(DenseArrayBase.constr(I64))
    strides = prop_def(DenseArrayBase.constr(I64))
    box = prop_def(DenseArrayBase.constr(I64))
    swizzle = prop_def(IntegerAttr[I32])
    result = result_def(I64)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$slot attr-dict"
    traits = traits_def(Pure())

    def __init__(self, slot: int, recipe: dict):
        ints = {k: DenseArrayBase.from_list(i64, list(recipe[k]))
                for k in ("sizes", "strides", "box")}
        super().__init__(result_types=[i64], properties={
            "slot": IntegerAttr(slot, i32), "base": IntegerAttr(recipe["base"], i32),
            "dtype": StringAttr(recipe["dtype"]),
            "swizzle": IntegerAttr(recipe["swizzle"], i32), **ints})

    def recipe(self) -> dict:
        """What the launcher needs to make the map (JSON-ready)."""
        return {"base": self.base.value.data, "dtype": self.dtype.data,
                "sizes": list(self.sizes.get_values()),
                "strides": list(self.strides.get_values()),
                "box": list(self.box.get_values()), "swizzle": self.swizzle.value.data}


@irdl_op_definition
class AsmOp(IRDLOperation):
    """PTX text: ``template`` with ``{i}`` the register of scalar operand ``i``, ``{r}``
    the result's (if any), ``{p}`` a predicate of its own and ``{label}`` a label of this
    op; ``;`` ends an instruction, ``name:;`` places a label."""

    name = "ptx.asm"
    template = prop_def(StringAttr)
    args = var_operand_def()
    result = opt_result_def()
    assembly_format = "$template $args attr-dict `:` functional-type($args, results)"

    def __init__(self, template: str, args: Sequence[SSAValue] = (),
                 result_type: Attribute | None = None):
        super().__init__(operands=[list(args)],
                         result_types=[[result_type] if result_type is not None else []],
                         properties={"template": StringAttr(template)})

    def verify_(self) -> None:
        for v in (*self.args, *self.results):
            check_register(self, v.type)
            if lanes(v.type) != 1:
                raise VerifyException("ptx.asm operands and result are scalar registers")
        for field in _FIELD.findall(self.template.data):
            if field == "r" and self.result is None:
                raise VerifyException("ptx.asm: {r} in a template without a result")
            if field.isdigit() and int(field) >= len(self.args):
                raise VerifyException(f"ptx.asm: {{{field}}} names a missing operand")


def fill(template: str, operands: Sequence[str], named: dict[str, str]) -> str:
    """``template`` with its fields replaced: operands by position, ``r``, ``p`` and
    ``label`` from ``named``."""
    def field(m: re.Match) -> str:
        key = m.group(1)
        return operands[int(key)] if key.isdigit() else named[key]
    return _FIELD.sub(field, template)


__all__ = ["TENSOR_MAP_ALIGN", "TENSOR_MAP_BYTES", "AsmOp", "TensorMapParamOp", "fill"]
