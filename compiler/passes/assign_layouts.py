"""assign-layouts: tile IR -> tile IR with layouts.

Gives every tensor type a ``#tile.blocked`` encoding (how a tile is spread over the threads
of a program), one layout per shape so elementwise ops keep matching types, sets ``vec``
on every ``tile.load``/``tile.store`` of a tile (how many neighbouring elements move as one
access, from the contiguity/divisibility analysis) and records the thread count as
``{simt.num_warps = W : i32}`` on the kernel for ``tile-to-simt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from compiler.errors import CompileError
from compiler.passes.axis_info import AxisInfoAnalysis, bits_of
from dialects.tile import BlockedLayoutAttr, LoadOp, StoreOp

WARP_SIZE = 32
DEFAULT_ELEM_BITS = 32
NUM_WARPS_ATTR = "simt.num_warps"


def _distribute(total: int, caps: Sequence[int], order: Sequence[int]) -> list[int]:
    """Split ``total`` (a power of two) over dims in ``order``, each up to its cap; the
    last dim in ``order`` takes what is left (replicating when the tile is too small)."""
    out = [1] * len(caps)
    left = total
    for d in order[:-1]:
        out[d] = max(1, min(left, caps[d]))
        left //= out[d]
    out[order[-1]] = left
    return out


def blocked_layout(shape: Sequence[int], num_warps: int, elem_bits: int = DEFAULT_ELEM_BITS,
                   vector_bits: int = 128) -> BlockedLayoutAttr:
    """The default layout of a tile: the last dim is fastest. A thread holds up to one
    ``vector_bits`` access of the last dim (no more than its share of the tile), then
    threads of a warp go along the last dim, then earlier dims; warps fill dim 0 first."""
    rank = len(shape)
    threads = WARP_SIZE * num_warps
    spt = [1] * rank
    spt[-1] = max(1, min(vector_bits // elem_bits, prod(shape) // threads, shape[-1]))
    fastest_first = list(range(rank - 1, -1, -1))
    tpw = _distribute(WARP_SIZE, [shape[d] // spt[d] for d in range(rank)], fastest_first)
    per_warp = [shape[d] // (spt[d] * tpw[d]) for d in range(rank)]
    wpc = _distribute(num_warps, per_warp, list(range(rank)))
    return BlockedLayoutAttr(spt, tpw, wpc)


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def access_vec(op: LoadOp | StoreOp, layout: BlockedLayoutAttr, facts: AxisInfoAnalysis,
               vector_bits: int) -> int:
    """Elements per access: within one thread's run, contiguous, aligned, one mask value,
    and at most ``vector_bits`` wide."""
    pointee = op.ptr.type.element_type.pointee  # pyright: ignore[reportAttributeAccessIssue]
    ptr = facts[op.ptr]
    limits = [layout.spt[-1], ptr.contiguity[-1], ptr.divisibility[-1],
              max(1, vector_bits // bits_of(pointee))]
    if op.mask is not None:
        limits.append(facts[op.mask].constancy[-1])
    return _pow2_floor(min(limits))


def _access_bits(f: func.FuncOp) -> dict[tuple[int, ...], int]:
    """Widest element loaded or stored, per tile shape."""
    widest: dict[tuple[int, ...], int] = {}
    for op in f.walk():
        if isinstance(op, LoadOp | StoreOp) and isinstance(op.ptr.type, TensorType):
            shape = op.ptr.type.get_shape()
            bits = bits_of(op.ptr.type.element_type.pointee)  # pyright: ignore
            widest[shape] = max(widest.get(shape, 0), bits)
    return widest


def _with_layout(t: Attribute, layouts: dict[tuple[int, ...], BlockedLayoutAttr]) -> Attribute:
    if not isinstance(t, TensorType):
        return t
    return TensorType(t.element_type, t.get_shape(), layouts[t.get_shape()])


def _retype(op: Operation, layouts: dict[tuple[int, ...], BlockedLayoutAttr]) -> None:
    """Put the layouts on every tensor result, block argument and dense constant of ``op``."""
    for res in op.results:
        if isinstance(res.type, TensorType):
            Rewriter.replace_value_with_new_type(res, _with_layout(res.type, layouts))
    for region in op.regions:
        for block in region.blocks:
            for arg in block.args:
                if isinstance(arg.type, TensorType):
                    Rewriter.replace_value_with_new_type(arg, _with_layout(arg.type, layouts))
    value = op.properties.get("value")
    if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(value.type, TensorType):
        new_type = _with_layout(value.type, layouts)
        op.properties["value"] = DenseIntOrFPElementsAttr(new_type, BytesAttr(value.data.data))


def _tile_shapes(f: func.FuncOp) -> set[tuple[int, ...]]:
    shapes = set()
    for op in f.walk():
        values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.args]
        shapes |= {v.type.get_shape() for v in values if isinstance(v.type, TensorType)}
    return shapes


@dataclass(frozen=True)
class AssignLayouts(ModulePass):
    """Blocked layouts for every tile, ``vec`` for every tile access."""

    name = "assign-layouts"

    num_warps: int = 4
    vector_bits: int = 128

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_warps < 1 or self.num_warps & (self.num_warps - 1):
            raise CompileError(f"num_warps must be a power of two, got {self.num_warps}")
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                self._run(f)

    def _run(self, f: func.FuncOp) -> None:
        bits = _access_bits(f)
        layouts = {
            shape: blocked_layout(shape, self.num_warps, bits.get(shape, DEFAULT_ELEM_BITS),
                                  self.vector_bits)
            for shape in _tile_shapes(f)
        }
        facts = AxisInfoAnalysis(f)
        for op in f.walk():
            if isinstance(op, LoadOp | StoreOp) and isinstance(op.ptr.type, TensorType):
                vec = access_vec(op, layouts[op.ptr.type.get_shape()], facts, self.vector_bits)
                op.properties["vec"] = IntegerAttr(vec, i32)
        for op in list(f.walk()):
            _retype(op, layouts)
        f.attributes[NUM_WARPS_ATTR] = IntegerAttr(self.num_warps, i32)

