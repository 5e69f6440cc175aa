"""Part of tile-to-simt: ``tile.dot`` with a ``#tile.mma`` result (tile IR with layouts) ->
SIMT IR on tensor cores: ``simt.ldmatrix`` and ``simt.mma`` (PTX ``mma.sync``).

Every thread writes its elements of ``a`` and ``b`` to shared memory in their own type
(runs of a thread's lanes that are contiguous there as one wide store, ``vec``):
A as M x K; B as K x N for 16-bit operands (read with ``ldmatrix .trans``), else as N x K
(``ldmatrix`` cannot transpose 8- or 32-bit elements). A row of two or more 16-byte chunks
is padded by one chunk, so the 8 rows of one ldmatrix matrix start in 8 different groups
of 4 banks. Warp ``w`` owns rows ``8 w_m + 8 wm j`` and columns ``8 w_n + 8 wn c`` of the
product (``w_m, w_n = divmod(w, wn)``): its m16 tile ``r`` is repeats ``2 r, 2 r + 1`` of
the layout's rows, its n8 tile ``c`` one repeat of its columns. Lane ``l`` addresses row
``l % 8`` of matrix ``l / 8`` of each ``ldmatrix`` (``tests/test_mma.py`` models this).

A tile that ``pipeline-loads`` left in a shared-memory stage is read in place: padded as
above, or 128-byte swizzled (16-bit rows of whole atoms: a row's 16-byte chunk ``c`` sits
at ``c ^ (row % 8)`` of its atom, atoms of 64 columns one after another). There the 8 rows
of a matrix are rows ``8 j .. 8 j + 7``, so lane ``l`` reads chunk ``c ^ (l % 8)``: the
chunk of A's k step is XORed with a per-thread constant, and B's chunks of n, fixed per
thread, are placed once, in the prologue.

The accumulator goes into one ``vector<4 x T>`` per (r, c) mma, which k steps of the mma's
k (256 bits of operand) update: straight-line code for up to ``UNROLLED_STEPS`` steps,
else an ``scf.for`` over k that carries the 4-vectors. Per step, an x4
``ldmatrix`` of A per r, an x4 of B per two c (x2 for a lone one) and an ``mma`` per
(r, c); after it, the 4-vectors are joined into the accumulator again. ``tf32x3`` splits
each f32 fragment into ``hi`` (rounded to tf32) and ``lo = x - hi`` and adds three
products, ``lo hi + hi lo + hi hi``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import DenseArrayBase, TensorType, VectorType, i32, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from compiler.passes.axis_info import bits_of
from compiler.passes.layouts import element_ids, ilog2, padded_row
from compiler.passes.lower_dot import DOT_LOWERINGS, At, add_offset, round_tf32, shared_vec
from compiler.passes.lower_shapes import _index
from compiler.passes.simt_lowering import Lowering
from dialects import simt, tile
from dialects.tile import MmaLayoutAttr, element_type, like

CHUNK_BITS = 128  # one ldmatrix row: 16 bytes
MMA_K_BITS = 256  # an mma's k times its operand bits
# A dot of at most this many k steps is straight-line code rather than a loop, so that
# the PTX backend can place other work (the next stage's copies) between its mmas
UNROLLED_STEPS = 8


@dataclass(frozen=True)
class Geometry:
    """One mma dot: shapes, warps, and where A and B sit in shared memory."""

    m: int
    n: int
    k: int
    bits: int  # of an operand element
    wm: int
    wn: int

    @property
    def cb(self) -> int:
        """Elements per 16-byte chunk."""
        return CHUNK_BITS // self.bits

    @property
    def mk(self) -> int:
        return MMA_K_BITS // self.bits

    @property
    def shape(self) -> str:
        return f"m16n8k{self.mk}"

    @property
    def b_nk(self) -> bool:
        """B staged as N x K (8- and 32-bit operands), else K x N."""
        return self.bits != 16

    @property
    def rows(self) -> int:
        """m16 tiles per warp."""
        return self.m // (16 * self.wm)

    @property
    def cols(self) -> int:
        """n8 tiles per warp."""
        return self.n // (8 * self.wn)

    @property
    def pair(self) -> int:
        """n8 tiles one B ldmatrix fetches."""
        return min(2, self.cols)

    def padded(self, length: int) -> int:
        return padded_row(length, self.bits)

    @property
    def row_a(self) -> int:
        return self.padded(self.k)

    @property
    def row_b(self) -> int:
        return self.padded(self.k if self.b_nk else self.n)

    @property
    def b_offset(self) -> int:
        return self.m * self.row_a

    @property
    def size(self) -> int:
        return self.b_offset + (self.n if self.b_nk else self.k) * self.row_b

    @property
    def a_tile(self) -> int:
        """Offset from one m16 tile of a warp to its next."""
        return 16 * self.wm * self.row_a

    @property
    def b_tile(self) -> int:
        """Offset from one n8 tile of a warp to its next."""
        return 8 * self.wn * (self.row_b if self.b_nk else 1)

    def fields(self) -> dict[str, tuple[int, int]]:
        """Bit fields of the thread id: (shift, width)."""
        lw = ilog2(self.wn)
        return {"rr": (0, 3), "i_lo": (3, 1), "i_hi": (4, 1), "w_n": (5, lw),
                "w_m": (5 + lw, ilog2(self.wm))}

    def a_terms(self) -> dict[str, int]:
        """A's ldmatrix.x4 offset per thread-id field: row ``8 w_m + rr + 8 wm i_lo``,
        chunk ``i_hi``."""
        return {"rr": self.row_a, "i_lo": 8 * self.wm * self.row_a, "i_hi": self.cb,
                "w_m": 8 * self.row_a}

    def b_terms(self) -> dict[str, int]:
        """B's: the k half ``i_lo`` (a chunk of an N x K row, 8 rows of K x N), tile
        ``i_hi`` of the pair, columns ``8 w_n``."""
        second = self.b_tile if self.pair == 2 else 0
        if self.b_nk:
            return {"rr": self.row_b, "i_lo": self.cb, "i_hi": second, "w_n": 8 * self.row_b}
        return {"rr": self.row_b, "i_lo": 8 * self.row_b, "i_hi": second, "w_n": 8}


def geometry(op: tile.DotOp, a_t: TensorType, acc_t: TensorType) -> Geometry:
    layout = acc_t.encoding
    assert isinstance(layout, MmaLayoutAttr)
    (m, k), n = a_t.get_shape(), acc_t.get_shape()[1]
    wm, wn = layout.warps
    return Geometry(m, n, k, bits_of(a_t.element_type), wm, wn)


def lower_mma_dot(lo: Lowering, op: tile.DotOp) -> None:
    """Replace ``op`` by staging through shared memory and a k loop of ``simt.mma``."""
    a_t, b_t, acc_t = lo.operand_types[op]
    assert isinstance(a_t, TensorType) and isinstance(b_t, TensorType)
    assert isinstance(acc_t, TensorType)
    g = geometry(op, a_t, acc_t)
    at = At(InsertPoint.before(op), op.location)
    b_weights = [1, g.row_b] if g.b_nk else [g.row_b, 1]
    sources = []
    for v, t, weights, offset, row in ((op.a, a_t, [g.row_a, 1], 0, g.row_a),
                                       (op.b, b_t, b_weights, g.b_offset, g.row_b)):
        sources.append(_source(lo, op, at, g, v, t, weights, offset, row))
    staged = any(v not in lo.views for v in (op.a, op.b))
    if staged:
        at(simt.BarrierOp())
    readers = (_a_reader(lo, op, g, *sources[0]), _b_reader(lo, op, g, *sources[1]))
    accs = [_shuffle(at, op.acc, op.acc, _lanes(g, r, c))
            for r in range(g.rows) for c in range(g.cols)]
    precision = op.input_precision.data
    if g.k // g.mk <= UNROLLED_STEPS:
        for k0 in range(0, g.k, g.mk):
            accs = _k_step(at, g, readers, at.const(k0), accs, precision)
    else:
        body = Block(arg_types=[i32, *(v.type for v in accs)])
        step = at.inside(body)
        step(scf.YieldOp(*_k_step(step, g, readers, body.args[0], list(body.args[1:]),
                                  precision)))
        accs = list(at(scf.ForOp(at.const(0), at.const(g.k), at.const(g.mk), accs,
                                 body)).owner.results)
    if staged:  # the staging buffer is free again (stages: the next async_wait says so)
        at(simt.BarrierOp())
    lo.replace(op, _join(at, g, accs))


def _source(lo: Lowering, op: tile.DotOp, at: At, g: Geometry, v: SSAValue, t: TensorType,
            weights: list[int], offset: int, row: int
            ) -> tuple[SSAValue, SSAValue | None, int]:
    """Where ``ldmatrix`` reads operand ``v``: (buffer, dynamic start or None, constant
    start). A tile already in a shared-memory stage (``Lowering.views``) is read there;
    any other is written by every thread to the staging buffer first."""
    if v in lo.views:
        buf, start, row_len = lo.views[v]
        assert not (v is op.b and g.b_nk) and (
            buf in lo.swizzled and g.bits == 16 and not lo.swizzled[buf] or row_len == row), \
            "stage not as ldmatrix reads"
        return buf, start, 0
    buf = lo.shared_buffer(t.element_type, g.size, op)
    index = add_offset(lo, op, _index(lo, op, (t, weights)), offset)
    vec = shared_vec(element_ids(t.encoding, t.get_shape(), weights), [offset], g.bits)
    at(simt.SharedStoreOp(buf, index, v, vec=vec))
    return buf, None, offset


@dataclass(frozen=True)
class Reader:
    """Where the ldmatrix of an operand's tile ``i`` (A: m16 tile, B: n8 tile) at ``k0``
    reads: ``base`` (this thread's row at k 0 of tile 0) plus ``k0`` times ``k_step``
    plus ``tiles[i]``; in a swizzled stage, the 16-byte chunk of k (A) is XORed with
    ``chunk_xor`` and the stage's atoms of k follow one another ``atom_step`` apart."""

    buf: SSAValue
    base: SSAValue
    k_step: int
    tiles: list[SSAValue | int]
    chunk_xor: SSAValue | None = None
    atom_step: int = 0

    def address(self, at: At, g: Geometry, k0: SSAValue, i: int) -> SSAValue:
        if self.chunk_xor is None:
            k = k0 if self.k_step == 1 else at(arith.MuliOp(k0, at.const(self.k_step)))
        else:  # ((k0 / chunk) % 8) ^ (i_hi ^ rr), in elements; k0 / atom atoms on
            atom = 8 * g.cb
            chunk = at(arith.AndIOp(k0, at.const(atom - g.cb)))
            k = at(arith.AddiOp(at(arith.XOrIOp(chunk, self.chunk_xor)), at(arith.MuliOp(
                at(arith.ShRUIOp(k0, at.const(ilog2(atom)))), at.const(self.atom_step)))))
        where = at(arith.AddiOp(self.base, k))
        tile_at = self.tiles[i]
        if isinstance(tile_at, int):
            return at(arith.AddiOp(where, at.const(tile_at))) if tile_at else where
        return at(arith.AddiOp(where, tile_at))


def _a_reader(lo: Lowering, op: tile.DotOp, g: Geometry, buf: SSAValue,
              start: SSAValue | None, offset: int) -> Reader:
    tiles: list[SSAValue | int] = [r * g.a_tile for r in range(g.rows)]
    if buf not in lo.swizzled:
        return Reader(buf, _start(lo, op, _base(lo, op, g, g.a_terms(), offset), start), 1,
                      tiles)
    atom = 8 * g.cb  # a row of the stage's atom: row rr of the 8 is rr * atom on
    terms = {"rr": atom, "i_lo": 8 * g.wm * atom, "w_m": 8 * atom}
    base = _start(lo, op, _base(lo, op, g, terms, 0), start)
    xor = lo.prologue_op(arith.XOrIOp(_base(lo, op, g, {"rr": g.cb}, 0),
                                      _base(lo, op, g, {"i_hi": g.cb}, 0)), op)
    return Reader(buf, base, 1, [r * 16 * g.wm * atom for r in range(g.rows)], xor,
                  g.m * atom)


def _b_reader(lo: Lowering, op: tile.DotOp, g: Geometry, buf: SSAValue,
              start: SSAValue | None, offset: int) -> Reader:
    tiles: list[SSAValue | int] = [c * g.b_tile for c in range(0, g.cols, g.pair)]
    if buf not in lo.swizzled:
        return Reader(buf, _start(lo, op, _base(lo, op, g, g.b_terms(), offset), start),
                      1 if g.b_nk else g.row_b, tiles)
    atom = 8 * g.cb  # K x N: rows of k; chunk c of n in the row's atom c / 8 at c % 8 ^ rr
    base = _start(lo, op, _base(lo, op, g, {"rr": atom, "i_lo": 8 * atom}, 0), start)
    chunk = _base(lo, op, g, {"w_n": 1, "i_hi": g.wn if g.pair == 2 else 0}, 0)
    rr = _base(lo, op, g, {"rr": 1}, 0)

    def placed(c: int) -> SSAValue:
        def do(cls, x: SSAValue, y: SSAValue | int) -> SSAValue:
            return lo.prologue_op(cls(x, _const(lo, op, y) if isinstance(y, int) else y), op)

        n = do(arith.AddiOp, chunk, g.wn * c) if c else chunk
        inner = do(arith.ShLIOp, do(arith.XOrIOp, do(arith.AndIOp, n, 7), rr), ilog2(g.cb))
        return do(arith.AddiOp, inner, do(arith.MuliOp, do(arith.ShRUIOp, n, 3), g.k * atom))

    return Reader(buf, base, atom, [placed(c) for c in range(0, g.cols, g.pair)])


def _start(lo: Lowering, op: Operation, base: SSAValue, start: SSAValue | None) -> SSAValue:
    """``base`` plus the stage's dynamic ``start``, if any."""
    return base if start is None else lo.emit(arith.AddiOp(base, start), op)


DOT_LOWERINGS[MmaLayoutAttr, 2] = lower_mma_dot


def _lanes(g: Geometry, r: int, c: int) -> list[int]:
    """The accumulator lanes of mma (r, c)'s four: rows ``2 r + e / 2``, columns
    ``2 c + e % 2`` of the thread's row-major block."""
    return [(2 * r + e // 2) * 2 * g.cols + 2 * c + e % 2 for e in range(4)]


def _base(lo: Lowering, op: Operation, g: Geometry, terms: dict[str, int],
          offset: int) -> SSAValue:
    """``offset + sum(field * coefficient)`` over thread-id fields, in the prologue."""
    def const(value: int) -> SSAValue:
        return _const(lo, op, value)

    tid, total = lo.thread_id(op), const(offset)
    for name, (shift, width) in g.fields().items():
        if not width or not terms.get(name):
            continue
        x = lo.prologue_op(arith.ShRUIOp(tid, const(shift)), op) if shift else tid
        if shift + width < lo.tid_bits:
            x = lo.prologue_op(arith.AndIOp(x, const((1 << width) - 1)), op)
        x = lo.prologue_op(arith.MuliOp(x, const(terms[name])), op)
        total = lo.prologue_op(arith.AddiOp(total, x), op)
    return total


def _const(lo: Lowering, op: Operation, value: int) -> SSAValue:
    """An i32 constant in the prologue (with the thread-id arithmetic)."""
    return lo.prologue_op(arith.ConstantOp.from_int_and_width(value, 32), op)


def _k_step(at: At, g: Geometry, readers: tuple[Reader, Reader], k0: SSAValue,
            accs: list[SSAValue], precision: str) -> list[SSAValue]:
    """One step of k: fragments of A and B at ``k0``, an mma per (r, c); the new accs."""
    a, b = readers
    fa = [at(simt.LdMatrixOp(a.buf, a.address(at, g, k0, r), 4, False))
          for r in range(g.rows)]
    fb = [half for i in range(len(b.tiles))
          for half in _halves(at, at(simt.LdMatrixOp(b.buf, b.address(at, g, k0, i),
                                                     2 * g.pair, not g.b_nk)), g.pair)]
    products = [(fa, fb)]
    if precision == "tf32x3":
        (a_hi, a_lo), (b_hi, b_lo) = (zip(*(_split_tf32(at, f) for f in fs), strict=True)
                                      for fs in (fa, fb))
        products = [(a_lo, b_hi), (a_hi, b_lo), (a_hi, b_hi)]  # small terms first
    out = []
    for r in range(g.rows):
        for c in range(g.cols):
            d = accs[r * g.cols + c]
            for x, y in products:
                d = at(simt.MmaOp(g.shape, x[r], y[c], d))
            out.append(d)
    return out


def _halves(at: At, v: SSAValue, parts: int) -> list[SSAValue]:
    """``v``'s lanes cut into ``parts`` equal vectors."""
    if parts == 1:
        return [v]
    n = v.type.get_shape()[0] // parts  # pyright: ignore[reportAttributeAccessIssue]
    return [_shuffle(at, v, v, list(range(p * n, (p + 1) * n))) for p in range(parts)]


def _split_tf32(at: At, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """``(hi, lo)``: ``x`` rounded to tf32 and the (exact) rest ``x - hi``."""
    bits = at(arith.BitcastOp(x, like(x.type, i32)))
    hi = at(arith.BitcastOp(round_tf32(at, bits), x.type))
    return hi, at(arith.SubfOp(x, hi))


def _shuffle(at: At, a: SSAValue, b: SSAValue, mask: list[int]) -> SSAValue:
    """``vector.shuffle``, left out where it would give ``a`` itself."""
    if mask == list(range(a.type.get_shape()[0])):  # pyright: ignore[reportAttributeAccessIssue]
        return a
    return at(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, mask),
                               result_type=VectorType(element_type(a.type), [len(mask)])))


def _join(at: At, g: Geometry, accs: list[SSAValue]) -> SSAValue:
    """The per-mma 4-vectors (by r, then c) as the accumulator vector again: joined
    pairwise (the count is a power of two), then put in lane order."""
    while len(accs) > 1:
        n = accs[0].type.get_shape()[0]  # pyright: ignore[reportAttributeAccessIssue]
        accs = [_shuffle(at, x, y, list(range(2 * n))) for x, y in zip(accs[::2], accs[1::2],
                                                                       strict=True)]
    order = [lane for r in range(g.rows) for c in range(g.cols) for lane in _lanes(g, r, c)]
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return _shuffle(at, accs[0], accs[0], inverse)
