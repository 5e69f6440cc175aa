"""cuTile's reductions and scans: ``ct.sum``, ``prod``, ``max``, ``min``, ``argmax``,
``argmin``, ``reduce`` (``axis`` None, an integer or a tuple of them; ``keepdims``) and
``ct.cumsum``, ``cumprod``, ``scan``, built on the Triton-style language's
``tile.reduce``/``tile.scan`` builders.

Float ``max``/``min`` ignore NaNs unless ``propagate_nan`` (cuTile's default; a row of
NaNs gives NaN); ``argmax``/``argmin`` give the first index of the extreme, a NaN
counting as the least extreme unless ``propagate_nan`` (then the first NaN's index).
``rounding_mode`` takes ``RN`` only (a reduction rounds each step to nearest).
``ct.reduce``/``ct.scan`` take a plain function (inlined), an ``operator`` function
(``operator.add``) or a two-operand ``ct`` builtin; ``identity`` is checked to be
constants and not otherwise needed.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Sequence
from math import prod as product
from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.math import extreme, flush, rounding
from compiler.frontend.cutile.table import builtin, method
from compiler.frontend.triton import reduce as tr
from compiler.frontend.triton.shape import broadcast_to, reshape
from compiler.frontend.values import Builder, Value, cast
from compiler.source import HELPER, TileFunction
from compiler.tile._enums import RoundingMode

_OPERATORS = {operator.add: "add", operator.mul: "mul", operator.sub: "sub",
              operator.and_: "and", operator.or_: "or", operator.xor: "xor"}


def _axes(cg: CodeGenerator, axis: Any, x: Value, what: str) -> list[int]:
    """The axes to reduce, last first (None: all)."""
    rank = len(x.shape)
    if axis is None:
        return list(range(rank - 1, -1, -1))
    items = list(axis) if isinstance(axis, tuple | list) else [axis]
    out = []
    for a in items:
        if isinstance(a, Value) or not isinstance(a, int) or not -rank <= a < rank:
            cg.fail(f"{what}: axis must be None, a constant integer in [{-rank}, {rank}) or "
                    f"a tuple of them, got {axis!r}")
        out.append(a % rank)
    if len(set(out)) != len(out):
        cg.fail(f"{what}: axis {axis!r} names an axis twice")
    return sorted(out, reverse=True)


def reduce_axes(cg: CodeGenerator, xs: list[Value], axis: Any, keepdims: Any,
                combine: tr.Combine, what: str) -> list[Value]:
    rank = len(xs[0].shape)
    axes = _axes(cg, axis, xs[0], what)
    for ax in axes:
        xs = tr._reduce(cg, xs, ax, combine)
    if keepdims:
        xs = [tr._keep_dims(cg, v, rank, axes) for v in xs]
    return xs


def _float_checks(cg: CodeGenerator, x: Value, rounding_mode: Any, flush_to_zero: Any,
                  what: str) -> None:
    rounding(cg, rounding_mode, (RoundingMode.RN,), x.dtype, what)
    flush(cg, flush_to_zero, x.dtype, what)


def _arithmetic(name: str, op: str) -> None:
    """``ct.sum``/``ct.prod``: the operator folded in the accumulator's dtype."""
    def handler(cg: CodeGenerator, x: Any, axis: Any = None, keepdims: Any = False,
                rounding_mode: Any = None, flush_to_zero: Any = False) -> Value:
        what = f"ct.{name}"
        xv = tr._tile(cg, x, what)
        _float_checks(cg, xv, rounding_mode, flush_to_zero, what)
        return reduce_axes(cg, [tr._accumulator(cg, xv, None)], axis, keepdims,
                           tr._binary(op), what)[0]
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)
    method(name)(handler)


_arithmetic("sum", "add")
_arithmetic("prod", "mul")


def _extreme(name: str) -> None:
    def handler(cg: CodeGenerator, x: Any, axis: Any = None, keepdims: Any = False,
                flush_to_zero: Any = False, propagate_nan: Any = False) -> Value:
        what = f"ct.{name}"
        xv = tr._tile(cg, x, what)
        flush(cg, flush_to_zero, xv.dtype, what)
        if xv.dtype.is_fp8():  # exact in float32, where the comparisons are made
            xv = cast(cg.b, xv, tl.float32)

        def combine(_b: Builder, a: list[Value], b: list[Value]) -> list[Value]:
            return [extreme(cg, name, a[0], b[0], bool(propagate_nan))]
        out = reduce_axes(cg, [xv], axis, keepdims, combine, what)[0]
        return out if out.dtype == x.dtype else cast(cg.b, out, x.dtype)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)
    method(name)(handler)


_extreme("max")
_extreme("min")


def _arg(name: str, cmp: str) -> None:
    def handler(cg: CodeGenerator, x: Any, axis: Any = None, keepdims: Any = False,
                propagate_nan: Any = False) -> Value:
        what = f"ct.{name}"
        xv = tr._tile(cg, x, what)
        if isinstance(axis, tuple | list):
            cg.fail(f"{what}: axis must be None or one constant integer, got {axis!r}")
        rank = len(xv.shape)
        if axis is None and rank > 1:  # the flat index: reduce the flattening
            xv = reshape(cg, xv, (product(xv.shape),))
        ax = 0 if axis is None else tr._axis(cg, axis, xv)
        index = tr._axis_index(cg, xv.shape, ax)
        combine = tr._arg_combine(cmp, True) if propagate_nan or not xv.dtype.is_float \
            else _arg_ignoring_nan(cmp)
        out = tr._reduce_all(cg, [xv, index], ax, False, combine)[1]
        if keepdims:
            out = tr._keep_dims(cg, out, rank, list(range(rank)) if axis is None else [ax])
        return out
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)
    method(name)(handler)


def _arg_ignoring_nan(cmp: str) -> tr.Combine:
    """(value, index) pairs: the extreme value wins, a NaN losing to every number; on
    ties (and between NaNs) the smaller index."""
    def combine(bld: Builder, a: list[Value], b: list[Value]) -> list[Value]:
        (av, ai), (bv, bi) = a, b
        a_nan, b_nan = ops.compare(bld, "ne", av, av), ops.compare(bld, "ne", bv, bv)
        tie = ops.binary(bld, "or", ops.compare(bld, "eq", av, bv),
                         ops.binary(bld, "and", a_nan, b_nan))
        strict = ops.binary(bld, "or", ops.compare(bld, cmp, av, bv), ops.binary(
            bld, "and", b_nan, ops.unary(bld, "not", a_nan)))
        first = ops.compare(bld, "lt", ai, bi)
        take_a = ops.binary(bld, "or", strict, ops.binary(bld, "and", tie, first))
        return [ops.select(bld, take_a, av, bv), ops.select(bld, take_a, ai, bi)]
    return combine


_arg("argmax", "gt")
_arg("argmin", "lt")


# ---------------------------------------------------------------- scans


def _scan_op(name: str, combine: str) -> None:
    def handler(cg: CodeGenerator, x: Any, axis: Any = 0, reverse: Any = False,
                rounding_mode: Any = None, flush_to_zero: Any = False) -> Value:
        what = f"ct.{name}"
        xv = tr._tile(cg, x, what)
        _float_checks(cg, xv, rounding_mode, flush_to_zero, what)
        scan = tr.cumsum if combine == "add" else tr.cumprod
        return scan(cg, xv, axis, reverse)
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


_scan_op("cumsum", "add")
_scan_op("cumprod", "mul")


# ---------------------------------------------------------------- custom combiners


def _combine_fn(cg: CodeGenerator, func: Any, n: int, what: str) -> tr.Combine:
    """``func`` as a combiner of ``n`` values a side."""
    name = getattr(func, "__tilec_builtin__", None)
    if func in _OPERATORS or name is not None:
        if n != 1:
            cg.fail(f"{what}: an operator or builtin combines one tile; for {n} tiles, "
                    "pass a function of 2 * n values returning n")
        if func in _OPERATORS:
            return tr._binary(_OPERATORS[func])
        return lambda _b, a, b: [cg.builtin(name)(cg, a[0], b[0])]
    if isinstance(func, TileFunction):
        fn = func
    elif inspect.isfunction(func):
        fn = TileFunction(func, what=HELPER)
    else:
        cg.fail(f"{what}: func must be a function (a def), an operator function or a ct "
                f"builtin, got {func!r}")

    def combine(_b: Builder, a: list[Value], b: list[Value]) -> Sequence[Any]:
        out = cg.inline_call(fn, [*a, *b], {})
        if out is None:
            cg.fail(f"{what}: {fn.__name__} returns nothing")
        return list(out) if isinstance(out, tuple | list) else [out]
    return combine


def _identity(cg: CodeGenerator, identity: Any, n: int, what: str) -> None:
    items = identity if isinstance(identity, tuple | list) else (identity,)
    if len(items) != n or any(isinstance(v, Value) or not isinstance(v, bool | int | float)
                              for v in items):
        cg.fail(f"{what}: identity must be {n} constant number(s), got {identity!r}")


def _tiles(cg: CodeGenerator, x: Any, what: str) -> list[Value]:
    xs = [tr._tile(cg, v, what) for v in (x if isinstance(x, tuple | list) else [x])]
    shape = tuple(max(d) for d in zip(*(v.shape for v in xs), strict=True)) \
        if len({len(v.shape) for v in xs}) == 1 else None
    if shape is None:
        cg.fail(f"{what}: the tiles must have one rank")
    return [broadcast_to(cg, v, shape) if v.shape != shape else v for v in xs]


@builtin("reduce")
def reduce(cg: CodeGenerator, x: Any, axis: Any, func: Any, identity: Any,
           keepdims: Any = False) -> Any:
    xs = _tiles(cg, x, "ct.reduce")
    _identity(cg, identity, len(xs), "ct.reduce")
    if isinstance(axis, tuple | list) or axis is None:
        cg.fail(f"ct.reduce: axis must be one constant integer, got {axis!r}")
    out = reduce_axes(cg, xs, axis, keepdims, _combine_fn(cg, func, len(xs), "ct.reduce"),
                      "ct.reduce")
    return out[0] if isinstance(x, Value) else tuple(out)


@builtin("scan")
def scan(cg: CodeGenerator, x: Any, axis: Any, func: Any, identity: Any,
         reverse: Any = False) -> Any:
    xs = _tiles(cg, x, "ct.scan")
    _identity(cg, identity, len(xs), "ct.scan")
    out = tr._scan(cg, xs, axis, reverse, _combine_fn(cg, func, len(xs), "ct.scan"))
    return out[0] if isinstance(x, Value) else tuple(out)
