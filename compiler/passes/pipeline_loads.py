"""pipeline-loads: tile IR -> tile IR whose ``scf.for`` loops prefetch their dot operands
(into registers, or with ``cp_async`` into shared-memory stages: the ``async_copy`` ops),
and, in loops that ask for it, all their loads.

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
the body are changed (unless the loop asks, below): a write could alias a prefetched
address.

On a target that copies from global to shared memory asynchronously (``cp_async``: PTX
``cp.async``, sm_80 and up), loads that go straight into a tensor-core dot (on Hopper, also
into a wgmma dot through a transpose) as 2-D tiles of 16-bit elements, zero where masked
off and read in runs of at least 4 bytes along their rows, skip the registers (Triton's
multi-buffering): each gets a ``tile.shared_alloc`` of ``num_stages`` tiles (128-byte
swizzled, or rows padded, as ``ldmatrix`` reads them), the prologue copies iterations
``0 .. S-2`` into stages ``0 .. S-2``, one group per iteration, and iteration ``i`` waits
for its group (``tile.async_wait S-2``, which also waits for every thread), reads stage
``i % S`` (``tile.shared_read``) and copies iteration ``i + S - 1`` into the stage iteration
``i - 1`` read. Registers stay free for the accumulator, and the copies of ``S - 1``
iterations are in flight during the math. On Hopper, from 3 stages, a lone dot reading
both operands in place runs on into the next iteration (``tile.async_dot``: the next waits
for all but its latest wgmma), the refill of stage ``i - 1`` issued after that wait and a
barrier (Triton's order); dots of a loop with several (attention) run on from 4 stages,
the copies ``S - 2`` iterations ahead. On Hopper one stage may serve several dots
(attention's backward reads a block of keys as B and as B transposed), and a load that
reaches a dot only through other math (the log-sum-exp a score is shifted by) is
prefetched into registers beside the stages, one iteration ahead.

A loop that asks for pipelining (``tl.range(..., num_stages=S)``: the ``tile.num_stages``
attribute) gets more: every qualifying ``tile.load`` of its body moves ``S - 1``
iterations ahead, whatever reads it, also where the body writes memory. Asking is the
kernel author's promise, as in Triton, that no iteration loads what an earlier iteration
of the loop writes (stores, atomics): its loads are issued ``S - 1`` iterations early,
before those writes. (A load after a write of its own iteration stays where it is, and
so does a load whose address is the same in every iteration.) Its step may be known only
at run time (a persistent loop's ``tl.num_programs``): the prefetches are then also
masked off where ``k * step`` could wrap. With ``cp_async``, a 1-D or 2-D tile read in
runs of at least 4 bytes waits in shared memory (``SameStagePipeliner``): a ring of
``S - 1`` stages that asynchronous copies fill ``S - 1`` iterations ahead; iteration ``i``
reads its stage whole into registers (each thread its own elements, in the layout the
tile's users give it), waits again so that every thread has, and copies iteration
``i + S - 1`` into that stage. Lanes masked off, which a copy fills with zeros, get the
load's ``other`` (-inf in a softmax) back by a select. One iteration's stages may take
``STAGED_BYTES``: past that fewer iterations are copied ahead, or none. The other loads
(all of them without ``cp_async``, narrower runs, scalars, and those of a loop whose dot
operands wait in stages already) wait in registers, as above.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, TensorType, UnitAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import MemoryEffectKind, get_effects

from compiler.passes.assign_layouts import (
    WGMMA_SM,
    WGMMA_STAGING_BYTES,
    access_vec,
    blocked_layout,
    mma_layout,
    wgmma_ok,
)
from compiler.passes.axis_info import AxisInfoAnalysis, bits_of
from compiler.passes.lower_array_views import is_unit, lower_view_access
from compiler.passes.pipeliners import (
    AsyncPipeliner,
    Pipeliner,
    RefillAfterDotPipeliner,
    SameStagePipeliner,
    Slice,
    TmaPipeliner,
    TmaRefillAfterDotPipeliner,
    body_slice,
)
from compiler.passes.running_dots import may_run_on, source
from dialects import tile
from dialects.tile.async_copy import ASYNC_DOT_ATTR, SWIZZLE_BYTES

CP_ASYNC_SM = 80  # the first SM version with cp.async
CP_ASYNC_BITS = 128  # the widest copy
MIN_COPY_BITS = 32  # the narrowest
MAX_BOX = 256  # rows of a TMA box
TMA_ALIGN = 16  # bytes: a tensor map's base and row strides
# The stages a loop's loads read whole may take (``_pipeline_rest``): what leaves the
# kernel its own shared memory on every GPU with cp.async (99 KiB a program on sm_86/89)
STAGED_BYTES = 96 * 1024


def _positive_step(loop: scf.ForOp) -> int | None:
    step = loop.step.owner
    if isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr):
        value = step.value.value.data
        return value if value > 0 else None
    return None


def _writes(op: Operation) -> bool:
    """Whether ``op`` or an op nested in it may write memory."""
    for inner in op.walk():
        if isinstance(inner, tile.LoadOp | tile.ViewLoadOp) or inner.regions:  # nested: walked
            continue
        effects = get_effects(inner)
        if effects is None or any(e.kind == MemoryEffectKind.WRITE for e in effects):
            return True
    return False


def _writes_memory(loop: scf.ForOp) -> bool:
    return any(_writes(op) for op in loop.body.block.ops)


def _early_loads(body: Block) -> list[tile.LoadOp | tile.ViewLoadOp]:
    """The loads of ``body`` that come before its first write (prefetched, a load after
    one would no longer see what its own iteration wrote)."""
    loads = []
    for op in body.ops:
        if isinstance(op, tile.LoadOp | tile.ViewLoadOp):
            loads.append(op)
        elif _writes(op):
            break
    return loads


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


def _advanceable(body: Block) -> dict[BlockArgument, Slice]:
    """The iter_args whose next value is a pure function of the induction variable, outer
    values and advanceable iter_args, with the slice computing it (a fixed point)."""
    iv, *carried = body.args
    yielded = body.last_op.operands
    found = {a: s for a in carried if (s := body_slice([yielded[a.index - 1]], body)) is not None}
    while True:
        ok = {a: s for a, s in found.items() if s.args <= found.keys() | {iv}}
        if len(ok) == len(found):
            return ok
        found = ok


def tma_box(rows: int, cols: int, bits: int) -> bool:
    """Whether TMA moves a ``rows`` x ``cols`` tile of ``bits``-bit elements in swizzled
    boxes: whole 128-byte atoms wide, rows in eights and at most a box."""
    return rows % 8 == 0 and rows <= MAX_BOX and cols * bits % (8 * SWIZZLE_BYTES) == 0


def _copyable(load: tile.LoadOp, num_warps: int, facts: AxisInfoAnalysis,
              wgmma: bool) -> bool:
    """Whether ``load`` can go to shared memory by asynchronous copies: a 2-D tile of 16-bit
    elements (what ``ldmatrix`` reads as staged), zero where masked off, used only as an
    operand of a dot that will run on tensor cores, and read in runs of at least 4 bytes
    along its rows (``cp.async`` copies 4, 8 or 16 bytes: a tile contiguous down its
    columns would be copied element by element). For ``wgmma`` it may also be read through
    a transpose (K as attention's B, dy as A of a linear layer's weight gradient), and by
    several dots of the loop, as long as none of them reads it as A in place (whose rows
    a stage permutes) while another reads it otherwise: attention's backward reads K once
    as B and once as B transposed, from the same stage."""
    t = load.result.type
    reads = _dot_reads(load)
    if (not isinstance(t, TensorType) or len(t.get_shape()) != 2
            or bits_of(t.element_type) != 16 or not tile.is_zero(load.other) or not reads
            or len(reads) > 1 and not (wgmma and len({r.in_place_a for r in reads}) == 1)):
        return False
    for r in reads:
        if not (r.dot.parent is load.parent
                and (len(reads) == 1 and not r.transposed
                     or wgmma and wgmma_ok(r.dot, num_warps))
                and mma_layout(r.dot, num_warps, WGMMA_SM if wgmma else CP_ASYNC_SM)
                is not None):
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


@dataclass(frozen=True)
class DotRead:
    """One read of a loaded tile by a dot: as operand ``index``, perhaps through a
    transpose."""

    dot: tile.DotOp
    index: int
    transposed: bool

    @property
    def in_place_a(self) -> bool:
        return self.index == 0 and not self.transposed


def _dot_reads(load: tile.LoadOp | tile.ViewLoadOp) -> list[DotRead]:
    """Every read of ``load`` by a dot, as an operand or through a transpose (a warpgroup
    dot then reads B K-major, A by transposing loads into registers); none if anything
    else reads it."""
    reads = []
    for use in load.result.uses:
        user = use.operation
        through = list(user.result.uses) if isinstance(user, tile.TransOp) else [use]
        for u in through:
            if not (isinstance(u.operation, tile.DotOp) and u.index < 2):
                return []
            reads.append(DotRead(u.operation, u.index, u is not use))
    return reads


def _dots_of(load: tile.LoadOp | tile.ViewLoadOp) -> set[tile.DotOp]:
    return {r.dot for r in _dot_reads(load)}


def _in_registers(dot: tile.DotOp, loads: list) -> int:
    """The bytes of ``dot``'s operands that none of ``loads`` stages (A or B may be the
    transpose of one): wgmma reads them from a buffer every thread stores them to."""
    return sum(prod(v.type.get_shape()) * bits_of(v.type.element_type) // 8  # pyright: ignore
               for v in (source(dot.a), source(dot.b)) if v.owner not in loads)


def _by_tma(loads: list, num_warps: int, facts: AxisInfoAnalysis) -> bool:
    """Whether TMA can fill the stages of every load feeding the loop's dots: all of them
    array-view loads it can copy, each read by a dot wgmma runs (their other operands
    may be in registers: P in attention)."""
    return all(isinstance(ld, tile.ViewLoadOp) and _tma_view(ld, facts) and _dots_of(ld)
               and all(wgmma_ok(d, num_warps) for d in _dots_of(ld)) for ld in loads)


def _closure(args: set[BlockArgument], movable: dict[BlockArgument, Slice]) -> set:
    """``args`` and the iter_args their advance reads, transitively."""
    while True:
        more = args.union(*(movable[a].args for a in args)) & movable.keys()
        if more == args:
            return args
        args = more


def _args(loop: scf.ForOp, step: int | None, depth: int, loads: list,
          slices: dict, movable: dict[BlockArgument, Slice]) -> list:
    """A pipeliner's arguments for prefetching ``loads`` (their ``slices`` qualify): the
    iter_args their addresses read, with those their advance reads in turn, and the ops
    computing the advance."""
    body = loop.body.block
    carried = _closure(set().union(*(slices[ld].args for ld in loads)) & movable.keys(),
                       movable)
    advance = {op for a in carried for op in movable[a].ops}
    return [loop, step, depth, loads, [a for a in body.args[1:] if a in carried],
            [op for op in body.ops if op in advance]]


def _pipeline_dots(loop: scf.ForOp, step: int | None, depth: int,
                   facts: AxisInfoAnalysis | None, num_warps: int,
                   wgmma: bool) -> scf.ForOp | None:
    """Prefetch ``loop``'s dot operands (the loop in its place), or None if none is."""
    body = loop.body.block
    movable = _advanceable(body)
    slices = {op: body_slice(op.operands, body) for op in _early_loads(body)
              if _feeds_dot(op, body)}
    loads = [op for op, s in slices.items()
             if s is not None and s.args <= movable.keys() | {body.args[0]}]
    views = [op for op in slices if isinstance(op, tile.ViewLoadOp)]
    tma = (wgmma and facts is not None and len(loads) == len(slices)
           and _by_tma(loads, num_warps, facts))
    if views and not tma:
        for view in views:  # not for TMA: the pointers and masks they stand for
            lower_view_access(view)
        return _pipeline_dots(loop, step, depth, _refreshed(loop, facts), num_warps, wgmma)
    if not loads:
        return None
    # operands read as they are loaded may be staged; a load that reaches a dot only
    # through other math (attention's log-sum-exp) waits in registers beside them, one
    # iteration ahead: each iteration more is as many registers again for the loop to
    # carry (at 5 stages tutorial 06's backward carried 64 a thread and spilled), and an
    # iteration of staged dots is long enough for a load to land
    direct = loads if tma else [ld for ld in loads if _dot_reads(ld)]
    if not (tma or facts is not None and direct
            and all(_copyable(ld, num_warps, facts, wgmma) for ld in direct)):
        return Pipeliner(*_args(loop, step, depth, loads, slices, movable)).run()
    staged = _stage(loop, step, depth, direct, slices, movable, num_warps, tma, wgmma)
    rest = [ld for ld in loads if ld not in direct]
    if rest:
        staged = Pipeliner(*_args(staged, step, 1, rest, slices,
                                  _advanceable(staged.body.block))).run()
    return staged


def _stage(loop: scf.ForOp, step: int | None, depth: int, loads: list, slices: dict,
           movable: dict[BlockArgument, Slice], num_warps: int, tma: bool,
           wgmma: bool) -> scf.ForOp:
    """``loads``, each read by dots alone, prefetched into shared-memory stages (the loop
    in its place)."""
    args = _args(loop, step, depth, loads, slices, movable)
    dots = set().union(*(_dots_of(ld) for ld in loads))
    wgmma = tma or wgmma and all(
        wgmma_ok(d, num_warps) and _in_registers(d, loads) <= WGMMA_STAGING_BYTES  # pyright: ignore
        for d in dots)
    # a dot may run on into the next iteration only if it reads stages alone (an operand
    # in registers is stored into the dot's buffer again in the next iteration; attention's
    # P, taken as register fragments, is not). From cp.async stages a dot whose A is read
    # in place (on an H200: 960 products of 12 tiles, 4 shapes, f16 and bf16, right and the
    # same over five launches, both refills) or is another dot's accumulator in registers
    # (attention's P and dS, as Triton's backward runs them); not a transposed A that
    # ldmatrix reads from the stage into registers: that gave wrong products running on at
    # 4 stages (right at 2, and from TMA stages).
    running = [d for d in dots if may_run_on(d, loads)
               and (tma or wgmma and (d.a.owner in loads or source(d.a).owner not in loads))]
    # Triton's refill for one dot, from cp.async or TMA stages: at 3 stages running on, 2
    # iterations ahead (a refill at the top would leave a 48 KiB TMA stage 1 iteration to
    # land, which it outlasts: 128x256x64 f16 on an H200 took 233 us so, 208 us refilled
    # after the dot; 128x128 at 8 warps and 4 stages 282 -> 253 us). Dots of a loop with
    # several (attention) run on from 4 stages, the loads 2 iterations ahead.
    after_dot = (len(dots) == len(running) == 1 and depth >= 2
                 and running[0].parent is loop.body.block)  # not in a nested loop
    if not after_dot and depth <= 2:
        running = []
    for d in running:
        d.attributes[ASYNC_DOT_ATTR] = UnitAttr()
    if after_dot:
        refill = TmaRefillAfterDotPipeliner if tma else RefillAfterDotPipeliner
        return refill(*args, dot=running[0], wgmma_warps=num_warps).run()
    lag = int(bool(running))
    args[2] = depth - lag  # the same number of stages: one more is still being read
    pipeliner = TmaPipeliner if tma else AsyncPipeliner
    return pipeliner(*args, wgmma_warps=num_warps if wgmma else 0, lag=lag).run()


def _stageable(load: tile.LoadOp, num_warps: int, facts: AxisInfoAnalysis) -> bool:
    """Whether ``load`` can wait in a stage that its iteration reads whole into registers:
    a tile of 1 or 2 dimensions (a stage's rows), read in runs of at least 4 bytes
    (``cp.async``'s narrowest copy; a run that still ends up narrower is loaded and stored
    by the lowering)."""
    t = load.result.type
    if not isinstance(t, TensorType) or len(t.get_shape()) not in (1, 2):
        return False
    bits = bits_of(t.element_type)
    layout = blocked_layout(t.get_shape(), num_warps, bits)
    return access_vec(load, layout, facts, CP_ASYNC_BITS) * bits >= MIN_COPY_BITS


def _tile_bytes(load: tile.LoadOp) -> int:
    t = load.result.type
    return prod(t.get_shape()) * bits_of(t.element_type) // 8  # pyright: ignore


def _pipeline_rest(loop: scf.ForOp, others: list[tile.LoadOp], step: int | None,
                   depth: int, facts: AxisInfoAnalysis | None, num_warps: int) -> bool:
    """Prefetch ``others``, loads of ``loop`` that feed no dot (it asked for pipelining
    itself): with ``facts`` (a target with ``cp.async``) into ``SameStagePipeliner``
    stages where they can go (``_stageable``), as many iterations ahead as
    ``STAGED_BYTES`` allows (none: left as they are); the others into registers. A load
    whose address is the same in every iteration is left alone: it has nothing to gain."""
    body = loop.body.block
    movable = _advanceable(body)
    slices = {op: body_slice(op.operands, body) for op in others}
    loads = [op for op, s in slices.items()
             if s is not None and s.args and s.args <= movable.keys() | {body.args[0]}]
    staged = [ld for ld in loads if facts is not None and _stageable(ld, num_warps, facts)]
    ahead = min(depth, STAGED_BYTES // max(1, sum(_tile_bytes(ld) for ld in staged)))
    if staged and ahead:
        loop = SameStagePipeliner(*_args(loop, step, ahead, staged, slices, movable)).run()
        movable = _advanceable(loop.body.block)  # of the loop as it is now
    rest = [ld for ld in loads if ld not in staged]
    if rest:
        Pipeliner(*_args(loop, step, depth, rest, slices, movable)).run()
    return bool(rest or staged and ahead)


def pipeline(loop: scf.ForOp, depth: int, facts: AxisInfoAnalysis | None = None,
             num_warps: int = 4, wgmma: bool = False, explicit: bool = False) -> bool:
    """Prefetch ``loop``'s dot operands ``depth`` iterations ahead (into shared memory if
    ``facts`` are given and they all can go there; swizzled for Hopper's wgmma if
    ``wgmma``); with ``explicit`` (the loop's own ``num_stages``) its other loads too, also
    in a body that writes memory; False if it is left unchanged."""
    step = _positive_step(loop)
    runtime_step = explicit and not isinstance(loop.step.owner, arith.ConstantOp)
    body = loop.body.block
    iv_type = body.args[0].type
    if (not (step or runtime_step) or not isinstance(iv_type, IntegerType)
            or not explicit and _writes_memory(loop)
            or step and depth * step >= 2 ** (iv_type.width.data - 1)):
        return False
    others = [op for op in _early_loads(body)  # as written: not the dots' prefetches
              if isinstance(op, tile.LoadOp) and not _feeds_dot(op, body)] if explicit else []
    piped = _pipeline_dots(loop, step, depth, facts, num_warps, wgmma)
    if not explicit:
        return piped is not None
    # one count of copy groups per loop: where the dots' operands are staged, the rest
    # waits in registers
    staged = piped is not None and any(isinstance(op, tile.AsyncWaitOp | tile.BarrierWaitOp)
                                       for op in piped.body.block.ops)
    rest = _pipeline_rest(piped or loop, others, step, depth, None if staged else facts,
                          num_warps)
    return rest or piped is not None


@dataclass(frozen=True)
class PipelineLoads(ModulePass):
    """Prefetch the loads feeding dots ``num_stages - 1`` iterations ahead (1: off; a loop's
    ``tile.num_stages`` attribute, from ``tl.range``, overrides ``num_stages`` and asks for
    all its loads to be prefetched); with ``cp_async`` (the SM version whose ``cp.async``
    may be used, 80 and up; 0: none) into shared-memory stages, swizzled for wgmma where it
    is 90 and the dot allows."""

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
            explicit = isinstance(stages, IntegerAttr)
            depth = (stages.value.data if explicit else self.num_stages) - 1
            if depth > 0:
                pipeline(loop, depth, facts, self.num_warps, self.cp_async >= WGMMA_SM,
                         explicit)
