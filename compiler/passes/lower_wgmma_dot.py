"""Part of tile-to-simt: ``tile.dot`` with a ``#tile.mma<version = 3>`` result (tile IR
with layouts) -> SIMT IR on Hopper's warpgroup tensor cores: ``simt.wgmma``. An operand
read from a 128-byte-swizzled shared-memory stage (``pipeline-loads``) is read there in
place; one in registers is first stored by every thread into a swizzled buffer of the
dot's own (placed as a stage would be: ``lower_async_copy.swizzled_index``), between
barriers, fenced for the async proxy; once, before the loop, if it is defined outside it.
An A that is already the accumulator of a wgmma dot with the same warps (attention's P)
stays in registers: its m16 tiles' n8 fragments are the A fragments wgmma takes; unless
it is defined outside the dot's loop (Q in attention): held across the loop, its
fragments would cost every thread 16 or more registers (and occupancy), so it is stored
once before the loop like any other A.

The accumulator layout is ``mma.sync``'s with warps ``[W, 1]`` (``#tile.mma``): warp ``w``
holds m16 tiles ``t`` of rows ``r + 8 w + 8 W (2 t + h)``, every column. The stage of A
was written with its rows permuted (``tile.async_copy.swizzled_row``) so that the wgmma of
warpgroup ``g = w / 4`` for tile ``t``, reading the 64 stored rows from ``64 (t G + g)``,
gives each of its warps exactly those rows: C and D of that wgmma are the warp's
4-vectors of mma tiles ``(t, c)`` over all N (at most 256) columns, joined. k goes in
steps of 16: the K-major A moves 32 bytes within its 128-byte atom (the next atom after 64
columns), the N-major B 16 rows. A B that is the transpose of a tile in registers (K^T in
attention, ``tl.trans(k)``) is not transposed: its source is stored as A is (K-major, n
rows of k) and the wgmma reads it so (``b_k_major``). Nor is an A that is the transpose of
a tile (``dy.T`` of a weight gradient): its source (k rows of m, M-major) stays in its
stage, or is stored unpermuted, and ``ldmatrix.trans`` gives each warp its rows' register
fragments (a permutation of whole 16-byte chunks of the source's rows: free, where TMA
could only move them whole).
Every wgmma of the dot is one group. It is waited for at once, so the accumulator is ready
and the stages are no longer read when the dot's value is used (``sink-wgmma-waits`` later
issues what does not read it first). A dot that only adds into a loop's accumulator
(``running_dots.loop_accumulator``) writes the loop's registers in place: no copy of them
in before it and out after. If ``pipeline-loads`` also left the stages it reads alone for
one more iteration (``ASYNC_DOT_ATTR``), the group may run on into the next iteration
(which waits for all but its own latest), and the wait for all of them follows the loop. An
accumulator the loop rescales first (attention's ``acc * alpha``) is waited for before the
rescale, which then writes the product over it (``simt.wgmma``'s ``in_place``).
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.passes.layouts import element_ids
from compiler.passes.lower_async_copy import SWIZZLED_ALIGN, swizzled_index
from compiler.passes.lower_dot import DOT_LOWERINGS, At, add_offset, shared_vec
from compiler.passes.lower_mma_dot import Geometry, _join, _lanes, _shuffle
from compiler.passes.running_dots import accumulator_scale, loop_accumulator
from compiler.passes.simt_lowering import Lowering
from dialects import simt, tile
from dialects.tile import MmaLayoutAttr
from dialects.tile.async_copy import ASYNC_DOT_ATTR, SWIZZLE_BYTES, WARPGROUP

ROW_GROUP_BYTES = 8 * SWIZZLE_BYTES  # 8 rows of a 128-byte swizzle atom
CHUNK = 8  # 16-bit elements a swizzle keeps together


def lower_wgmma_dot(lo: Lowering, op: tile.DotOp) -> None:
    a_t, b_t, acc_t = lo.operand_types[op]
    assert isinstance(a_t, TensorType) and isinstance(acc_t, TensorType)
    assert isinstance(b_t, TensorType)
    layout = acc_t.encoding
    assert isinstance(layout, MmaLayoutAttr)
    (m, k), n = a_t.get_shape(), acc_t.get_shape()[1]
    g = Geometry(m, n, k, 16, layout.warps[0], 1)
    atom = SWIZZLE_BYTES // 2  # 16-bit elements per atom row
    at = At(InsertPoint.before(op), op.location)
    loop = op.parent_op()
    a_trans = op.a in lo.transposed  # A's source (k rows of m) read by ldmatrix.trans
    fragments = (not a_trans and _fragments_of(a_t, layout) and op.a not in lo.views
                 and (not isinstance(loop, scf.ForOp) or _inside(op.a, loop)))
    k_major = op.b in lo.transposed  # B stored from its source, as A is: n rows of k
    (a_buf, a_start), (b_buf, b_start) = _operands(lo, op, at, (a_t, b_t), g.wm, fragments)
    if not (fragments or a_trans):
        a_start = _plus_warpgroup(lo, op, at, a_start, g, 64 * atom)
    carried = loop_accumulator(op) is not None  # its registers may be written in place
    looping = (ASYNC_DOT_ATTR in op.attributes and carried
               and not _stored_in_loop(lo, op, loop, fragments))
    if looping:
        _wait_before_scale(op)
    a_of = None
    if fragments:
        a_of = _a_fragments(op, at, Geometry(m, k, k, 16, g.wm, 1))
    elif a_trans:
        assert a_buf is not None and a_start is not None
        a_of = _transposed_fragments(lo, op, at, g, a_buf, a_start)
    accs = []
    for t in range(g.rows):  # one chain over k per m16 tile of every warp
        d = _shuffle(at, op.acc, op.acc, [lane for c in range(g.cols) for lane in _lanes(g, t, c)])
        for k0 in range(0, k, 16):
            if a_of is not None:
                a, a_index = a_of(t, k0), None
            else:
                a, a_index = a_buf, _plus(at, a_start, (k0 // atom * m + 64 * t * (
                    g.wm // WARPGROUP)) * atom + k0 % atom)
            b_at = (k0 // atom * n) * atom + k0 % atom if k_major else k0 * atom
            d = at(simt.WgmmaOp(a, a_index, b_buf, _plus(at, b_start, b_at), d,
                                ROW_GROUP_BYTES, simt.K_MAJOR_LBO if k_major else k * SWIZZLE_BYTES,
                                ROW_GROUP_BYTES, carried and k0 == 0, k_major))
        accs.append(d)
    at(simt.WgmmaCommitOp())
    at(simt.WgmmaWaitOp(1 if looping else 0))
    if looping:
        loop = op.parent_op()
        assert loop is not None
        Rewriter.insert_op(simt.WgmmaWaitOp(0), InsertPoint.after(loop))
    lo.replace(op, _join(at, g, accs))


def _stored_in_loop(lo: Lowering, op: tile.DotOp, loop: Operation | None,
                    fragments: bool) -> bool:
    """Whether an operand of ``op`` is stored into its buffer in every iteration of
    ``loop`` (defined in it, neither a stage nor A's register fragments): a wgmma still
    reading it could not run on into the next iteration."""
    a, b = (lo.transposed[v][0] if v in lo.transposed else v for v in (op.a, op.b))
    known = {**lo.views, **lo.stored}
    return any(v not in known and _inside(v, loop) for v in ((b,) if fragments else (a, b)))


def _wait_before_scale(op: tile.DotOp) -> None:
    """Before a running-on dot's accumulator is scaled (``acc * x``, its first operand
    made ``acc``: the product is written over it), the last iteration's wgmmas are
    waited for."""
    found = accumulator_scale(op)
    if found is None:
        return
    scale, acc = found
    if scale.lhs is not acc:
        scale.operands = [acc, scale.lhs]  # exact: a float product commutes
    Rewriter.insert_op(simt.WgmmaWaitOp(0), InsertPoint.before(scale))


def _a_fragments(op: tile.DotOp, at: At, ga: Geometry):
    """``(t, k0) ->`` the A fragment of m16 tile ``t`` at ``k0`` from A in registers: its
    n8 tiles ``k0 / 8`` and ``k0 / 8 + 1`` as the accumulator of ``ga`` holds them."""
    return lambda t, k0: _shuffle(at, op.a, op.a, [
        lane for c in (k0 // 8, k0 // 8 + 1) for lane in _lanes(ga, t, c)])


def _transposed_fragments(lo: Lowering, op: tile.DotOp, at: At, g: Geometry,
                          buf: SSAValue, start: SSAValue):
    """``(t, k0) ->`` the A fragment of m16 tile ``t`` at ``k0`` from A's source (k rows
    of m, in a swizzled stage or buffer from ``start``): one ``ldmatrix.x4.trans`` each,
    all made here, before the first wgmma (an instruction between two wgmmas that writes
    a register makes ptxas fence the warpgroup again). Warp ``w`` takes A's rows
    ``8 w + 8 W (2 t + h) + r``, the accumulator's: the 8 columns ``8 q`` of the source,
    ``q = w + W h + 2 W t``, in chunk ``q % 8`` of atom ``q / 8``; lane ``8 i + j`` addresses
    source row ``k0 + 8 (i / 2) + j`` of matrix ``i``, ``h = i % 2``, whose chunk is XORed
    with ``j`` (the row's place in its 8)."""
    warps, rows, atom = g.wm, g.k, SWIZZLE_BYTES // 2

    def do(cls, x: SSAValue, y: SSAValue | int) -> SSAValue:
        if isinstance(y, int):
            y = lo.prologue_op(arith.ConstantOp.from_int_and_width(y, 32), op)
        return lo.prologue_op(cls(x, y), op)

    def bit(shift: int) -> SSAValue:
        return do(arith.AndIOp, do(arith.ShRUIOp, tid, shift), 1)

    tid = lo.thread_id(op)
    j = do(arith.AndIOp, tid, 7)
    q = do(arith.AddiOp, do(arith.ShRUIOp, tid, 5), do(arith.MuliOp, bit(3), warps))
    chunk = do(arith.ShLIOp, do(arith.XOrIOp, do(arith.AndIOp, q, 7), j), 3)
    row = do(arith.AddiOp, do(arith.MuliOp, bit(4), 8), j)
    base = do(arith.AddiOp, do(arith.AddiOp, do(arith.MuliOp, do(arith.ShRUIOp, q, 3),
                                                rows * atom), do(arith.MuliOp, row, atom)),
              chunk)
    first = at(arith.AddiOp(start, base))
    frags = {(t, k0): at(simt.LdMatrixOp(buf, _plus(at, first, (warps * t // 4 * rows + k0)
                                                     * atom), 4, trans=True))
             for t in range(g.rows) for k0 in range(0, g.k, 16)}
    return lambda t, k0: frags[t, k0]


def _fragments_of(a_t: TensorType, layout: MmaLayoutAttr) -> bool:
    """Whether A is in registers as the accumulator of a wgmma dot with this dot's warps
    (P in attention): each warp holds its rows as wgmma takes A from registers."""
    a_layout = a_t.encoding
    return (isinstance(a_layout, MmaLayoutAttr) and a_layout.version.data == 3
            and a_layout.warps == layout.warps)


def _operands(lo: Lowering, op: tile.DotOp, at: At, types: tuple[TensorType, TensorType],
              warps: int, fragments: bool) -> list[tuple[SSAValue | None, SSAValue | None]]:
    """(buffer, first element) of A and B: their stages, or a buffer they are stored into
    (A's rows permuted for the accumulator's ``warps``): before the dot's loop for a value
    defined outside it (Q in attention; the dots of later loops read that copy), else
    before the dot; (None, None) for A taken from registers (``fragments``)."""
    kept = {op.a} if fragments else set()
    # a transposed operand is read from its source, as it stands (a stage, or stored)
    a, b = (lo.transposed[v][0] if v in lo.transposed else v for v in (op.a, op.b))
    types = tuple(lo.transposed[v][1] if v in lo.transposed else t  # pyright: ignore
                  for v, t in zip((op.a, op.b), types, strict=True))
    known = {**lo.views, **lo.stored}
    staged = [(v, t) for v, t in zip((a, b), types, strict=True)
              if v not in known and v not in kept]
    if not staged:
        return [(None, None) if fragments else known[a][:2], known[b][:2]]
    elem = types[0].element_type
    size = sum(prod(t.get_shape()) for _, t in staged)
    buf = lo.prologue_op(simt.SharedAllocOp(elem, size, SWIZZLED_ALIGN), op)
    loop = op.parent_op()
    before = (At(InsertPoint.before(loop), op.location)
              if isinstance(loop, scf.ForOp) else None)
    start, out, stores = 0, [], {}
    for v, t in zip((a, b), types, strict=True):
        if v in known or v in kept:
            out.append(known[v][:2] if v in known else (None, None))
            continue
        where = before if before is not None and not _inside(v, loop) else at
        stores.setdefault(where, []).append((v, t, start, warps if v is op.a else 0))
        if where is before:  # the dots of later loops read it there too
            lo.stored[v] = (buf, before.const(start))
        out.append((buf, at.const(start)))
        start += prod(t.get_shape())
    for where, group in stores.items():
        _store(lo, op, where, buf, group)
    return out


def _store(lo: Lowering, op: tile.DotOp, at: At, buf: SSAValue,
           group: list[tuple[SSAValue, TensorType, int, int]]) -> None:
    """Each thread's elements of the ``(value, type, first element, warps)`` of ``group``
    stored swizzled into ``buf``, after every warpgroup's wgmmas of its last use (a
    barrier), and made visible to the async proxy of every thread (fence, barrier)."""
    at(simt.BarrierOp())
    for v, t, start, warps in group:
        rows, cols = t.get_shape()
        index = add_offset(lo, op, swizzled_index(lo, op, t, rows, warps, 16), start)
        ids = element_ids(t.encoding, t.get_shape(), [cols, 1])
        at(simt.SharedStoreOp(buf, index, v, vec=min(shared_vec(ids, [start], 16), CHUNK)))
    at(simt.FenceProxyAsyncOp())
    at(simt.BarrierOp())


def _inside(v: SSAValue, loop: Operation) -> bool:
    """Whether ``v`` is defined within ``loop``'s body."""
    block = v.block if isinstance(v, BlockArgument) else v.owner.parent_block()
    while block is not None:
        parent = block.parent_op()
        if parent is loop:
            return True
        block = parent.parent_block() if parent is not None else None
    return False


def _plus(at: At, x: SSAValue, offset: int) -> SSAValue:
    return at(arith.AddiOp(x, at.const(offset))) if offset else x


def _plus_warpgroup(lo: Lowering, op: tile.DotOp, at: At, start: SSAValue, g: Geometry,
                    rows: int) -> SSAValue:
    """``start`` moved to this thread's warpgroup's 64 rows (``rows`` elements each)."""
    if g.wm == WARPGROUP:
        return start
    shift = lo.prologue_op(arith.ConstantOp.from_int_and_width(
        WARPGROUP.bit_length() - 1, 32), op)
    group = lo.prologue_op(arith.ShRUIOp(lo.warp_id(op), shift), op)
    size = lo.prologue_op(arith.ConstantOp.from_int_and_width(rows, 32), op)
    return at(arith.AddiOp(start, lo.prologue_op(arith.MuliOp(group, size), op)))


DOT_LOWERINGS[MmaLayoutAttr, 3] = lower_wgmma_dot
