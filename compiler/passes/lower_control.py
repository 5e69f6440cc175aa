"""lower-control: tile IR -> tile IR whose ``scf`` ops carry no pointers.

tile-to-simt turns a pointer into (kernel argument, i32 element index) by tracing it
through ``tile.splat``/``tile.addptr`` to an argument, which a pointer carried by a loop
(``p += BLOCK`` in a ``for``) or yielded by an ``scf.if``/``scf.while`` defeats. Here
such block arguments and results carry the i32 offset from their root instead (the
argument, or an address cast to a pointer before the op), and the pointer is rebuilt
from it (``tile.splat`` + ``tile.addptr``) where the value was defined: at the top of the
region, right after the op. Every operand that feeds one (a loop's initial value, a
yield) is then traced to its offset. A carried pointer must stay on one root. The
offsets from a cast address being 32-bit too, a 64-bit one is refused here. The NumPy
backend runs pointers as they are and skips this pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.context import source_loc
from compiler.errors import CompileError, UnsupportedError
from dialects import arith_shaped, tile
from dialects.tile import PtrType, element_type, like

_CONTROL = (scf.ForOp, scf.IfOp, scf.WhileOp)
# Ops that rearrange a tile of pointers (``(a + rm[:, None] * K) + rk[None, :]`` broadcasts
# the pointer tile): the offsets rearrange the same way.
_SHAPE_OPS = (tile.BroadcastOp, tile.ExpandDimsOp, tile.ReshapeOp, tile.TransOp,
              tile.ConvertLayoutOp)


def _is_ptr(v: SSAValue) -> bool:
    return isinstance(element_type(v.type), PtrType)


def _fail(op: Operation, msg: str) -> CompileError:
    return CompileError(msg, source_loc(op))


# -- which value feeds which --------------------------------------------------------------

def _feeds(op: Operation) -> list[tuple[int, SSAValue]]:
    """(operand index, block argument or result it becomes) for an op that passes values
    into or out of a region."""
    parent = op.parent_op()
    if isinstance(op, scf.ForOp):
        return [(3 + i, a) for i, a in enumerate(op.body.block.args[1:])]
    if isinstance(op, scf.WhileOp):
        return list(enumerate(op.before_region.block.args))
    if isinstance(op, scf.ConditionOp) and isinstance(parent, scf.WhileOp):
        after = parent.after_region.block.args
        return [(1 + i, v) for i, v in enumerate(after)] + \
            [(1 + i, v) for i, v in enumerate(parent.results)]
    if isinstance(op, scf.YieldOp) and isinstance(parent, scf.ForOp):
        return [(i, a) for i, a in enumerate(parent.body.block.args[1:])]
    if isinstance(op, scf.YieldOp) and isinstance(parent, scf.IfOp):
        return list(enumerate(parent.results))
    if isinstance(op, scf.YieldOp) and isinstance(parent, scf.WhileOp):
        return list(enumerate(parent.before_region.block.args))
    return []


def _source(v: SSAValue) -> SSAValue | None:
    """A value that ``v`` (a block argument or result of an scf op) starts as."""
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        if isinstance(parent, scf.ForOp) and v.index > 0:
            return parent.iter_args[v.index - 1]
        if isinstance(parent, scf.WhileOp):
            if v.block is parent.before_region.block:
                return parent.arguments[v.index]
            cond = parent.before_region.block.last_op
            return cond.operands[1 + v.index] if cond is not None else None
        return None
    assert isinstance(v, OpResult)
    op = v.op
    if isinstance(op, scf.ForOp):
        return op.iter_args[v.index]
    if isinstance(op, scf.WhileOp):
        return _source(op.after_region.block.args[v.index])
    if isinstance(op, scf.IfOp):
        end = op.true_region.block.last_op
        return end.operands[v.index] if end is not None else None
    return None


def _is_root(v: SSAValue) -> bool:
    """Whether pointers are traced back to ``v``: a kernel argument, or an address cast to
    a pointer (``tile.int_to_ptr``)."""
    if isinstance(v, BlockArgument):
        return isinstance(v.block.parent_op(), func.FuncOp)
    return isinstance(v.owner, tile.IntToPtrOp)


def _base(v: SSAValue, user: Operation) -> SSAValue:
    """The root (``_is_root``) of a pointer value."""
    seen: set[SSAValue] = set()
    while not _is_root(v):
        seen.add(v)
        owner = v.owner
        nxt = owner.ptr if isinstance(owner, tile.AddPtrOp) else \
            owner.value if isinstance(owner, tile.SplatOp) else \
            owner.x if isinstance(owner, tile.AssumeFactsOp) else \
            owner.src if isinstance(owner, _SHAPE_OPS) else _source(v)
        if nxt is None or nxt in seen:
            raise _fail(user, "cannot trace this pointer to a kernel argument (a pointer "
                              "must be an argument, or an address cast to a pointer, plus "
                              "offsets)")
        v = nxt
    return v


def _visible(base: SSAValue, op: Operation) -> bool:
    """Whether root ``base`` is defined where the pointers ``op`` carries are rebuilt (in
    its regions and after it): before ``op`` in a block around it."""
    if isinstance(base, BlockArgument):
        return True
    cast = base.owner
    block = cast.parent_block()
    while op.parent_block() is not block:
        op = op.parent_op()
        if op is None:
            return False
    return cast.is_before_in_block(op)


# -- building -----------------------------------------------------------------------------

def _offset_type(ptr_type: Attribute) -> Attribute:
    return like(ptr_type, i32) if isinstance(ptr_type, TensorType) else i32


def _insert(new: Operation, point: InsertPoint, loc_op: Operation) -> SSAValue:
    new.location = loc_op.location
    Rewriter.insert_op(new, point)
    return new.results[0]


def _rebuild(base: SSAValue, offset: SSAValue, ptr_type: Attribute, point: InsertPoint,
             loc_op: Operation) -> tuple[SSAValue, list[Operation]]:
    """``base + offset`` as a value of ``ptr_type``, and the ops that compute it."""
    ptr = base
    if isinstance(ptr_type, TensorType):
        ptr = _insert(tile.SplatOp(base, ptr_type), point, loc_op)
    result = _insert(tile.AddPtrOp(ptr, offset), point, loc_op)
    return result, [o.owner for o in {ptr, result} if isinstance(o, OpResult)]


def _convert(v: SSAValue, base: SSAValue, op: Operation) -> SSAValue:
    """Block argument or result ``v`` of ``op`` as an offset from ``base``, the pointer
    rebuilt from it for ``v``'s users; the offset value."""
    ptr_type, hint = v.type, v.name_hint
    if isinstance(v, BlockArgument):
        block = v.block
        new = block.insert_arg(_offset_type(ptr_type), v.index)
        new.name_hint = hint and f"{hint}_offset"
        ptr, _ = _rebuild(base, new, ptr_type, InsertPoint.at_start(block), op)
        ptr.name_hint = hint
        v.replace_all_uses_with(ptr)
        block.erase_arg(v)
        return new
    new = Rewriter.replace_value_with_new_type(v, _offset_type(ptr_type))
    new.name_hint = hint and f"{hint}_offset"
    ptr, made = _rebuild(base, new, ptr_type, InsertPoint.after(op), op)
    ptr.name_hint = hint
    new.replace_uses_with_if(ptr, lambda use: use.operation not in made)
    return new


def _to_i32(v: SSAValue, point: InsertPoint, loc_op: Operation) -> SSAValue:
    width = element_type(v.type)
    assert isinstance(width, IntegerType)
    if width.width.data == 32:
        return v
    cast = arith_shaped.TruncIOp if width.width.data > 32 else arith_shaped.ExtSIOp
    return _insert(cast(v, like(v.type, i32)), point, loc_op)


def _offset(v: SSAValue, point: InsertPoint, user: Operation) -> SSAValue | None:
    """The i32 offset of pointer ``v`` from its argument (None: zero), built at ``point``."""
    owner = v.owner
    if isinstance(owner, tile.AddPtrOp):
        inner = _offset(owner.ptr, point, user)
        off = _to_i32(owner.offset, point, user)
        if isinstance(v.type, TensorType) and not isinstance(off.type, TensorType):
            off = _insert(tile.SplatOp(off, _offset_type(v.type)), point, user)
        return off if inner is None else _insert(arith.AddiOp(inner, off), point, user)
    if isinstance(owner, tile.SplatOp):
        inner = _offset(owner.value, point, user)
        return None if inner is None else \
            _insert(tile.SplatOp(inner, _offset_type(v.type)), point, user)
    if isinstance(owner, tile.AssumeFactsOp):  # its facts are about the pointer, not kept
        return _offset(owner.x, point, user)
    if isinstance(owner, _SHAPE_OPS):
        inner = _offset(owner.src, point, user)
        if inner is None:
            return None
        rearranged = type(owner).create(
            operands=[inner], result_types=[_offset_type(v.type)],
            properties=dict(owner.properties), attributes=dict(owner.attributes))
        return _insert(rearranged, point, user)
    return None  # the root itself (_base checked that it is one)


def _zero(t: Attribute, point: InsertPoint, user: Operation) -> SSAValue:
    attr = DenseIntOrFPElementsAttr.from_list(t, [0]) if isinstance(t, TensorType) \
        else IntegerAttr(0, i32)
    return _insert(arith.ConstantOp(attr, t), point, user)


def _feed_offsets(op: Operation, converted: dict[SSAValue, SSAValue]) -> None:
    """Replace the pointer operands of ``op`` that feed converted values by offsets."""
    point = InsertPoint.before(op)
    for index, target in _feeds(op):
        if target not in converted or not _is_ptr(op.operands[index]):
            continue
        ptr = op.operands[index]
        if _base(ptr, op) is not converted[target]:
            raise _fail(op, "a pointer carried through control flow must stay in one array "
                            f"(here it moves from {_shown(converted[target])} to "
                            f"{_shown(_base(ptr, op))})")
        off = _offset(ptr, point, op)
        op.operands[index] = off if off is not None else _zero(target.type, point, op)


def _carried(op: Operation) -> Sequence[SSAValue]:
    """The block arguments and results of a control op that may hold pointers."""
    args = [a for r in op.regions for b in r.blocks for a in b.args]
    if isinstance(op, scf.ForOp):
        args = args[1:]  # the induction variable
    return [*args, *op.results]


def wide_offset_params(module: ModuleOp) -> list[int]:
    """The pointer parameters some ``tile.addptr`` moves by a 64-bit offset (Triton's
    ``pid.to(tl.int64) * stride`` idiom for arrays past 2**31 elements): the GPU
    lowerings index with 32 bits, so a launch must refuse arrays a 32-bit index cannot
    reach across rather than let the offset wrap."""
    wide: set[int] = set()
    for op in module.walk():
        if isinstance(op, tile.AddPtrOp) and _bits(op.offset) == 64:
            v = op.ptr
            while isinstance(v, OpResult) and v.op.operands and _is_ptr(v.op.operands[0]):
                v = v.op.operands[0]
            if isinstance(v, BlockArgument) and isinstance(v.block.parent_op(), func.FuncOp):
                wide.add(v.index)
    return sorted(wide)


def _bits(v: SSAValue) -> int:
    t = element_type(v.type)
    return t.width.data if isinstance(t, IntegerType) else 0


def _shown(root: SSAValue) -> str:
    """A root as messages name it: its argument, or the cast that made it."""
    if isinstance(root, BlockArgument):
        return root.name_hint or f"argument {root.index}"
    loc = source_loc(root.owner)
    return "an address cast to a pointer" + (f" (line {loc.line})" if loc else "")


def _refuse_wide_address_offsets(f: func.FuncOp) -> None:
    """The offsets from a root are 32-bit from here on. For an argument the launch
    refuses an array they cannot cross (``wide_offset_params``); the memory an address
    points into is unknown, so a 64-bit offset from one is refused instead of wrapped."""
    for op in f.walk():
        if isinstance(op, tile.AddPtrOp) and _bits(op.offset) == 64 and \
                not isinstance(_base(op.ptr, op), BlockArgument):
            raise UnsupportedError(
                "a 64-bit offset from a pointer made of an address is not supported on GPU "
                "backends (their offsets from it are 32-bit): add it to the tl.int64 address "
                "before the cast to tl.pointer_type", source_loc(op))


def lower(f: func.FuncOp) -> None:
    _refuse_wide_address_offsets(f)
    converted: dict[SSAValue, SSAValue] = {}  # offset value -> its root
    for op in [o for o in f.walk() if isinstance(o, _CONTROL)]:  # outer ops first
        for v in _carried(op):
            if _is_ptr(v):
                base = _base(v, op)
                if not _visible(base, op):
                    raise _fail(op, "a pointer made of an address inside a loop or branch "
                                    "cannot be carried out of it: cast the address before")
                converted[_convert(v, base, op)] = base
    if converted:
        for op in list(f.walk()):
            _feed_offsets(op, converted)


@dataclass(frozen=True)
class LowerControl(ModulePass):
    """Offsets instead of pointers through ``scf`` block arguments and results."""

    name = "lower-control"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                lower(f)
