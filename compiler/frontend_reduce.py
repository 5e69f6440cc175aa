"""Frontend: reductions and scans -> ``tile.reduce`` / ``tile.scan``.

A mixin of ``CodeGenerator`` (``compiler/frontend.py``). Every builtin builds its
combiner region by pointing the builder at the region's block and either emitting the
combination directly (``sum``, ``max``, ``argmax``, ...) or inlining the user's
``@tc.func`` there (``tl.reduce``, ``tl.associative_scan``). The methods ``x.sum(axis)``,
``x.max(...)``, ... are these builtins with ``x`` first (``TILE_METHODS``).

Conventions (Triton's, unless noted): ``axis=None`` reduces every dimension, one after
the other; sums of integers narrower than 32 bits accumulate in int32 (uint32 for
unsigned), of bfloat16 in float32; float ``max``/``min`` propagate NaN like
``tl.maximum``; ``argmax``/``argmin`` give the first index of the extreme value, NaN
counting as the extreme (NumPy's rule), as int32. A reduction's combiner must be
associative and commutative; a scan's associative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Block, Region

import compiler.language as tl
from compiler import semantics as S
from compiler.semantics import Value
from dialects import tile

Combine = Callable[[S.Builder, list[Value], list[Value]], Sequence[Any]]


class ReduceMixin:
    """``builtin_sum``, ``builtin_reduce``, ``builtin_cumsum``, ... of the code generator."""

    TILE_METHODS = frozenset({"sum", "max", "min", "argmax", "argmin", "reduce", "cumsum",
                              "cumprod", "associative_scan"})

    # -- reductions ---------------------------------------------------------------------

    def builtin_sum(self, x: Any, axis: Any = None, keep_dims: Any = False,
                    dtype: Any = None) -> Value:
        x = self._accumulator(self._tile(x, "tl.sum"), dtype)
        return self._reduce_all([x], axis, keep_dims, _binary("add"))[0]

    def builtin_max(self, x: Any, axis: Any = None, return_indices: Any = False,
                    return_indices_tie_break_left: Any = True, keep_dims: Any = False) -> Any:
        if return_indices:
            return self._arg_extreme(x, axis, "gt", return_indices_tie_break_left, keep_dims,
                                     values=True)
        return self._reduce_all([self._tile(x, "tl.max")], axis, keep_dims,
                                _binary("max"))[0]

    def builtin_min(self, x: Any, axis: Any = None, return_indices: Any = False,
                    return_indices_tie_break_left: Any = True, keep_dims: Any = False) -> Any:
        if return_indices:
            return self._arg_extreme(x, axis, "lt", return_indices_tie_break_left, keep_dims,
                                     values=True)
        return self._reduce_all([self._tile(x, "tl.min")], axis, keep_dims,
                                _binary("min"))[0]

    def builtin_argmax(self, x: Any, axis: Any = None, tie_break_left: Any = True,
                       keep_dims: Any = False) -> Value:
        return self._arg_extreme(x, axis, "gt", tie_break_left, keep_dims)

    def builtin_argmin(self, x: Any, axis: Any = None, tie_break_left: Any = True,
                       keep_dims: Any = False) -> Value:
        return self._arg_extreme(x, axis, "lt", tie_break_left, keep_dims)

    def builtin_reduce(self, x: Any, axis: Any, combine_fn: Any, keep_dims: Any = False) -> Any:
        xs = self._tiles(x, "tl.reduce")
        out = self._reduce_all(xs, axis, keep_dims, self._user_combine(combine_fn, len(xs)))
        return out[0] if isinstance(x, Value) else tuple(out)

    def _arg_extreme(self, x: Any, axis: Any, cmp: str, left: Any, keep_dims: Any,
                     values: bool = False) -> Any:
        name = "tl.argmax" if cmp == "gt" else "tl.argmin"
        xv = self._tile(x, name)
        if axis is None and len(xv.shape) > 1:
            # the flat index of the first extreme: reduce the row-major flattening
            xv = self._reshape_flat(xv)
            axis = 0
        ax = self._axis(axis, xv)
        index = self._axis_index(xv.shape, ax)
        out = self._reduce_all([xv, index], ax, keep_dims, _arg_combine(cmp, bool(left)))
        return (out[0], out[1]) if values else out[1]

    # -- scans --------------------------------------------------------------------------

    def builtin_cumsum(self, x: Any, axis: Any = 0, reverse: Any = False,
                       dtype: Any = None) -> Value:
        x = self._accumulator(self._tile(x, "tl.cumsum"), dtype)
        return self._scan([x], axis, reverse, _binary("add"))[0]

    def builtin_cumprod(self, x: Any, axis: Any = 0, reverse: Any = False) -> Value:
        x = self._tile(x, "tl.cumprod")
        if x.dtype is tl.bfloat16:
            x = S.cast(self.b, x, tl.float32)
        return self._scan([x], axis, reverse, _binary("mul"))[0]

    def builtin_associative_scan(self, x: Any, axis: Any, combine_fn: Any,
                                 reverse: Any = False) -> Any:
        xs = self._tiles(x, "tl.associative_scan")
        out = self._scan(xs, axis, reverse, self._user_combine(combine_fn, len(xs)))
        return out[0] if isinstance(x, Value) else tuple(out)

    # -- building -----------------------------------------------------------------------

    def _reduce_all(self, xs: list[Value], axis: Any, keep_dims: Any,
                    combine: Combine) -> list[Value]:
        """Reduce along ``axis``, or along every dimension (last first) when it is None."""
        rank = len(xs[0].shape)
        axes = list(range(rank - 1, -1, -1)) if axis is None else [self._axis(axis, xs[0])]
        for ax in axes:
            xs = self._reduce(xs, ax, combine)
        if keep_dims:
            xs = [self._keep_dims(v, rank, axes) for v in xs]
        return xs

    def _reduce(self, xs: list[Value], axis: int, combine: Combine) -> list[Value]:
        region = self._combiner([v.dtype for v in xs], combine)
        op = self.b.emit(tile.ReduceOp([v.ssa for v in xs], axis, region))
        shape = tuple(n for d, n in enumerate(xs[0].shape) if d != axis)
        return [Value(r, v.dtype, shape) for r, v in zip(op.results, xs, strict=True)]

    def _scan(self, xs: list[Value], axis: Any, reverse: Any, combine: Combine) -> list[Value]:
        if isinstance(reverse, Value):
            self._fail(self.node, "reverse must be a constexpr bool")
        ax = self._axis(axis, xs[0])
        region = self._combiner([v.dtype for v in xs], combine)
        op = self.b.emit(tile.ScanOp([v.ssa for v in xs], ax, region, bool(reverse)))
        return [Value(r, v.dtype, v.shape) for r, v in zip(op.results, xs, strict=True)]

    def _combiner(self, dtypes: list[tl.dtype], combine: Combine) -> Region:
        """The combiner region: ``combine(earlier, later)`` built inside its block."""
        types = [S.ir_type(d) for d in dtypes]
        block = Block(arg_types=types * 2)
        args = [Value(a, d) for a, d in zip(block.args, dtypes * 2, strict=True)]
        outer, self.b.block = self.b.block, block
        try:
            out = list(combine(self.b, args[:len(dtypes)], args[len(dtypes):]))
            if len(out) != len(dtypes):
                self._fail(self.node, f"the combine function must return {len(dtypes)} "
                                      f"value(s), got {len(out)}")
            vals = [S.materialize(self.b, v, d, ()) for v, d in zip(out, dtypes, strict=True)]
            self.b.emit(tile.YieldOp([v.ssa for v in vals]))
        finally:
            self.b.block = outer
        return Region(block)

    def _user_combine(self, fn: Any, n: int) -> Combine:
        """A ``@tc.func`` (or a two-operand ``tl`` builtin such as ``tl.maximum``)."""
        from compiler.jit import TileFunction
        builtin = getattr(fn, "__tilec_builtin__", None)
        if not isinstance(fn, TileFunction) and (builtin is None or n != 1):
            self._fail(self.node, "combine_fn must be a @tc.func taking (earlier..., "
                                  f"later...) and returning {n} value(s)")

        def combine(_b: S.Builder, a: list[Value], b: list[Value]) -> Sequence[Any]:
            if builtin is not None:
                out = getattr(self, f"builtin_{builtin}")(a[0], b[0])
            else:
                out = self.inline_call(fn, [*a, *b], {})
            if out is None:
                self._fail(self.node, f"combine_fn {fn.__name__} returns nothing")
            return list(out) if isinstance(out, tuple | list) else [out]
        return combine

    # -- operands and shapes --------------------------------------------------------------

    def _tile(self, x: Any, what: str) -> Value:
        if not isinstance(x, Value) or not x.shape or x.is_ptr:
            got = x.describe() if isinstance(x, Value) else type(x).__name__
            self._fail(self.node, f"{what} expects a tile, got {got}")
        return x

    def _tiles(self, x: Any, what: str) -> list[Value]:
        xs = [self._tile(v, what) for v in (x if isinstance(x, tuple | list) else [x])]
        if not xs or len({v.shape for v in xs}) != 1:
            self._fail(self.node, f"{what} expects tiles of one shape")
        return xs

    def _axis(self, axis: Any, x: Value) -> int:
        rank = len(x.shape)
        if isinstance(axis, Value) or not isinstance(axis, int) or not -rank <= axis < rank:
            self._fail(self.node, f"axis must be a constexpr integer in [{-rank}, {rank}), "
                                  f"got {axis!r}")
        return axis % rank

    def _accumulator(self, x: Value, dtype: Any) -> Value:
        """``x`` in the type a sum accumulates in (Triton's rule, or ``dtype``)."""
        if dtype is not None:
            return S.cast(self.b, x, self._dtype(dtype))
        d = x.dtype
        if d.is_int and d.bits < 32:
            return S.cast(self.b, x, tl.uint32 if d.kind == "u" else tl.int32)
        return S.cast(self.b, x, tl.float32) if d is tl.bfloat16 else x

    def _axis_index(self, shape: tuple[int, ...], axis: int) -> Value:
        """The int32 tile of ``shape`` holding each element's index along ``axis``."""
        index = self.b.value(tile.RangeOp(0, shape[axis]), tl.int32, (shape[axis],))
        if len(shape) == 1:
            return index
        for d in range(len(shape)):
            if d != axis:
                index = self._two_d("expand_dims")(index, d)
        return self._two_d("broadcast_to")(index, shape)

    def _reshape_flat(self, x: Value) -> Value:
        n = 1
        for s in x.shape:
            n *= s
        return self._two_d("reshape")(x, (n,))

    def _keep_dims(self, v: Value, rank: int, axes: list[int]) -> Value:
        if not v.shape:
            return S.splat(self.b, v, (1,) * rank)
        for ax in sorted(axes):
            v = self._two_d("expand_dims")(v, ax)
        return v

    def _two_d(self, name: str) -> Callable[..., Value]:
        impl = getattr(self, f"builtin_{name}", None)
        if impl is None:
            self._fail(self.node, f"this reduction needs tl.{name} (multi-dimensional tiles)")
        return impl


def _binary(name: str) -> Combine:
    return lambda bld, a, b: [S.binary(bld, name, a[0], b[0])]


def _arg_combine(cmp: str, left: bool) -> Combine:
    """(value, index) pairs: the extreme value wins, NaN above every number; on ties
    (and between NaNs) the smaller index with ``left``, else the larger."""
    def combine(bld: S.Builder, a: list[Value], b: list[Value]) -> list[Value]:
        (av, ai), (bv, bi) = a, b
        first = S.compare(bld, "lt" if left else "gt", ai, bi)
        if av.dtype.is_float:
            a_nan, b_nan = S.compare(bld, "ne", av, av), S.compare(bld, "ne", bv, bv)
            tie = S.binary(bld, "or", S.compare(bld, "eq", av, bv),
                           S.binary(bld, "and", a_nan, b_nan))
            strict = S.binary(bld, "or", S.compare(bld, cmp, av, bv), S.binary(
                bld, "and", a_nan, S.unary(bld, "not", b_nan)))
        else:
            tie, strict = S.compare(bld, "eq", av, bv), S.compare(bld, cmp, av, bv)
        take_a = S.binary(bld, "or", strict, S.binary(bld, "and", tie, first))
        return [S.select(bld, take_a, av, bv), S.select(bld, take_a, ai, bi)]
    return combine
