"""Hints and scheduling: ``assume_facts`` (what ``tl.multiple_of``, ``tl.max_contiguous``
and ``tl.max_constancy`` promise about a value) and ``barrier`` (``tl.debug_barrier``).

``NUM_STAGES_ATTR`` is the discardable attribute ``tl.range(..., num_stages=S)`` puts on
its ``scf.for``; ``pipeline-loads`` reads it in place of its own ``num_stages``.
``CACHE_HINT_ATTRS`` are those ``tl.load``/``tl.store`` put on ``tile.load``/``tile.store``
for a ``cache_modifier``/``eviction_policy`` (Triton's strings); tile-to-simt copies them
to the ``simt`` access and simt-to-ptx to the ``ptx`` one, whose printer emits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dialects.tile.memory import static_shape
from dialects.tile.types import PtrType, element_type

NUM_STAGES_ATTR = "tile.num_stages"
CACHE_MODIFIER_ATTR = "tile.cache_modifier"
EVICTION_POLICY_ATTR = "tile.eviction_policy"
CACHE_HINT_ATTRS = (CACHE_MODIFIER_ATTR, EVICTION_POLICY_ATTR)
FACTS = ("divisibility", "contiguity", "constancy")


@irdl_op_definition
class AssumeFactsOp(IRDLOperation):
    """``x`` unchanged; per dimension, the analysis may assume that runs of
    ``contiguity`` consecutive values (and of ``constancy`` equal ones) start at
    multiples of their length and that each run's first element is divisible by
    ``divisibility`` (bytes, for pointers)."""

    name = "tile.assume_facts"
    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    result = result_def(T)
    divisibility = opt_prop_def(DenseArrayBase.constr(I64))
    contiguity = opt_prop_def(DenseArrayBase.constr(I64))
    constancy = opt_prop_def(DenseArrayBase.constr(I64))
    assembly_format = ("$x (`divisibility` $divisibility^)? (`contiguity` $contiguity^)? "
                       "(`constancy` $constancy^)? attr-dict `:` type($x)")
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue, **facts: Sequence[int]):
        props = {k: DenseArrayBase.from_list(i64, list(v)) for k, v in facts.items()}
        super().__init__(operands=[x], result_types=[x.type], properties=props)

    def facts(self, kind: str) -> tuple[int, ...] | None:
        """The values of fact ``kind`` (one of ``FACTS``), or None if not given."""
        attr = getattr(self, kind)
        return None if attr is None else tuple(attr.get_values())

    def verify_(self) -> None:
        et = element_type(self.x.type)
        if not isinstance(et, PtrType | IntegerType):
            raise VerifyException("tile.assume_facts operates on integers or pointers")
        given = [(k, v) for k in FACTS if (v := self.facts(k)) is not None]
        if not given:
            raise VerifyException("tile.assume_facts needs at least one fact")
        rank = max(1, len(static_shape(self.x.type)))
        for kind, values in given:
            if len(values) != rank:
                raise VerifyException(f"tile.assume_facts {kind} needs {rank} values, "
                                      f"one per dimension")
            if min(values) < 1:
                raise VerifyException(f"tile.assume_facts {kind} must be positive")


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """``tl.debug_barrier``: every thread of the program waits here for the others."""

    name = "tile.barrier"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()
