"""pipeline-loads: tile IR -> tile IR whose ``scf.for`` loops prefetch their dot operands
(into registers, or with ``cp_async`` into shared-memory stages: the ``async_copy`` ops).

A ``tile.load`` in a loop body that feeds a ``tile.dot`` (directly or through casts and
shape ops) makes every iteration wait a full global-memory latency before its math. Here
such loads move ``num_stages - 1`` iterations ahead (Triton's ``SoftwarePipeliner``, with
registers as the buffers): a prologue before the loop loads iterations ``lb .. lb +
(S-1)*step``, the loop carries those tiles as extra ``iter_args``, and each iteration uses
the oldest one and issues the loads of iteration ``iv + (S-1)*step`` before its math.
Prefetched loads are masked off past ``ub``, so no access happens that the original loop
did not make, and the values computed are unchanged.

A load qualifies when its pointer, mask and ``other`` are computed in the body by
side-effect-free ops from the induction variable, values defined outside the loop, and
"advanceable" ``iter_args``: ones whose next value is such a pure function too (pointers
or offsets moved by ``+= BLOCK``). Their future values are computed by cloning the ops
that compute the yielded values. Only loops with a positive constant step (the frontend's
``range`` loops count up by a positive step, comparing signed) and no memory writes in
the body are changed: a write could alias a prefetched address.

On a target that copies from global to shared memory asynchronously (``cp_async``: PTX
``cp.async``, sm_80 and up), loads that go straight into a tensor-core dot (on Hopper, also
a wgmma dot's B through a transpose) as 2-D tiles of 16-bit elements, zero where masked
off and read in runs of at least 4 bytes along their rows, skip the registers (Triton's
multi-buffering): each gets a ``tile.shared_alloc`` of ``num_stages`` tiles (128-byte
swizzled, or rows padded, as ``ldmatrix`` reads them), the prologue copies iterations
``0 .. S-2`` into stages ``0 .. S-2``, one group per iteration, and iteration ``i`` waits
for its group (``tile.async_wait S-2``, which also waits for every thread), reads stage
``i % S`` (``tile.shared_read``) and copies iteration ``i + S - 1`` into the stage iteration
``i - 1`` read. Registers stay free for the accumulator, and the copies of ``S - 1``
iterations are in flight during the math.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnitAttr,
    i1,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import MemoryEffectKind, get_effects, is_side_effect_free

from compiler.passes.assign_layouts import (
    WGMMA_SM,
    WGMMA_STAGING_BYTES,
    access_vec,
    blocked_layout,
    mma_layout,
    wgmma_ok,
)
from compiler.passes.axis_info import AxisInfoAnalysis, bits_of
from compiler.passes.layouts import padded_row
from compiler.passes.lower_array_views import is_unit, lower_view_access
from compiler.passes.running_dots import b_source, may_run_on
from dialects import tile
from dialects.tile.async_copy import ASYNC_DOT_ATTR, SWIZZLE_BYTES

CP_ASYNC_SM = 80  # the first SM version with cp.async
CP_ASYNC_BITS = 128  # the widest copy
MIN_COPY_BITS = 32  # the narrowest
MAX_BOX = 256  # rows of a TMA box
TMA_ALIGN = 16  # bytes: a tensor map's base and row strides

# body value -> the value it stands for at the insertion point
State = dict[SSAValue, SSAValue]


@dataclass(frozen=True)
class _Slice:
    """The body ops computing some values (block order) and the body arguments they read."""

    ops: tuple[Operation, ...]
    args: frozenset[BlockArgument]


def _slice(values: Iterable[SSAValue], body: Block) -> _Slice | None:
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
    return _Slice(tuple(o for o in body.ops if o in ops), frozenset(args))


def _positive_step(loop: scf.ForOp) -> int | None:
    step = loop.step.owner
    if isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr):
        value = step.value.value.data
        return value if value > 0 else None
    return None


def _writes_memory(loop: scf.ForOp) -> bool:
    for op in loop.body.walk():
        if isinstance(op, tile.LoadOp | tile.ViewLoadOp) or op.regions:  # nested: walked
            continue
        effects = get_effects(op)
        if effects is None or any(e.kind == MemoryEffectKind.WRITE for e in effects):
            return True
    return False


def _feeds_dot(load: tile.LoadOp | tile.ViewLoadOp, body: Block) -> bool:
    """Whether the loaded tile reaches a dot's ``a`` or ``b`` in ``body`` (not through an
    accumulator: a tile loaded to be added to a dot's result gains nothing here)."""
    seen: set[Operation] = set()
    work = [load.result]
    while work:
        for use in work.pop().uses:
            user = body.find_ancestor_op_in_block(use.operation)
            if user is None or user in seen:
                continue
            if isinstance(user, tile.DotOp):
                if user is use.operation and use.index < 2:
                    return True
                continue
            seen.add(user)
            work.extend(user.results)
    return False


def _advanceable(body: Block) -> dict[BlockArgument, _Slice]:
    """The iter_args whose next value is a pure function of the induction variable, outer
    values and advanceable iter_args, with the slice computing it (a fixed point)."""
    iv, *carried = body.args
    yielded = body.last_op.operands
    found = {a: s for a in carried if (s := _slice([yielded[a.index - 1]], body)) is not None}
    while True:
        ok = {a: s for a, s in found.items() if s.args <= found.keys() | {iv}}
        if len(ok) == len(found):
            return ok
        found = ok


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


class _Pipeliner:
    """Rewrites one loop: prefetches ``loads``, whose addresses read the iter_args
    ``carried``; ``advance`` (body order) computes those iter_args' next values."""

    def __init__(self, loop: scf.ForOp, step: int, depth: int, loads: list[tile.LoadOp],
                 carried: list[BlockArgument], advance: list[Operation]):
        self.loop, self.step, self.depth = loop, step, depth
        self.loads, self.carried, self.advance = loads, carried, advance
        self.body = loop.body.block
        self.iv = self.body.args[0]
        self.address = _slice((v for ld in loads for v in ld.operands), self.body)
        yielded = self.body.last_op.operands
        advanced = _slice([yielded[a.index - 1] for a in carried], self.body)
        self.reads_iv = self.iv in self.address.args | advanced.args

    def _top(self) -> InsertPoint:
        """The start of the body, before its first op that stays (a load the loop stops
        making would take the insertion point away with it)."""
        return InsertPoint.before(next(op for op in self.body.ops if op not in self.loads))

    def _steps(self, count: int, point: InsertPoint) -> SSAValue:
        """``count * step`` (the loop's own constant for one step)."""
        if count == 1:
            return self.loop.step
        value = IntegerAttr(count * self.step, self.iv.type)
        return _insert(arith.ConstantOp(value), point, self.loop)

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
        difference of two in-range signed values is exact as an unsigned number."""
        left = _insert(arith.SubiOp(self.loop.ub, base), point, self.loop)
        return _insert(tile.CmpIOp("ult", self._steps(distance, point), left), point,
                       self.loop)

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

    def run(self) -> None:
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
        self._finish(yielded, [v for first in zip(*prologue, strict=True) for v in first])

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


class _AsyncPipeliner(_Pipeliner):
    """Prefetches into shared memory instead of registers: each load gets a ring of
    ``depth + 1 + lag`` stages that asynchronous copies fill ``depth`` iterations ahead;
    the loop carries the stage it reads (iteration ``i`` reads stage ``i % ring``).
    Iteration ``i`` refills the stage iteration ``i - 1 - lag`` read: ``lag = 1`` where the
    dot of iteration ``i - 1`` may still be reading its stage (asynchronous wgmma)."""

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
        use = next(iter(ld.result.uses))
        if self.wgmma_warps:
            rows, cols = ld.result.type.get_shape()  # pyright: ignore
            warps = self.wgmma_warps if isinstance(use.operation, tile.DotOp) and \
                use.index == 0 else 0  # A's rows are permuted; B (or B transposed) not
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

    def run(self) -> None:
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
            ld.result.replace_all_uses_with(
                _insert(tile.SharedReadOp(buf, stage, ld.result.type), top, ld))
            Rewriter.erase_op(ld)
        # the stage read ``1 + lag`` iterations ago: every thread is done with it (the
        # wait's barrier; with a lag, the dot's own wait for all but its latest group).
        # The copies go first: they are in flight during this iteration's math.
        state, live = self._ahead(top)
        self._copy(state, live, self._rotate(stage, self.ring - 1 - self.lag, top), top)
        following = self._rotate(stage, 1, top)
        yielded, inits = [*body.last_op.operands, following], [self._const(0, before)]
        if phase is not None:  # flipped as the stage wraps around
            wrapped = _insert(tile.CmpIOp("eq", following, self._const(0, top)), top,
                              self.loop)
            flip = _insert(arith.ExtUIOp(wrapped, i32), top, self.loop)
            yielded.append(_insert(arith.XOrIOp(phase, flip), top, self.loop))
            inits.append(self._const(0, before))
        self._end(self._finish(yielded, inits))

class _TmaPipeliner(_AsyncPipeliner):
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


def _put(op: Operation, point: InsertPoint, loc: Operation) -> None:
    op.location = loc.location
    Rewriter.insert_op(op, point)


def tma_box(rows: int, cols: int, bits: int) -> bool:
    """Whether TMA moves a ``rows`` x ``cols`` tile of ``bits``-bit elements in swizzled
    boxes: whole 128-byte atoms wide, rows in eights and at most a box."""
    return rows % 8 == 0 and rows <= MAX_BOX and cols * bits % (8 * SWIZZLE_BYTES) == 0


def _swizzles(rows: int, cols: int, bits: int) -> bool:
    """Whether an ``ldmatrix``-read stage of ``rows`` x ``cols`` ``bits``-bit elements is
    128-byte swizzled rather than padded: 16-bit rows of whole 128-byte atoms. A padded row
    is no multiple of 128 bytes, so each ``cp.async`` of a warp splits into ~2.7 times as
    many L2 requests (ncu, H100) as the same copy into a swizzled stage."""
    return bits == 16 and rows % 8 == 0 and cols * bits % (8 * SWIZZLE_BYTES) == 0


def _copyable(load: tile.LoadOp, num_warps: int, facts: AxisInfoAnalysis,
              wgmma: bool) -> bool:
    """Whether ``load`` can go to shared memory by asynchronous copies: a 2-D tile of 16-bit
    elements (what ``ldmatrix`` reads as staged), zero where masked off, used only as an
    operand of a dot that will run on tensor cores (or, for ``wgmma``, as its B through a
    transpose: K in attention), and read in runs of at least 4 bytes along its rows
    (``cp.async`` copies 4, 8 or 16 bytes: a tile contiguous down its columns would be
    copied element by element)."""
    t = load.result.type
    uses = list(load.result.uses)
    if (not isinstance(t, TensorType) or len(t.get_shape()) != 2
            or bits_of(t.element_type) != 16 or not tile.is_zero(load.other) or len(uses) != 1):
        return False
    dot = _dot_of(load)
    if not (dot is not None and dot.parent is load.parent
            and (dot is uses[0].operation or wgmma and wgmma_ok(dot, num_warps))
            and mma_layout(dot, num_warps, WGMMA_SM if wgmma else CP_ASYNC_SM) is not None):
        return False
    layout = blocked_layout(t.get_shape(), num_warps, 16)
    return access_vec(load, layout, facts, CP_ASYNC_BITS) * 16 >= MIN_COPY_BITS


def _refreshed(loop: scf.ForOp, facts: AxisInfoAnalysis | None) -> AxisInfoAnalysis | None:
    """The facts again (of the kernel holding ``loop``) after new ops were made."""
    kernel = loop.parent_op()
    while kernel is not None and not isinstance(kernel, func.FuncOp):
        kernel = kernel.parent_op()
    return None if facts is None or kernel is None else AxisInfoAnalysis(kernel)


def _known_at_launch(v: SSAValue) -> bool:
    """``v`` is a kernel parameter or a non-negative integer constant (known at launch)."""
    if isinstance(v, BlockArgument):
        return isinstance(v.block.parent_op(), func.FuncOp)
    owner = v.owner
    return isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) \
        and owner.value.value.data >= 0


def _tma_view(load: tile.ViewLoadOp, facts: AxisInfoAnalysis) -> bool:
    """Whether TMA can copy ``load``'s tile into a swizzled stage: a 2-D tile of 16-bit
    elements, zeros outside, its columns whole 128-byte atoms and its rows at most a box
    (256), of an array a tensor map describes (of more dimensions: the tile is one
    element long in the leading ones)."""
    t, view = load.result.type, load.view.owner
    if not isinstance(view, tile.MakeViewOp) or load.padding.data not in ("zero", "undetermined") \
            or not isinstance(t, TensorType) or len(t.get_shape()) != 2:
        return False
    (rows, cols), bits = t.get_shape(), bits_of(t.element_type)
    if bits != 16 or not tma_box(rows, cols, bits):
        return False
    return tma_describes(view, bits, facts)


def tma_describes(view: tile.MakeViewOp, bits: int, facts: AxisInfoAnalysis) -> bool:
    """Whether a tensor map can describe ``view`` (of 2 or more dimensions: at most 5, as
    tensor maps) as an array of ``bits``-bit elements: made of values known at launch,
    with unit stride along its last dimension, 16-byte aligned at its base and every
    stride of the others (what ``cuTensorMapEncodeTiled`` requires)."""
    if len(view.shape) < 2 or not all(
            _known_at_launch(v) for v in (view.base, *view.shape, *view.strides)):
        return False
    aligned = all(facts[v].divisibility[0] * bits // 8 % TMA_ALIGN == 0
                  for v in (view.base, *view.strides[:-1]))
    return aligned and is_unit(view.strides[-1])


def _dot_of(load: tile.LoadOp | tile.ViewLoadOp) -> tile.DotOp | None:
    """The dot ``load`` is read by as an operand, or as B through a transpose (which the
    dot then reads K-major); None if anything else reads it."""
    uses = list(load.result.uses)
    if len(uses) != 1:
        return None
    user, index = uses[0].operation, uses[0].index
    if isinstance(user, tile.TransOp):
        uses = list(user.result.uses)
        if len(uses) != 1 or uses[0].index != 1:
            return None
        user, index = uses[0].operation, 1
    return user if isinstance(user, tile.DotOp) and index < 2 else None


def _in_registers(dot: tile.DotOp, loads: list) -> int:
    """The bytes of ``dot``'s operands that none of ``loads`` stages (B may be the
    transpose of one): wgmma reads them from a buffer every thread stores them to."""
    return sum(prod(v.type.get_shape()) * bits_of(v.type.element_type) // 8  # pyright: ignore
               for v in (dot.a, b_source(dot)) if v.owner not in loads)


def _by_tma(loads: list, num_warps: int, facts: AxisInfoAnalysis) -> bool:
    """Whether TMA can fill the stages of every load feeding the loop's dots: all of them
    array-view loads it can copy, each read by a dot wgmma runs (their other operands
    may be in registers: P in attention)."""
    dots = [_dot_of(ld) if isinstance(ld, tile.ViewLoadOp) and _tma_view(ld, facts) else None
            for ld in loads]
    return all(d is not None and wgmma_ok(d, num_warps) for d in dots)


def _closure(args: set[BlockArgument], movable: dict[BlockArgument, _Slice]) -> set:
    """``args`` and the iter_args their advance reads, transitively."""
    while True:
        more = args.union(*(movable[a].args for a in args)) & movable.keys()
        if more == args:
            return args
        args = more


def pipeline(loop: scf.ForOp, depth: int, facts: AxisInfoAnalysis | None = None,
             num_warps: int = 4, wgmma: bool = False) -> bool:
    """Prefetch ``loop``'s dot operands ``depth`` iterations ahead (into shared memory if
    ``facts`` are given and they all can go there; swizzled for Hopper's wgmma if
    ``wgmma``); False if it is left unchanged."""
    step = _positive_step(loop)
    body = loop.body.block
    iv_type = body.args[0].type
    if (step is None or not isinstance(iv_type, IntegerType) or _writes_memory(loop)
            or depth * step >= 2 ** (iv_type.width.data - 1)):
        return False
    movable = _advanceable(body)
    slices = {op: _slice(op.operands, body) for op in body.ops
              if isinstance(op, tile.LoadOp | tile.ViewLoadOp) and _feeds_dot(op, body)}
    loads = [op for op, s in slices.items()
             if s is not None and s.args <= movable.keys() | {body.args[0]}]
    views = [op for op in slices if isinstance(op, tile.ViewLoadOp)]
    tma = (wgmma and facts is not None and len(loads) == len(slices)
           and _by_tma(loads, num_warps, facts))
    if views and not tma:
        for view in views:  # not for TMA: the pointers and masks they stand for
            lower_view_access(view)
        return pipeline(loop, depth, _refreshed(loop, facts), num_warps, wgmma)
    if not loads:
        return False
    carried = _closure(set().union(*(slices[ld].args for ld in loads)) & movable.keys(),
                       movable)
    advance = {op for a in carried for op in movable[a].ops}
    args = [loop, step, depth, loads, [a for a in body.args[1:] if a in carried],
            [op for op in body.ops if op in advance]]
    if not (tma or facts is not None
            and all(_copyable(ld, num_warps, facts, wgmma) for ld in loads)):
        _Pipeliner(*args).run()
        return True
    dots = {_dot_of(ld) for ld in loads}
    wgmma = tma or wgmma and all(
        wgmma_ok(d, num_warps) and _in_registers(d, loads) <= WGMMA_STAGING_BYTES  # pyright: ignore
        for d in dots)
    # a dot may run on into the next iteration only if it reads stages alone (an operand
    # in registers is stored into the dot's buffer again in the next iteration; attention's
    # P, taken as register fragments, is not), and only where the loads stay 2 iterations
    # ahead: a 48 KiB TMA stage takes longer than one iteration to land (128x256x64 f16 on
    # an H200: 3 stages 66% of cuBLAS running on, 79% waited for; 4 stages 99% running on,
    # 80% waited for)
    running = [d for d in dots if may_run_on(d, loads)] if wgmma and depth > 2 else []  # pyright: ignore
    lag = int(bool(running))
    args[2] = depth - lag  # the same number of stages: one more is still being read
    for d in running:
        d.attributes[ASYNC_DOT_ATTR] = UnitAttr()
    pipeliner = _TmaPipeliner if tma else _AsyncPipeliner
    pipeliner(*args, wgmma_warps=num_warps if wgmma else 0, lag=lag).run()
    return True


@dataclass(frozen=True)
class PipelineLoads(ModulePass):
    """Prefetch the loads feeding dots ``num_stages - 1`` iterations ahead (1: off; a loop's
    ``tile.num_stages`` attribute, from ``tl.range``, overrides ``num_stages``); with
    ``cp_async`` (the SM version whose ``cp.async`` may be used, 80 and up; 0: none) into
    shared-memory stages, swizzled for wgmma where it is 90 and the dot allows."""

    name = "pipeline-loads"
    num_stages: int = 2
    num_warps: int = 4
    cp_async: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_stages < 1:
            raise ValueError(f"pipeline-loads: num_stages must be >= 1, got {self.num_stages}")
        # the facts of the loads as written (pipelining one loop leaves the others' alone)
        facts = AxisInfoAnalysis(op) if self.cp_async >= CP_ASYNC_SM else None
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp)]:
            stages = loop.attributes.get(tile.NUM_STAGES_ATTR)  # ``tl.range(num_stages=)``
            depth = (stages.value.data if isinstance(stages, IntegerAttr) else
                     self.num_stages) - 1
            if depth > 0:
                pipeline(loop, depth, facts, self.num_warps, self.cp_async >= WGMMA_SM)
