"""Triton's "more shape" builtins: ``tl.join``, ``tl.split``, ``tl.interleave``, ``tl.cat``,
``tl.flip``, ``tl.gather``, ``tl.sort``, ``tl.topk``, ``tl.histogram`` and ``tl.swizzle2d``.

``join``, ``split``, ``flip`` and ``gather`` are tile ops of their own; the rest are built
from them and from existing ops, so no backend needs code for them:

- ``interleave(a, b)`` is ``join`` then a reshape merging the last two dimensions (of
  4-D tiles, the first two merged before the join, which adds a dimension);
- ``cat(a, b)`` is ``join``, the new dimension moved first, and a reshape: ``a``'s rows
  then ``b``'s, in order (``can_reorder`` is accepted and unused); tiles of more than
  two dimensions are concatenated as the matrices of their rows;
- ``sort`` is a bitonic network along the last dimension: the partner ``i ^ j`` of every
  element is a ``gather`` (so the GPU backends sort tiles of up to 4096 elements), then a
  compare-exchange by ``where``. It is not stable, which only shows on values that compare equal but differ (``-0.0``/``+0.0``);
  NaN sorts above every number, as in ``np.sort``;
- ``topk(x, k)`` is the descending sort, then the first half of the last dimension
  (a reshape to ``(2, n/2)``, that pair moved last, ``split``) until ``k`` are left;
- ``histogram(x, num_bins)`` compares ``x`` with every bin at once and sums (values outside
  ``[0, num_bins)`` count nowhere);
- ``swizzle2d`` is scalar or elementwise integer arithmetic.
"""

from __future__ import annotations

import operator
from math import prod
from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.creation import arange
from compiler.frontend.triton.reduce import sum_
from compiler.frontend.triton.shape import _shape_axis, _shape_tile, expand_dims, reshape, trans
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import MAX_RANK, Value, broadcast_shapes, cast, splat
from dialects import tile


def _data_tile(cg: CodeGenerator, x: Any, what: str) -> Value:
    x = _shape_tile(cg, x, what)
    if x.is_ptr:
        cg.fail(f"{what} of pointer tiles is not supported (move the offsets instead)")
    return x


@builtin("join")
def join(cg: CodeGenerator, a: Any, b: Any) -> Value:
    """``a`` and ``b`` (broadcast to one shape and type) along a new last dimension of 2."""
    if any(isinstance(v, Value) and v.is_ptr for v in (a, b)):
        cg.fail("tl.join of pointer tiles is not supported (move the offsets instead)")
    av, bv = ops.operands(cg.b, a, b)
    shape = broadcast_shapes(av.shape, bv.shape)
    if not shape:  # two scalars: a tile of 2
        return reshape(cg, join(cg, splat(cg.b, av, (1,)), bv), 2)
    av, bv = (_data_tile(cg, splat(cg.b, v, shape), "tl.join") for v in (av, bv))
    cg.check_rank(len(shape) + 1, "tl.join")
    return cg.b.value(tile.JoinOp(av.ssa, bv.ssa), av.dtype, (*shape, 2))


@builtin("split", method=True)
def split(cg: CodeGenerator, x: Any) -> tuple[Value, Value]:
    """The two halves along the last dimension, which must be 2."""
    x = _data_tile(cg, x, "tl.split")
    if x.shape[-1] != 2:
        cg.fail(f"tl.split needs a last dimension of 2, got {x.describe()}")
    if len(x.shape) == 1:  # Triton gives scalars
        lo, hi = split(cg, reshape(cg, x, 1, 2))
        return sum_(cg, lo), sum_(cg, hi)
    op = cg.b.emit(tile.SplitOp(x.ssa))
    return (Value(op.lhs, x.dtype, x.shape[:-1]), Value(op.rhs, x.dtype, x.shape[:-1]))


@builtin("interleave")
def interleave(cg: CodeGenerator, a: Any, b: Any) -> Value:
    """Elements of ``a`` and ``b`` alternating along the last dimension."""
    av, bv = ops.operands(cg.b, a, b)
    shape = broadcast_shapes(av.shape, bv.shape)
    if len(shape) == MAX_RANK:  # the join adds a dimension: merge the first two before it
        av, bv = (reshape(cg, splat(cg.b, v, shape), shape[0] * shape[1], *shape[2:])
                  for v in (av, bv))
    j = join(cg, av, bv)
    return reshape(cg, j, *shape[:-1], 2 * shape[-1])


@builtin("cat")
def cat(cg: CodeGenerator, a: Any, b: Any, can_reorder: Any = False) -> Value:
    """``a`` then ``b`` along dimension 0 (same shapes)."""
    av, bv = (_data_tile(cg, v, "tl.cat") for v in (a, b))
    if av.shape != bv.shape:
        cg.fail(f"tl.cat needs tiles of one shape, got {av.describe()} and {bv.describe()}")
    if len(av.shape) > 2:  # as matrices of their rows: the join below adds a dimension
        rows = (av.shape[0], prod(av.shape[1:]))
        both = cat(cg, reshape(cg, av, *rows), reshape(cg, bv, *rows))
        return reshape(cg, both, 2 * av.shape[0], *av.shape[1:])
    j = join(cg, av, bv)
    rank = len(av.shape)
    first = trans(cg, j, rank, *range(rank))
    return reshape(cg, first, 2 * av.shape[0], *av.shape[1:])


@builtin("flip", method=True)
def flip(cg: CodeGenerator, x: Any, dim: Any = None) -> Value:
    """``x`` reversed along ``dim`` (the last dimension when None)."""
    x = _data_tile(cg, x, "tl.flip")
    d = len(x.shape) - 1 if dim is None else _shape_axis(cg, dim, len(x.shape), "tl.flip")
    if x.shape[d] == 1:
        return x
    return cg.b.value(tile.FlipOp(x.ssa, d), x.dtype, x.shape)


@builtin("gather")
def gather(cg: CodeGenerator, src: Any, index: Any, axis: Any) -> Value:
    """``src`` picked along ``axis`` by ``index`` (same shape elsewhere; indices clamped)."""
    sv = _data_tile(cg, src, "tl.gather")
    iv = _data_tile(cg, index, "tl.gather")
    ax = _shape_axis(cg, axis, len(sv.shape), "tl.gather")
    if not iv.dtype.is_int() or iv.dtype is tl.int1:
        cg.fail(f"tl.gather index must be integers, got {iv.describe()}")
    if len(iv.shape) != len(sv.shape) or any(
            a != b for d, (a, b) in enumerate(zip(sv.shape, iv.shape)) if d != ax):
        cg.fail(f"tl.gather: index {iv.describe()} must have the shape of {sv.describe()} "
                f"except along axis {ax}")
    return cg.b.value(tile.GatherOp(sv.ssa, iv.ssa, ax), sv.dtype, iv.shape)


# -- sort -----------------------------------------------------------------------------------


def _column_index(cg: CodeGenerator, shape: tuple[int, ...]) -> Value:
    """Each element's index along the last dimension."""
    column = arange(cg, 0, shape[-1])
    for _ in shape[:-1]:
        column = expand_dims(cg, column, 0)
    return splat(cg.b, column, shape)


def _partner(cg: CodeGenerator, x: Value, i: Value, j: int) -> Value:
    """``x`` at column ``i ^ j`` for every column ``i`` (``j`` a power of two): a gather."""
    return gather(cg, x, ops.binary(cg.b, "xor", i, j), len(x.shape) - 1)


def _above(cg: CodeGenerator, p: Value, q: Value) -> Value:
    """``p > q``, with NaN above every number."""
    gt = ops.compare(cg.b, "gt", p, q)
    if not p.dtype.is_float:
        return gt
    nan_p, num_q = ops.compare(cg.b, "ne", p, p), ops.compare(cg.b, "eq", q, q)
    return ops.binary(cg.b, "or", gt, ops.binary(cg.b, "and", nan_p, num_q))


def _bit_clear(cg: CodeGenerator, i: Value, bit: int) -> Value:
    return ops.compare(cg.b, "eq", ops.binary(cg.b, "and", i, bit), 0)


def _exchange(cg: CodeGenerator, x: Value, i: Value, k: int, j: int, n: int,
              descending: bool) -> Value:
    """One compare-exchange step of the bitonic network (blocks of ``k``, distance ``j``)."""
    y = _partner(cg, x, i, j)
    low = _bit_clear(cg, i, j)
    a, b = ops.select(cg.b, low, x, y), ops.select(cg.b, low, y, x)  # lower index first
    ascending = _bit_clear(cg, i, k) if k < n else True
    if descending:
        ascending = ops.unary(cg.b, "not", ascending) if isinstance(ascending, Value) else False
    swap = ops.select(cg.b, ascending, _above(cg, a, b), _above(cg, b, a))
    return ops.select(cg.b, swap, y, x)


@builtin("sort", method=True)
def sort(cg: CodeGenerator, x: Any, dim: Any = None, descending: Any = False) -> Value:
    """``x`` sorted along its last dimension (bitonic; see the module docstring)."""
    x = _data_tile(cg, x, "tl.sort")
    last = len(x.shape) - 1
    if dim is not None and _shape_axis(cg, dim, len(x.shape), "tl.sort") != last:
        cg.fail("tl.sort sorts along the last dimension only (as Triton)")
    dtype = x.dtype
    if dtype is tl.int1:
        x = cast(cg.b, x, tl.int32)
    n, i = x.shape[-1], _column_index(cg, x.shape)
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            x = _exchange(cg, x, i, k, j, n, bool(descending))
            j //= 2
        k *= 2
    return cast(cg.b, x, dtype)


@builtin("topk", method=True)
def topk(cg: CodeGenerator, x: Any, k: Any, dim: Any = None) -> Value:
    """The ``k`` largest values along the last dimension, largest first (Triton's
    ``tl.topk``): the descending sort, then its first half taken until ``k`` are left."""
    x = _data_tile(cg, x, "tl.topk")
    count = cg.const_int(k, "tl.topk k")
    n = x.shape[-1]
    if count < 1 or count & (count - 1) or count > n:
        cg.fail(f"tl.topk: k must be a power of two of at most {n}, got {count}")
    if len(x.shape) == MAX_RANK:
        cg.fail(f"tl.topk takes tiles of 1 to {MAX_RANK - 1} dimensions (its halving needs "
                "one more dimension)")
    top = sort(cg, x, dim, True)
    lead = top.shape[:-1]
    while top.shape[-1] > count:
        halves = reshape(cg, top, *lead, 2, top.shape[-1] // 2)
        top = split(cg, trans(cg, halves, *range(len(lead)), len(lead) + 1, len(lead)))[0]
    return top


# -- histogram, swizzle2d -------------------------------------------------------------------


@builtin("histogram", method=True)
def histogram(cg: CodeGenerator, x: Any, num_bins: Any, mask: Any = None) -> Value:
    """int32 counts of the values ``0 .. num_bins - 1`` in the 1-D integer tile ``x``."""
    x = _data_tile(cg, x, "tl.histogram")
    bins = cg.const_int(num_bins, "tl.histogram num_bins")
    if len(x.shape) != 1 or not x.dtype.is_int():
        cg.fail(f"tl.histogram needs a 1-D integer tile, got {x.describe()}")
    if bins < 1 or bins & (bins - 1):
        cg.fail(f"tl.histogram: num_bins must be a power of two, got {bins}")
    hit = ops.compare(cg.b, "eq", expand_dims(cg, x, 0),
                      expand_dims(cg, arange(cg, 0, bins), 1))
    if mask is not None:
        hit = ops.binary(cg.b, "and", hit, expand_dims(cg, ops.to_bool(cg.b, mask), 0))
    return sum_(cg, cast(cg.b, hit, tl.int32), 1)


_PY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "floordiv": operator.floordiv, "mod": operator.mod, "min": min}


def _arith(cg: CodeGenerator, name: str, x: Any, y: Any) -> Any:
    if not isinstance(x, Value) and not isinstance(y, Value):
        return _PY[name](x, y)
    return ops.binary(cg.b, name, x, y)


@builtin("swizzle2d")
def swizzle2d(cg: CodeGenerator, i: Any, j: Any, size_i: Any, size_j: Any,
              size_g: Any) -> tuple[Any, Any]:
    """Row-major ``(i, j)`` of a ``size_i x size_j`` grid renumbered so consecutive indices
    walk down groups of ``size_g`` rows, column by column (Triton's meaning)."""
    ij = _arith(cg, "add", _arith(cg, "mul", i, size_j), j)
    group_size = _arith(cg, "mul", size_g, size_j)
    first_row = _arith(cg, "mul", _arith(cg, "floordiv", ij, group_size), size_g)
    rows = _arith(cg, "min", _arith(cg, "sub", size_i, first_row), size_g)  # last group
    in_group = _arith(cg, "mod", ij, group_size)
    return (_arith(cg, "add", first_row, _arith(cg, "mod", in_group, rows)),
            _arith(cg, "floordiv", in_group, rows))
