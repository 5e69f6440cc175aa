"""assign-layouts: tile IR -> tile IR with layouts.

Gives every tensor type a layout encoding (how a tile is spread over the threads of a
program), sets ``vec`` on every ``tile.load``/``tile.store`` of a tile (how many
neighbouring elements move as one access, from the contiguity/divisibility analysis) and
records the thread count as ``{simt.num_warps = W : i32}`` on the kernel for
``tile-to-simt``.

Tiles that an op computes element by element (operands and results of ``arith``, ``math``,
comparisons, ``select``, ``addptr``, memory ops, loop-carried values) must share a layout;
they form groups. A group takes its layout from where its tiles go or come from:

1. an operand of ``tile.expand_dims`` takes the ``#tile.slice`` along the new axis of the
   result's layout, an operand of ``tile.broadcast`` the result's layout (so
   ``offs_m[:, None]`` and ``offs_n[None, :]`` become slices of one 2-D layout);
2. a result of ``tile.reduce`` along ``axis`` is the ``#tile.slice`` of its operand's, a
   result of ``tile.extract`` its operand's layout (so a window of a dot's result is
   register selection);
3. the result of ``tile.dot`` and its accumulator (one group) take a dot's layout, before
   any other rule (the operands keep their own layouts: the lowering stages them through
   shared memory). With ``mma`` set (a target with tensor cores) and a dot they can do
   (``mma_layout``: f16/bf16, i8, f32 as tf32/tf32x3, a tile of whole m16n8 tiles per
   warp) that is ``#tile.mma``, ``mma.sync``'s accumulator fragments (version 3, wgmma,
   with ``mma`` 90 where ``wgmma_ok`` and no operand is in a stage padded for
   ``ldmatrix``); otherwise
   ``dot_layout``: each thread owns a 2-D block of the product, so it reuses every A value
   it reads along its row of the block and every B value down its column;
4. otherwise the blocked layout of its shape, coalesced along the last dimension for the
   widest element that shape is loaded or stored as (1-D kernels get exactly this), its
   warps kept off the dimensions the group is reduced along where others can take them. A
   group that a ``tile.scan`` runs over along the last dimension gets runs of
   ``SCAN_RUN_BITS`` per thread where the target's accesses are narrower (WGSL's 32 bits)
   and a thread would hold many runs (``_many_runs``): a scan crosses the lanes once for
   each run, so four f32 a run take a quarter of the shuffles of one.

Outside loops, a pointer load or store that would move a tensor-core dot's result (or
what is combined with it) in the dot's layout is first cut off it by a
``tile.convert_layout`` where a coalesced layout moves more per access
(``_cut_epilogue_accesses``), and the groups are formed again.

Leaves (``tile.range``, ``tile.splat``, dense constants) are copied per use first, so one
``arange`` shared by rows and columns does not tie them together. Where a rule still
disagrees with a group (a tile needed in two layouts), a ``tile.convert_layout`` is
inserted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.errors import CompileError
from compiler.passes.axis_info import AxisInfoAnalysis, bits_of
from compiler.passes.layout_conversions import (
    convert_where_needed,
    is_tile,
    retype_constant,
    settle,
    with_layout,
)
from compiler.passes.layouts import WARP_SIZE, contiguous_run, elements_per_thread, ilog2
from compiler.passes.lower_array_views import outside_loops
from compiler.passes.shared_banks import ROW_PADDINGS
from dialects import tile
from dialects.simt import MMA_ACCUMULATORS
from dialects.tile import (
    BlockedLayoutAttr,
    LoadOp,
    MmaLayoutAttr,
    SliceLayoutAttr,
    StoreOp,
    element_type,
)

DEFAULT_ELEM_BITS = 32
NUM_WARPS_ATTR = "simt.num_warps"
SCAN_RUN_BITS = 128  # bits of a scan's elements a thread holds in a row, where it has many
SCAN_LANE_RUNS, SCAN_EXCHANGE_RUNS = 64, 128  # many: runs a thread, runs times warps
# The most bytes of a dot's operands staged from registers through shared memory (before
# padding, which adds at most half): room for them and the rest of the kernel in a block's
# shared memory, 99 KiB on sm_86 and sm_89, 227 KiB on sm_90. A larger dot runs on FMAs,
# many times slower, so Hopper's is twice: 128x256x128 f16 (96 KiB) stays on tensor cores.
MMA_STAGING_BYTES = 64 * 1024
WGMMA_STAGING_BYTES = 128 * 1024
WGMMA_SM = 90  # Hopper: warpgroup MMA (wgmma) from shared memory
# The fewest elements a thread of an epilogue's access that goes coalesced through shared
# memory (``_cut_epilogue_accesses``): below, its two barriers cost more than the few
# accesses saved (a decoding step's 16 x 32 tiles: 4 a thread, one access saved).
EPILOGUE_ELEMENTS = 16
__all__ = ["WARP_SIZE", "AssignLayouts", "blocked_layout", "dot_layout", "mma_layout"]


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
                   vector_bits: int = 128, reduced: Collection[int] = ()) -> BlockedLayoutAttr:
    """The default layout of a tile: the last dim is fastest. A thread holds up to one
    ``vector_bits`` access of the last dim (no more than its share of the tile), then
    threads of a warp go along the last dim, then earlier dims; warps fill dim 0 first,
    skipping the dims in ``reduced`` while others can take them: a sum along a dim the
    warps do not split needs no shared memory (a 32 x 1024 column sum over 8 warps took
    32 KiB, all a WGSL device may have)."""
    rank = len(shape)
    threads = WARP_SIZE * num_warps
    spt = [1] * rank
    spt[-1] = max(1, min(vector_bits // elem_bits, prod(shape) // threads, shape[-1]))
    fastest_first = list(range(rank - 1, -1, -1))
    tpw = _distribute(WARP_SIZE, [shape[d] // spt[d] for d in range(rank)], fastest_first)
    per_warp = [shape[d] // (spt[d] * tpw[d]) for d in range(rank)]
    order = sorted(range(rank), key=lambda d: d in reduced)
    wpc = _distribute(num_warps, per_warp, order)
    return BlockedLayoutAttr(spt, tpw, wpc)


def dot_layout(shape: Sequence[int], num_warps: int) -> BlockedLayoutAttr:
    """The layout of a dot's result: each thread owns a near-square ``spt`` block of its
    share (most products per A and B value read). Lanes go along N only while a warp's
    reads of one B row stay within 32 banks (``tpw[1] * spt[1] <= 32``), the rest along M,
    so that A reads are conflict-free too where the block allows; warps fill M first."""
    m, n = shape
    share = max(1, m * n // (WARP_SIZE * num_warps))
    sn = min(n, 1 << (ilog2(share) + 1) // 2)
    sm = min(m, share // sn)
    sn = min(n, share // sm)
    tn = min(n // sn, max(1, WARP_SIZE // sn))
    while WARP_SIZE // tn > m // sm and tn < n // sn:  # too few rows: more lanes along N
        tn *= 2
    tpw = [WARP_SIZE // tn, tn]
    wpc = _distribute(num_warps, [m // (sm * tpw[0]), n // (sn * tn)], [0, 1])
    return BlockedLayoutAttr([sm, sn], tpw, wpc)


def mma_warps(m: int, n: int, num_warps: int) -> tuple[int, int] | None:
    """Warps along (M, N) for an (m, n) accumulator of m16 x n8 tiles, like Triton: each
    doubling goes to the side with more tiles per warp, M on a tie; None if the tile has
    fewer m16 x n8 tiles than there are warps."""
    wm = wn = 1
    while wm * wn < num_warps:
        rows, cols = m // (16 * wm), n // (8 * wn)
        if rows >= cols and rows > 1:
            wm *= 2
        elif cols > 1:
            wn *= 2
        else:
            return None
    return (wm, wn) if m >= 16 and n >= 8 else None


def staging_bytes(mma: int) -> int:
    """The most bytes of a dot's operands staged through shared memory on a target whose
    tensor cores are of SM version ``mma``."""
    return WGMMA_STAGING_BYTES if mma >= WGMMA_SM else MMA_STAGING_BYTES


def mma_layout(op: tile.DotOp, num_warps: int, mma: int) -> MmaLayoutAttr | None:
    """``#tile.mma`` for a dot tensor cores can do, else None: operands mma.sync takes
    (f32 only rounded to tf32: ``ieee`` wants exact f32 products), an accumulator it
    gives, K a multiple of the mma's k (256 bits of operand) and operands that fit the
    staging buffer of tensor cores of SM version ``mma``."""
    elem, acc = element_type(op.a.type), element_type(op.result.type)
    if acc not in MMA_ACCUMULATORS.get(elem, ()) or (
            elem == f32 and op.input_precision.data == "ieee"):
        return None
    (m, k), n = op.a.type.get_shape(), op.b.type.get_shape()[1]  # pyright: ignore
    bits = bits_of(elem)
    if k % (256 // bits) or (m + n) * k * bits // 8 > staging_bytes(mma):
        return None
    warps = mma_warps(m, n, num_warps)
    return None if warps is None else MmaLayoutAttr(2, warps)


WGMMA_MAX_N = 256  # columns of one wgmma


def wgmma_ok(op: tile.DotOp, num_warps: int) -> bool:
    """Whether Hopper's wgmma can do ``op`` from 128-byte-swizzled stages: f16 or bf16 into
    f32, whole warpgroups with whole m16 tiles per warp along M (warps ``[num_warps,
    1]``), N at most one instruction's 256, and each operand's stored rows whole 128-byte
    atoms (``_atoms_ok``)."""
    elem = element_type(op.a.type)
    m = op.a.type.get_shape()[0]  # pyright: ignore
    return (isinstance(elem, Float16Type | BFloat16Type) and element_type(op.b.type) == elem
            and element_type(op.result.type) == f32 and num_warps % 4 == 0
            and m % (16 * num_warps) == 0 and op.b.type.get_shape()[1] <= WGMMA_MAX_N  # pyright: ignore
            and _atoms_ok(op))


def _atoms_ok(op: tile.DotOp) -> bool:
    """Whether ``op``'s operands are stored in rows of whole 128-byte atoms (64 16-bit
    elements): A in rows of K, B in rows of N, or of K where B is read through a transpose
    (K-major: then N need only be whole n8 column groups, attention's backward reading 32
    keys as K^T); except an A that stays in registers as the fragments of a dot's
    accumulator (``from_accumulator``), whose K need only be whole k16 steps."""
    k, n = op.b.type.get_shape()  # pyright: ignore
    if isinstance(op.b.owner, tile.TransOp):
        b_ok = k % 64 == 0 and n % 8 == 0
    else:
        b_ok = n % 64 == 0 and k % 16 == 0
    a_ok = k % 64 == 0 or (not isinstance(op.a.owner, tile.TransOp)
                           and from_accumulator(op.a, op.parent_block()))
    return a_ok and b_ok


def from_accumulator(v: SSAValue, block: Block | None) -> bool:
    """Whether ``v`` is computed element by element in ``block`` from the result of a dot
    of its shape (attention's ``P = exp2(S - m)``, masked or not, ``dS = P (dP - delta)``):
    its layout is then that dot's accumulator."""
    shape = v.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    work, seen = [v], set()
    while work:
        owner = work.pop().owner
        if not isinstance(owner, Operation) or owner.parent_block() is not block \
                or owner in seen:
            continue
        seen.add(owner)
        if isinstance(owner, tile.DotOp):
            return owner.result.type.get_shape() == shape  # pyright: ignore
        if owner.name.startswith(("arith.", "math.", "tile.select")):  # a causal mask too
            work.extend(o for o in owner.operands
                        if isinstance(o.type, TensorType) and o.type.get_shape() == shape)
    return False


def _wgmma_operands(op: tile.DotOp) -> bool:
    """Whether wgmma can read ``op``'s operands: each from a 128-byte-swizzled stage, or
    from registers (then stored into a swizzled buffer, within the staging budget)."""
    in_registers = 0
    for v in (op.a, op.b):
        read, direct = v.owner, True
        if isinstance(read, tile.TransOp):  # read from its source: B K-major, A transposed
            read, direct = read.src.owner, False
        if not isinstance(read, tile.SharedReadOp):
            in_registers += prod(v.type.get_shape()) * 2  # pyright: ignore
            continue
        stages = read.buffer.owner
        assert isinstance(stages, tile.SharedAllocOp)
        if stages.swizzle is None or v is op.a and direct and stages.warps is None:
            return False  # staged for ldmatrix: padded, or A's rows not permuted for wgmma
    return in_registers <= WGMMA_STAGING_BYTES


_ACCESSES = (LoadOp, StoreOp, tile.AsyncCopyOp)  # tile accesses that get a ``vec``
# On a comparison: each thread's lanes agree in runs of this many (a mask ``cols < n`` with
# n a multiple of 16), so tile-to-simt compares once a run (fewer predicates live).
UNIFORM_RUNS_ATTR = "tile.uniform_runs"


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def access_vec(op: LoadOp | StoreOp | tile.AsyncCopyOp, layout: Attribute, facts: AxisInfoAnalysis,
               vector_bits: int) -> int:
    """Elements per access: within one thread's run, contiguous, aligned, one mask value,
    and at most ``vector_bits`` wide."""
    pointee = op.ptr.type.element_type.pointee  # pyright: ignore[reportAttributeAccessIssue]
    ptr = facts[op.ptr]
    limits = [contiguous_run(layout, op.ptr.type.get_shape()),  # pyright: ignore
              ptr.contiguity[-1], ptr.divisibility[-1],
              max(1, vector_bits // bits_of(pointee))]
    if op.mask is not None:
        limits.append(facts[op.mask].constancy[-1])
    return _pow2_floor(min(limits))


def _access_bits(f: func.FuncOp) -> dict[tuple[int, ...], int]:
    """Widest element loaded or stored, per tile shape."""
    widest: dict[tuple[int, ...], int] = {}
    for op in f.walk():
        if isinstance(op, _ACCESSES) and isinstance(op.ptr.type, TensorType):
            shape = op.ptr.type.get_shape()
            bits = bits_of(op.ptr.type.element_type.pointee)  # pyright: ignore
            widest[shape] = max(widest.get(shape, 0), bits)
    return widest


def _split_leaves(f: func.FuncOp) -> list[list[Operation]]:
    """One copy of each multiply-used leaf per use (inserted next to it); the copies."""
    families = []
    for op in list(f.walk()):
        leaf = isinstance(op, tile.RangeOp | tile.SplatOp) or (
            isinstance(op, arith.ConstantOp) and is_tile(op.result))
        uses = list(op.results[0].uses) if leaf else []
        if len(uses) < 2:
            continue
        family = [op]
        for use in uses[1:]:
            copy = op.clone()
            Rewriter.insert_op(copy, InsertPoint.before(op))
            use.operation.operands[use.index] = copy.results[0]
            family.append(copy)
        families.append(family)
    return families


def _merge_equal_copies(families: list[list[Operation]]) -> None:
    """Copies that ended up with one type are one value again: the first in the block
    (the copies sit together, before the original) serves the others' uses."""
    for original, *copies in families:
        first: dict[Attribute, Operation] = {}
        for op in (*copies, original):
            keep = first.setdefault(op.results[0].type, op)
            if keep is not op:
                op.results[0].replace_all_uses_with(keep.results[0])
                Rewriter.erase_op(op)


def _region_ties(op: Operation) -> list[tuple[SSAValue, ...]]:
    """Values of ``scf`` control flow that are one value in different places: initial
    values, block arguments, yielded values and results."""
    def yields(region) -> list[SSAValue]:
        return list(region.block.last_op.operands) if region.blocks else []

    if isinstance(op, scf.ForOp):
        body = op.body.block
        columns = [[op.operands[3:], body.args[1:], op.results, yields(op.body)]]
    elif isinstance(op, scf.IfOp):
        columns = [[op.results, yields(op.true_region), yields(op.false_region)]]
    elif isinstance(op, scf.WhileOp):
        before, after = op.before_region.block, op.after_region.block
        columns = [[op.operands, before.args, yields(op.after_region)],
                   [before.last_op.operands[1:], after.args, op.results]]
    else:
        return []
    return [t for cols in columns for t in zip(*(c for c in cols if c), strict=True)]


@dataclass(frozen=True)
class _Rule:
    """A group's layout from the layout of ``other``'s group: its ``#tile.slice`` along
    ``axis``, or the same layout (``axis`` None)."""

    other: SSAValue
    axis: int | None
    forward: bool = False  # from an operand (a reduction): tried after consumers' rules

    def apply(self, layout: Attribute) -> Attribute:
        return layout if self.axis is None else SliceLayoutAttr(self.axis, layout)


_OWN_RULES = (tile.ExpandDimsOp, tile.BroadcastOp, tile.ReshapeOp, tile.TransOp,
              tile.ConvertLayoutOp, tile.ReduceOp, tile.DotOp, tile.ExtractOp)


class _Groups:
    """Union-find over tile values, with the rules that derive a group's layout."""

    def __init__(self, f: func.FuncOp):
        self.parent: dict[SSAValue, SSAValue] = {}
        self.rules: dict[SSAValue, list[_Rule]] = {}  # by group root
        self.dots: dict[SSAValue, tile.DotOp] = {}  # group root -> a dot giving it
        self.scans: set[SSAValue] = set()  # roots of groups scanned along their last dim
        self.reduced: dict[SSAValue, set[int]] = {}  # group root -> axes it is reduced along
        for op in f.walk():
            self._tie_op(op)
        for op in f.walk():
            self._derive(op)

    def find(self, v: SSAValue) -> SSAValue:
        root = self.parent.setdefault(v, v)
        while root != self.parent[root]:
            root = self.parent[root]
        self.parent[v] = root
        return root

    def tie(self, values: Sequence[SSAValue]) -> None:
        tiles = [v for v in values if is_tile(v)]
        for v in tiles[1:]:
            self.parent[self.find(v)] = self.find(tiles[0])

    def _tie_op(self, op: Operation) -> None:
        if op.name.startswith("scf."):
            for values in _region_ties(op):
                self.tie(values)
        elif isinstance(op, tile.ReduceOp):
            self.tie(list(op.srcs))
            self.tie(list(op.outs))
        elif isinstance(op, tile.DotOp):  # a and b: shapes may equal the result's by chance
            self.tie([op.acc, op.result])
        elif not isinstance(op, _OWN_RULES):  # elementwise in effect: equal shapes tie
            by_shape: dict[tuple[int, ...], list[SSAValue]] = {}
            for v in (*op.operands, *op.results):
                if is_tile(v):
                    by_shape.setdefault(v.type.get_shape(), []).append(v)
            for values in by_shape.values():
                self.tie(values)

    def _derive(self, op: Operation) -> None:
        if isinstance(op, tile.ReduceOp):
            self.reduced.setdefault(self.find(op.srcs[0]), set()).add(op.axis.value.data)
        if isinstance(op, tile.ExpandDimsOp):
            self._rule(op.src, _Rule(op.result, op.axis.value.data))
        elif isinstance(op, tile.BroadcastOp):
            self._rule(op.src, _Rule(op.result, None))
        elif isinstance(op, tile.ReduceOp) and is_tile(op.outs[0]):
            self._rule(op.outs[0], _Rule(op.srcs[0], op.axis.value.data, forward=True))
        elif isinstance(op, tile.ExtractOp):
            self._rule(op.result, _Rule(op.src, None, forward=True))
        elif isinstance(op, tile.DotOp):
            self.dots[self.find(op.result)] = op
        elif isinstance(op, tile.ScanOp) and _along_last_dim(op):
            self.scans.add(self.find(op.srcs[0]))

    def _rule(self, v: SSAValue, rule: _Rule) -> None:
        self.rules.setdefault(self.find(v), []).append(rule)


class _Assigner:
    """Decides every tile's layout in one kernel and rewrites the types."""

    def __init__(self, f: func.FuncOp, num_warps: int, vector_bits: int, mma: int):
        self.f, self.num_warps, self.vector_bits, self.mma = f, num_warps, vector_bits, mma
        self.bits = _access_bits(f)
        self.groups = _Groups(f)
        self.layouts: dict[SSAValue, Attribute | None] = {}  # group root -> layout

    def layout(self, v: SSAValue) -> Attribute:
        """The layout of ``v``'s group: a dot's, or from its first rule whose other group
        is not being decided (rules may form cycles), consumers' rules first."""
        root = self.groups.find(v)
        if root not in self.layouts and root in self.groups.dots:
            self.layouts[root] = self.dot(self.groups.dots[root])
        if root not in self.layouts:
            self.layouts[root] = None  # being decided
            found = self.default(v)
            rules = self.groups.rules.get(root, [])
            for rule in sorted(rules, key=lambda r: r.forward):
                if self.layouts.get(self.groups.find(rule.other), 0) is not None:
                    found = rule.apply(self.layout(rule.other))
                    break
            self.layouts[root] = found
        layout = self.layouts[root]
        assert layout is not None
        return layout

    def dot(self, op: tile.DotOp) -> Attribute:
        """A dot result's layout: on tensor cores where the target has them and can (wgmma
        where ``pipeline-loads`` staged both operands for it)."""
        if (self.mma >= WGMMA_SM and wgmma_ok(op, self.num_warps)
                and _wgmma_operands(op) and self._a_placed(op)):
            return MmaLayoutAttr(3, (self.num_warps, 1))
        found = mma_layout(op, self.num_warps, self.mma) if self.mma else None
        return found or dot_layout(op.result.type.get_shape(), self.num_warps)  # pyright: ignore

    def _a_placed(self, op: tile.DotOp) -> bool:
        """Whether A can be read as wgmma reads it: stored in whole atoms, or (K short of
        an atom) taken from registers, which needs its layout to be a warpgroup dot's
        accumulator with this dot's warps (decided first, unless it is being decided)."""
        if op.a.type.get_shape()[1] % 64 == 0:  # pyright: ignore
            return True
        if self.layouts.get(self.groups.find(op.a), 0) is None:
            return False
        a = self.layout(op.a)
        return (isinstance(a, MmaLayoutAttr) and a.version.data == 3
                and a.warps == (self.num_warps, 1))

    def default(self, v: SSAValue) -> BlockedLayoutAttr:
        shape = v.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
        bits = self.bits.get(shape, DEFAULT_ELEM_BITS)
        root = self.groups.find(v)
        reduced = self.groups.reduced.get(root, set())
        layout = blocked_layout(shape, self.num_warps, bits, self.vector_bits, reduced)
        if (self.vector_bits < SCAN_RUN_BITS and root in self.groups.scans
                and _many_runs(layout, shape)):
            layout = blocked_layout(shape, self.num_warps, bits, SCAN_RUN_BITS, reduced)
        return layout

    def run(self) -> None:
        facts = AxisInfoAnalysis(self.f)
        for op in self.f.walk():
            if isinstance(op, _ACCESSES) and is_tile(op.ptr):
                vec = access_vec(op, self.layout(op.ptr), facts, self.vector_bits)
                op.properties["vec"] = IntegerAttr(vec, i32)
            elif isinstance(op, tile.CmpIOp | tile.CmpFOp) and is_tile(op.result):
                shape = op.result.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
                run = _pow2_floor(min(facts[op.result].constancy[-1],
                                      contiguous_run(self.layout(op.result), shape)))
                if run > 1:
                    op.attributes[UNIFORM_RUNS_ATTR] = IntegerAttr(run, i32)
        new_types = {v: with_layout(v.type, self.layout(v)) for v in _tile_values(self.f)}
        for v, t in new_types.items():
            Rewriter.replace_value_with_new_type(v, t)
        for op in list(self.f.walk()):
            retype_constant(op)
            convert_where_needed(op)


def _along_last_dim(op: tile.ScanOp) -> bool:
    """Whether ``op`` scans along the dimension whose runs the layout can lengthen."""
    return op.axis.value.data == len(op.srcs[0].type.get_shape()) - 1  # pyright: ignore


def _many_runs(layout: BlockedLayoutAttr, shape: Sequence[int]) -> bool:
    """Whether a scan over ``layout`` is better off with longer runs. It crosses the lanes
    once for each run a thread holds and reads each warp's total of each run; longer runs
    mean fewer of both, but on a target with narrow accesses they are strided loads. On
    the H200 through Vulkan (f32 cumsum) longer runs won from 64 runs a thread, or from
    128 runs times warps, and lost below (``benchmarks/RESULTS.md``, 2026-11-25)."""
    runs = elements_per_thread(layout, shape) // contiguous_run(layout, shape)
    return runs >= SCAN_LANE_RUNS or runs * prod(layout.wpc) >= SCAN_EXCHANGE_RUNS


def _tile_values(f: func.FuncOp) -> Iterator[SSAValue]:
    for op in f.walk():
        yield from (r for r in op.results if is_tile(r))
        for region in op.regions:
            for block in region.blocks:
                yield from (a for a in block.args if is_tile(a))


def _cut_epilogue_accesses(assigner: _Assigner, exchange_bytes: int) -> bool:
    """Whether a ``tile.convert_layout`` was put between a tensor-core dot's result and
    an access that would move it in the dot's layout, outside loops, where a coalesced
    layout moves more per access: after the load of what is combined with the result, before
    the store of it. The accumulator's lanes hold two neighbouring columns, so a 16-bit
    tile moves 4 bytes an access, 8 rows a warp; coalesced it is 16 bytes, the conversion
    going through shared memory once (Triton does the same), where it fits in one trip of
    ``exchange_bytes`` (in several, each lane checking each trip, it cost more than it
    saved: 128 x 256 f16 tiles and 128 x 128 f32 ones in 48 KiB trips on an H200). The
    conversion's result takes the dot's layout and the access's group its own
    (``_Assigner`` again)."""
    facts = AxisInfoAnalysis(assigner.f)
    accesses = [op for op in assigner.f.walk() if isinstance(op, LoadOp | StoreOp)
                and _coalesced_is_wider(op, assigner, facts, exchange_bytes)]
    for op in accesses:
        _cut(op)
    return bool(accesses)


def _coalesced_is_wider(op: LoadOp | StoreOp, assigner: _Assigner, facts: AxisInfoAnalysis,
                        exchange_bytes: int) -> bool:
    """Whether ``op`` is a 2-D access outside loops in a dot's layout whose tile one trip
    converts, of at least ``EPILOGUE_ELEMENTS`` a thread, and which a coalesced layout
    would make in wider accesses."""
    shape = op.ptr.type.get_shape() if is_tile(op.ptr) else ()  # pyright: ignore
    if len(shape) != 2 or prod(shape) < EPILOGUE_ELEMENTS * WARP_SIZE * assigner.num_warps \
            or not outside_loops(op):
        return False
    layout = assigner.layout(op.ptr)
    if not isinstance(layout, MmaLayoutAttr) or _staged_bytes(op) > exchange_bytes:
        return False
    bits = assigner.vector_bits
    return access_vec(op, assigner.default(op.ptr), facts, bits) > access_vec(
        op, layout, facts, bits)


def _cut(op: LoadOp | StoreOp) -> None:
    """A ``tile.convert_layout`` (its layout decided later) after the load ``op``, or
    before the store ``op``."""
    if isinstance(op, LoadOp):
        conv = tile.ConvertLayoutOp(op.result, op.result.type)
        Rewriter.insert_op(conv, InsertPoint.after(op))
        op.result.replace_all_uses_with(conv.result)
        conv.operands[0] = op.result
    else:
        conv = tile.ConvertLayoutOp(op.value, op.value.type)
        Rewriter.insert_op(conv, InsertPoint.before(op))
        op.operands[1] = conv.result
    conv.location = op.location


def _staged_bytes(op: LoadOp | StoreOp) -> int:
    """The most shared memory converting ``op``'s tile may take: its elements as shared
    memory holds them (bools as words), each row padded as much as ``shared_banks`` may."""
    rows, cols = op.ptr.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    bits = bits_of(op.ptr.type.element_type.pointee)  # pyright: ignore[reportAttributeAccessIssue]
    size = 4 if bits == 1 else bits // 8
    return rows * (cols + ROW_PADDINGS[-1]) * size


@dataclass(frozen=True)
class AssignLayouts(ModulePass):
    """Layouts for every tile, ``vec`` for every tile access."""

    name = "assign-layouts"

    num_warps: int = 4
    vector_bits: int = 128
    mma: int = 0  # the SM version whose tensor cores dots may use (80: mma.sync, 90: wgmma)
    exchange_bytes: int = 16 * 1024  # most an epilogue access's conversion stages at once

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_warps < 1 or self.num_warps & (self.num_warps - 1):
            raise CompileError(f"num_warps must be a power of two, got {self.num_warps}")
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                families = _split_leaves(f)
                assigner = _Assigner(f, self.num_warps, self.vector_bits, self.mma)
                if _cut_epilogue_accesses(assigner, self.exchange_bytes):
                    assigner = _Assigner(f, self.num_warps, self.vector_bits, self.mma)
                assigner.run()
                _merge_equal_copies(families)
                for conv in [c for c in f.walk() if isinstance(c, tile.ConvertLayoutOp)]:
                    settle(conv)
                f.attributes[NUM_WARPS_ATTR] = IntegerAttr(self.num_warps, i32)
