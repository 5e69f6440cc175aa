"""tile-to-simt: tile IR with layouts -> SIMT IR (per-thread code).

Each tile value becomes the ``vector<K x T>`` of the K elements one thread owns under its
``#tile.blocked`` layout; elementwise ``arith``/``math``/``tile.cmpi``/``cmpf``/``select``
ops stay as they are on those vectors. ``tile.range`` becomes ``simt.thread_id``
arithmetic plus a dense per-lane constant, ``tile.splat`` becomes ``vector.broadcast``.
Pointers disappear: each one is traced through ``tile.splat``/``tile.addptr`` to a kernel
pointer argument and an i32 element index, and ``tile.load``/``tile.store`` become
``simt.load``/``simt.store`` on (argument, index). The kernel must carry
``simt.num_warps`` (set by ``assign-layouts``).
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.errors import CompileError, SourceLoc, UnsupportedError
from compiler.passes.assign_layouts import NUM_WARPS_ATTR, WARP_SIZE
from dialects import simt, tile
from dialects.tile import BlockedLayoutAttr, PtrType, element_type, like

# Ops that act on each element alone, so the same op on per-thread vectors is correct.
_ELEMENTWISE_PREFIXES = ("arith.", "math.", "scf.")
_ELEMENTWISE_TILE_OPS = ("tile.cmpi", "tile.cmpf", "tile.select")


@dataclass(frozen=True)
class DimMap:
    """Which coordinate along one dimension element ``k`` of thread ``t`` holds:
    ``coord = thread_part(t) + lanes[k]``.

    ``thread_part(t) = (p(t) * spt) mod size`` where ``p(t)``, the thread's position along
    the dimension, is gathered from bit fields of the thread id: ``fields`` holds
    ``(bit offset in t, width, bit offset in p)``.
    """

    fields: tuple[tuple[int, int, int], ...]
    spt: int
    size: int
    footprint: int  # spt * threads * warps along the dimension
    lanes: tuple[int, ...]

    @property
    def wraps(self) -> bool:
        """The layout is wider than the tile: threads repeat elements (replication)."""
        return self.footprint > self.size

    def thread_part(self, tid):
        """``thread_part`` of an int or a NumPy array of thread ids."""
        p = sum(((tid >> s) & ((1 << w) - 1)) << ps for s, w, ps in self.fields)
        return (p * self.spt) % self.size


def _log2(n: int) -> int:
    return n.bit_length() - 1


def _fields(lane: tuple[int, int, int], warp: tuple[int, int, int]):
    """The nonempty bit fields, merged when the warp bits continue the lane bits."""
    (ls, lw, lp), (ws, ww, wp) = lane, warp
    if ls + lw == ws and lp + lw == wp:
        return ((ls, lw + ww, lp),) if lw + ww else ()
    return tuple(f for f in (lane, warp) if f[1])


def per_thread_shape(layout: BlockedLayoutAttr, shape: Sequence[int]) -> tuple[int, ...]:
    """Elements per thread along each dim: spt times the wrap-around repeats."""
    return tuple(s * max(1, -(-n // (s * t * w)))
                 for n, s, t, w in zip(shape, layout.spt, layout.tpw, layout.wpc, strict=True))


def elements_per_thread(layout: BlockedLayoutAttr, shape: Sequence[int]) -> int:
    return prod(per_thread_shape(layout, shape))


def lane_map(layout: BlockedLayoutAttr, shape: Sequence[int]) -> tuple[DimMap, ...]:
    """The thread -> element mapping of a blocked layout, one ``DimMap`` per dimension.

    Lanes of a warp and warps of a program both count the last dim fastest; a thread's
    elements (its vector, row-major over dims) are ``spt`` neighbours per footprint,
    repeated every footprint; a layout wider than the tile wraps modulo its size."""
    spt, tpw, wpc = layout.spt, layout.tpw, layout.wpc
    counts = per_thread_shape(layout, shape)
    maps = []
    for d, size in enumerate(shape):
        lane = (_log2(prod(tpw[d + 1:])), _log2(tpw[d]), 0)
        warp = (_log2(WARP_SIZE * prod(wpc[d + 1:])), _log2(wpc[d]), _log2(tpw[d]))
        footprint = spt[d] * tpw[d] * wpc[d]
        lanes = tuple(((e[d] // spt[d]) * footprint + e[d] % spt[d]) % size
                      for e in itertools.product(*map(range, counts)))
        maps.append(DimMap(_fields(lane, warp), spt[d], size, footprint, lanes))
    return tuple(maps)


def source_loc(op: Operation) -> SourceLoc | None:
    """The user's source position of ``op``, if it has one."""
    loc = op.location
    if not isinstance(loc, FileLineColLoc):
        return None
    file, line = loc.filename.data, loc.line.data
    return SourceLoc(file, line, loc.column.data, linecache.getline(file, line))


def _layout_of(t: TensorType) -> BlockedLayoutAttr:
    if not isinstance(t.encoding, BlockedLayoutAttr):
        raise CompileError(f"tile-to-simt needs layouts on tiles (run assign-layouts): {t}")
    return t.encoding


def vector_type(t: TensorType) -> VectorType:
    """The type of the part of a tile that one thread owns."""
    return VectorType(t.element_type, [elements_per_thread(_layout_of(t), t.get_shape())])


def per_thread_type(t: Attribute) -> Attribute:
    """``vector_type`` of a tile type; scalars stay."""
    return vector_type(t) if isinstance(t, TensorType) else t


def _is_tile_type(t: Attribute) -> bool:
    return isinstance(t, TensorType | VectorType)


def _vec(op: tile.LoadOp | tile.StoreOp) -> int:
    return 1 if op.vec is None else op.vec.value.data


class _Lowering:
    """Rewrites one kernel in place, in program order."""

    def __init__(self, f: func.FuncOp):
        num_warps = f.attributes.get(NUM_WARPS_ATTR)
        if not isinstance(num_warps, IntegerAttr):
            raise CompileError(f"tile-to-simt needs {NUM_WARPS_ATTR} (run assign-layouts)")
        self.f = f
        self.tid_bits = _log2(WARP_SIZE * num_warps.value.data)
        self.tid: SSAValue | None = None
        self.prologue: Operation | None = None  # last op of the thread-id arithmetic
        self.thread_parts: dict[DimMap, SSAValue | None] = {}
        entry = f.body.blocks[0]
        self.ptrs: dict[SSAValue, tuple[SSAValue, SSAValue | None]] = {
            a: (a, None) for a in entry.args if isinstance(a.type, PtrType)}
        self.dead: list[Operation] = []

    def run(self) -> None:
        for op in list(self.f.body.walk()):
            handler = _HANDLERS.get(type(op), _Lowering._generic)
            handler(self, op)
        for op in reversed(self.dead):
            Rewriter.erase_op(op)

    # -- building -------------------------------------------------------------------------

    def _emit(self, new: Operation, before: Operation) -> SSAValue:
        """Insert ``new`` before ``before``, with its source location; its result."""
        self._insert(new, before)
        return new.results[0]

    def _insert(self, new: Operation, before: Operation) -> None:
        new.location = before.location
        Rewriter.insert_op(new, InsertPoint.before(before))

    def _const(self, value: int, before: Operation, t: Attribute = i32) -> SSAValue:
        if isinstance(t, VectorType):
            return self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])),
                              before)
        return self._emit(arith.ConstantOp(IntegerAttr(value, t)), before)

    def _replace(self, op: Operation, value: SSAValue) -> None:
        op.results[0].replace_all_uses_with(value)
        Rewriter.erase_op(op)

    # -- thread ids -----------------------------------------------------------------------

    def _prologue_op(self, new: Operation, loc_op: Operation) -> SSAValue:
        """Append to the thread-id arithmetic at the top of the kernel (it dominates all)."""
        new.location = loc_op.location
        if self.prologue is None:
            point = InsertPoint.at_start(self.f.body.blocks[0])
        else:
            point = InsertPoint.after(self.prologue)
        Rewriter.insert_op(new, point)
        self.prologue = new
        return new.results[0]

    def _thread_part(self, dm: DimMap, loc_op: Operation) -> SSAValue | None:
        """``dm.thread_part(simt.thread_id)`` as i32 ops, built once per kernel; None is 0."""
        if dm not in self.thread_parts:
            self.thread_parts[dm] = self._build_thread_part(dm, loc_op)
        return self.thread_parts[dm]

    def _build_thread_part(self, dm: DimMap, loc_op: Operation) -> SSAValue | None:
        if not dm.fields:
            return None
        tid = self._tid(loc_op)

        def binop(cls: type[arith.SignlessIntegerBinaryOperation], x: SSAValue, c: int):
            return self._prologue_op(cls(x, self._prologue_op(
                arith.ConstantOp(IntegerAttr(c, i32)), loc_op)), loc_op)

        part: SSAValue | None = None
        for shift, width, pos in dm.fields:
            x = binop(arith.ShRUIOp, tid, shift) if shift else tid
            if shift + width < self.tid_bits:
                x = binop(arith.AndIOp, x, (1 << width) - 1)
            x = binop(arith.ShLIOp, x, pos) if pos else x
            part = x if part is None else self._prologue_op(arith.AddiOp(part, x), loc_op)
        assert part is not None
        if dm.spt > 1:
            part = binop(arith.MuliOp, part, dm.spt)
        return binop(arith.AndIOp, part, dm.size - 1) if dm.wraps else part

    def _tid(self, loc_op: Operation) -> SSAValue:
        if self.tid is None:
            self.tid = self._prologue_op(simt.ThreadIdOp(), loc_op)
        return self.tid

    # -- handlers -------------------------------------------------------------------------

    def _range(self, op: tile.RangeOp) -> None:
        t = op.result.type
        (dm,) = lane_map(_layout_of(t), t.get_shape())
        vt = vector_type(t)
        part = self._thread_part(dm, op)
        spread = None if part is None else self._emit(vector.BroadcastOp(part, vt), op)
        start = op.start.value.data
        lanes = self._emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            vt, [start + lane for lane in dm.lanes])), op)
        self._replace(op, lanes if spread is None else self._emit(arith.AddiOp(spread, lanes), op))

    def _splat(self, op: tile.SplatOp) -> None:
        if isinstance(op.value.type, PtrType):
            base, idx = self._trace(op.value, op)
            if idx is not None:
                idx = self._emit(vector.BroadcastOp(idx, self._index_type(op.result)), op)
            self.ptrs[op.result] = (base, idx)
            self.dead.append(op)
            return
        vt = vector_type(op.result.type)
        self._replace(op, self._emit(vector.BroadcastOp(op.value, vt), op))

    def _addptr(self, op: tile.AddPtrOp) -> None:
        base, idx = self._trace(op.ptr, op)
        off = self._to_i32(op.offset, op)
        if isinstance(op.ptr.type, TensorType) and not _is_tile_type(off.type):
            off = self._emit(vector.BroadcastOp(off, self._index_type(op.ptr)), op)
        self.ptrs[op.result] = (base, off if idx is None else self._emit(
            arith.AddiOp(idx, off), op))
        self.dead.append(op)

    def _load(self, op: tile.LoadOp) -> None:
        base, idx = self._access(op)
        new = simt.LoadOp(base, idx, op.mask, op.other, _vec(op))
        self._replace(op, self._emit(new, op))

    def _store(self, op: tile.StoreOp) -> None:
        base, idx = self._access(op)
        self._insert(simt.StoreOp(base, idx, op.value, op.mask, _vec(op)), op)
        Rewriter.erase_op(op)

    def _constant(self, op: arith.ConstantOp) -> None:
        attr = op.value
        if not isinstance(attr, DenseIntOrFPElementsAttr) or not isinstance(
                attr.type, TensorType):
            return
        if not attr.is_splat():
            raise UnsupportedError("tile constants must have one value", source_loc(op))
        vt = vector_type(attr.type)
        value = next(iter(attr.iter_values()))
        new = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(vt, [value]))
        self._replace(op, self._emit(new, op))

    def _generic(self, op: Operation) -> None:
        """Ops that compute per element keep their form; only the types change."""
        types = [v.type for v in (*op.operands, *op.results)]
        if any(isinstance(element_type(t), PtrType) for t in types):
            raise CompileError(f"{op.name}: cannot trace this pointer to a kernel argument "
                               "(a pointer must be an argument plus offsets)", source_loc(op))
        if not any(map(_is_tile_type, types)):
            return
        if not (op.name.startswith(_ELEMENTWISE_PREFIXES) or op.name in _ELEMENTWISE_TILE_OPS):
            raise UnsupportedError(f"tile-to-simt cannot lower {op.name}", source_loc(op))
        for res in op.results:
            Rewriter.replace_value_with_new_type(res, per_thread_type(res.type))
        for arg in (a for r in op.regions for b in r.blocks for a in b.args):
            Rewriter.replace_value_with_new_type(arg, per_thread_type(arg.type))

    # -- pointers -------------------------------------------------------------------------

    def _trace(self, ptr: SSAValue, user: Operation) -> tuple[SSAValue, SSAValue | None]:
        """(kernel argument, i32 index or None for 0) of a pointer value."""
        found = self.ptrs.get(ptr)
        if found is None:
            raise CompileError(f"{user.name}: cannot trace this pointer to a kernel "
                               "argument", source_loc(user))
        return found

    def _index_type(self, ptrs: SSAValue) -> Attribute:
        """i32 indices in the per-thread shape of ``ptrs`` (scalar or vector)."""
        return per_thread_type(like(ptrs.type, i32))

    def _to_i32(self, off: SSAValue, op: Operation) -> SSAValue:
        et = element_type(off.type)
        assert isinstance(et, IntegerType)
        if et.width.data == 32:
            return off
        cast = arith.TruncIOp if et.width.data > 32 else arith.ExtSIOp
        return self._emit(cast(off, like(off.type, i32)), op)

    def _access(self, op: tile.LoadOp | tile.StoreOp) -> tuple[SSAValue, SSAValue]:
        base, idx = self._trace(op.ptr, op)
        if idx is None:
            idx = self._const(0, op, self._index_type(op.ptr))
        return base, idx


_HANDLERS = {
    tile.RangeOp: _Lowering._range,
    tile.SplatOp: _Lowering._splat,
    tile.AddPtrOp: _Lowering._addptr,
    tile.LoadOp: _Lowering._load,
    tile.StoreOp: _Lowering._store,
    arith.ConstantOp: _Lowering._constant,
}


@dataclass(frozen=True)
class TileToSimt(ModulePass):
    """Per-thread code from tile IR with layouts."""

    name = "tile-to-simt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and f.body.blocks:
                _Lowering(f).run()
