"""tma-stores: tile IR with array views (sm_90) -> the same, with the array-view stores
that TMA can make as ``tile.tma_store``.

Stored element by element from a warpgroup dot's accumulator layout, a tile goes out as
many 4-byte writes per thread, each warp's spread over 8 rows (the 128x256 f16 tile of a
matmul: 64 ``st.global`` per thread, ~20 us of a 4096^3 product on an H200). Through
shared memory and one TMA copy per 128-byte-wide box it is a few bulk writes, clipped to
the array by the hardware (Triton's descriptor stores on Hopper do the same).

A ``tile.view_store`` of a value computed element by element from a dot's result (so in
the dot's layout: elsewhere a thread's elements are neighbours, and stores of them
vectorize) qualifies when TMA can write its tile (a 2-D tile of f16, bf16, f32 or i32,
whole 128-byte atoms wide, at most 256 rows, of an array a tensor map describes:
``pipeline_loads.tma_describes``) and nothing can tell the store is asynchronous: it is
outside loops (one buffer, written once) and no access to memory may follow it (TMA's
writes land after the issuing thread's wait for its reads of the buffer).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from compiler.passes.axis_info import AxisInfoAnalysis, bits_of
from compiler.passes.lower_array_views import element_starts, outside_loops
from compiler.passes.pipeline_loads import tma_box, tma_describes
from dialects import tile

_ELEMENTS = (f16, bf16, f32, i32)  # what tensor maps are made for (``ptx.tensor_maps``)
_ACCESSES = (tile.LoadOp, tile.ViewLoadOp, tile.AtomicRMWOp, tile.AtomicCASOp, tile.StoreOp,
             tile.ViewStoreOp, tile.TmaStoreOp)


def _tma_writable(op: tile.ViewStoreOp, facts: AxisInfoAnalysis) -> bool:
    t, view = op.value.type, op.view.owner
    if not isinstance(t, TensorType) or not isinstance(view, tile.MakeViewOp) \
            or len(t.get_shape()) != 2:
        return False
    (rows, cols), bits = t.get_shape(), bits_of(t.element_type)
    if t.element_type not in _ELEMENTS or not tma_box(rows, cols, bits):
        return False
    return tma_describes(view, bits, facts)


def _from_dot(value: SSAValue) -> bool:
    """Whether ``value`` is computed element by element (ops on tiles of its shape, loops
    handing on what they yield) from a ``tile.dot``'s result."""
    shape, seen, todo = value.type.get_shape(), set(), [value]  # pyright: ignore
    while todo:
        v = todo.pop()
        if v in seen or not isinstance(v.type, TensorType) or v.type.get_shape() != shape:
            continue
        seen.add(v)
        owner = v.owner
        if isinstance(owner, tile.DotOp):
            return True
        if isinstance(owner, scf.ForOp):
            todo.append(owner.body.block.last_op.operands[v.index])  # pyright: ignore
        elif isinstance(owner, Operation) and not owner.regions:
            todo.extend(owner.operands)
    return False


def _later(op: Operation, kernel: func.FuncOp) -> Iterator[Operation]:
    """The ops of ``kernel`` that may run after ``op``: those after it in its block and in
    the blocks around it, with their regions (not the other branch of an ``if``)."""
    while op is not kernel:
        following = op.next_op
        while following is not None:
            yield from following.walk()
            following = following.next_op
        op = op.parent_op()  # pyright: ignore[reportAssignmentType]


def _unobserved(op: tile.ViewStoreOp, kernel: func.FuncOp) -> bool:
    """Outside loops, and no access to memory after it (a load could miss what TMA has
    not yet written; another store could land first)."""
    return outside_loops(op) and not any(isinstance(other, _ACCESSES)
                                         for other in _later(op, kernel))


def _to_tma(op: tile.ViewStoreOp) -> None:
    view = op.view.owner
    assert isinstance(view, tile.MakeViewOp)
    store = tile.TmaStoreOp(op.value, view.base, list(view.shape), list(view.strides),
                            element_starts(op))
    store.location = op.location
    Rewriter.replace_op(op, store)


@dataclass(frozen=True)
class TmaStores(ModulePass):
    """Array-view stores TMA can make, and nobody can tell are asynchronous, by TMA."""

    name = "tma-stores"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, func.FuncOp)]:
            stores = [s for s in kernel.walk() if isinstance(s, tile.ViewStoreOp)]
            if not stores:
                continue
            facts = AxisInfoAnalysis(kernel)
            for store in stores:
                if _tma_writable(store, facts) and _from_dot(store.value) \
                        and _unobserved(store, kernel):
                    _to_tma(store)


__all__ = ["TmaStores"]
