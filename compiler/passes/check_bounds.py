"""check-bounds: tile IR -> tile IR with a ``tile.check_bounds`` in front of every access.

Only GPU pipelines with ``debug=True`` run it, after ``lower-control`` (every pointer then
traces to a kernel argument through ``tile.splat``/``tile.addptr``/shape ops) and before
``strip-debug``, which turns each check into records of the debug buffer as it does a
``tl.device_assert``; the host raises ``OutOfBoundsError`` from them, with the NumPy
backend's message. The arrays' lengths come from the host: each pointer argument gets an
i32 extent parameter, appended after the others and marked ``{tile.extent_of = i}``
(``compiler/debug.py`` fills them at launch). The access itself is masked off where it
is out of bounds, so a bad store corrupts nothing and a bad load cannot fault before the
report. An access through a pointer made of an address (``tile.int_to_ptr``) goes
unchecked: nothing says how far the memory there reaches. Without ``debug`` the pipeline does not contain this pass: its IR is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.passes.lower_control import _base, _offset
from dialects import tile

EXTENT_OF = "tile.extent_of"
_KINDS = {tile.LoadOp: "load", tile.StoreOp: "store", tile.AtomicRMWOp: "atomic",
          tile.AtomicCASOp: "atomic"}


def extent_params(module: ModuleOp) -> list[int]:
    """For each extent parameter, in order, the index of the pointer parameter it bounds."""
    fn = next((o for o in module.walk() if isinstance(o, func.FuncOp)), None)
    if fn is None or fn.arg_attrs is None:
        return []
    return [a.data[EXTENT_OF].value.data for a in fn.arg_attrs.data
            if isinstance(a, DictionaryAttr) and EXTENT_OF in a.data]


def add_param(fn: func.FuncOp, t: Attribute, hint: str, attrs: dict) -> BlockArgument:
    """A new last parameter of ``fn`` of type ``t`` with argument attributes ``attrs``."""
    block = fn.body.blocks[0]
    arg = block.insert_arg(t, len(block.args))
    arg.name_hint = hint
    old = list(fn.arg_attrs.data) if fn.arg_attrs else [DictionaryAttr({})] * (
        len(block.args) - 1)
    fn.arg_attrs = ArrayAttr([*old, DictionaryAttr(attrs)])
    fn.update_function_type()
    return arg


def _extents(fn: func.FuncOp) -> dict[SSAValue, SSAValue]:
    """An extent parameter for each pointer parameter of ``fn``."""
    pointers = [a for a in fn.body.blocks[0].args if isinstance(a.type, tile.PtrType)]
    return {a: add_param(fn, i32, f"{a.name_hint or f'arg{a.index}'}_extent",
                         {EXTENT_OF: IntegerAttr(a.index, i32)}) for a in pointers}


class _Check:
    """The check of one access, built in front of it, and the access masked by it."""

    def __init__(self, op: Operation, extents: dict[SSAValue, SSAValue]):
        self.op = op
        self.base = _base(op.ptr, op)
        self.extent = extents[self.base]

    def emit(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new.results[0] if new.results else None

    def offset(self) -> SSAValue:
        off = _offset(self.op.ptr, InsertPoint.before(self.op), self.op)
        if off is not None:
            return off
        t = tile.like(self.op.ptr.type, i32)
        zero = DenseIntOrFPElementsAttr.from_list(t, [0]) if isinstance(t, TensorType) \
            else IntegerAttr(0, i32)
        return self.emit(arith.ConstantOp(zero, t))

    def run(self) -> None:
        off, mask = self.offset(), self.op.mask
        name = self.base.name_hint or f"arg{self.base.index}"
        self.emit(tile.CheckBoundsOp(_KINDS[type(self.op)], name, off, self.extent, mask))
        extent = self.extent
        if isinstance(off.type, TensorType):
            extent = self.emit(tile.SplatOp(extent, off.type))
        # unsigned: a negative offset reads as huge, so it is outside too
        inside = self.emit(tile.CmpIOp("ult", off, extent))
        _set_mask(self.op, inside if mask is None else self.emit(arith.AndIOp(mask, inside)))


def _set_mask(op: Operation, mask: SSAValue) -> None:
    """Replace ``op`` by the same access with mask ``mask``."""
    new = _REMASK[type(op)](op, mask)
    new.properties.update({k: v for k, v in op.properties.items()
                           if k != "operandSegmentSizes"})
    new.attributes.update(op.attributes)
    new.location = op.location
    Rewriter.replace_op(op, new)


_REMASK = {
    tile.LoadOp: lambda op, m: tile.LoadOp(op.ptr, m, op.other),
    tile.StoreOp: lambda op, m: tile.StoreOp(op.ptr, op.value, m),
    tile.AtomicRMWOp: lambda op, m: tile.AtomicRMWOp(op.kind.data, op.ptr, op.val, m),
    tile.AtomicCASOp: lambda op, m: tile.AtomicCASOp(op.ptr, op.cmp, op.val, m),
}


@dataclass(frozen=True)
class CheckBounds(ModulePass):
    """A bounds check in front of every load, store and atomic; the access masked by it."""

    name = "check-bounds"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp) and o.body.blocks]:
            accesses = [o for o in fn.walk() if type(o) in _KINDS]
            if accesses:
                extents = _extents(fn)
                for access in accesses:
                    if _base(access.ptr, access) in extents:
                        _Check(access, extents).run()
