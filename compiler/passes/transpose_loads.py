"""transpose-loads: tile IR -> tile IR in which a 2-D load that runs down its columns and
feeds a dot is a load along rows, transposed.

Triton's attention backward reads ``qT = tl.load(Q + offs_m[None, :] * stride_tok +
offs_k[:, None])``: a ``[HEAD_DIM, BLOCK_M]`` tile whose contiguous elements run down dimension
0. Layouts coalesce along the last dimension, so each thread loaded one 2-byte element
a time (360 scalar loads a thread in tutorial 06's backward), and ``pipeline-loads``,
which copies rows into shared memory, could not stage it. Here such a load of pointer
tile ``P`` (contiguity along dimension 0 above 1, along dimension 1 exactly 1, by
``axis_info``) becomes ``trans(load(trans(P), trans(mask), trans(other)))``: the same
elements, read along rows. A dot reads a transposed operand where it lies (K-major B, as in
``dot(q, trans(k))``), and ``trans(trans(x))`` of the kernel's own ``tl.trans(qT)`` is
folded to ``x`` here, so both dots of the loaded block read one row-major stage. Only
loads whose tile reaches a dot's ``a`` or ``b`` are changed: elsewhere the transpose back
would be a trip through shared memory of its own.

The transposed pointers themselves are data moved between layouts (through shared memory)
wherever they are computed. Where ``P`` is a loop's iter_arg advanced by one value for all
its elements (``qT_ptrs += step * stride``), the loop carries ``trans(P)`` instead: that
moves once, before the loop, and each iteration adds its step to pointers already in
place.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.passes.axis_info import AxisInfoAnalysis
from dialects import tile

SWAP = (1, 0)
# ops a loaded tile may pass through on its way to a dot operand
_THROUGH = (tile.TransOp, tile.ConvertLayoutOp, arith.ExtFOp, arith.TruncFOp)


def _reaches_dot(v: SSAValue) -> bool:
    """Whether ``v`` is, or becomes through transposes and float casts, a dot's a or b."""
    work, seen = [v], set()
    while work:
        for use in work.pop().uses:
            user = use.operation
            if isinstance(user, tile.DotOp) and use.index < 2:
                return True
            if isinstance(user, _THROUGH) and user not in seen:
                seen.add(user)
                work.extend(user.results)
    return False


def _down_columns(load: tile.LoadOp, facts: AxisInfoAnalysis) -> bool:
    t = load.ptr.type
    if not isinstance(t, TensorType) or len(t.get_shape()) != 2:
        return False
    contiguity = facts[load.ptr].contiguity
    return contiguity[0] > 1 and contiguity[1] == 1


def _swapped(v: SSAValue | None, before: Operation) -> SSAValue | None:
    if v is None:
        return None
    op = tile.TransOp(v, SWAP)
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op.result


def transpose(load: tile.LoadOp) -> None:
    """``load`` as a load of its transposed pointers, transposed back; a transpose of
    the result (``tl.trans`` in the kernel) reads the new load itself."""
    ptr, offsets = _swapped_pointers(load.ptr, load)
    rows = tile.LoadOp(ptr, *(_swapped(v, load) for v in (load.mask, load.other)))
    back = tile.TransOp(rows.result, SWAP)
    for op in (rows, back):
        op.location = load.location
    old = load.ptr.owner
    Rewriter.replace_op(load, [rows, back])
    for use in list(back.result.uses):
        user = use.operation
        if isinstance(user, tile.TransOp) and user.permutation == SWAP:
            user.result.replace_all_uses_with(rows.result)
            Rewriter.erase_op(user)
    if offsets is not None:
        _erase_unused(old)
        _carry_transposed(offsets)


def _swapped_pointers(ptr: SSAValue, before: Operation) -> tuple[SSAValue, tile.TransOp | None]:
    """``trans(ptr)``; where ``ptr`` is a base plus offsets (how ``lower-control`` leaves
    loop-carried pointers) the base plus the transposed offsets, and that transpose."""
    add = ptr.owner
    if not (isinstance(add, tile.AddPtrOp) and isinstance(base := add.ptr.owner, tile.SplatOp)
            and isinstance(add.offset.type, TensorType)):
        return _swapped(ptr, before), None  # pyright: ignore[reportReturnType]
    offsets = tile.TransOp(add.offset, SWAP)
    shape = offsets.result.type.get_shape()
    splat = tile.SplatOp(base.value, TensorType(base.result.type.element_type, shape))
    moved = tile.AddPtrOp(splat.result, offsets.result)
    Rewriter.insert_op([offsets, splat, moved], InsertPoint.before(before))
    return moved.result, offsets


def _erase_unused(op: Operation | None) -> None:
    """``op`` (pointer arithmetic) and what it reads, where nothing else reads them; also
    unused advances of its result (``lower-control`` leaves them beside the offsets')."""
    if not isinstance(op, tile.AddPtrOp | tile.SplatOp):
        return
    for use in list(op.results[0].uses):
        user = use.operation
        if isinstance(user, tile.AddPtrOp) and not user.result.uses:
            Rewriter.erase_op(user)
    if op.results[0].uses:
        return
    reads = [v.owner for v in op.operands]
    Rewriter.erase_op(op)
    for owner in reads:
        if isinstance(owner, Operation):
            _erase_unused(owner)


def _advance(arg: BlockArgument, swap: tile.TransOp) -> arith.AddiOp | None:
    """The op advancing offsets ``arg`` by a splat, yielded in its place, if that and
    ``swap`` are all that read them."""
    users = [u.operation for u in arg.uses if u.operation is not swap]
    if len(users) != 1 or not isinstance(add := users[0], arith.AddiOp):
        return None
    step = add.rhs if add.lhs is arg else add.lhs
    uses = list(add.result.uses)
    ok = (isinstance(step.owner, tile.SplatOp) and len(uses) == 1
          and isinstance(uses[0].operation, scf.YieldOp) and uses[0].index == arg.index - 1)
    return add if ok else None


def _carry_transposed(swap: tile.TransOp) -> None:
    """Where ``swap`` transposes a loop's iter_arg that only it and a uniform advance read,
    the loop carries the transposed offsets (see the module's text)."""
    arg = swap.src
    loop = arg.block.parent_op() if isinstance(arg, BlockArgument) else None
    if not isinstance(loop, scf.ForOp) or arg.index == 0:
        return
    add = _advance(arg, swap)
    if add is None:
        return
    i, t = arg.index - 1, swap.result.type
    init = tile.TransOp(loop.iter_args[i], SWAP)
    Rewriter.insert_op(init, InsertPoint.before(loop))
    loop.operands = [*loop.operands[:3 + i], init.result, *loop.operands[4 + i:]]
    carried = Rewriter.replace_value_with_new_type(arg, t)
    swap.result.replace_all_uses_with(carried)
    Rewriter.erase_op(swap)
    splat = (add.rhs if add.lhs is carried else add.lhs).owner
    assert isinstance(splat, tile.SplatOp)
    step = tile.SplatOp(splat.value, t)  # pyright: ignore[reportArgumentType]
    Rewriter.insert_op(step, InsertPoint.before(add))
    Rewriter.replace_op(add, arith.AddiOp(carried, step.result))
    after = loop.results[i]
    if after.uses:  # read after the loop: transposed back there
        after = Rewriter.replace_value_with_new_type(after, t)
        back = tile.TransOp(after, SWAP)
        Rewriter.insert_op(back, InsertPoint.after(loop))
        for use in [u for u in after.uses if u.operation is not back]:
            use.operation.operands[use.index] = back.result


@dataclass(frozen=True)
class TransposeLoads(ModulePass):
    """Column-running 2-D loads feeding dots, read along rows and transposed."""

    name = "transpose-loads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if not isinstance(f, func.FuncOp):
                continue
            facts = AxisInfoAnalysis(f)
            found = [ld for ld in f.walk() if isinstance(ld, tile.LoadOp)
                     and _down_columns(ld, facts) and _reaches_dot(ld.result)]
            for ld in found:
                transpose(ld)
