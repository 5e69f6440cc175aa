"""Part of assign-layouts: its ``tile.convert_layout`` ops, inserted where a rule and a
group disagree (``convert_where_needed``) and settled once every tile has its layout
(``settle``): one left between equal layouts goes, and one of a tile computed cheaply from
scalars becomes that tile computed again in the new layout (``rematerialize``)."""

from __future__ import annotations

from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dialects import tile
from dialects.tile import SliceLayoutAttr


def is_tile(v: SSAValue) -> bool:
    return isinstance(v.type, TensorType)


def with_layout(t: TensorType, layout: Attribute) -> TensorType:
    return TensorType(t.element_type, t.get_shape(), layout)


def retype_constant(op: Operation) -> None:
    value = op.properties.get("value")
    if isinstance(value, DenseIntOrFPElementsAttr) and is_tile(op.results[0]):
        op.properties["value"] = DenseIntOrFPElementsAttr(op.results[0].type,
                                                          BytesAttr(value.data.data))


def _convert(value: SSAValue, layout: Attribute, before: Operation) -> SSAValue:
    new = tile.ConvertLayoutOp(value, with_layout(value.type, layout))  # pyright: ignore
    new.location = before.location
    Rewriter.insert_op(new, InsertPoint.before(before))
    return new.result


def convert_where_needed(op: Operation) -> None:
    """A ``tile.convert_layout`` where an op's rule and its groups disagree."""
    if isinstance(op, tile.ExpandDimsOp | tile.BroadcastOp):
        res = op.result.type.encoding
        want = SliceLayoutAttr(op.axis.value.data, res) \
            if isinstance(op, tile.ExpandDimsOp) else res
        if op.src.type.encoding != want:
            op.operands[0] = _convert(op.src, want, op)
    elif isinstance(op, tile.ReduceOp):
        for out in op.outs:
            if not is_tile(out):
                continue
            want = SliceLayoutAttr(op.axis.value.data, op.srcs[0].type.encoding)
            if out.type.encoding == want:
                continue
            group = out.type.encoding
            out = Rewriter.replace_value_with_new_type(out, with_layout(out.type, want))
            after = op.next_op
            assert after is not None
            conv = _convert(out, group, after)
            out.replace_all_uses_with(conv)
            conv.owner.operands[0] = out


_CHEAP_TILE_OPS = (tile.RangeOp, tile.SplatOp, tile.CmpIOp, tile.CmpFOp, tile.SelectOp,
                   tile.UMulHiOp, tile.BrevOp, tile.ArithFenceOp, tile.AssumeFactsOp,
                   tile.FromFp8Op, tile.ToFp8Op)
REMATERIALIZE_LIMIT = 8  # ops recomputed in place of one conversion through memory


def _cheap_ops(value: SSAValue) -> list[Operation] | None:
    """The ops computing tile ``value`` from scalars alone (ranges, splats, constants and
    elementwise math), operands first; None if anything else or too many."""
    found: list[Operation] = []

    def visit(v: SSAValue) -> bool:
        op = v.owner
        if not is_tile(v) or op in found:
            return True
        if not isinstance(op, Operation) or op.regions or not (
                isinstance(op, _CHEAP_TILE_OPS) or op.name.startswith(("arith.", "math."))):
            return False
        if not all(visit(o) for o in op.operands):
            return False
        found.append(op)
        return len(found) <= REMATERIALIZE_LIMIT

    return found if visit(value) else None


def _rematerialize(conv: tile.ConvertLayoutOp) -> None:
    """A conversion of a cheap tile becomes that tile computed again in the new layout
    (``offs`` used as both ``offs[:, None]`` and ``offs[None, :]``); originals left
    unused are erased."""
    ops = _cheap_ops(conv.src)
    if ops is None:
        return
    layout = conv.result.type.encoding
    mapped: dict[SSAValue, SSAValue] = {}
    for op in ops:
        copy = op.clone(value_mapper=mapped)
        Rewriter.insert_op(copy, InsertPoint.before(conv))
        for old, new in zip(op.results, copy.results, strict=True):
            mapped[old] = Rewriter.replace_value_with_new_type(new, with_layout(new.type, layout))
        retype_constant(copy)
    conv.result.replace_all_uses_with(mapped[conv.src])
    Rewriter.erase_op(conv)
    for op in reversed(ops):
        if all(r.first_use is None for r in op.results):
            Rewriter.erase_op(op)


def settle(conv: tile.ConvertLayoutOp) -> None:
    """``conv`` gone where its layouts are equal (an access cut off a dot's result that
    kept the dot's layout), rematerialized where cheap."""
    if conv.src.type == conv.result.type:
        conv.result.replace_all_uses_with(conv.src)
        Rewriter.erase_op(conv)
    else:
        _rematerialize(conv)
