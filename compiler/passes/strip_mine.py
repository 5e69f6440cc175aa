"""strip-mine: tile IR -> tile IR in which a large 1-D elementwise tile is worked through
in chunks by an ``scf.for`` instead of all at once.

A thread of a SIMT target owns ``N / threads`` elements of an ``N``-element tile, and the
lowering gives each of them its own instructions: a 131,072-element tile at 4 warps is
1,024 copies of the kernel's body per thread, a shader the driver takes minutes to
compile and registers no GPU has (ARCHITECTURE, "Compile time is part of performance").
Here, where a thread would own more than ``MAX_PER_THREAD`` elements, the ops making up an
elementwise computation of such a tile (ranges, splats, ``arith``/``math``, comparisons,
selects, pointer arithmetic, loads and stores) move into a loop over chunks of
``CHUNK_PER_THREAD`` elements per thread: ``tile.range s, s + N`` becomes ``tile.range s,
s + C`` plus the chunk's start, every other op the same on ``C`` elements.

The GPU backends order a thread's accesses, not those of different elements of one tile
(no barrier parts a tile's load from a later store), and each element's ops stay in their
order within its chunk: what the GPU guarantees is unchanged. A computation qualifies
when none of its tiles is used outside it (no reduction, reshape or loop value reads
them) and no op with memory effects sits between its ops in the block. The NumPy backend
runs the tile IR as written and skips this pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from compiler.passes.layouts import WARP_SIZE
from dialects import tile

MAX_PER_THREAD = 64  # elements a thread may own before its tile is strip-mined
CHUNK_PER_THREAD = 16  # elements per thread in each iteration of the chunk loop
_ELEMENTWISE = (tile.CmpIOp, tile.CmpFOp, tile.SelectOp, tile.UMulHiOp, tile.AddPtrOp,
                tile.LoadOp, tile.StoreOp, tile.SplatOp, tile.RangeOp)


def _length(t: Attribute) -> int | None:
    """The length of a 1-D tile type, else None."""
    if isinstance(t, TensorType) and len(t.get_shape()) == 1:
        return t.get_shape()[0]
    return None


def _wide_op(op: Operation, n: int) -> bool:
    """Whether ``op`` is an elementwise op on ``n``-element tiles (scalars allowed in)."""
    if op.regions or not (isinstance(op, _ELEMENTWISE) or op.name.startswith(("arith.",
                                                                                 "math."))):
        return False
    if isinstance(op, arith.ConstantOp):  # only a splat constant has a chunk of itself
        value = op.value
        return isinstance(value, DenseIntOrFPElementsAttr) and value.is_splat() \
            and _length(op.result.type) == n
    shaped = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
    return bool(shaped) and all(_length(t) == n for t in shaped) and (
        isinstance(op, tile.StoreOp) or bool(op.results))


def _region(block: Block, n: int) -> list[Operation] | None:
    """The ops of ``block`` computing with ``n``-element tiles, if they qualify."""
    ops = [op for op in block.ops if any(_length(r.type) == n for r in op.results)
           or isinstance(op, tile.StoreOp) and _length(op.value.type) == n]
    if not ops or not all(_wide_op(op, n) for op in ops):
        return None
    inside = set(ops)
    if any(use.operation not in inside for op in ops for r in op.results for use in r.uses):
        return None  # a tile read outside: a reduction, a loop's value...
    if any(_length(v.type) == n and v.owner not in inside for op in ops for v in op.operands):
        return None  # a tile made outside: from before the loop this block is the body of
    first, last = block.get_operation_index(ops[0]), block.get_operation_index(ops[-1])
    between = [op for op in list(block.ops)[first:last] if op not in inside]
    if any(op.regions or not is_side_effect_free(op) for op in between):
        return None
    return ops


def _chunk_type(t: Attribute, n: int, chunk: int) -> Attribute:
    if _length(t) == n:
        assert isinstance(t, TensorType)
        return TensorType(t.element_type, [chunk])
    return t


def _chunked(op: Operation, mapping: dict[SSAValue, SSAValue], start: SSAValue, n: int,
             chunk: int, point: InsertPoint) -> None:
    """``op`` on the chunk at ``start``, inserted at ``point``."""
    if isinstance(op, tile.RangeOp):
        first = op.start.value.data
        local = tile.RangeOp(first, first + chunk)
        at = tile.SplatOp(start, local.result.type)
        moved = arith.AddiOp(local.result, at.result)
        Rewriter.insert_op([local, at, moved], point)
        mapping[op.result] = moved.result
        return
    if isinstance(op, arith.ConstantOp):
        assert isinstance(op.value, DenseIntOrFPElementsAttr)
        rtype = _chunk_type(op.result.type, n, chunk)
        value = next(iter(op.value.iter_values()))
        new = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            rtype, [value] * chunk))  # pyright: ignore[reportArgumentType]
    else:
        new = op.create(operands=[mapping.get(v, v) for v in op.operands],
                        result_types=[_chunk_type(r.type, n, chunk) for r in op.results],
                        properties=dict(op.properties), attributes=dict(op.attributes))
    Rewriter.insert_op(new, point)
    mapping.update(zip(op.results, new.results, strict=True))


def strip_mine(ops: list[Operation], n: int, chunk: int) -> None:
    """Replace ``ops`` (a qualifying region of ``n``-element tiles) by a loop over chunks
    of ``chunk`` elements, where the last of them was."""
    bounds = [arith.ConstantOp(IntegerAttr(v, i32)) for v in (0, n, chunk)]
    body = Block(arg_types=[i32])
    loop = scf.ForOp(*(c.result for c in bounds), [], body)
    Rewriter.insert_op([*bounds, loop], InsertPoint.after(ops[-1]))
    mapping: dict[SSAValue, SSAValue] = {}
    point = InsertPoint.at_end(body)
    for op in ops:
        _chunked(op, mapping, body.args[0], n, chunk, point)
    Rewriter.insert_op(scf.YieldOp(), point)
    for op in reversed(ops):
        Rewriter.erase_op(op)


@dataclass(frozen=True)
class StripMine(ModulePass):
    """Loop over chunks of 1-D elementwise tiles too large for ``num_warps`` warps."""

    name = "strip-mine"
    num_warps: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        threads = WARP_SIZE * self.num_warps
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        for block in blocks:
            for n in sorted({_length(r.type) or 0 for o in block.ops for r in o.results},
                            reverse=True):
                if n > MAX_PER_THREAD * threads and (ops := _region(block, n)) is not None:
                    strip_mine(ops, n, CHUNK_PER_THREAD * threads)
