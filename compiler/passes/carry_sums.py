"""carry-sums: tile IR -> tile IR whose loops carry, in place of an offsets tile that each
iteration advances by one value for all its elements, the scalar sum of those advances.

``ptrs += BLOCK * stride`` in a loop (offsets by the time this runs: ``lower-control`` made
pointers in loops offsets from their argument) carries a whole tile: every thread keeps
its elements of it in registers through the loop and adds the step to each. Yet a thread
reads few of them: one address per vector it copies (2 of 16 in Triton's attention
backward, whose loops carried 32 such registers a thread and spilled). Here the loop
carries ``sum``, from 0, and each iteration reads ``init + splat(sum)``; the tile before
the loop is an invariant whose unread elements no register keeps, and the elements a
thread does not read are additions nobody uses. The values are the same: integer
addition wraps, so the order of the additions does not matter. After the loop the
result is ``init + splat(sum)`` again, where something reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dialects import tile


def _advance(arg: BlockArgument) -> SSAValue | None:
    """The scalar ``s`` where iter_arg ``arg`` is yielded as ``arg + splat(s)``."""
    loop_yield = arg.block.last_op
    assert isinstance(loop_yield, scf.YieldOp)
    add = loop_yield.operands[arg.index - 1].owner
    if not isinstance(add, arith.AddiOp) or arg not in add.operands:
        return None
    step = (add.rhs if add.lhs is arg else add.lhs).owner
    return step.value if isinstance(step, tile.SplatOp) else None


def _offset(init: SSAValue, total: SSAValue, t: TensorType) -> list:
    splat = tile.SplatOp(total, t)
    return [splat, arith.AddiOp(init, splat.result)]


def carry_sum(loop: scf.ForOp, arg: BlockArgument, step: SSAValue) -> None:
    """``loop`` carries the sum of ``arg``'s advances ``step`` in its place."""
    i, t = arg.index - 1, arg.type
    assert isinstance(t, TensorType)
    init, body = loop.iter_args[i], loop.body.block
    zero = arith.ConstantOp(IntegerAttr(0, t.element_type))
    Rewriter.insert_op(zero, InsertPoint.before(loop))
    loop.operands = [*loop.operands[:3 + i], zero.result, *loop.operands[4 + i:]]
    total = Rewriter.replace_value_with_new_type(arg, t.element_type)
    reads = list(total.uses)
    now = _offset(init, total, t)
    Rewriter.insert_op(now, InsertPoint.at_start(body))
    for use in reads:
        use.operation.operands[use.index] = now[-1].result
    loop_yield = body.last_op
    assert loop_yield is not None
    more = arith.AddiOp(total, step)
    Rewriter.insert_op(more, InsertPoint.before(loop_yield))
    advanced = loop_yield.operands[i].owner
    loop_yield.operands = [*loop_yield.operands[:i], more.result, *loop_yield.operands[i + 1:]]
    for dead in (advanced, *reversed(now)):
        if isinstance(dead, Operation) and not dead.results[0].uses:
            Rewriter.erase_op(dead)
    after = Rewriter.replace_value_with_new_type(loop.results[i], t.element_type)
    if after.uses:  # the tile after the loop, where something reads it
        final = _offset(init, after, t)
        Rewriter.insert_op(final, InsertPoint.after(loop))
        for use in [u for u in after.uses if u.operation is not final[0]]:
            use.operation.operands[use.index] = final[-1].result


def _candidates(loop: scf.ForOp) -> list[tuple[BlockArgument, SSAValue]]:
    found = []
    for arg in loop.body.block.args[1:]:
        t = arg.type
        if (isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
                and (step := _advance(arg)) is not None):
            found.append((arg, step))
    return found


@dataclass(frozen=True)
class CarrySums(ModulePass):
    """Loops carry the scalar sum of a uniformly advanced offsets tile's steps."""

    name = "carry-sums"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp)]:
            for arg, step in _candidates(loop):
                carry_sum(loop, arg, step)
