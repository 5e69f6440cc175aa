"""The loop rewrites of ``pipeline-loads`` (which decides which loads of which loop get
which): a ``Pipeliner`` prefetches loads ``depth`` iterations ahead into registers carried
as ``iter_args``, an ``AsyncPipeliner`` into shared-memory stages that asynchronous copies
fill, a ``TmaPipeliner`` into stages that TMA fills. Each computes a later iteration's
addresses by cloning the body ops that compute them (a ``Slice`` of the body).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, TensorType, i1, i32
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from compiler.passes.axis_info import bits_of
from compiler.passes.layouts import padded_row
from dialects import tile
from dialects.tile.async_copy import SWIZZLE_BYTES

# body value -> the value it stands for at the insertion point
State = dict[SSAValue, SSAValue]


@dataclass(frozen=True)
class Slice:
    """The body ops computing some values (block order) and the body arguments they read."""

    ops: tuple[Operation, ...]
    args: frozenset[BlockArgument]


def body_slice(values: Iterable[SSAValue], body: Block) -> Slice | None:
    """The backward slice of ``values`` within ``body``; None if an op in it has effects
    or regions (it cannot be recomputed for another iteration)."""
    ops: set[Operation] = set()
    args: set[BlockArgument] = set()
    work = list(values)
    while work:
        v = work.pop()
        if isinstance(v, BlockArgument):
            if v.block is body:
                args.add(v)
            continue
        op = v.owner
        if op.parent_block() is not body or op in ops:
            continue
        if op.regions or not is_side_effect_free(op):
            return None
        ops.add(op)
        work.extend(op.operands)
    return Slice(tuple(o for o in body.ops if o in ops), frozenset(args))


def _insert(op: Operation, point: InsertPoint, loc: Operation) -> SSAValue:
    op.location = loc.location
    Rewriter.insert_op(op, point)
    return op.results[0]


def _clone(ops: Iterable[Operation], state: State, point: InsertPoint) -> State:
    """``ops`` cloned at ``point`` with body values replaced as ``state`` says."""
    mapping = dict(state)
    for op in ops:
        Rewriter.insert_op(op.clone_without_regions(mapping), point)
    return mapping


class Pipeliner:
    """Rewrites one loop: prefetches ``loads``, whose addresses read the iter_args
    ``carried``; ``advance`` (body order) computes those iter_args' next values. ``step``
    is the loop's constant step, or None for one known only at run time (taken to be
    positive, as ``scf.for`` counts)."""

    def __init__(self, loop: scf.ForOp, step: int | None, depth: int, loads: list[tile.LoadOp],
                 carried: list[BlockArgument], advance: list[Operation]):
        self.loop, self.step, self.depth = loop, step, depth
        self.loads, self.carried, self.advance = loads, carried, advance
        self.body = loop.body.block
        self.iv = self.body.args[0]
        self.address = body_slice((v for ld in loads for v in ld.operands), self.body)
        yielded = self.body.last_op.operands
        advanced = body_slice([yielded[a.index - 1] for a in carried], self.body)
        self.reads_iv = self.iv in self.address.args | advanced.args

    def _top(self) -> InsertPoint:
        """The start of the body, before its first op that stays (a load the loop stops
        making would take the insertion point away with it)."""
        return InsertPoint.before(next(op for op in self.body.ops if op not in self.loads))

    def _steps(self, count: int, point: InsertPoint) -> SSAValue:
        """``count * step`` (the loop's own step for one step)."""
        if count == 1:
            return self.loop.step
        if self.step is None:
            return _insert(arith.MuliOp(self.loop.step, self._iv_const(count, point)), point,
                           self.loop)
        return self._iv_const(count * self.step, point)

    def _iv_const(self, value: int, point: InsertPoint) -> SSAValue:
        return _insert(arith.ConstantOp(IntegerAttr(value, self.iv.type)), point, self.loop)

    def _next(self, state: State, point: InsertPoint) -> State:
        """The state one iteration later: ``iv + step`` and the yielded iter_args."""
        after = _clone(self.advance, state, point)
        yielded = self.body.last_op.operands
        nxt = {a: after.get(yielded[a.index - 1], yielded[a.index - 1]) for a in self.carried}
        if self.reads_iv:
            nxt[self.iv] = _insert(arith.AddiOp(state[self.iv], self.loop.step), point,
                                   self.loop)
        return nxt

    def _before_ub(self, base: SSAValue, distance: int, point: InsertPoint) -> SSAValue:
        """``base + distance * step < ub`` for ``base < ub``, without overflow: the
        difference of two in-range signed values is exact as an unsigned number. A step
        known only at run time must also be small enough for ``distance * step`` not to
        wrap (which a negative one, as an unsigned number, is not)."""
        left = _insert(arith.SubiOp(self.loop.ub, base), point, self.loop)
        live = _insert(tile.CmpIOp("ult", self._steps(distance, point), left), point,
                       self.loop)
        if self.step is not None:
            return live
        largest = (2 ** (self.iv.type.width.data - 1) - 1) // distance  # pyright: ignore
        small = _insert(tile.CmpIOp("ule", self.loop.step, self._iv_const(largest, point)),
                        point, self.loop)
        return _insert(arith.AndIOp(live, small), point, self.loop)

    def _accesses(self, state: State, live: SSAValue, point: InsertPoint,
                  build) -> list[SSAValue | None]:
        """``build(load, ptr, mask, other)`` (inserting at ``point``) for each load of the
        iteration ``state`` describes, masked off where not ``live``."""
        mapping = _clone(self.address.ops, state, point)
        out = []
        for ld in self.loads:
            ptr, mask, other = (None if v is None else mapping.get(v, v)
                                for v in (ld.ptr, ld.mask, ld.other))
            on = live
            if isinstance(ld.ptr.type, TensorType):
                on = _insert(tile.SplatOp(live, TensorType(i1, ld.ptr.type.get_shape())),
                             point, ld)
            if mask is not None:
                on = _insert(arith.AndIOp(mask, on), point, ld)
            out.append(build(ld, ptr, on, other))
        return out

    def _load(self, state: State, live: SSAValue, point: InsertPoint) -> list[SSAValue]:
        """The loads of the iteration ``state`` describes, masked off where not ``live``
        (a masked-off lane reads ``other``, and nobody reads it)."""
        return self._accesses(state, live, point, lambda ld, ptr, on, other: _insert(
            tile.LoadOp(ptr, on, other), point, ld))

    def _prologue(self, emit) -> list:
        """Before the loop, ``emit(i, state, live, point)`` for iterations ``i`` = 0 ..
        depth-1 (``lb + i*step``: the state, and whether the loop runs it); the results."""
        loop, point = self.loop, InsertPoint.before(self.loop)
        state: State = {self.iv: loop.lb} | {a: loop.iter_args[a.index - 1]
                                             for a in self.carried}
        first = _insert(tile.CmpIOp("slt", loop.lb, loop.ub), point, loop)
        out = [emit(0, state, first, point)]
        for i in range(1, self.depth):
            state = self._next(state, point)
            live = arith.AndIOp(first, self._before_ub(loop.lb, i, point))
            out.append(emit(i, state, _insert(live, point, loop), point))
        return out

    def _ahead(self, point: InsertPoint) -> tuple[State, SSAValue]:
        """At ``point`` in the body: the state of iteration ``iv + depth*step`` and whether
        the loop runs it."""
        state: State = {v: v for v in (self.iv, *self.carried)}
        for _ in range(self.depth):
            state = self._next(state, point)
        return state, self._before_ub(self.iv, self.depth, point)

    def run(self) -> scf.ForOp:
        """The loop rewritten (in place of the old one)."""
        prologue = self._prologue(lambda _, state, live, at: self._load(state, live, at))
        top = self._top()
        prefetched = self._load(*self._ahead(top), top)
        body = self.body
        yielded = list(body.last_op.operands)
        for ld, first, new in zip(self.loads, zip(*prologue, strict=True), prefetched,
                                  strict=True):
            slots = [body.insert_arg(ld.result.type, len(body.args)) for _ in first]
            ld.result.replace_all_uses_with(slots[0])
            yielded += [*slots[1:], new]  # the queue moves up one iteration
            Rewriter.erase_op(ld)
        return self._finish(yielded, [v for first in zip(*prologue, strict=True)
                                      for v in first])

    def _finish(self, yielded: list[SSAValue], inits: list[SSAValue]) -> scf.ForOp:
        """The loop again, yielding ``yielded`` and carrying ``inits`` after its own
        iter_args; the original address ops, now dead, erased."""
        loop, body = self.loop, self.body
        Rewriter.replace_op(body.last_op, scf.YieldOp(*yielded))
        for op in reversed(self.address.ops):
            if all(not r.uses for r in op.results):
                Rewriter.erase_op(op)
        new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *inits],
                        loop.detach_region(loop.body))
        new.location = loop.location
        Rewriter.insert_op(new, InsertPoint.before(loop))
        Rewriter.replace_op(loop, [], new.results[:len(loop.results)])
        return new


class AsyncPipeliner(Pipeliner):
    """Prefetches into shared memory instead of registers: each load gets a ring of
    ``depth + 1 + lag`` stages that asynchronous copies fill ``depth`` iterations ahead;
    the loop carries the stage it reads (iteration ``i`` reads stage ``i % ring``).
    Iteration ``i`` refills the stage iteration ``i - 1 - lag`` read: ``lag = 1`` where the
    dot of iteration ``i - 1`` may still be reading its stage (asynchronous wgmma), ``-1``
    where iteration ``i`` is done with its own (``SameStagePipeliner``)."""

    phased = False  # whether the loop also carries the phase of the stages' barriers

    def __init__(self, *args, wgmma_warps: int = 0, lag: int = 0):
        super().__init__(*args)
        self.wgmma_warps, self.lag = wgmma_warps, lag
        self.ring = self.depth + 1 + lag

    def _copy(self, state: State, live: SSAValue, stage: SSAValue,
              point: InsertPoint) -> None:
        """The copies of the iteration ``state`` describes into ``stage``, one group."""
        buffers = dict(zip(self.loads, self.buffers, strict=True))
        self._accesses(state, live, point, lambda ld, ptr, on, _: _put(
            tile.AsyncCopyOp(ptr, buffers[ld], stage, on), point, ld))
        _put(tile.AsyncCommitOp(), point, self.loop)

    def _const(self, value: int, point: InsertPoint) -> SSAValue:
        return _insert(arith.ConstantOp(IntegerAttr(value, i32)), point, self.loop)

    def _rotate(self, stage: SSAValue, delta: int, point: InsertPoint) -> SSAValue:
        """``(stage + delta) % ring`` for ``0 < delta < ring``."""
        moved = _insert(arith.AddiOp(stage, self._const(delta, point)), point, self.loop)
        ring = self._const(self.ring, point)
        wraps = _insert(tile.CmpIOp("sge", moved, ring), point, self.loop)
        back = _insert(arith.SubiOp(moved, ring), point, self.loop)
        return _insert(tile.SelectOp(wraps, back, moved), point, self.loop)

    def _alloc(self, ld: tile.LoadOp, point: InsertPoint) -> SSAValue:
        """The stages of ``ld``: swizzled where its dot runs as wgmma (rows permuted for
        the accumulator's warps if it is A), else, for ``ldmatrix``, swizzled where the rows
        allow (``_swizzles``) or padded."""
        elem, stages = ld.result.type.element_type, self.ring  # pyright: ignore
        if self.wgmma_warps:
            rows, cols = ld.result.type.get_shape()  # pyright: ignore
            in_place_a = any(isinstance(u.operation, tile.DotOp) and u.index == 0
                             for u in ld.result.uses)
            warps = self.wgmma_warps if in_place_a else 0  # A's rows permuted; B's not
            return _insert(tile.SharedAllocOp(elem, stages, rows, cols, SWIZZLE_BYTES, warps),
                           point, ld)
        rows, cols = ld.result.type.get_shape()  # pyright: ignore
        if _swizzles(rows, cols, bits_of(elem)):  # as wgmma's, rows not permuted
            return _insert(tile.SharedAllocOp(elem, stages, rows, cols, SWIZZLE_BYTES), point,
                           ld)
        return _insert(tile.SharedAllocOp(elem, stages, rows, padded_row(cols, bits_of(elem))),
                       point, ld)

    def _begin(self, before: InsertPoint) -> None:
        """Before the loop, after the stages are allocated."""

    def _wait(self, stage: SSAValue, phase: SSAValue | None, top: InsertPoint) -> None:
        _put(tile.AsyncWaitOp(self.depth - 1), top, self.loop)  # this iteration's group

    def _end(self, loop: scf.ForOp) -> None:
        _put(tile.AsyncWaitOp(0), InsertPoint.after(loop), loop)  # no copy outlives it

    def run(self) -> scf.ForOp:
        before = InsertPoint.before(self.loop)
        self.buffers = [self._alloc(ld, before) for ld in self.loads]
        self._begin(before)
        self._prologue(lambda i, state, live, at: self._copy(state, live,
                                                             self._const(i, at), at))
        body, top = self.body, self._top()
        stage = body.insert_arg(i32, len(body.args))
        phase = body.insert_arg(i32, len(body.args)) if self.phased else None
        self._wait(stage, phase, top)
        for ld, buf in zip(self.loads, self.buffers, strict=True):
            read = _insert(tile.SharedReadOp(buf, stage, ld.result.type), top, ld)
            ld.result.replace_all_uses_with(_with_other(ld, read))
            Rewriter.erase_op(ld)
        # The copies go first (unless the stage they refill is still being read: after the
        # dot that reads it): they are in flight during this iteration's math.
        state, live = self._ahead(top)
        self._copy(state, live, self._refilled(stage, top), self._refill_point(top))
        following = self._rotate(stage, 1, top)
        yielded, inits = [*body.last_op.operands, following], [self._const(0, before)]
        if phase is not None:  # flipped as the stage wraps around
            wrapped = _insert(tile.CmpIOp("eq", following, self._const(0, top)), top,
                              self.loop)
            flip = _insert(arith.ExtUIOp(wrapped, i32), top, self.loop)
            yielded.append(_insert(arith.XOrIOp(phase, flip), top, self.loop))
            inits.append(self._const(0, before))
        new = self._finish(yielded, inits)
        self._end(new)
        return new

    def _refilled(self, stage: SSAValue, top: InsertPoint) -> SSAValue:
        """The stage this iteration's copies go to: the one read ``1 + lag`` iterations
        ago, which every thread is done with (the wait's barrier; with a lag, the dot's
        own wait for all but its latest group)."""
        return self._rotate(stage, self.ring - 1 - self.lag, top)

    def _refill_point(self, top: InsertPoint) -> InsertPoint:
        """Where this iteration's copies are issued."""
        return top


class RefillAfterDotPipeliner(AsyncPipeliner):
    """Stages of one dot that runs on into the next iteration, refilled as Triton's
    pipeliner does: a ring of ``depth + 1`` stages, iteration ``i`` refilling the one
    iteration ``i - 1`` read once the dot has waited for all but its latest wgmma and a
    barrier says every warpgroup has. Copies go ``depth`` iterations ahead, one more than
    ``lag = 1`` gives in as many stages, for a second barrier an iteration."""

    def __init__(self, *args, dot: tile.DotOp, wgmma_warps: int):
        super().__init__(*args, wgmma_warps=wgmma_warps)
        self.dot = dot

    def _refill_point(self, top: InsertPoint) -> InsertPoint:
        after = InsertPoint.after(self.dot)
        _put(tile.BarrierOp(), after, self.loop)
        return after


class SameStagePipeliner(AsyncPipeliner):
    """Stages for tiles that each iteration reads whole into registers first thing (not
    for a dot, which reads its stage during its math): a ring of ``depth`` stages, one
    fewer, as iteration ``i`` refills the stage it has just read with iteration
    ``i + depth`` once every thread has read it (a second wait, which finds no group left
    to wait for: its barrier). A stage holds the tile's rows as they are (a 1-D tile: one
    row), unpadded: the reads take the consumer's layout, not ``ldmatrix``'s."""

    def __init__(self, *args):
        super().__init__(*args, lag=-1)

    def _alloc(self, ld: tile.LoadOp, point: InsertPoint) -> SSAValue:
        t = ld.result.type
        assert isinstance(t, TensorType)
        rows, cols = (1, *t.get_shape())[-2:]
        return _insert(tile.SharedAllocOp(t.element_type, self.ring, rows, cols), point, ld)

    def _refilled(self, stage: SSAValue, top: InsertPoint) -> SSAValue:
        _put(tile.AsyncWaitOp(self.depth - 1), top, self.loop)
        return stage


class TmaPipeliner(AsyncPipeliner):
    """Array-view loads into the same swizzled stages, each filled by TMA (Hopper): one
    thread copies an iteration's tiles (``tile.tma_copy``), which arrive on the barrier of
    their stage; iteration ``i`` waits for barrier ``i % ring`` to complete its phase of
    parity ``(i // ring) % 2`` (carried: it flips as the stage wraps), then for every
    thread, so the stage refilled next is no longer read. The barriers are made before
    the loop and released after it, so every run of the loop starts afresh. (Barriers
    that the readers arrive on when done, waited for by the copying thread alone, measured
    slower: that thread is one of the readers, and its warpgroup waits for it anyway.)"""

    phased = True

    def _copy(self, state: State, live: SSAValue, stage: SSAValue,
              point: InsertPoint) -> None:
        mapping = _clone(self.address.ops, state, point)
        for ld, buf in zip(self.loads, self.buffers, strict=True):
            view = ld.view.owner
            starts = [mapping.get(i, i) for i in ld.index]
            if ld.elements is None:  # tile indices: times the tile (the leading ones, 1)
                lead, shape = len(starts) - 2, ld.result.type.get_shape()
                starts[lead:] = [_insert(arith.MuliOp(s, self._const(n, point)), point, ld)
                                 for s, n in zip(starts[lead:], shape, strict=True)]
            _put(tile.TmaCopyOp(view.base, list(view.shape), list(view.strides), starts, buf,
                                stage, self.bars, live), point, ld)

    def _begin(self, before: InsertPoint) -> None:
        self.bars = _insert(tile.BarrierAllocOp(self.ring, len(self.loads)), before,
                            self.loop)

    def _wait(self, stage: SSAValue, phase: SSAValue | None, top: InsertPoint) -> None:
        assert phase is not None
        _put(tile.BarrierWaitOp(self.bars, stage, phase), top, self.loop)

    def _end(self, loop: scf.ForOp) -> None:
        _put(tile.BarrierReleaseOp(self.bars), InsertPoint.after(loop), loop)


class TmaRefillAfterDotPipeliner(TmaPipeliner, RefillAfterDotPipeliner):
    """TMA-filled stages of one dot that runs on, refilled after it as above: at 3 stages
    the copies stay 2 iterations ahead while the dot runs on (``lag = 1`` would leave them
    1 ahead, which a TMA stage outlasts)."""


def _with_other(ld: tile.LoadOp, read: SSAValue) -> SSAValue:
    """``read`` from a stage, where a copy left zeros for the lanes ``ld`` masks off, with
    ``ld``'s non-zero ``other`` there instead (selected where ``ld`` was: its mask and
    ``other`` are computed by then)."""
    if not isinstance(ld, tile.LoadOp) or ld.mask is None or tile.is_zero(ld.other):
        return read
    return _insert(tile.SelectOp(ld.mask, read, ld.other), InsertPoint.before(ld), ld)


def _put(op: Operation, point: InsertPoint, loc: Operation) -> None:
    op.location = loc.location
    Rewriter.insert_op(op, point)


def _swizzles(rows: int, cols: int, bits: int) -> bool:
    """Whether an ``ldmatrix``-read stage of ``rows`` x ``cols`` ``bits``-bit elements is
    128-byte swizzled rather than padded: 16-bit rows of whole 128-byte atoms. A padded row
    is no multiple of 128 bytes, so each ``cp.async`` of a warp splits into ~2.7 times as
    many L2 requests (ncu, H100) as the same copy into a swizzled stage."""
    return bits == 16 and rows % 8 == 0 and cols * bits % (8 * SWIZZLE_BYTES) == 0
