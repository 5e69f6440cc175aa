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

A tile of fewer dimensions than its array (a scalar: none) is one element long along the
array's leading dimensions: there the offset ``i_d * stride_d`` and the check
``i_d < shape_d`` are scalars, folded into the base pointer and the mask.

With ``debug=True`` a ``tile.check_tile_index`` of its starts ``i_d * T_d``, tile shape and
the array's shape goes in front of each tile-indexed access: cuTile's ``ct.load``/
``ct.store`` define an index whose tile lies wholly outside the array (the padding is
read, nothing is written; NVIDIA's FFT sample launches such programs), but it is seldom
meant, so the NumPy backend reports it when asked; the GPU pipelines drop the check
(``strip-debug``, or ``tile-to-simt`` for accesses lowered after it). An ``elements``
access gets no check: Triton means any offset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, TensorType, i32
from xdsl.ir import Attribute, Operation, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from compiler.context import source_loc
from compiler.errors import CompileError
from dialects import tile
from dialects.tile.array import view_tile_shape

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
    debug: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        accesses = [o for o in op.walk() if isinstance(o, tile.ViewLoadOp | tile.ViewStoreOp)
                    and not (self.tma and _left_for_tma(o))]
        for access in accesses:
            lower_view_access(access, self.debug)
        for view in [o for o in op.walk() if isinstance(o, tile.MakeViewOp)]:
            if not view.result.uses:
                Rewriter.erase_op(view)
            elif not self.tma:
                raise CompileError("an array view is used by an op lower-array-views "
                                   "does not know", source_loc(view))


def _unused(op: Operation) -> bool:
    """Whether nothing reads what ``op`` computes but ops like it, and it has no effect:
    the ``expand_dims`` that a cuTile ``reshape`` undid, before ``canonicalize`` erases
    it."""
    return bool(op.results) and not op.regions and is_side_effect_free(op) and all(
        _unused(u.operation) for r in op.results for u in r.uses)


def _read(value: SSAValue) -> list[Use]:
    """The uses of ``value`` by ops that are not ``_unused``."""
    return [u for u in value.uses if not _unused(u.operation)]


def _dot_operand_in_loop(op: Operation) -> bool:
    """``op`` is a view load whose one use is a dot's ``a`` or ``b`` in the same loop body
    (or through a transpose), not counting unused ops."""
    uses = _read(op.results[0]) if isinstance(op, tile.ViewLoadOp) else []
    if len(uses) == 1 and isinstance(uses[0].operation, tile.TransOp):
        uses = _read(uses[0].operation.result)
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
    """The first element of ``op``'s tile along each dimension of its array, computed in
    front of it."""
    access = _Access(op)
    return [access.start(d) for d in range(access.rank)]


def lower_view_access(op: tile.ViewLoadOp | tile.ViewStoreOp, checked: bool = False) -> None:
    """``op`` as pointer arithmetic and a masked ``tile.load``/``tile.store``; ``checked``:
    with a ``tile.check_tile_index`` in front (``debug=True``)."""
    _Access(op, checked).lower()


def is_unit(v: SSAValue) -> bool:
    """``v`` is the constant integer 1."""
    owner = v.owner
    return isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) \
        and owner.value.value.data == 1


class _Access:
    """The pointer tile and mask of one view access, built in front of it."""

    def __init__(self, op: tile.ViewLoadOp | tile.ViewStoreOp, checked: bool = False):
        self.op, self.checked = op, checked
        view = op.view.owner
        if not isinstance(view, tile.MakeViewOp):
            raise CompileError("a view access needs its view from tile.make_view",
                               source_loc(op))
        self.view = view
        tile_type = op.result.type if isinstance(op, tile.ViewLoadOp) else op.value.type
        self.shape = view_tile_shape(tile_type)
        self.elem = tile_type.get_element_type() if isinstance(tile_type, TensorType) \
            else tile_type
        self.rank = len(view.shape)
        self.lead = self.rank - len(self.shape)  # array dimensions the tile is 1 long in
        self.elements = op.elements is not None  # indices are element offsets
        self.starts: list[SSAValue] = []  # index_d * T_d, for the check

    def emit(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new.results[0]

    def splat(self, v: SSAValue, shape: tuple[int, ...]) -> SSAValue:
        return self.emit(tile.SplatOp(v, TensorType(v.type, shape))) if shape else v

    def spread(self, v: SSAValue, t: int) -> SSAValue:
        """A 1-D tile along dimension ``t`` of the tile, stretched to its shape."""
        for axis in range(len(self.shape)):
            if axis != t:
                v = self.emit(tile.ExpandDimsOp(v, axis))
        if len(self.shape) > 1:
            elem = tile.element_type(v.type)
            v = self.emit(tile.BroadcastOp(v, TensorType(elem, self.shape)))
        return v

    def size(self, d: int) -> int:
        """The tile's length along dimension ``d`` of the array."""
        return 1 if d < self.lead else self.shape[d - self.lead]

    def start(self, d: int) -> SSAValue:
        """The first element along array dimension ``d``: the index itself for an
        ``elements`` access or a dimension the tile is one element long in, else
        ``index_d * T_d`` (kept for the check)."""
        start = self.op.index[d]
        if not self.elements and self.size(d) != 1:
            size = self.emit(arith.ConstantOp(IntegerAttr(self.size(d), i32), i32))
            start = self.emit(arith.MuliOp(start, size))
        self.starts.append(start)
        return start

    def offsets(self, d: int) -> SSAValue:
        """``start_d + range(T_d)``: the element offsets along array dimension ``d``."""
        n = self.size(d)
        start = self.start(d)
        return self.emit(arith.AddiOp(self.splat(start, (n,)), self.emit(tile.RangeOp(0, n))))

    def leading(self) -> tuple[SSAValue, SSAValue | None]:
        """The base pointer moved to the tile's element of the leading dimensions, and
        whether that element is inside them (None: there are none)."""
        base, inside = self.view.base, None
        for d in range(self.lead):
            start = self.start(d)
            fits = self.emit(tile.CmpIOp("ult", start, self.view.shape[d]))
            inside = fits if inside is None else self.emit(arith.AndIOp(inside, fits))
            stride = self.view.strides[d]
            offset = start if is_unit(stride) else self.emit(arith.MuliOp(start, stride))
            base = self.emit(tile.AddPtrOp(base, offset))
        return base, inside

    def pointers_and_mask(self) -> tuple[SSAValue, SSAValue]:
        base, inside = self.leading()
        total, mask = None, None if inside is None else self.splat(inside, self.shape)
        for t, d in enumerate(range(self.lead, self.rank)):
            offs = self.offsets(d)
            fits = self.emit(tile.CmpIOp("ult", offs, self.splat(self.view.shape[d],
                                                                 (self.shape[t],))))
            stride = self.view.strides[d]
            if not is_unit(stride):
                offs = self.emit(arith.MuliOp(offs, self.splat(stride, (self.shape[t],))))
            offs, fits = self.spread(offs, t), self.spread(fits, t)
            total = offs if total is None else self.emit(arith.AddiOp(total, offs))
            mask = fits if mask is None else self.emit(arith.AndIOp(mask, fits))
        assert mask is not None
        ptrs = self.splat(base, self.shape)
        return (ptrs if total is None else self.emit(tile.AddPtrOp(ptrs, total))), mask

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
        tile_dims = [self.size(d) for d in range(self.rank)]
        check = tile.CheckTileIndexOp(access, name, self.starts, tile_dims, self.view.shape)
        check.location = self.op.location
        Rewriter.insert_op(check, InsertPoint.before(self.op))

    def lower(self) -> None:
        ptrs, mask = self.pointers_and_mask()
        if self.checked and not self.elements:
            self.check()
        if isinstance(self.op, tile.ViewLoadOp):
            new = tile.LoadOp(ptrs, mask, self.padding())
        else:
            new = tile.StoreOp(ptrs, self.op.value, mask)
        new.location = self.op.location
        Rewriter.replace_op(self.op, new)
