"""``tile.reduce`` and ``tile.scan`` for ``tile-to-simt``: tile IR with layouts -> SIMT IR
(``vector.shuffle``/``extract``, ``simt.shuffle_xor``/``shuffle_up``/``shuffle_down``,
``simt.shared_alloc``/``shared_store``/``barrier``/``shared_load``).

``tile_to_simt`` calls ``lower_reduce``/``lower_scan`` for each op, after the operands are
per-thread vectors. The combiner region is copied at every step onto whole vectors of a
thread's lanes, so the IR grows with the log of the tile, not with its size.

Reduce along ``axis``:

1. within a thread, a pairwise tree over the thread's elements along the axis (one
   ``vector.shuffle`` picks each half);
2. across the lanes of a warp, ``simt.shuffle_xor`` over each thread-id bit that moves
   along the axis; bits that only replicate a tile smaller than the layout are skipped, so
   a replicated element counts once;
3. across warps, if warps move along the axis: each thread writes its partial to shared
   memory and, after a barrier, combines the partials of the warps along the axis in order.

Every thread holding the other coordinates ends with the result: the ``#tile.slice``
layout (a 1-D tile reduces to a scalar in every thread). The combiner is assumed
associative and commutative (Triton assumes the same).

Scan (inclusive; the combiner need only be associative, the order of operands is kept):
a thread's elements along the axis come in runs of consecutive coordinates (``spt`` of
them, repeated every footprint). Each run's prefix is computed in the thread, the run
totals are scanned across lanes (``shuffle_up``, Hillis-Steele), warps and runs through
shared memory, and the combined prefix of everything before a run is folded into its
elements. ``reverse`` runs the same steps in the mirrored order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    TensorType,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from compiler.errors import CompileError, UnsupportedError
from compiler.passes.layouts import WARP_SIZE, DimMap, ilog2, lane_map, per_thread_shape
from compiler.passes.simt_lowering import Lowering, lowers
from dialects import simt, tile
from dialects.tile import element_type

Flag = SSAValue | bool  # an i1 (scalar or per lane) or a value known when compiling
_LANE_BITS = ilog2(WARP_SIZE)


# -- where the elements along the axis live ---------------------------------------------

@dataclass(frozen=True)
class AxisPlan:
    """How the elements of a tile along ``axis`` are spread, for one layout and shape.

    ``groups[g]`` lists, in coordinate order, the lanes of a thread's vector along the
    axis whose other coordinates are those of result lane ``g`` (row-major over the other
    dimensions, as the slice layout orders them). ``lane_bits``/``warp_bits``: the
    thread-id bits that step along the axis, lowest first."""

    groups: tuple[tuple[int, ...], ...]
    lane_bits: tuple[int, ...]
    warp_bits: tuple[int, ...]
    coords: tuple[int, ...]  # coordinate along the axis of each lane

    @property
    def runs(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """Each group split into runs of lanes with consecutive coordinates: between two
        runs lie other threads' elements."""
        return tuple(_split_runs(g, self.coords) for g in self.groups)


def _split_runs(lanes: tuple[int, ...], coords: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    runs: list[list[int]] = []
    for k in lanes:
        if runs and coords[k] == coords[runs[-1][-1]] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return tuple(map(tuple, runs))


def axis_bits(dm: DimMap) -> list[int]:
    """Thread-id bits that move along a dimension, in the order of the coordinate bits
    they set; bits whose step is a multiple of the size only replicate."""
    useful = ilog2(dm.size // dm.spt) if dm.spt < dm.size else 0
    bits = sorted((ps + i, s + i) for s, w, ps in dm.fields for i in range(w) if ps + i < useful)
    return [t for _, t in bits]


def axis_plan(layout: Attribute, shape: Sequence[int], axis: int) -> AxisPlan:
    maps = lane_map(layout, shape)
    counts = per_thread_shape(layout, shape)
    coords = maps[axis].lanes
    groups: dict[tuple[int, ...], list[int]] = {}
    for k, e in enumerate(itertools.product(*map(range, counts))):
        groups.setdefault(e[:axis] + e[axis + 1:], []).append(k)
    ordered = []
    for lanes in groups.values():  # insertion order is row-major over the other dims
        lanes.sort(key=lambda k: coords[k])
        if len({coords[k] for k in lanes}) != len(lanes):
            raise CompileError(f"layout {layout} holds an element twice in one thread")
        ordered.append(tuple(lanes))
    bits = axis_bits(maps[axis])
    lane = tuple(b for b in bits if b < _LANE_BITS)
    warp = tuple(b for b in bits if b >= _LANE_BITS)
    for run in (lane, warp):
        if run and list(run) != list(range(run[0], run[0] + len(run))):
            raise CompileError(f"layout {layout}: the thread bits along axis {axis} are not "
                               "contiguous")
    return AxisPlan(tuple(ordered), lane, warp, coords)


# -- building SIMT IR in front of the op being lowered -----------------------------------

class _Emitter:
    """Builds SIMT ops before ``op`` and applies its combiner to per-thread values."""

    def __init__(self, lo: Lowering, op: tile.ReduceOp | tile.ScanOp):
        self.lo, self.op = lo, op
        self.block = op.combiner.block
        self.in_loop = not isinstance(op.parent_op(), func.FuncOp)

    def emit(self, new: Operation) -> SSAValue:
        return self.lo.emit(new, self.op)

    def const(self, value: int) -> SSAValue:
        return self.lo.const(value, self.op)

    def tid(self) -> SSAValue:
        return self.lo.thread_id(self.op)

    def int_op(self, cls: type[Operation], x: SSAValue, c: int) -> SSAValue:
        return self.emit(cls(x, self.const(c)))

    def bits(self, x: SSAValue, shift: int, width: int) -> SSAValue:
        """``(x >> shift) & (2**width - 1)``."""
        if shift:
            x = self.int_op(arith.ShRUIOp, x, shift)
        return self.int_op(arith.AndIOp, x, (1 << width) - 1)

    def cmp(self, pred: str, x: SSAValue, c: int) -> SSAValue:
        return self.emit(tile.CmpIOp(pred, x, self.const(c)))

    # -- lanes --------------------------------------------------------------------------

    def pick(self, v: SSAValue, lanes: Sequence[int]) -> SSAValue:
        """Lanes of a per-thread vector, as a vector (a scalar stays a scalar)."""
        t = v.type
        if not isinstance(t, VectorType):
            assert set(lanes) == {0}
            return v if len(lanes) == 1 else self.emit(
                vector.BroadcastOp(v, VectorType(t, [len(lanes)])))
        if list(lanes) == list(range(t.get_shape()[0])):
            return v
        return self.emit(vector.ShuffleOp(v, v, DenseArrayBase.from_list(i64, list(lanes)),
                                          result_type=VectorType(t.element_type, [len(lanes)])))

    def scalar(self, v: SSAValue) -> SSAValue:
        """The only lane of a one-lane vector."""
        if not isinstance(v.type, VectorType):
            return v
        return self.emit(vector.ExtractOp(v, [0], v.type.element_type))

    def concat(self, parts: Sequence[SSAValue]) -> SSAValue:
        """Vectors joined end to end, in pairs, then pairs of pairs: joining them one by
        one copied the growing vector each time, quadratic in a thread's lanes (a 64-lane
        scan's 2,000 lines of WGSL: 30 s of lavapipe's compile)."""
        while len(parts) > 1:
            parts = [self._join(*parts[i:i + 2]) if i + 1 < len(parts) else parts[i]
                     for i in range(0, len(parts), 2)]
        return parts[0]

    def _join(self, a: SSAValue, b: SSAValue) -> SSAValue:
        n, m = a.type.get_shape()[0], b.type.get_shape()[0]
        return self.emit(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, list(range(n + m))),
                                          result_type=VectorType(a.type.element_type, [n + m])))

    def spread(self, v: SSAValue, like: SSAValue) -> SSAValue:
        """A scalar as a vector shaped like ``like`` (vectors and scalars pass)."""
        if isinstance(v.type, VectorType) or not isinstance(like.type, VectorType):
            return v
        return self.emit(vector.BroadcastOp(v, VectorType(v.type, like.type.get_shape())))

    def select(self, cond: Flag, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(cond, bool):
            return a if cond else b
        cond = self.spread(cond, a)
        return self.emit(tile.SelectOp(cond, a, b))

    def either(self, x: Flag, y: Flag) -> Flag:
        if isinstance(x, bool) or isinstance(y, bool):
            return True if True in (x, y) else (y if x is False else x)
        if isinstance(x.type, VectorType) != isinstance(y.type, VectorType):
            x, y = self.spread(x, y), self.spread(y, x)
        return self.emit(arith.OrIOp(x, y))

    # -- the combiner -------------------------------------------------------------------

    def combine(self, a: Sequence[SSAValue], b: Sequence[SSAValue]) -> list[SSAValue]:
        """The combiner region applied lane-wise to (earlier ``a``, later ``b``)."""
        env: dict[SSAValue, SSAValue] = dict(zip(self.block.args, [*a, *b], strict=True))
        for inner in self.block.ops:
            if isinstance(inner, tile.YieldOp):
                return [env[v] for v in inner.values]
            if inner.regions or any(v not in env for v in inner.operands):
                raise UnsupportedError(f"{self.op.name}: combiners must be straight-line code "
                                       "on their own arguments")
            env.update(zip(inner.results, self._copy(inner, [env[v] for v in inner.operands])))
        raise AssertionError("combiner without tile.yield")

    def _copy(self, inner: Operation, operands: list[SSAValue]) -> Sequence[SSAValue]:
        """``inner`` on per-thread values: vectors if any operand is one (scalars such as
        constants are broadcast to meet them)."""
        wide = next((o for o in operands if isinstance(o.type, VectorType)), None)
        types = [r.type for r in inner.results]
        if wide is not None:
            operands = [self.spread(o, wide) for o in operands]
            types = [VectorType(t, wide.type.get_shape()) for t in types]
        new = type(inner).create(operands=operands, result_types=types,
                                 properties=dict(inner.properties),
                                 attributes=dict(inner.attributes))
        self.lo.insert(new, self.op)
        return new.results

    def fold(self, prefix: list[SSAValue], has_prefix: Flag, xs: list[SSAValue],
             has_xs: Flag) -> tuple[list[SSAValue], Flag]:
        """``combine(prefix, xs)`` where both are present, else whichever is."""
        if has_prefix is False:
            return xs, has_xs
        both = self.combine(prefix, xs)
        if has_xs is not True:
            both = [self.select(has_xs, c, p) for c, p in zip(both, prefix, strict=True)]
        out = [self.select(has_prefix, c, x) for c, x in zip(both, xs, strict=True)]
        return out, self.either(has_prefix, has_xs)

    # -- shared memory ------------------------------------------------------------------

    def exchange(self, values: list[SSAValue], shared: tuple[int, ...], writer: SSAValue | None,
                 reads: list[SSAValue | int]) -> list[list[SSAValue]]:
        """Through shared memory: threads that differ only in the thread-id bits ``shared``
        (a contiguous run) own one slot of ``values``, written by the one ``writer`` says
        (None: there is one thread per slot); after a barrier, read the slots of the
        threads ``reads``."""
        t = values[0].type
        width = t.get_shape()[0] if isinstance(t, VectorType) else 1
        lanes = self._lane_offsets(width) if isinstance(t, VectorType) else None
        slots = (1 << self.lo.tid_bits) >> len(shared)
        if self.in_loop:  # the previous iteration may still be reading the buffers
            self.lo.insert(simt.BarrierOp(), self.op)
        mine = self._index(self._slot(self.tid(), shared), width, lanes)
        mask = None if writer is None else self.spread(writer, mine)
        buffers = []
        for v in values:
            buffers.append(self.emit(simt.SharedAllocOp(element_type(v.type), slots * width)))
            self.lo.insert(simt.SharedStoreOp(buffers[-1], mine, v, mask), self.op)
        self.lo.insert(simt.BarrierOp(), self.op)
        return [[self.emit(simt.SharedLoadOp(buf, self._index(self._slot(r, shared), width,
                                                               lanes)))
                 for buf in buffers] for r in reads]

    def _slot(self, thread: SSAValue | int, shared: tuple[int, ...]) -> SSAValue:
        """``thread`` with the ``shared`` bits taken out."""
        if isinstance(thread, int):
            low, n = (shared[0], len(shared)) if shared else (0, 0)
            return self.const(thread >> (low + n) << low | thread & ((1 << low) - 1))
        if not shared:
            return thread
        low, n = shared[0], len(shared)
        high = self.int_op(arith.ShLIOp, self.int_op(arith.ShRUIOp, thread, low + n), low)
        if not low:
            return high
        return self.emit(arith.OrIOp(high, self.int_op(arith.AndIOp, thread, (1 << low) - 1)))

    def _lane_offsets(self, width: int) -> SSAValue:
        t = VectorType(i32, [width])
        return self.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            t, list(range(width)))))

    def reads(self, bits: tuple[int, ...], ignored: tuple[int, ...],
              order: Sequence[int]) -> list[SSAValue | int]:
        """This thread's id with the ``bits`` (a contiguous run) set to each of ``order``;
        ints where the id has no bits left but ``ignored`` ones."""
        low, mask = (bits[0], ((1 << len(bits)) - 1) << bits[0]) if bits else (0, 0)
        if (1 << self.lo.tid_bits) - 1 == mask | sum(1 << b for b in ignored):
            return [w << low for w in order]
        others = self.int_op(arith.AndIOp, self.tid(), ~mask) if mask else self.tid()
        return [self.int_op(arith.OrIOp, others, w << low) if w else others for w in order]

    def _index(self, thread: SSAValue, width: int, lanes: SSAValue | None) -> SSAValue:
        if lanes is None:
            return thread
        base = self.int_op(arith.MuliOp, thread, width)
        return self.emit(arith.AddiOp(self.spread(base, lanes), lanes))


# -- reduce -----------------------------------------------------------------------------

def _source_type(lo: Lowering, op: tile.ReduceOp | tile.ScanOp) -> TensorType:
    """The first operand's tile type (with its layout), as it was before lowering."""
    types = lo.operand_types[op]
    if not tile.is_layout(types[0].encoding):
        raise CompileError(f"tile-to-simt needs layouts on {op.name} (run assign-layouts)")
    if len({(t.get_shape(), t.encoding) for t in types}) != 1:
        raise CompileError(f"{op.name} operands must have one layout")
    return types[0]


@lowers(tile.ReduceOp)
def lower_reduce(lo: Lowering, op: tile.ReduceOp) -> None:
    """Replace ``op`` (registered with tile-to-simt)."""
    src_type = _source_type(lo, op)
    axis = op.axis.value.data
    layout = src_type.encoding
    plan = axis_plan(layout, src_type.get_shape(), axis)
    e = _Emitter(lo, op)
    _check_result_layouts(op, src_type, axis)
    xs = _within_thread(e, list(op.srcs), plan.groups)
    if not isinstance(op.outs[0].type, TensorType):
        xs = [e.scalar(x) for x in xs]
    for bit in plan.lane_bits:
        xs = e.combine(xs, [e.emit(simt.ShuffleXorOp(x, 1 << bit)) for x in xs])
    if plan.warp_bits:
        xs = _across_warps(e, xs, plan)
    for res, x in zip(op.outs, xs, strict=True):
        res.replace_all_uses_with(x)
    lo.dead.append(op)


def _check_result_layouts(op: tile.ReduceOp, src_type: TensorType, axis: int) -> None:
    want = tile.reduced_type(src_type, axis)
    for res in op.outs:
        if isinstance(res.type, TensorType) and res.type.encoding != want.encoding:
            raise CompileError(f"tile.reduce result layout must be {want.encoding} "
                               "(assign-layouts)")


def _within_thread(e: _Emitter, xs: list[SSAValue],
                   groups: tuple[tuple[int, ...], ...]) -> list[SSAValue]:
    """Combine each group's lanes: adjacent pairs, level by level."""
    level = [list(g) for g in groups]
    while len(level[0]) > 1:
        n = len(level[0])
        left = [g[i] for g in level for i in range(0, n - 1, 2)]
        right = [g[i] for g in level for i in range(1, n, 2)]
        pairs = e.combine([e.pick(x, left) for x in xs], [e.pick(x, right) for x in xs])
        half = n // 2
        if n % 2:  # the last lane of each group waits for the next level
            tails = [g[-1] for g in level]
            xs = [e.concat([p, e.pick(x, tails)]) for p, x in zip(pairs, xs, strict=True)]
            level = [[gi * half + i for i in range(half)] + [len(level) * half + gi]
                     for gi in range(len(level))]
        else:
            xs = pairs
            level = [[gi * half + i for i in range(half)] for gi in range(len(level))]
    return [e.pick(x, [g[0] for g in level]) for x in xs]


def _across_warps(e: _Emitter, xs: list[SSAValue], plan: AxisPlan) -> list[SSAValue]:
    """Combine the partials of the warps along the axis (the first lane along the axis of
    each warp writes its partial to shared memory)."""
    lanes, warps = plan.lane_bits, plan.warp_bits
    first = e.cmp("eq", e.bits(e.tid(), lanes[0], len(lanes)), 0) if lanes else None
    if len(lanes) >= len(warps):
        return _warp_partials_by_shuffles(e, xs, plan, first)
    parts = e.exchange(xs, lanes, first, e.reads(warps, lanes, range(1 << len(warps))))
    acc = parts[0]
    for p in parts[1:]:
        acc = e.combine(acc, p)
    return acc


def _warp_partials_by_shuffles(e: _Emitter, xs: list[SSAValue], plan: AxisPlan,
                               first: SSAValue | None) -> list[SSAValue]:
    """Each lane along the axis reads one warp's partial (lane i: warp i mod W) and a
    butterfly of shuffles over those lanes combines them: one shared-memory read per
    thread and log2(W) shuffles, where reading all W partials costs W reads and W - 1
    dependent combines (the reduce combiner is associative and commutative)."""
    lanes, warps = plan.lane_bits, plan.warp_bits
    warp_mask = ((1 << len(warps)) - 1) << warps[0]
    which = e.bits(e.tid(), lanes[0], len(warps))
    others = e.int_op(arith.AndIOp, e.tid(), ~warp_mask)
    read = e.emit(arith.OrIOp(others, e.int_op(arith.ShLIOp, which, warps[0])))
    acc = e.exchange(xs, lanes, first, [read])[0]
    for bit in lanes[:len(warps)]:
        acc = e.combine(acc, [e.emit(simt.ShuffleXorOp(x, 1 << bit)) for x in acc])
    return acc


# -- scan -------------------------------------------------------------------------------

@lowers(tile.ScanOp)
def lower_scan(lo: Lowering, op: tile.ScanOp) -> None:
    """Replace ``op`` (registered with tile-to-simt)."""
    src_type = _source_type(lo, op)
    if [r.type for r in op.outs] != lo.operand_types[op]:
        raise CompileError("tile.scan results must have the operand layout")
    axis, reverse = op.axis.value.data, op.is_reverse
    plan = axis_plan(src_type.encoding, src_type.get_shape(), axis)
    e = _Emitter(lo, op)
    runs = [[r[::-1] for r in g[::-1]] if reverse else list(g) for g in plan.runs]
    if len({(len(g), *map(len, g)) for g in runs}) != 1:
        raise CompileError(f"tile.scan: irregular layout {src_type.encoding}")
    scan = _Scan(e, plan, reverse, len(runs[0]))
    xs = list(op.srcs)
    depth = len(runs[0][0])
    # run-major lanes r = g * Q + q (in scan order); one vector per position in the run
    steps = [[g[q][j] for g in runs for q in range(len(g))] for j in range(depth)]
    partial = [[e.pick(x, lanes) for x in xs] for lanes in steps[:1]]
    for lanes in steps[1:]:
        partial.append(e.combine(partial[-1], [e.pick(x, lanes) for x in xs]))
    prefix, has = scan.prefixes(partial[-1])
    outs = [e.fold(prefix, has, p, True)[0] if prefix else p for p in partial]
    order = [k for lanes in steps for k in lanes]
    where = {k: i for i, k in enumerate(order)}
    total = len(order)
    for i, res in enumerate(op.outs):
        joined = e.concat([o[i] for o in outs]) if len(outs) > 1 else outs[0][i]
        res.replace_all_uses_with(e.pick(joined, [where[k] for k in range(total)]))
    lo.dead.append(op)


class _Scan:
    """The cross-thread part of a scan: the combined prefix of everything before each run
    of a thread (None where nothing is), from the runs' totals."""

    def __init__(self, e: _Emitter, plan: AxisPlan, reverse: bool, runs_per_group: int):
        self.e, self.plan, self.reverse, self.q = e, plan, reverse, runs_per_group

    def position(self, bits: tuple[int, ...]) -> SSAValue:
        """This thread's place along the axis among the ``bits``, in scan order."""
        pos = self.e.bits(self.e.tid(), bits[0], len(bits))
        if self.reverse:
            pos = self.e.int_op(arith.XOrIOp, pos, (1 << len(bits)) - 1)
        return pos

    def prefixes(self, totals: list[SSAValue]) -> tuple[list[SSAValue] | None, Flag]:
        plan = self.plan
        prefix: list[SSAValue] | None = None
        has: Flag = False
        incl = totals
        if plan.lane_bits:
            incl, prefix, has = self._across_lanes(totals)
        if plan.warp_bits or self.q > 1:
            warps, has_w, chunk, has_c = self._through_shared(incl)
            prefix, has = self._fold(warps, has_w, prefix, has)
            prefix, has = self._fold(chunk, has_c, prefix, has)
        return prefix, has

    def _fold(self, outer: list[SSAValue] | None, has_outer: Flag,
              inner: list[SSAValue] | None, has_inner: Flag):
        if outer is None:
            return inner, has_inner
        if inner is None:
            return outer, has_outer
        return self.e.fold(outer, has_outer, inner, has_inner)

    def _shuffle(self, x: SSAValue, delta: int) -> SSAValue:
        cls = simt.ShuffleDownOp if self.reverse else simt.ShuffleUpOp
        return self.e.emit(cls(x, delta << self.plan.lane_bits[0]))

    def _across_lanes(self, totals: list[SSAValue]):
        """Hillis-Steele over the lanes along the axis; the inclusive scan, and the
        exclusive one (what comes before this thread in its warp)."""
        e = self.e
        pos = self.position(self.plan.lane_bits)
        incl = totals
        for i in range(len(self.plan.lane_bits)):
            before = [self._shuffle(x, 1 << i) for x in incl]
            incl, _ = e.fold(before, e.cmp("sge", pos, 1 << i), incl, True)
        excl = [self._shuffle(x, 1) for x in incl]
        return incl, excl, e.cmp("sge", pos, 1)

    def _through_shared(self, incl: list[SSAValue]):
        """The totals of the warps before this one and of the runs before each run, read
        from what the last lane along the axis (in scan order) of every warp wrote."""
        e, plan = self.e, self.plan
        nw = 1 << len(plan.warp_bits)
        lanes = plan.lane_bits
        reads = e.reads(plan.warp_bits, lanes, range(nw - 1, -1, -1) if self.reverse
                        else range(nw))
        last = e.cmp("eq", self.position(lanes), (1 << len(lanes)) - 1) if lanes else None
        parts = e.exchange(incl, lanes, last, reads)
        # prefixes[w] combines the totals of the first w warps (in scan order)
        prefixes = [parts[0]]
        for p in parts[1:]:
            prefixes.append(e.combine(prefixes[-1], p))
        warps, has_w = None, False
        if plan.warp_bits:
            pos = self.position(plan.warp_bits)
            warps = prefixes[0]
            for w in range(2, nw):
                is_w = e.emit(tile.CmpIOp("eq", pos, e.const(w)))
                warps = [e.select(is_w, p, x) for p, x in zip(prefixes[w - 1], warps)]
            has_w = e.cmp("sge", pos, 1)
        chunk, has_c = self._runs_before(prefixes[-1]) if self.q > 1 else (None, False)
        return warps, has_w, chunk, has_c

    def _runs_before(self, sums: list[SSAValue]):
        """Per run q of each group, the combined totals of runs 0..q-1 (run-major lanes)."""
        e, q = self.e, self.q
        groups = (sums[0].type.get_shape()[0] if isinstance(sums[0].type, VectorType) else 1) // q
        acc = [e.pick(s, [g * q for g in range(groups)]) for s in sums]
        carried = [acc]
        for i in range(1, q - 1):
            acc = e.combine(acc, [e.pick(s, [g * q + i for g in range(groups)]) for s in sums])
            carried.append(acc)
        # lane g * q + i of the result: carried[i - 1][g]; run 0 has none (any filler)
        joined = [e.concat([c[k] for c in carried]) for k in range(len(sums))]
        lanes = [0 if i == 0 else (i - 1) * groups + g for g in range(groups) for i in range(q)]
        chunk = [e.pick(j, lanes) for j in joined]
        mask = e.emit(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            VectorType(i1, [groups * q]), [i % q != 0 for i in range(groups * q)])))
        return chunk, mask

