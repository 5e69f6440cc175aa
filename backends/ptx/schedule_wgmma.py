"""schedule-wgmma: the ptx dialect -> the same, each group of ``wgmma`` instructions issued
back to back.

The operands of a group's wgmmas (A fragments packed from registers, matrix descriptors)
are computed, as lowered, between the wgmmas that read them. A register written between
two wgmmas of a group makes ptxas fence the warpgroup again before the next one (its
C7519 "warpgroup.arrive is injected" note), so the tensor cores wait for each wgmma in
turn. Here every pure instruction between a group's first wgmma and its commit that feeds
a later wgmma's A or B, and does not depend on a wgmma result, moves before the first:
the group's single ``wgmma.fence`` then covers all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from dialects import ptx


def _group(first: Operation) -> list[Operation]:
    """The ops from the wgmma ``first`` up to its group's commit (or the first op with
    effects that is not a wgmma)."""
    ops, op = [first], first.next_op
    while op is not None and (ptx.is_wgmma(op) or is_side_effect_free(op)):
        ops.append(op)
        op = op.next_op
    return ops


def _hoistable(group: list[Operation]) -> list[Operation]:
    """The ops of ``group`` that feed a wgmma's A or B and read no wgmma result, in order."""
    inside = set(group)
    feeding: set[Operation] = set()
    for op in reversed(group):
        if ptx.is_wgmma(op):
            sources = (op.a, op.b)  # pyright: ignore[reportAttributeAccessIssue]
        elif op in feeding:
            sources = op.operands
        else:
            continue
        feeding.update(v.owner for v in sources if v.owner in inside)
    tied: set[Operation] = set()
    for op in group:
        if ptx.is_wgmma(op) or any(v.owner in tied for v in op.operands):
            tied.add(op)
    return [op for op in group if op in feeding and op not in tied]


def schedule_block(block: Block) -> None:
    op = block.first_op
    while op is not None:
        if not ptx.is_wgmma(op):
            op = op.next_op
            continue
        group = _group(op)
        for moved in _hoistable(group):
            moved.detach()
            block.insert_op_before(moved, op)
        op = group[-1].next_op


@dataclass(frozen=True)
class ScheduleWgmma(ModulePass):
    """Issue each group of wgmmas back to back (their operands computed first)."""

    name = "schedule-wgmma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for region_op in op.walk():
            for region in region_op.regions:
                for block in region.blocks:
                    if any(ptx.is_wgmma(o) for o in block.ops):
                        schedule_block(block)
