"""Which ``simt.shared_alloc`` buffers of a kernel share one ``var<workgroup>`` array.

WGSL gives every workgroup array storage of its own for the whole dispatch, and lavapipe
gives a workgroup 32 KiB in all: AttentionFMHA's loop, with a buffer for each of its two
row reductions, asked for 64 bytes more. Buffers of one element type used one after the
other share an array (as long as the longest): ``sharing`` maps each buffer to the first
of those it shares with.

Buffer B shares with A where the uses of each (loads and stores alone) lie in one block,
the same for both, all of A's before all of B's, and a ``simt.barrier`` of that block lies
between A's last use and B's first: every thread is done with A before any touches B.
Where the block may run again (it is not the kernel's body), A's next uses follow B's, so
a barrier of the block must also lie before A's first use or after B's last. No barrier
is added: a reduction's exchange has them already (one before its writes in a loop, one
before its reads).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Attribute, Block, Operation

from dialects import simt


@dataclass
class _Span:
    """A buffer's uses, as positions among the ops of the block holding them all."""

    alloc: simt.SharedAllocOp
    block: Block
    first: int
    last: int


@dataclass
class _Group:
    """Buffers sharing one array: the first, and the span of the last to join."""

    head: _Span
    tail: _Span


def sharing(fn: func.FuncOp) -> dict[simt.SharedAllocOp, simt.SharedAllocOp]:
    """Each shared buffer of ``fn`` -> the buffer whose array it uses (itself, or one
    used before it)."""
    out: dict[simt.SharedAllocOp, simt.SharedAllocOp] = {}
    groups: dict[tuple[Block, Attribute], list[_Group]] = {}
    spans = [_span(op) for op in fn.walk() if isinstance(op, simt.SharedAllocOp)]
    for span in sorted((s for s in spans if s is not None), key=lambda s: s.first):
        elem = span.alloc.result.type.element_type
        own = groups.setdefault((span.block, elem), [])
        group = next((g for g in own if _may_follow(g, span, fn)), None)
        if group is None:
            own.append(_Group(span, span))
            out[span.alloc] = span.alloc
        else:
            group.tail = span
            out[span.alloc] = group.head.alloc
    for op in fn.walk():
        if isinstance(op, simt.SharedAllocOp):
            out.setdefault(op, op)
    return out


def _span(alloc: simt.SharedAllocOp) -> _Span | None:
    """Where ``alloc``'s uses lie; None if it has none, or one that is not a load or
    store."""
    users = [use.operation for use in alloc.result.uses]
    if not users or not all(isinstance(u, simt.SharedLoadOp | simt.SharedStoreOp)
                            for u in users):
        return None
    block = _common_block(users)
    at = [_position(u, block) for u in users]
    return _Span(alloc, block, min(at), max(at))


def _blocks_above(op: Operation) -> list[Block]:
    """The blocks holding ``op``, innermost first."""
    out = []
    block = op.parent_block()
    while block is not None:
        out.append(block)
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return out


def _common_block(ops: list[Operation]) -> Block:
    """The innermost block holding every op of ``ops``."""
    shared = set(_blocks_above(ops[0]))
    for op in ops[1:]:
        shared &= set(_blocks_above(op))
    return next(b for b in _blocks_above(ops[0]) if b in shared)


def _position(op: Operation, block: Block) -> int:
    """The index in ``block`` of the op of ``block`` that is or holds ``op``."""
    while op.parent_block() is not block:
        op = op.parent_op()  # pyright: ignore[reportAssignmentType]
    return block.get_operation_index(op)


def _may_follow(group: _Group, span: _Span, fn: func.FuncOp) -> bool:
    """Whether ``span``'s buffer may take the array of ``group``, whose last buffer is
    done with it before ``span`` begins."""
    if group.tail.last >= span.first:
        return False
    barriers = [i for i, op in enumerate(span.block.ops) if isinstance(op, simt.BarrierOp)]
    between = any(group.tail.last < i < span.first for i in barriers)
    if span.block is fn.body.block:
        return between
    wraps = any(i < group.head.first or i > span.last for i in barriers)
    return between and wraps
