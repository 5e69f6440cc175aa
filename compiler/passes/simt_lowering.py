"""The core of tile-to-simt: ``Lowering``, which rewrites one kernel in place, and the
table of per-op lowerings it dispatches on.

``Lowering`` holds the per-kernel state (the thread-id arithmetic built once at the top of
the kernel, the (argument, index) each pointer traces to, the shared buffers) and the
helpers that build SIMT ops in front of the op being lowered. ``HANDLERS`` maps a tile-IR
op class to its lowering ``handler(lowering, op)``; ``@lowers(OpClass, ...)`` registers
one. This module lowers ``tile.range``, ``tile.splat``, ``arith.addi`` of a splat and a
range, comparisons (once a run where lanes agree), ``tile.addptr``, ``tile.load``,
``tile.store``, tile constants, elementwise ops (any op without a handler) and the hints
(``tile.assume_facts`` becomes its operand, ``tile.barrier`` ``simt.barrier``) and drops
``tile.check_tile_index`` (NumPy alone checks tile indices); the feature
modules ``lower_atomic``, ``lower_reduce``, ``lower_shapes``, ``lower_dot`` and
``lower_mma_dot``, ``lower_async_copy`` register theirs, and the pass (``tile_to_simt``) imports them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from math import prod
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects import arith, func, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.context import source_loc
from compiler.errors import CompileError, UnsupportedError
from compiler.passes import PassInputError
from compiler.passes.assign_layouts import NUM_WARPS_ATTR, UNIFORM_RUNS_ATTR, WARP_SIZE
from compiler.passes.layouts import DimMap, elements_per_thread, ilog2, lane_map, owners
from dialects import arith_shaped, simt, tile
from dialects.tile import PtrType, element_type, i1_like, is_layout, like

Handler = Callable[["Lowering", Any], None]
H = TypeVar("H", bound=Handler)

# op class -> its lowering; ops without one are lowered as elementwise (Lowering._generic)
HANDLERS: dict[type[Operation], Handler] = {}


def lowers(*op_types: type[Operation]) -> Callable[[H], H]:
    """Register the decorated function as the lowering of ``op_types``."""
    def register(handler: H) -> H:
        for op_type in op_types:
            HANDLERS[op_type] = handler
        return handler
    return register


# Ops that act on each element alone, so the same op on per-thread vectors is correct.
_ELEMENTWISE_PREFIXES = ("arith.", "math.", "scf.")
_ELEMENTWISE_TILE_OPS = ("tile.cmpi", "tile.cmpf", "tile.select", "tile.umulhi", "tile.brev",
                         "tile.arith_fence", "tile.from_fp8", "tile.to_fp8", "tile.inline_asm")


def _layout_of(t: TensorType) -> Attribute:
    if not is_layout(t.encoding):
        raise PassInputError(f"tile-to-simt needs layouts on tiles (run assign-layouts "
                             f"first): {t}")
    return t.encoding


def vector_type(t: TensorType) -> VectorType:
    """The type of the part of a tile that one thread owns."""
    return VectorType(t.element_type, [elements_per_thread(_layout_of(t), t.get_shape())])


def per_thread_type(t: Attribute) -> Attribute:
    """``vector_type`` of a tile type; scalars stay."""
    return vector_type(t) if isinstance(t, TensorType) else t


def _is_tile_type(t: Attribute) -> bool:
    return isinstance(t, TensorType | VectorType)


def _root(ptr: SSAValue) -> SSAValue | None:
    """The kernel argument a pointer (tile) is computed from, through the pointer
    operands of the ops that make it (``addptr``, ``splat``, ``broadcast``, ...); None
    for one made from an address."""
    while not isinstance(ptr, BlockArgument):
        operands = [v for v in ptr.owner.operands if isinstance(element_type(v.type), PtrType)]
        if not operands:
            return None
        ptr = operands[0]
    return ptr


def _vec(op: tile.LoadOp | tile.StoreOp) -> int:
    return 1 if op.vec is None else op.vec.value.data


def _cache_hints(op: Operation) -> dict[str, Attribute]:
    """``tl.load``/``tl.store``'s cache options, carried to the access for the target."""
    return {k: v for k, v in op.attributes.items() if k in tile.CACHE_HINT_ATTRS}


class Lowering:
    """Rewrites one kernel in place, in program order."""

    def __init__(self, f: func.FuncOp, trip_words: int, narrow_shared: bool = False):
        num_warps = f.attributes.get(NUM_WARPS_ATTR)
        if not isinstance(num_warps, IntegerAttr):
            raise PassInputError(f"tile-to-simt needs {NUM_WARPS_ATTR} on @{f.sym_name.data} "
                                 "(run assign-layouts first)")
        self.f = f
        self.trip_words = trip_words  # 32-bit words one trip through shared memory moves
        self.narrow_shared = narrow_shared  # 8- and 16-bit elements take less than a word
        self.tid_bits = ilog2(WARP_SIZE * num_warps.value.data)
        self._tid: SSAValue | None = None
        self._warp: SSAValue | None = None
        self.prologue: Operation | None = None  # last op of the thread-id arithmetic
        self.thread_parts: dict[DimMap, SSAValue | None] = {}
        entry = f.body.blocks[0]
        self.ptrs: dict[SSAValue, tuple[SSAValue, SSAValue | None]] = {
            a: (a, None) for a in entry.args if isinstance(a.type, PtrType)}
        self.dead: list[Operation] = []
        self.shared: dict[Attribute, SSAValue] = {}  # element type -> data-movement buffer
        # a tile read from a shared-memory stage that dots read in place: (buffer, the
        # stage's first element, row length)
        self.views: dict[SSAValue, tuple[SSAValue, SSAValue, int]] = {}
        # 128-byte-swizzled stages (their simt buffer) -> the warps their rows are permuted for
        # (0: none)
        self.swizzled: dict[SSAValue, int] = {}
        # whether wgmma reads a stage (through the async proxy: waits fence it)
        self.async_proxy = False
        # (array, sizes, strides, box) -> its nvgpu.tensor_map (lower_tma_copy)
        self.tensor_maps: dict[tuple, SSAValue] = {}
        # a transposed tile warpgroup dots read -> its source and the source's type: they
        # read the source as it is (B K-major, A by ldmatrix.trans) instead of moving it
        # (lower_shapes)
        self.transposed: dict[SSAValue, tuple[SSAValue, Attribute]] = {}
        # a tile from outside the loops of the wgmma dots reading it (Q in attention) ->
        # the buffer it was stored into, once, and its first element (lower_wgmma_dot)
        self.stored: dict[SSAValue, tuple[SSAValue, SSAValue]] = {}

    def run(self) -> None:
        ops = list(self.f.body.walk())
        # operand tile types (with layouts), before rewriting earlier ops replaces them
        self.operand_types: dict[Operation, list[Attribute]] = {
            op: [v.type for v in op.operands] for op in ops}
        self.atomic_args = {_root(op.ptr) for op in ops
                            if isinstance(op, tile.AtomicRMWOp | tile.AtomicCASOp)}
        for op in ops:
            handler = HANDLERS.get(type(op), Lowering._generic)
            handler(self, op)
        for op in reversed(self.dead):
            Rewriter.erase_op(op)

    # -- building -------------------------------------------------------------------------

    def emit(self, new: Operation, before: Operation) -> SSAValue:
        """Insert ``new`` before ``before``, with its source location; its result."""
        self.insert(new, before)
        return new.results[0]

    def insert(self, new: Operation, before: Operation) -> None:
        new.location = before.location
        Rewriter.insert_op(new, InsertPoint.before(before))

    def const(self, value: int, before: Operation, t: Attribute = i32) -> SSAValue:
        if isinstance(t, VectorType):
            return self.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])),
                              before)
        return self.emit(arith.ConstantOp(IntegerAttr(value, t)), before)

    def replace(self, op: Operation, value: SSAValue) -> None:
        op.results[0].replace_all_uses_with(value)
        Rewriter.erase_op(op)

    def shared_buffer(self, elem: Attribute, size: int, loc_op: Operation) -> SSAValue:
        """The shared buffer for moving ``elem`` tiles, at least ``size`` elements: one per
        element type, as large as its largest use (each use ends in a barrier)."""
        buf = self.shared.get(elem)
        if buf is None:
            buf = self.prologue_op(simt.SharedAllocOp(elem, size), loc_op)
        elif buf.type.get_shape()[0] < size:  # pyright: ignore[reportAttributeAccessIssue]
            bigger = simt.SharedAllocOp(elem, size).result.type
            buf = Rewriter.replace_value_with_new_type(buf, bigger)
        self.shared[elem] = buf
        return buf

    # -- thread ids -----------------------------------------------------------------------

    def prologue_op(self, new: Operation, loc_op: Operation) -> SSAValue:
        """Append to the thread-id arithmetic at the top of the kernel (it dominates all)."""
        new.location = loc_op.location
        if self.prologue is None:
            point = InsertPoint.at_start(self.f.body.blocks[0])
        else:
            point = InsertPoint.after(self.prologue)
        Rewriter.insert_op(new, point)
        self.prologue = new
        return new.results[0]

    def thread_part(self, dm: DimMap, loc_op: Operation) -> SSAValue | None:
        """``dm.thread_part(simt.thread_id)`` as i32 ops, built once per kernel; None is 0."""
        if dm not in self.thread_parts:
            self.thread_parts[dm] = self._build_thread_part(dm, loc_op)
        return self.thread_parts[dm]

    def _build_thread_part(self, dm: DimMap, loc_op: Operation) -> SSAValue | None:
        if not dm.fields:
            return None
        tid = self.thread_id(loc_op)

        def binop(cls: type[arith.SignlessIntegerBinaryOperation], x: SSAValue, c: int):
            return self.prologue_op(cls(x, self.prologue_op(
                arith.ConstantOp(IntegerAttr(c, i32)), loc_op)), loc_op)

        part: SSAValue | None = None
        for shift, width, pos in dm.fields:
            x = binop(arith.ShRUIOp, tid, shift) if shift else tid
            if shift + width < self.tid_bits:
                x = binop(arith.AndIOp, x, (1 << width) - 1)
            x = binop(arith.ShLIOp, x, pos) if pos else x
            part = x if part is None else self.prologue_op(arith.AddiOp(part, x), loc_op)
        assert part is not None
        if dm.spt > 1:
            part = binop(arith.MuliOp, part, dm.spt)
        return binop(arith.AndIOp, part, dm.size - 1) if dm.wraps else part

    def thread_id(self, loc_op: Operation) -> SSAValue:
        """``simt.thread_id``, built once per kernel."""
        if self._tid is None:
            self._tid = self.prologue_op(simt.ThreadIdOp(), loc_op)
        return self._tid

    def warp_id(self, loc_op: Operation) -> SSAValue:
        """``simt.warp_id``, built once per kernel."""
        if self._warp is None:
            self._warp = self.prologue_op(simt.WarpIdOp(), loc_op)
        return self._warp

    # -- handlers -------------------------------------------------------------------------

    @lowers(tile.RangeOp)
    def _range(self, op: tile.RangeOp) -> None:
        t = op.result.type
        (dm,) = lane_map(_layout_of(t), t.get_shape())
        vt = vector_type(t)
        part = self.thread_part(dm, op)
        spread = None if part is None else self.emit(vector.BroadcastOp(part, vt), op)
        start = op.start.value.data
        lanes = self.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            vt, [start + lane for lane in dm.lanes])), op)
        self.replace(op, lanes if spread is None else self.emit(arith.AddiOp(spread, lanes), op))

    @lowers(arith.AddiOp)
    def _addi(self, op: arith.AddiOp) -> None:
        """``splat(a) + r``, ``r`` a thread's lanes of a range (a scalar ``b`` spread, plus
        constant lanes ``c``): ``spread(a + b) + c``, the same sum (integers wrap). Then a
        range that a loop offsets (``n0 + tl.arange(0, BN)``) holds no register per lane
        through the loop: only ``b``, and the lanes are immediates."""
        self._generic(op)
        for splat, lanes in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if not (isinstance(splat.owner, vector.BroadcastOp)
                    and isinstance(lanes.owner, arith.AddiOp)):
                continue
            spread, const = lanes.owner.lhs, lanes.owner.rhs
            if isinstance(spread.owner, vector.BroadcastOp) and isinstance(
                    const.owner, arith.ConstantOp):
                total = self.emit(arith.AddiOp(splat.owner.source, spread.owner.source), op)
                spread = self.emit(vector.BroadcastOp(total, splat.type), op)
                self.replace(op, self.emit(arith.AddiOp(spread, const), op))
                return

    @lowers(tile.CmpIOp, tile.CmpFOp)
    def _compare(self, op: tile.CmpIOp | tile.CmpFOp) -> None:
        """A comparison whose lanes agree in runs (``UNIFORM_RUNS_ATTR``) compares the first
        lane of each run and spreads it: one predicate a run, not one a lane."""
        self._generic(op)
        run = op.attributes.pop(UNIFORM_RUNS_ATTR, None)
        t = op.result.type
        if not isinstance(run, IntegerAttr) or not isinstance(t, VectorType):
            return
        n, k = t.get_shape()[0], run.value.data
        if n <= 1 or n % k:
            return
        lhs, rhs = (self.lanes(v, range(0, n, k), op) for v in op.operands)
        few = self.emit(type(op)(op.predicate.data, lhs, rhs), op)
        self.replace(op, self.lanes(few, [i // k for i in range(n)], op))

    def lanes(self, v: SSAValue, picked: Iterable[int], before: Operation) -> SSAValue:
        """The vector of ``v``'s lanes ``picked`` (``vector.shuffle``)."""
        picked = list(picked)
        t = VectorType(element_type(v.type), [len(picked)])
        return self.emit(vector.ShuffleOp(v, v, DenseArrayBase.from_list(i64, picked),
                                          result_type=t), before)

    @lowers(tile.SplatOp)
    def _splat(self, op: tile.SplatOp) -> None:
        if isinstance(op.value.type, PtrType):
            base, idx = self.trace(op.value, op)
            if idx is not None:
                idx = self.emit(vector.BroadcastOp(idx, self._index_type(op.result)), op)
            self.ptrs[op.result] = (base, idx)
            self.dead.append(op)
            return
        vt = vector_type(op.result.type)
        self.replace(op, self.emit(vector.BroadcastOp(op.value, vt), op))

    @lowers(tile.AddPtrOp)
    def _addptr(self, op: tile.AddPtrOp) -> None:
        base, idx = self.trace(op.ptr, op)
        off = self._to_i32(op.offset, op)
        if isinstance(op.ptr.type, TensorType) and not _is_tile_type(off.type):
            off = self.emit(vector.BroadcastOp(off, self._index_type(op.ptr)), op)
        self.ptrs[op.result] = (base, off if idx is None else self.emit(
            arith.AddiOp(idx, off), op))
        self.dead.append(op)

    @lowers(tile.LoadOp)
    def _load(self, op: tile.LoadOp) -> None:
        """A load; a scalar one from an array the kernel also updates atomically is done
        by one thread and shared: read by each thread on its own, a flag another thread
        of the program then sets (``if tl.load(filled) == 0: tl.atomic_xchg(filled, 1)``)
        reads differently in threads that run later, and the branch splits."""
        base, idx = self.access(op)
        shared = not isinstance(op.result.type, TensorType) and self.updated_atomically(base)
        owner = self.owner_mask(op, op.result.type, idx.type) if shared else None
        mask = op.mask
        if isinstance(owner, SSAValue):
            mask = owner if mask is None else self.emit(arith.AndIOp(mask, owner), op)
        new = simt.LoadOp(base, idx, mask, op.other, _vec(op))
        new.attributes.update(_cache_hints(op))
        value = self.emit(new, op)
        if isinstance(owner, SSAValue):
            value = self.share(op, value, owner)
        self.replace(op, value)

    def updated_atomically(self, base: SSAValue) -> bool:
        """Whether an atomic of the kernel may update the array ``base`` points into. A
        pointer made from an address (``tile.int_to_ptr``, no argument root) may point
        into any array, and an atomic through one may update any."""
        if not self.atomic_args:
            return False
        return base in self.atomic_args or None in self.atomic_args or \
            not isinstance(base, BlockArgument)

    def share(self, op: Operation, value: SSAValue, owner: SSAValue) -> SSAValue:
        """Every holder's copy of the owners' ``value`` (one per element of ``op``'s
        result), through shared memory."""
        t = op.results[0].type
        size = prod(t.get_shape()) if isinstance(t, TensorType) else 1
        buf = self.prologue_op(simt.SharedAllocOp(element_type(t), size), op)
        at = self.element_index(op, value.type)
        if not isinstance(op.parent_op(), func.FuncOp):
            self.insert(simt.BarrierOp(), op)  # an earlier iteration may still be reading buf
        self.insert(simt.SharedStoreOp(buf, at, value, owner), op)
        self.insert(simt.BarrierOp(), op)
        return self.emit(simt.SharedLoadOp(buf, at), op)

    def element_index(self, op: Operation, per_thread: Attribute) -> SSAValue:
        """The row-major index in ``op``'s result tile of each lane's element (0 for a
        scalar)."""
        t = op.results[0].type
        if not isinstance(t, TensorType):
            return self.const(0, op)
        shape = t.get_shape()
        lanes = np.zeros(per_thread.get_shape()[0], np.int64)
        base: SSAValue | None = None
        strides = [prod(shape[d + 1:]) for d in range(len(shape))]
        for dm, stride in zip(lane_map(t.encoding, shape), strides, strict=True):
            lanes += np.asarray(dm.lanes) * stride
            part = self.thread_part(dm, op)
            if part is None:
                continue
            if stride != 1:
                part = self.emit(arith.MuliOp(part, self.const(stride, op)), op)
            base = part if base is None else self.emit(arith.AddiOp(base, part), op)
        vt = VectorType(i32, per_thread.get_shape())
        offsets = self.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            vt, lanes.tolist())), op)
        if base is None:
            return offsets
        return self.emit(arith.AddiOp(self.emit(vector.BroadcastOp(base, vt), op), offsets),
                         op)

    @lowers(tile.StoreOp)
    def _store(self, op: tile.StoreOp) -> None:
        base, idx = self.access(op)
        mask = op.mask
        # one holder of each element stores it: a replica storing after another has
        # re-read the element would break ``x[i] += 1``
        owner = self.owner_mask(op, self.operand_types[op][1], idx.type)  # value's tile type
        if isinstance(owner, SSAValue):
            mask = owner if mask is None else self.emit(arith.AndIOp(mask, owner), op)
        new = simt.StoreOp(base, idx, op.value, mask, _vec(op))
        new.attributes.update(_cache_hints(op))
        self.insert(new, op)
        Rewriter.erase_op(op)

    @lowers(arith.ConstantOp)
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
        self.replace(op, self.emit(new, op))

    @lowers(tile.AssumeFactsOp)
    def _assume_facts(self, op: tile.AssumeFactsOp) -> None:
        """The facts did their work in assign-layouts (``vec``); the value is the operand."""
        self.replace(op, op.x)

    @lowers(tile.BarrierOp)
    def _barrier(self, op: tile.BarrierOp) -> None:
        """``tl.debug_barrier`` orders the program's global-memory accesses as well."""
        barrier = simt.BarrierOp()
        barrier.attributes[simt.GLOBAL_BARRIER_ATTR] = UnitAttr()
        self.insert(barrier, op)
        Rewriter.erase_op(op)

    @lowers(tile.CheckTileIndexOp)
    def _check_tile_index(self, op: tile.CheckTileIndexOp) -> None:
        """Only the NumPy backend checks tile indices; the GPU code is as without it."""
        Rewriter.erase_op(op)

    def _generic(self, op: Operation) -> None:
        """Ops that compute per element keep their form; only the types change."""
        types = [v.type for v in (*op.operands, *op.results)]
        if any(isinstance(element_type(t), PtrType) for t in types):
            raise CompileError(f"{op.name}: cannot trace this pointer to a kernel argument "
                               "(a pointer must be an argument, or an address cast to a "
                               "pointer, plus offsets)", source_loc(op))
        if not any(map(_is_tile_type, types)):
            return
        if not (op.name.startswith(_ELEMENTWISE_PREFIXES) or op.name in _ELEMENTWISE_TILE_OPS):
            raise UnsupportedError(f"tile-to-simt cannot lower {op.name}", source_loc(op))
        for res in op.results:
            Rewriter.replace_value_with_new_type(res, per_thread_type(res.type))
        for arg in (a for r in op.regions for b in r.blocks for a in b.args):
            Rewriter.replace_value_with_new_type(arg, per_thread_type(arg.type))

    def owner_mask(self, op: Operation, t: Attribute, index_type: Attribute
                   ) -> SSAValue | None | bool:
        """i1 in ``index_type``'s shape: this thread's lane holds the first copy of its
        element of ``t`` (a tile whose layout replicates it; a scalar: thread 0 alone).
        None: every lane does; False: the owners are no pattern of thread-id bits."""
        if isinstance(t, TensorType):
            found = owners(t.encoding, t.get_shape())
            if found is None:
                return False
            bits, lanes = found
        else:
            bits, lanes = (1 << self.tid_bits) - 1, (True,)
        parts = []
        if bits:
            held = self.emit(arith.AndIOp(self.thread_id(op), self.const(bits, op)), op)
            mine = self.emit(tile.CmpIOp("eq", held, self.const(0, op)), op)
            if isinstance(index_type, VectorType):
                mine = self.emit(vector.BroadcastOp(mine, i1_like(index_type)), op)
            parts.append(mine)
        if not all(lanes):
            first = DenseIntOrFPElementsAttr.from_list(i1_like(index_type),
                                                       [-int(x) for x in lanes])
            parts.append(self.emit(arith.ConstantOp(first), op))
        if len(parts) == 2:
            return self.emit(arith.AndIOp(*parts), op)
        return parts[0] if parts else None

    # -- pointers -------------------------------------------------------------------------

    def trace(self, ptr: SSAValue, user: Operation) -> tuple[SSAValue, SSAValue | None]:
        """(base, i32 index or None for 0) of a pointer value: the base is a kernel
        argument or a scalar address cast to a pointer (``lower_addresses``)."""
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
        # xDSL's own casts take scalars only; these take the per-thread vectors too
        cast = arith_shaped.TruncIOp if et.width.data > 32 else arith_shaped.ExtSIOp
        return self.emit(cast(off, like(off.type, i32)), op)

    def access(self, op: tile.LoadOp | tile.StoreOp) -> tuple[SSAValue, SSAValue]:
        base, idx = self.trace(op.ptr, op)
        if idx is None:
            idx = self.const(0, op, self._index_type(op.ptr))
        return base, idx
