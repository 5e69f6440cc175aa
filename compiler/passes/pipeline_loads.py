"""pipeline-loads: tile IR -> tile IR whose ``scf.for`` loops prefetch their dot operands.

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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp, TensorType, i1
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import MemoryEffectKind, get_effects, is_side_effect_free

from dialects import tile

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
        if isinstance(op, tile.LoadOp) or op.regions:  # nested ops are walked themselves
            continue
        effects = get_effects(op)
        if effects is None or any(e.kind == MemoryEffectKind.WRITE for e in effects):
            return True
    return False


def _feeds_dot(load: tile.LoadOp, body: Block) -> bool:
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

    def _load(self, state: State, live: SSAValue, point: InsertPoint) -> list[SSAValue]:
        """The loads of the iteration ``state`` describes, masked off where not ``live``
        (a masked-off lane reads ``other``, and nobody reads it)."""
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
            out.append(_insert(tile.LoadOp(ptr, on, other), point, ld))
        return out

    def _prologue(self) -> list[list[SSAValue]]:
        """Loads of iterations ``lb .. lb + (depth-1)*step`` before the loop, per load."""
        loop, point = self.loop, InsertPoint.before(self.loop)
        state: State = {self.iv: loop.lb} | {a: loop.iter_args[a.index - 1]
                                             for a in self.carried}
        first = _insert(tile.CmpIOp("slt", loop.lb, loop.ub), point, loop)
        stages = [self._load(state, first, point)]
        for i in range(1, self.depth):
            state = self._next(state, point)
            live = arith.AndIOp(first, self._before_ub(loop.lb, i, point))
            stages.append(self._load(state, _insert(live, point, loop), point))
        return [list(per_load) for per_load in zip(*stages, strict=True)]

    def _steady(self) -> list[SSAValue]:
        """Loads of iteration ``iv + depth*step``, at the top of the body."""
        point = InsertPoint.at_start(self.body)
        state: State = {v: v for v in (self.iv, *self.carried)}
        for _ in range(self.depth):
            state = self._next(state, point)
        return self._load(state, self._before_ub(self.iv, self.depth, point), point)

    def run(self) -> None:
        prologue = self._prologue()
        prefetched = self._steady()
        body, loop = self.body, self.loop
        yielded = list(body.last_op.operands)
        for ld, first, new in zip(self.loads, prologue, prefetched, strict=True):
            slots = [body.insert_arg(ld.result.type, len(body.args)) for _ in first]
            ld.result.replace_all_uses_with(slots[0])
            yielded += [*slots[1:], new]  # the queue moves up one iteration
            Rewriter.erase_op(ld)
        Rewriter.replace_op(body.last_op, scf.YieldOp(*yielded))
        for op in reversed(self.address.ops):  # the original address ops, now dead
            if all(not r.uses for r in op.results):
                Rewriter.erase_op(op)
        inits = [*loop.iter_args, *(v for first in prologue for v in first)]
        new = scf.ForOp(loop.lb, loop.ub, loop.step, inits, loop.detach_region(loop.body))
        new.location = loop.location
        Rewriter.insert_op(new, InsertPoint.before(loop))
        Rewriter.replace_op(loop, [], new.results[:len(loop.results)])


def _closure(args: set[BlockArgument], movable: dict[BlockArgument, _Slice]) -> set:
    """``args`` and the iter_args their advance reads, transitively."""
    while True:
        more = args.union(*(movable[a].args for a in args)) & movable.keys()
        if more == args:
            return args
        args = more


def pipeline(loop: scf.ForOp, depth: int) -> bool:
    """Prefetch ``loop``'s dot operands ``depth`` iterations ahead; False if it is left
    unchanged (nothing qualifies)."""
    step = _positive_step(loop)
    body = loop.body.block
    iv_type = body.args[0].type
    if (step is None or not isinstance(iv_type, IntegerType) or _writes_memory(loop)
            or depth * step >= 2 ** (iv_type.width.data - 1)):
        return False
    movable = _advanceable(body)
    slices = {op: _slice(op.operands, body) for op in body.ops
              if isinstance(op, tile.LoadOp) and _feeds_dot(op, body)}
    loads = [op for op, s in slices.items()
             if s is not None and s.args <= movable.keys() | {body.args[0]}]
    if not loads:
        return False
    carried = _closure(set().union(*(slices[ld].args for ld in loads)) & movable.keys(),
                       movable)
    advance = {op for a in carried for op in movable[a].ops}
    _Pipeliner(loop, step, depth, loads, [a for a in body.args[1:] if a in carried],
               [op for op in body.ops if op in advance]).run()
    return True


@dataclass(frozen=True)
class PipelineLoads(ModulePass):
    """Prefetch the loads feeding dots ``num_stages - 1`` iterations ahead (1: off)."""

    name = "pipeline-loads"
    num_stages: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_stages < 1:
            raise ValueError(f"pipeline-loads: num_stages must be >= 1, got {self.num_stages}")
        if self.num_stages == 1:
            return
        for loop in [o for o in op.walk() if isinstance(o, scf.ForOp)]:
            pipeline(loop, self.num_stages - 1)
