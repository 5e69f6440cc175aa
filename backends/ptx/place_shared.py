"""place-shared: SIMT IR -> the same, every ``simt.shared_alloc`` of a kernel given its byte
``offset`` in the program's shared memory; buffers in use at different times (the stages
of two pipelined loops, one after the other) placed over one another.

A buffer is in use from the first to the last op of the kernel's body that uses it (a
loop, or an ``if``, counts whole). Buffers are placed largest first, each at the lowest
offset of its alignment that overlaps no buffer in use at the same time (first fit).
Where a buffer takes bytes that one in use earlier had, a barrier goes before its first
use: every thread is done with the earlier buffer (its TMA copies and wgmma reads were
waited for by the loop that used it) before anything is written over it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from backends.ptx.lower_core import shared_footprint
from dialects import simt


@dataclass
class _Buffer:
    alloc: simt.SharedAllocOp
    size: int
    align: int
    first: int  # index in the body of the first and last op using it
    last: int
    offset: int = 0

    def overlaps_in_time(self, other: _Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_bytes(self, other: _Buffer) -> bool:
        return (self.offset < other.offset + other.size
                and other.offset < self.offset + self.size)


def _top(op: Operation, body: dict[Operation, int]) -> Operation:
    """The op of the kernel's body holding ``op``."""
    while op.parent_op() is not None and op not in body:
        op = op.parent_op()  # pyright: ignore[reportAssignmentType]
    return op


def _buffers(kernel: func.FuncOp) -> list[_Buffer]:
    index = {op: i for i, op in enumerate(kernel.body.block.ops)}
    out = []
    for op in kernel.walk():
        if not isinstance(op, simt.SharedAllocOp):
            continue
        size, align = shared_footprint(op)
        size = -(-size // 16) * 16
        users = [index[_top(u.operation, index)] for u in op.result.uses] or [index[op]]
        out.append(_Buffer(op, size, align, min(users), max(users)))
    return out


def _place(buffers: list[_Buffer]) -> None:
    """First fit, largest first, among the buffers in use at the same time."""
    placed: list[_Buffer] = []
    for b in sorted(buffers, key=lambda b: (-b.size, b.first)):
        taken = sorted((p.offset, p.offset + p.size) for p in placed if p.overlaps_in_time(b))
        offset = 0
        for start, end in taken:
            if offset + b.size <= start:
                break
            offset = max(offset, -(-end // b.align) * b.align)
        b.offset = offset
        placed.append(b)


def place_kernel(kernel: func.FuncOp) -> None:
    buffers = _buffers(kernel)
    _place(buffers)
    body = list(kernel.body.block.ops)
    reused = {b.first for b in buffers
              if any(a.last < b.first and a.overlaps_in_bytes(b) for a in buffers)}
    for i in sorted(reused):
        barrier = simt.BarrierOp()
        barrier.location = body[i].location
        Rewriter.insert_op(barrier, InsertPoint.before(body[i]))
    for b in buffers:
        b.alloc.properties["offset"] = IntegerAttr(b.offset, i32)


@dataclass(frozen=True)
class PlaceShared(ModulePass):
    """Give every shared buffer its offset, sharing bytes between buffers used apart."""

    name = "place-shared"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.ops:
            if isinstance(kernel, func.FuncOp):
                place_kernel(kernel)
