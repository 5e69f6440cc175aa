"""lower-array-views: tile IR with array views -> tile IR with pointers and masks only.

A ``tile.view_load``/``tile.view_store`` of the tile at index ``i`` (one per dimension)
of a ``tile.make_view`` becomes a plain ``tile.load``/``tile.store`` of the pointer tile
``base + sum_d off_d * stride_d``, where ``off_d = i_d * T_d + range(T_d)`` is laid along
dimension ``d``, masked by ``off_d < shape_d`` compared unsigned (so a negative offset
is outside too). A load reads the padding value where the mask is false; a store drops
those elements. A stride that is the constant 1 is not multiplied, so the contiguity
analysis sees consecutive offsets there and the access can vectorize. Every pass after
this one, and every backend, sees what a hand-written pointer-and-mask kernel gives it.

An access marked ``elements`` (Triton's tensor descriptors) names element offsets: its
start along ``d`` is ``i_d`` itself, so ``off_d = i_d + range(T_d)``, masked the same way.

In front of each tile-indexed access goes a ``tile.check_tile_index`` of its starts
``i_d * T_d``, tile shape and the array's shape: an index whose tile lies wholly outside
the array is undefined in cuTile; the NumPy backend reports it, tile-to-simt drops the
check. An ``elements`` access gets no check: in Triton any offset is defined (outside the
array a load reads the padding and a store writes nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, TensorType, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.context import source_loc
from compiler.errors import CompileError
from dialects import tile

_PADDING = {"zero": 0.0, "undetermined": 0.0, "nan": math.nan, "pos_inf": math.inf,
            "neg_inf": -math.inf}


@dataclass(frozen=True)
class LowerArrayViews(ModulePass):
    """Every view access to pointer arithmetic and a masked access; views disappear.
    With ``tma=1`` (first of two runs, on sm_90) a view load that is an operand of a dot in
    a loop stays for ``pipeline-loads`` to fill by TMA (or lower itself), and a view store
    outside loops for ``tma-stores``."""

    name = "lower-array-views"
    tma: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        accesses = [o for o in op.walk() if isinstance(o, tile.ViewLoadOp | tile.ViewStoreOp)
                    and not (self.tma and _left_for_tma(o))]
        for access in accesses:
            lower_view_access(access)
        for view in [o for o in op.walk() if isinstance(o, tile.MakeViewOp)]:
            if not view.result.uses:
                Rewriter.erase_op(view)
            elif not self.tma:
                raise CompileError("an array view is used by an op lower-array-views "
                                   "does not know", source_loc(view))


def _dot_operand_in_loop(op: Operation) -> bool:
    """``op`` is a view load whose one use is a dot's ``a`` or ``b`` in the same loop body
    (``b`` through a transpose too)."""
    uses = list(op.results[0].uses) if isinstance(op, tile.ViewLoadOp) else []
    if len(uses) == 1 and isinstance(uses[0].operation, tile.TransOp):
        uses = [u for u in uses[0].operation.result.uses if u.index == 1]
    return (len(uses) == 1 and isinstance(uses[0].operation, tile.DotOp) and uses[0].index < 2
            and uses[0].operation.parent is op.parent
            and isinstance(op.parent_op(), scf.ForOp))


def _left_for_tma(op: tile.ViewLoadOp | tile.ViewStoreOp) -> bool:
    """A load feeding a dot in a loop (``pipeline-loads``), a store outside loops
    (``tma-stores``)."""
    if isinstance(op, tile.ViewStoreOp):
        return outside_loops(op)
    return _dot_operand_in_loop(op)


def outside_loops(op: Operation) -> bool:
    """Whether no ``scf.for`` or ``scf.while`` holds ``op``."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, scf.ForOp | scf.WhileOp):
        parent = parent.parent_op()
    return parent is None


def element_starts(op: tile.ViewStoreOp) -> list[SSAValue]:
    """The first element of ``op``'s tile along each dimension, computed in front of it."""
    access = _Access(op)
    return [access.start(d) for d in range(len(access.shape))]


def lower_view_access(op: tile.ViewLoadOp | tile.ViewStoreOp) -> None:
    """``op`` as pointer arithmetic and a masked ``tile.load``/``tile.store``."""
    _Access(op).lower()


def is_unit(v: SSAValue) -> bool:
    """``v`` is the constant integer 1."""
    owner = v.owner
    return isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) \
        and owner.value.value.data == 1


class _Access:
    """The pointer tile and mask of one view access, built in front of it."""

    def __init__(self, op: tile.ViewLoadOp | tile.ViewStoreOp):
        self.op = op
        view = op.view.owner
        if not isinstance(view, tile.MakeViewOp):
            raise CompileError("a view access needs its view from tile.make_view",
                               source_loc(op))
        self.view = view
        tile_type = op.result.type if isinstance(op, tile.ViewLoadOp) else op.value.type
        assert isinstance(tile_type, TensorType)
        self.shape = tuple(tile_type.get_shape())
        self.elem = tile_type.get_element_type()
        self.elements = op.elements is not None  # indices are element offsets
        self.starts: list[SSAValue] = []  # index_d * T_d, for the check

    def emit(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new.results[0]

    def splat(self, v: SSAValue, shape: tuple[int, ...]) -> SSAValue:
        return self.emit(tile.SplatOp(v, TensorType(v.type, shape)))

    def spread(self, v: SSAValue, d: int) -> SSAValue:
        """A 1-D tile along dimension ``d`` of the access, stretched to its shape."""
        rank = len(self.shape)
        for axis in range(rank):
            if axis != d:
                v = self.emit(tile.ExpandDimsOp(v, axis))
        if len(self.shape) > 1:
            elem = tile.element_type(v.type)
            v = self.emit(tile.BroadcastOp(v, TensorType(elem, self.shape)))
        return v

    def start(self, d: int) -> SSAValue:
        """The first element along dimension ``d``: the index itself for an ``elements``
        access, else ``index_d * T_d`` (kept for the check)."""
        if self.elements:
            return self.op.index[d]
        size = self.emit(arith.ConstantOp(IntegerAttr(self.shape[d], i32), i32))
        start = self.emit(arith.MuliOp(self.op.index[d], size))
        self.starts.append(start)
        return start

    def offsets(self, d: int) -> SSAValue:
        """``start_d + range(T_d)``: the element offsets along dimension ``d``."""
        n = self.shape[d]
        start = self.start(d)
        return self.emit(arith.AddiOp(self.splat(start, (n,)), self.emit(tile.RangeOp(0, n))))

    def pointers_and_mask(self) -> tuple[SSAValue, SSAValue]:
        total = mask = None
        for d in range(len(self.shape)):
            offs = self.offsets(d)
            inside = self.emit(tile.CmpIOp("ult", offs, self.splat(self.view.shape[d],
                                                                   (self.shape[d],))))
            stride = self.view.strides[d]
            if not is_unit(stride):
                offs = self.emit(arith.MuliOp(offs, self.splat(stride, (self.shape[d],))))
            offs, inside = self.spread(offs, d), self.spread(inside, d)
            total = offs if total is None else self.emit(arith.AddiOp(total, offs))
            mask = inside if mask is None else self.emit(arith.AndIOp(mask, inside))
        assert total is not None and mask is not None
        ptrs = self.splat(self.view.base, self.shape)
        return self.emit(tile.AddPtrOp(ptrs, total)), mask

    def padding(self) -> SSAValue:
        assert isinstance(self.op, tile.ViewLoadOp)
        value = _PADDING[self.op.padding.data]
        attr: Attribute = IntegerAttr(0, self.elem) if isinstance(self.elem, IntegerType) \
            else FloatAttr(value, self.elem)
        return self.splat(self.emit(arith.ConstantOp(attr, self.elem)), self.shape)

    def check(self) -> None:
        """The tile-index check, of the starts ``offsets`` computed: it keeps alive no
        value the access does not, so the GPU code is the same once it is dropped."""
        access = "load" if isinstance(self.op, tile.ViewLoadOp) else "store"
        name = self.view.base.name_hint or "array"  # the array parameter's name
        check = tile.CheckTileIndexOp(access, name, self.starts, self.shape,
                                      self.view.shape)
        check.location = self.op.location
        Rewriter.insert_op(check, InsertPoint.before(self.op))

    def lower(self) -> None:
        ptrs, mask = self.pointers_and_mask()
        if not self.elements:
            self.check()
        if isinstance(self.op, tile.ViewLoadOp):
            new = tile.LoadOp(ptrs, mask, self.padding())
        else:
            new = tile.StoreOp(ptrs, self.op.value, mask)
        new.location = self.op.location
        Rewriter.replace_op(self.op, new)
