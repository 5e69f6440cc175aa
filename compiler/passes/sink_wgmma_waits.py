"""sink-wgmma-waits: SIMT IR -> SIMT IR in which what does not need a warpgroup MMA's
result is issued before the wait for it.

``tile-to-simt`` waits for each wgmma dot as soon as it is issued (``simt.wgmma_wait 0``
after its group's commit), so the tensor cores run one dot at a time: attention's backward
issues ``dV += P^T dO``, waits, then issues ``dP^T = V dO^T``, which does not read dV, and
waits again. Here the ops after a wait that read none of the results it waits for, nor
anything computed from them, move in front of it, in order: pure ops, loads, and whole
wgmma groups (wgmmas and their commit). The scan stops at the first wgmma that does read
them or at any other op with effects (stores, copies, barriers, fences, loops and
branches), so no write to shared memory moves past a wait while a wgmma may still be
reading it. Where the next wait is reached, nothing is left between the two waits to issue
and the later one goes: one wait then covers both dots, which ran together.

Only blocks whose waits all wait for everything (``pending`` 0) are changed: a group that
runs on into the next iteration (``running_dots``) is waited for by count. Moving ops in
such a loop too (what reads the loop's arguments kept behind each wait) made tutorial 06's
causal forward at head dim 128 wrong on an H200, every time, with only pure ops moved
(mask arithmetic, before the wait for the scores) while the loop's running dot of the
iteration before could still be writing its registers: not understood yet, so nothing
moves while a dot may run on, in such a loop or past the wait that follows one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from dialects import simt

_READS = (simt.LoadOp, simt.SharedLoadOp)  # effects that a pending wgmma does not race


def _pending(wait: simt.WgmmaWaitOp) -> set[SSAValue] | None:
    """The results of the wgmmas issued since the wait before ``wait`` in its block; None
    if a loop or branch comes between (its wgmmas may run on past it, waited for here)."""
    found: set[SSAValue] = set()
    op = wait.prev_op
    while op is not None and not isinstance(op, simt.WgmmaWaitOp):
        if op.regions:
            return None
        if isinstance(op, simt.WgmmaOp):
            found.update(op.results)
        op = op.prev_op
    return found


def _movable(op: Operation) -> bool:
    return not op.regions and (isinstance(op, (*_READS, simt.WgmmaOp, simt.WgmmaCommitOp))
                               or is_side_effect_free(op))


def sink(wait: simt.WgmmaWaitOp) -> None:
    """Issue before ``wait`` what after it reads none of its results (see the module's
    text)."""
    tainted = _pending(wait)
    if tainted is None:
        return
    op = wait.next_op
    while op is not None:
        following = op.next_op
        if isinstance(op, simt.WgmmaWaitOp):
            if op.pending.value.data == 0 and _nothing_issued(wait, op):
                Rewriter.erase_op(op)
            return
        if not _movable(op):
            return
        if any(v in tainted for v in op.operands):
            if isinstance(op, simt.WgmmaOp):
                return
            tainted.update(op.results)
        else:
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(wait))
        op = following


def _nothing_issued(first: Operation, second: Operation) -> bool:
    op = first.next_op
    while op is not second:
        assert op is not None
        if isinstance(op, simt.WgmmaOp | simt.WgmmaCommitOp):
            return False
        op = op.next_op
    return True


def _blocks(root: Operation) -> list[Block]:
    return [b for op in root.walk() for r in op.regions for b in r.blocks]


@dataclass(frozen=True)
class SinkWgmmaWaits(ModulePass):
    """Issue what does not read a wgmma's result before waiting for it."""

    name = "sink-wgmma-waits"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in _blocks(op):
            waits = [o for o in block.ops if isinstance(o, simt.WgmmaWaitOp)]
            if not waits or any(w.pending.value.data for w in waits):
                continue
            for wait in waits:
                if wait.parent is block:  # not erased by an earlier one
                    sink(wait)
