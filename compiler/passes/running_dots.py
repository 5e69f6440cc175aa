"""Which wgmma dots of a software-pipelined loop may run on into the next iteration
(``pipeline-loads`` marks them, ``tile-to-simt`` lowers them so): the dots that only add
into a loop-carried accumulator, perhaps rescaled first, and read nothing stored for them
inside the loop. Tile IR and SIMT IR alike: the checks look at the structure only.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import is_side_effect_free

from dialects import tile


def may_run_on(dot: tile.DotOp, loads: list) -> bool:
    """Whether ``dot`` adds into a loop's accumulator and reads nothing that is stored for
    it in the loop: its operands are staged, or A is taken as register fragments from
    another dot's result (attention's P)."""
    return loop_accumulator(dot) is not None and source(dot.b).owner in loads and (
        source(dot.a).owner in loads or _from_dot(dot.a, dot.parent))


def source(v: SSAValue) -> SSAValue:
    """What a stage would hold for a dot's operand ``v``: ``v``, or the tile it is the
    transpose of (B read K-major, A as transposed fragments)."""
    return v.owner.src if isinstance(v.owner, tile.TransOp) else v


def _from_dot(v: SSAValue, body: Block | None) -> bool:
    """Whether ``v`` is computed in ``body`` from a dot's result (by pure ops)."""
    work, seen = [v], set()
    while work:
        op = work.pop().owner
        if not isinstance(op, Operation) or op.parent is not body or op in seen:
            continue
        if isinstance(op, tile.DotOp):
            return True
        seen.add(op)
        if is_side_effect_free(op):
            work.extend(op.operands)
    return False


def accumulator_scale(dot: tile.DotOp) -> tuple[arith.MulfOp, BlockArgument] | None:
    """The ``acc * x`` that ``dot`` adds into and nothing else reads (attention's rescaled
    output), and ``acc``, its one operand that is a block argument of ``dot``'s block;
    else None."""
    mul = dot.acc.owner
    if not (isinstance(mul, arith.MulfOp) and dot.acc.has_one_use()
            and mul.parent is dot.parent):
        return None
    args = [x for x in mul.operands if isinstance(x, BlockArgument) and x.block is dot.parent]
    return (mul, args[0]) if len(args) == 1 else None


def loop_accumulator(dot: tile.DotOp) -> BlockArgument | None:
    """The loop-carried accumulator ``dot`` adds into and only hands on, else None: ``acc =
    tl.dot(a, b, acc)``, or ``tl.dot(a, b, acc * x)`` (``accumulator_scale``), is all the
    loop does with ``acc``. Such a dot may still be running when the next iteration's dot
    starts on the same registers."""
    scale, body = accumulator_scale(dot), dot.parent
    acc = dot.acc if scale is None else scale[1]
    if not (isinstance(acc, BlockArgument) and acc.block is body and body is not None
            and isinstance(body.parent_op(), scf.ForOp) and len(list(acc.uses)) == 1):
        return None
    uses = list(dot.result.uses)
    if len(uses) != 1 or uses[0].operation is not body.last_op or uses[0].index != acc.index - 1:
        return None
    return acc
