"""strip-mine: tile IR -> tile IR in which a large elementwise computation is worked
through in chunks by an ``scf.for`` instead of all at once.

A thread of a SIMT target owns ``N / threads`` elements of an ``N``-element tile, and the
lowering gives each of them its own instructions: a 131,072-element tile at 4 warps is
1,024 copies of the kernel's body per thread, a 128x64 transpose at one warp a 300 KB
shader that lavapipe took 80 s to compile (docs/design.md, "Compile time is part of
performance"). Here, where a thread would own more than ``MAX_PER_THREAD`` elements of a
tile, the computation it is part of (ranges, splats, ``arith``/``math``, comparisons,
selects, pointer arithmetic, loads, stores, and the shape ops ``expand_dims``,
``broadcast`` and ``trans``) moves into a loop over chunks cut along one dimension of
the tile (rows of a 2-D one): of ``CHUNK_PER_THREAD`` elements per thread for a 1-D tile,
of ``MAX_PER_THREAD`` for more dimensions, whose chunks' transposes write rows only as long
as the chunk.

Which dimension of each tile a chunk cuts (its *chunk axis*) follows from the ops: the
operands and result of an elementwise op share it, ``expand_dims`` and ``trans`` move it,
``broadcast`` keeps it or stretches a tile that has none (a row, for chunks of rows). A
tile without a chunk axis (a column offset vector, say) is computed once before the loop,
as written; ``tile.range s, s + N`` along the chunk axis becomes ``tile.range s, s + C``
plus the chunk's start. A computation qualifies when every tile of it has one consistent
chunk axis, none of its chunked tiles is used outside it (no reduction, reshape or loop
value reads them) and no op with memory effects sits between its ops in the block.

The GPU backends order a thread's accesses, not those of different elements of one tile
(no barrier parts a tile's load from a later store), and each element's ops stay in their
order within its chunk: what the GPU guarantees is unchanged. The NumPy backend runs the
tile IR as written and skips this pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

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
_ELEMENTWISE = (tile.CmpIOp, tile.CmpFOp, tile.SelectOp, tile.UMulHiOp, tile.BrevOp,
                tile.ArithFenceOp, tile.FromFp8Op, tile.ToFp8Op, tile.InlineAsmOp, tile.AddPtrOp,
                tile.LoadOp, tile.StoreOp)
_FREE = (tile.SplatOp, tile.RangeOp, arith.ConstantOp)  # no tile operand to agree with
UNCHUNKED = -1  # the chunk axis of a tile computed whole, before the loop


def _shape(v: SSAValue) -> tuple[int, ...] | None:
    return v.type.get_shape() if isinstance(v.type, TensorType) else None


def _movable(op: Operation) -> bool:
    """Whether ``op`` may run on chunks of its tiles."""
    if op.regions:
        return False
    if isinstance(op, arith.ConstantOp):  # only a splat constant has a chunk of itself
        value = op.value
        return isinstance(value, DenseIntOrFPElementsAttr) and value.is_splat()
    return isinstance(op, (*_ELEMENTWISE, *_FREE, tile.ExpandDimsOp, tile.BroadcastOp,
                           tile.TransOp)) or op.name.startswith(("arith.", "math."))


class _Axes:
    """Chunk axes of the tiles of one block, from one tile's, as the ops imply them."""

    def __init__(self, block: Block):
        self.block = block
        self.axes: dict[SSAValue, int] = {}
        self.pending: list[SSAValue] = []

    def set(self, v: SSAValue, axis: int) -> bool:
        """Give ``v`` this axis; False where it has another or cannot have one."""
        known = self.axes.get(v)
        if known is not None:
            return known == axis
        if axis != UNCHUNKED and (v.owner is None or not isinstance(v.owner, Operation)
                                  or v.owner.parent is not self.block):
            return False  # made outside the block: it cannot be cut into chunks
        self.axes[v] = axis
        self.pending.append(v)
        return True

    def solve(self, seed: SSAValue, axis: int) -> bool:
        if not self.set(seed, axis):
            return False
        while self.pending:
            v = self.pending.pop()
            ops = [u.operation for u in v.uses]
            if isinstance(v.owner, Operation):
                ops.append(v.owner)
            if not all(self._visit(op) for op in ops):
                return False
        return True

    def _visit(self, op: Operation) -> bool:
        """Propagate the axes known around ``op`` to its other tiles."""
        tiles = [v for v in (*op.operands, *op.results) if _shape(v) is not None]
        known = [(v, self.axes[v]) for v in tiles if v in self.axes]
        if op.parent is not self.block or not _movable(op):
            return all(axis == UNCHUNKED for _, axis in known)  # reads its tiles whole
        if isinstance(op, tile.ExpandDimsOp | tile.TransOp | tile.BroadcastOp):
            return self._shape_op(op)
        if isinstance(op, tile.RangeOp) and op.result in self.axes:
            return self.axes[op.result] in (0, UNCHUNKED)
        axes = {axis for _, axis in known}
        return len(axes) <= 1 and all(self.set(v, next(iter(axes))) for v in tiles
                                      if axes)

    def _shape_op(self, op: tile.ExpandDimsOp | tile.TransOp | tile.BroadcastOp) -> bool:
        src, res = self.axes.get(op.src), self.axes.get(op.result)
        if isinstance(op, tile.BroadcastOp):
            if src is not None and src != UNCHUNKED:
                return self.set(op.result, src)
            if res is None:
                return True
            if res == UNCHUNKED:
                return self.set(op.src, UNCHUNKED)
            stretched = _shape(op.src)[res] == 1  # a whole row stretched to a chunk of rows
            return self.set(op.src, UNCHUNKED if stretched else res)
        forward, backward = _axis_maps(op)
        if src is not None:
            return self.set(op.result, forward(src))
        return res is None or self.set(op.src, backward(res))


def _axis_maps(op: tile.ExpandDimsOp | tile.TransOp):
    """Where a source axis goes in the result, and back (``UNCHUNKED`` stays)."""
    if isinstance(op, tile.TransOp):
        order = op.permutation
        return (lambda a: a if a == UNCHUNKED else order.index(a),
                lambda a: a if a == UNCHUNKED else order[a])
    d = op.axis.value.data
    return (lambda a: a if a == UNCHUNKED or a < d else a + 1,
            lambda a: UNCHUNKED if a == d else a if a == UNCHUNKED or a < d else a - 1)


def _plan(block: Block, seed: SSAValue, threads: int) -> tuple[_Axes, int, int] | None:
    """Chunk axes for the computation of ``seed``, its dimension's length and the chunk
    length along it, or None where it does not qualify."""
    shape = _shape(seed)
    assert shape is not None
    for axis in range(len(shape)):
        axes = _Axes(block)
        if shape[axis] == 1 or not axes.solve(seed, axis):
            continue
        chunked = {v: a for v, a in axes.axes.items() if a != UNCHUNKED}
        length = shape[axis]
        if any(_shape(v)[a] != length for v, a in chunked.items()):
            continue
        across = prod(shape) // length
        # chunks of a 2-D tile as large as allowed: a transposed chunk of 8 rows stores
        # runs of 8 elements (32 bytes), at 40% of the bandwidth of the whole tile's
        per_thread = CHUNK_PER_THREAD if len(shape) == 1 else MAX_PER_THREAD
        chunk = max(1, per_thread * threads // across)
        if (chunk >= length or length % chunk or across * chunk > MAX_PER_THREAD * threads
                or not _ordered(block, chunked)):
            continue
        return axes, length, chunk
    return None


def _ordered(block: Block, chunked: dict[SSAValue, int]) -> bool:
    """Whether only ops free of memory effects sit between the computation's ops."""
    moved = {v.owner for v in chunked} | {u.operation for v in chunked for u in v.uses}
    ops = list(block.ops)
    at = [i for i, op in enumerate(ops) if op in moved]
    return not any(op not in moved and (op.regions or not is_side_effect_free(op))
                   for op in ops[at[0]:at[-1]])


def _chunk_type(v: SSAValue, axes: dict[SSAValue, int], chunk: int) -> Attribute:
    axis = axes.get(v, UNCHUNKED)
    if axis == UNCHUNKED:
        return v.type
    assert isinstance(v.type, TensorType)
    shape = list(v.type.get_shape())
    shape[axis] = chunk
    return TensorType(v.type.element_type, shape)


def _chunked(op: Operation, axes: dict[SSAValue, int], mapping: dict[SSAValue, SSAValue],
             start: SSAValue, chunk: int, point: InsertPoint) -> None:
    """``op`` on the chunk at ``start``, inserted at ``point``."""
    if isinstance(op, tile.RangeOp):
        first = op.start.value.data
        local = tile.RangeOp(first, first + chunk)
        at = tile.SplatOp(start, local.result.type)
        moved = arith.AddiOp(local.result, at.result)
        Rewriter.insert_op([local, at, moved], point)
        mapping[op.result] = moved.result
        return
    rtypes = [_chunk_type(r, axes, chunk) for r in op.results]
    if isinstance(op, arith.ConstantOp):
        assert isinstance(op.value, DenseIntOrFPElementsAttr)
        value = next(iter(op.value.iter_values()))
        new = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(
            rtypes[0], [value] * prod(rtypes[0].get_shape())))  # pyright: ignore
    else:
        new = op.create(operands=[mapping.get(v, v) for v in op.operands], result_types=rtypes,
                        properties=dict(op.properties), attributes=dict(op.attributes))
    Rewriter.insert_op(new, point)
    mapping.update(zip(op.results, new.results, strict=True))


def strip_mine(block: Block, axes: dict[SSAValue, int], length: int, chunk: int) -> None:
    """Move the ops of the chunked tiles ``axes`` (and the stores of them) into a loop
    over chunks of ``chunk`` along their dimensions of ``length``, where the last was."""
    chunked = {v for v, a in axes.items() if a != UNCHUNKED}
    ops = [op for op in block.ops if any(r in chunked for r in op.results)
           or isinstance(op, tile.StoreOp) and any(v in chunked for v in op.operands)]
    bounds = [arith.ConstantOp(IntegerAttr(v, i32)) for v in (0, length, chunk)]
    body = Block(arg_types=[i32])
    loop = scf.ForOp(*(c.result for c in bounds), [], body)
    Rewriter.insert_op([*bounds, loop], InsertPoint.after(ops[-1]))
    mapping: dict[SSAValue, SSAValue] = {}
    point = InsertPoint.at_end(body)
    for op in ops:
        _chunked(op, axes, mapping, body.args[0], chunk, point)
    Rewriter.insert_op(scf.YieldOp(), point)
    for op in reversed(ops):
        Rewriter.erase_op(op)


def _unshare(block: Block) -> None:
    """Give each use of a splat, splat constant or range tile an op of its own. CSE
    shares them between computations that need them cut differently (the ``tile.range
    0, 128`` of both offset vectors of a 128x128 transpose, one per chunk, one whole); the
    copies that stay outside loops are shared again by the CSE after ``tile-to-simt``."""
    for op in list(block.ops):
        if isinstance(op, _FREE) and _movable(op) and _shape(op.results[0]) is not None:
            for use in list(op.results[0].uses)[1:]:
                twin = op.clone()
                Rewriter.insert_op(twin, InsertPoint.after(op))
                use.operation.operands[use.index] = twin.results[0]


def _mine_block(block: Block, threads: int) -> None:
    """Strip-mine the computations of ``block``'s large tiles, largest first."""
    tried: set[SSAValue] = set()
    while True:
        large = [r for op in block.ops for r in op.results if r not in tried
                 and (shape := _shape(r)) and prod(shape) > MAX_PER_THREAD * threads]
        if not large:
            return
        if not tried:
            _unshare(block)
        seed = max(large, key=lambda r: prod(_shape(r) or ()))
        tried.add(seed)
        plan = _plan(block, seed, threads)
        if plan is not None:
            strip_mine(block, plan[0].axes, plan[1], plan[2])


@dataclass(frozen=True)
class StripMine(ModulePass):
    """Loop over chunks of elementwise tiles too large for ``num_warps`` warps."""

    name = "strip-mine"
    num_warps: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        threads = WARP_SIZE * self.num_warps
        for block in [b for o in op.walk() for r in o.regions for b in r.blocks]:
            _mine_block(block, threads)
