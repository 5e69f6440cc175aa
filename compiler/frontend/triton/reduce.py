"""Triton's reductions and scans -> ``tile.reduce`` / ``tile.scan``: ``tl.sum``,
``tl.max``, ``tl.min``, ``tl.xor_sum``, ``tl.argmax``, ``tl.argmin``, ``tl.reduce``, ``tl.cumsum``,
``tl.cumprod``, ``tl.associative_scan``; each also a tile method (``x.sum(axis)``).

Every builtin builds its combiner region by pointing the builder at the region's block
and either emitting the combination directly (``sum``, ``max``, ``argmax``, ...) or
inlining the user's ``@tc.func`` there (``tl.reduce``, ``tl.associative_scan``).

Conventions (Triton's, unless noted): ``axis=None`` reduces every dimension, one after
the other; sums of integers narrower than 32 bits accumulate in int32 (uint32 for
unsigned), of bfloat16 and fp8 in float32; float ``max``/``min`` propagate NaN like
``tl.maximum``; ``argmax``/``argmin`` give the first index of the extreme value, NaN
counting as the extreme (NumPy's rule), as int32. A reduction's combiner must be
associative and commutative; a scan's associative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import Any

from xdsl.ir import Block, Region

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.creation import dtype_arg
from compiler.frontend.triton.shape import broadcast_to, expand_dims, reshape
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Builder, Value, cast, ir_type, splat
from compiler.source import TileFunction
from dialects import tile

Combine = Callable[[Builder, list[Value], list[Value]], Sequence[Any]]

# -- reductions ---------------------------------------------------------------------------


@builtin("sum", method=True)
def sum_(cg: CodeGenerator, x: Any, axis: Any = None, keep_dims: Any = False,
         dtype: Any = None) -> Value:
    x = _accumulator(cg, _tile(cg, x, "tl.sum"), dtype)
    return _reduce_all(cg, [x], axis, keep_dims, _binary("add"))[0]


@builtin("max", method=True)
def max_(cg: CodeGenerator, x: Any, axis: Any = None, return_indices: Any = False,
         return_indices_tie_break_left: Any = True, keep_dims: Any = False) -> Any:
    if return_indices:
        return _arg_extreme(cg, x, axis, "gt", return_indices_tie_break_left, keep_dims,
                            values=True)
    return _reduce_all(cg, [_tile(cg, x, "tl.max")], axis, keep_dims, _binary("max"))[0]


@builtin("min", method=True)
def min_(cg: CodeGenerator, x: Any, axis: Any = None, return_indices: Any = False,
         return_indices_tie_break_left: Any = True, keep_dims: Any = False) -> Any:
    if return_indices:
        return _arg_extreme(cg, x, axis, "lt", return_indices_tie_break_left, keep_dims,
                            values=True)
    return _reduce_all(cg, [_tile(cg, x, "tl.min")], axis, keep_dims, _binary("min"))[0]


@builtin("xor_sum", method=True)
def xor_sum(cg: CodeGenerator, x: Any, axis: Any = None, keep_dims: Any = False) -> Value:
    xv = _tile(cg, x, "tl.xor_sum")
    if not xv.dtype.is_int():
        cg.fail(f"tl.xor_sum needs integers, got {xv.describe()}")
    return _reduce_all(cg, [xv], axis, keep_dims, _binary("xor"))[0]


@builtin("argmax", method=True)
def argmax(cg: CodeGenerator, x: Any, axis: Any = None, tie_break_left: Any = True,
           keep_dims: Any = False) -> Value:
    return _arg_extreme(cg, x, axis, "gt", tie_break_left, keep_dims)


@builtin("argmin", method=True)
def argmin(cg: CodeGenerator, x: Any, axis: Any = None, tie_break_left: Any = True,
           keep_dims: Any = False) -> Value:
    return _arg_extreme(cg, x, axis, "lt", tie_break_left, keep_dims)


@builtin("reduce", method=True)
def reduce(cg: CodeGenerator, x: Any, axis: Any, combine_fn: Any,
           keep_dims: Any = False) -> Any:
    xs = _tiles(cg, x, "tl.reduce")
    out = _reduce_all(cg, xs, axis, keep_dims, _user_combine(cg, combine_fn, len(xs)))
    return out[0] if isinstance(x, Value) else tuple(out)


def _arg_extreme(cg: CodeGenerator, x: Any, axis: Any, cmp: str, left: Any, keep_dims: Any,
                 values: bool = False) -> Any:
    name = "tl.argmax" if cmp == "gt" else "tl.argmin"
    xv = _tile(cg, x, name)
    if axis is None and len(xv.shape) > 1:
        # the flat index of the first extreme: reduce the row-major flattening
        xv = reshape(cg, xv, (prod(xv.shape),))
        axis = 0
    ax = _axis(cg, axis, xv)
    index = _axis_index(cg, xv.shape, ax)
    out = _reduce_all(cg, [xv, index], ax, keep_dims, _arg_combine(cmp, bool(left)))
    return (out[0], out[1]) if values else out[1]


# -- scans --------------------------------------------------------------------------------


@builtin("cumsum", method=True)
def cumsum(cg: CodeGenerator, x: Any, axis: Any = 0, reverse: Any = False,
           dtype: Any = None) -> Value:
    x = _accumulator(cg, _tile(cg, x, "tl.cumsum"), dtype)
    return _scan(cg, [x], axis, reverse, _binary("add"))[0]


@builtin("cumprod", method=True)
def cumprod(cg: CodeGenerator, x: Any, axis: Any = 0, reverse: Any = False) -> Value:
    x = _tile(cg, x, "tl.cumprod")
    if x.dtype is tl.bfloat16 or x.dtype.is_fp8():
        x = cast(cg.b, x, tl.float32)
    return _scan(cg, [x], axis, reverse, _binary("mul"))[0]


@builtin("associative_scan", method=True)
def associative_scan(cg: CodeGenerator, x: Any, axis: Any, combine_fn: Any,
                     reverse: Any = False) -> Any:
    xs = _tiles(cg, x, "tl.associative_scan")
    out = _scan(cg, xs, axis, reverse, _user_combine(cg, combine_fn, len(xs)))
    return out[0] if isinstance(x, Value) else tuple(out)


# -- building -----------------------------------------------------------------------------


def _reduce_all(cg: CodeGenerator, xs: list[Value], axis: Any, keep_dims: Any,
                combine: Combine) -> list[Value]:
    """Reduce along ``axis``, or along every dimension (last first) when it is None."""
    rank = len(xs[0].shape)
    axes = list(range(rank - 1, -1, -1)) if axis is None else [_axis(cg, axis, xs[0])]
    for ax in axes:
        xs = _reduce(cg, xs, ax, combine)
    if keep_dims:
        xs = [_keep_dims(cg, v, rank, axes) for v in xs]
    return xs


def _reduce(cg: CodeGenerator, xs: list[Value], axis: int, combine: Combine) -> list[Value]:
    region = _combiner(cg, [v.dtype for v in xs], combine)
    op = cg.b.emit(tile.ReduceOp([v.ssa for v in xs], axis, region))
    shape = tuple(n for d, n in enumerate(xs[0].shape) if d != axis)
    return [Value(r, v.dtype, shape) for r, v in zip(op.results, xs, strict=True)]


def _scan(cg: CodeGenerator, xs: list[Value], axis: Any, reverse: Any,
          combine: Combine) -> list[Value]:
    if isinstance(reverse, Value):
        cg.fail("reverse must be a constexpr bool")
    ax = _axis(cg, axis, xs[0])
    region = _combiner(cg, [v.dtype for v in xs], combine)
    op = cg.b.emit(tile.ScanOp([v.ssa for v in xs], ax, region, bool(reverse)))
    return [Value(r, v.dtype, v.shape) for r, v in zip(op.results, xs, strict=True)]


def _combiner(cg: CodeGenerator, dtypes: list[tl.dtype], combine: Combine) -> Region:
    """The combiner region: ``combine(earlier, later)`` built inside its block."""
    block = Block(arg_types=[ir_type(d) for d in dtypes] * 2)
    args = [Value(a, d) for a, d in zip(block.args, dtypes * 2, strict=True)]
    outer, cg.b.block = cg.b.block, block
    try:
        out = list(combine(cg.b, args[:len(dtypes)], args[len(dtypes):]))
        if len(out) != len(dtypes):
            cg.fail(f"the combine function must return {len(dtypes)} value(s), "
                    f"got {len(out)}")
        vals = [ops.materialize(cg.b, v, d, ()) for v, d in zip(out, dtypes, strict=True)]
        cg.b.emit(tile.YieldOp([v.ssa for v in vals]))
    finally:
        cg.b.block = outer
    return Region(block)


def _user_combine(cg: CodeGenerator, fn: Any, n: int) -> Combine:
    """A ``@tc.func`` (or a two-operand ``tl`` builtin such as ``tl.maximum``)."""
    name = getattr(fn, "__tilec_builtin__", None)
    if not isinstance(fn, TileFunction) and (name is None or n != 1):
        cg.fail("combine_fn must be a @tc.func taking (earlier..., later...) and "
                f"returning {n} value(s)")

    def combine(_b: Builder, a: list[Value], b: list[Value]) -> Sequence[Any]:
        if name is not None:
            out = cg.builtin(name)(cg, a[0], b[0])
        else:
            out = cg.inline_call(fn, [*a, *b], {})
        if out is None:
            cg.fail(f"combine_fn {fn.__name__} returns nothing")
        return list(out) if isinstance(out, tuple | list) else [out]
    return combine


# -- operands and shapes ------------------------------------------------------------------


def _tile(cg: CodeGenerator, x: Any, what: str) -> Value:
    if not isinstance(x, Value) or not x.shape or x.is_ptr:
        got = x.describe() if isinstance(x, Value) else type(x).__name__
        cg.fail(f"{what} expects a tile, got {got}")
    return x


def _tiles(cg: CodeGenerator, x: Any, what: str) -> list[Value]:
    xs = [_tile(cg, v, what) for v in (x if isinstance(x, tuple | list) else [x])]
    if not xs or len({v.shape for v in xs}) != 1:
        cg.fail(f"{what} expects tiles of one shape")
    return xs


def _axis(cg: CodeGenerator, axis: Any, x: Value) -> int:
    rank = len(x.shape)
    if isinstance(axis, Value) or not isinstance(axis, int) or not -rank <= axis < rank:
        cg.fail(f"axis must be a constexpr integer in [{-rank}, {rank}), got {axis!r}")
    return axis % rank


def _accumulator(cg: CodeGenerator, x: Value, dtype: Any) -> Value:
    """``x`` in the type a sum accumulates in (Triton's rule, or ``dtype``)."""
    if dtype is not None:
        return cast(cg.b, x, dtype_arg(cg, dtype))
    d = x.dtype
    if d.is_int() and d.bits < 32:
        return cast(cg.b, x, tl.uint32 if d.kind == "u" else tl.int32)
    return cast(cg.b, x, tl.float32) if d is tl.bfloat16 or d.is_fp8() else x


def _axis_index(cg: CodeGenerator, shape: tuple[int, ...], axis: int) -> Value:
    """The int32 tile of ``shape`` holding each element's index along ``axis``."""
    index = cg.b.value(tile.RangeOp(0, shape[axis]), tl.int32, (shape[axis],))
    if len(shape) == 1:
        return index
    for d in range(len(shape)):
        if d != axis:
            index = expand_dims(cg, index, d)
    return broadcast_to(cg, index, shape)


def _keep_dims(cg: CodeGenerator, v: Value, rank: int, axes: list[int]) -> Value:
    if not v.shape:
        return splat(cg.b, v, (1,) * rank)
    for ax in sorted(axes):
        v = expand_dims(cg, v, ax)
    return v


def _binary(name: str) -> Combine:
    return lambda bld, a, b: [ops.binary(bld, name, a[0], b[0])]


def _arg_combine(cmp: str, left: bool) -> Combine:
    """(value, index) pairs: the extreme value wins, NaN above every number; on ties
    (and between NaNs) the smaller index with ``left``, else the larger."""
    def combine(bld: Builder, a: list[Value], b: list[Value]) -> list[Value]:
        (av, ai), (bv, bi) = a, b
        first = ops.compare(bld, "lt" if left else "gt", ai, bi)
        if av.dtype.is_float:
            a_nan, b_nan = ops.compare(bld, "ne", av, av), ops.compare(bld, "ne", bv, bv)
            tie = ops.binary(bld, "or", ops.compare(bld, "eq", av, bv),
                             ops.binary(bld, "and", a_nan, b_nan))
            strict = ops.binary(bld, "or", ops.compare(bld, cmp, av, bv), ops.binary(
                bld, "and", a_nan, ops.unary(bld, "not", b_nan)))
        else:
            tie, strict = ops.compare(bld, "eq", av, bv), ops.compare(bld, cmp, av, bv)
        take_a = ops.binary(bld, "or", strict, ops.binary(bld, "and", tie, first))
        return [ops.select(bld, take_a, av, bv), ops.select(bld, take_a, ai, bi)]
    return combine
