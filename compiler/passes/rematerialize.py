"""rematerialize: SIMT IR -> SIMT IR where a register vector computed before a loop and
used after it is computed again after it, from scalars.

``cse`` merges equal index arithmetic wherever it is: attention's swizzled shared-memory
index of Q (stored before its loops) is also the output's (stored after them), so the
32 registers of that index stay live through every iteration, and with them attention
at 8 warps needs 146 registers a thread, where 128 would fit two programs on an SM.
Here each use after a loop of such a vector, made only of pure ops over scalars and
constants (the thread's id, a program id, a parameter), gets its own copy of those ops
just before the op that holds the use. The loop then keeps the scalars it was given;
the copy costs the instructions once, after the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, VectorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

MAX_OPS = 64  # a larger tree is left alone (its copy would cost more than it saves)
_LOOPS = (scf.ForOp, scf.WhileOp)


def _tree(v: SSAValue, ops: list[Operation]) -> bool:
    """Whether ``v`` is scalar, or a vector computed by pure ops from scalars; the ops
    that compute it, operands first, appended to ``ops``."""
    if not isinstance(v.type, VectorType):
        return True
    op = v.owner
    if (not isinstance(op, Operation) or op.regions or len(op.results) != 1
            or not is_side_effect_free(op)):
        return False
    if op in ops:
        return True
    if not all(_tree(x, ops) for x in op.operands) or len(ops) >= MAX_OPS:
        return False
    ops.append(op)
    return True


def _copy(ops: list[Operation], before: Operation) -> dict[SSAValue, SSAValue]:
    mapping: dict[SSAValue, SSAValue] = {}
    for op in ops:
        new = op.clone(value_mapper=mapping)
        Rewriter.insert_op(new, InsertPoint.before(before))
        mapping[op.results[0]] = new.results[0]
    return mapping


def rematerialize_block(block: Block) -> None:
    order = {op: i for i, op in enumerate(block.ops)}
    loops = [order[op] for op in block.ops if isinstance(op, _LOOPS)]
    if not loops:
        return
    for op in list(block.ops):
        if order[op] >= loops[-1] or len(op.results) != 1:
            continue
        value, ops = op.results[0], []
        if (not isinstance(value.type, VectorType) or value.type.get_shape()[0] < 2
                or not _tree(value, ops)):
            continue
        copies: dict[Operation, SSAValue] = {}
        for use in list(value.uses):
            holder = block.find_ancestor_op_in_block(use.operation)
            if holder is None or not any(order[op] < i < order.get(holder, -1) for i in loops):
                continue
            if holder not in copies:
                copies[holder] = _copy(ops, holder)[value]
            use.operation.operands[use.index] = copies[holder]


@dataclass(frozen=True)
class Rematerialize(ModulePass):
    """Vectors of index arithmetic used after a loop are computed again there."""

    name = "rematerialize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        for block in blocks:
            rematerialize_block(block)
