"""Frontend: the shape builtins of tiles (``x[:, None]``, ``tl.expand_dims``,
``tl.broadcast_to``, ``tl.reshape``, ``tl.trans``, ``x.T``) -> tile IR.

A mixin of ``compiler.frontend.CodeGenerator``: it uses the generator's builder and error
helpers. Implicit broadcasting in operators, ``where`` and memory ops lives in
``compiler.semantics`` (``broadcast``); this module adds the explicit forms. Shapes follow
Triton: every dimension a power of two (1 included), and tilec allows 1 to 3 dimensions.
"""

from __future__ import annotations

import ast
from math import prod
from typing import Any

from compiler import semantics as S
from compiler.semantics import Value
from dialects import tile

MAX_RANK = 3
POINTER_SHAPE_OPS = (tile.ExpandDimsOp, tile.BroadcastOp, tile.ReshapeOp, tile.TransOp)
"""Ops a pointer tile may pass through on its way from a kernel argument."""


class ShapeMixin:
    """``builtin_expand_dims``, ``builtin_reshape``, ... and tile subscripts."""

    SHAPE_METHODS = frozenset({"expand_dims", "broadcast_to", "reshape", "trans", "permute",
                               "ravel"})

    # -- checks ---------------------------------------------------------------------------

    def _shape_tile(self, x: Any, what: str) -> Value:
        if not isinstance(x, Value) or not x.shape:
            got = x.describe() if isinstance(x, Value) else type(x).__name__
            self._fail(self.node, f"{what} expects a tile, got {got}")
        return x

    def _shape_dims(self, shape: Any, what: str) -> tuple[int, ...]:
        """A shape given as ints, a tuple or a list: constexpr powers of two, rank 1..3."""
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = shape[0]
        shape = tuple(shape)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 and not n & (n - 1)
                   for n in shape):
            self._fail(self.node, f"{what}: tile dimensions must be constexpr powers of two, "
                                  f"got {list(shape)}")
        self._shape_rank(len(shape), what)
        return shape

    def _shape_rank(self, rank: int, what: str) -> None:
        if not 1 <= rank <= MAX_RANK:
            self._fail(self.node, f"{what}: tiles have 1 to {MAX_RANK} dimensions, got {rank}")

    def _shape_axis(self, axis: Any, rank: int, what: str) -> int:
        """``axis`` in ``-rank .. rank - 1``, normalized."""
        if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
            self._fail(self.node, f"{what}: axis {axis!r} is out of range for {rank} "
                                  "dimensions")
        return axis % rank

    # -- builtins -------------------------------------------------------------------------

    def builtin_expand_dims(self, x: Any, axis: Any) -> Value:
        """Dimensions of size 1 inserted at ``axis`` (an int or a sequence of ints, counted
        in the result)."""
        if not isinstance(x, Value):
            self._fail(self.node, "tl.expand_dims expects a tile or scalar value")
        axes = list(axis) if isinstance(axis, tuple | list) else [axis]
        rank = len(x.shape) + len(axes)
        self._shape_rank(rank, "tl.expand_dims")
        axes = sorted(self._shape_axis(a, rank, "tl.expand_dims") for a in axes)
        if len(set(axes)) != len(axes):
            self._fail(self.node, f"tl.expand_dims: repeated axis in {axis!r}")
        if not x.shape:
            return S.splat(self.b, x, (1,) * rank)
        for a in axes:
            x = self._expand(x, a)
        return x

    def _expand(self, x: Value, axis: int) -> Value:
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
        return self.b.value(tile.ExpandDimsOp(x.ssa, axis), x.dtype, shape, x.is_ptr)

    def builtin_broadcast_to(self, x: Any, *shape: Any) -> Value:
        shape = self._shape_dims(shape, "tl.broadcast_to")
        if not isinstance(x, Value):
            self._fail(self.node, "tl.broadcast_to expects a tile or scalar value")
        return S.splat(self.b, x, shape)

    def builtin_broadcast(self, x: Any, y: Any) -> tuple[Value, Value]:
        xv, yv = (self._shape_tile(v, "tl.broadcast") for v in (x, y))
        shape = S.broadcast_shapes(xv.shape, yv.shape)
        return S.splat(self.b, xv, shape), S.splat(self.b, yv, shape)

    def builtin_reshape(self, x: Any, *shape: Any, can_reorder: bool = False) -> Value:
        """Row-major order is always kept (``can_reorder`` is accepted and unused)."""
        x = self._shape_tile(x, "tl.reshape")
        shape = self._shape_dims(shape, "tl.reshape")
        if prod(shape) != prod(x.shape):
            self._fail(self.node, f"tl.reshape: cannot reshape {x.describe()} to "
                                  f"{list(shape)} (the number of elements differs)")
        if shape == x.shape:
            return x
        t = S.value_type(x.dtype, shape, x.is_ptr)
        return self.b.value(tile.ReshapeOp(x.ssa, t), x.dtype, shape, x.is_ptr)

    def builtin_ravel(self, x: Any) -> Value:
        x = self._shape_tile(x, "tl.ravel")
        return self.builtin_reshape(x, prod(x.shape))

    def builtin_trans(self, x: Any, *dims: Any) -> Value:
        """Dimensions permuted by ``dims``; none given: reversed (a 2-D transpose)."""
        x = self._shape_tile(x, "tl.trans")
        if len(dims) == 1 and isinstance(dims[0], tuple | list):
            dims = tuple(dims[0])
        rank = len(x.shape)
        order = tuple(self._shape_axis(d, rank, "tl.trans") for d in dims) if dims else \
            tuple(range(rank - 1, -1, -1))
        if sorted(order) != list(range(rank)):
            self._fail(self.node, f"tl.trans: {list(dims)} is not a permutation of "
                                  f"{rank} dimensions")
        if order == tuple(range(rank)):
            return x
        shape = tuple(x.shape[d] for d in order)
        return self.b.value(tile.TransOp(x.ssa, order), x.dtype, shape, x.is_ptr)

    def builtin_permute(self, x: Any, *dims: Any) -> Value:
        if not dims:
            self._fail(self.node, "tl.permute needs the new order of the dimensions")
        return self.builtin_trans(x, *dims)

    # -- syntax ---------------------------------------------------------------------------

    def _subscript_tile(self, node: ast.Subscript, x: Value) -> Value:
        """``x[:, None]``, ``x[None, ...]``: ``:`` keeps a dimension, ``None`` adds one of
        size 1, ``...`` stands for the dimensions not written."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        kinds = [self._index_kind(i) for i in items]
        if kinds.count("...") > 1:
            self._fail(node, "a tile index may hold at most one '...'")
        kept = kinds.count(":")
        if kept > len(x.shape):
            self._fail(node, f"too many ':' for {x.describe()}")
        fill = [":"] * (len(x.shape) - kept)
        if "..." in kinds:
            at = kinds.index("...")
            kinds = kinds[:at] + fill + kinds[at + 1:]
        else:
            kinds += fill
        self._shape_rank(len(kinds), "indexing")
        if not x.shape:  # a scalar: x[None] is a tile of one element
            return S.splat(self.b, x, (1,) * len(kinds))
        for axis, kind in enumerate(kinds):
            if kind == "None":
                x = self._expand(x, axis)
        return x

    def _index_kind(self, item: ast.expr) -> str | None:
        if isinstance(item, ast.Constant) and item.value is None:
            return "None"
        if isinstance(item, ast.Constant) and item.value is Ellipsis:
            return "..."
        if isinstance(item, ast.Slice) and all(
                v is None for v in (item.lower, item.upper, item.step)):
            return ":"
        self._fail(item, "tiles can only be indexed with ':', None and '...' "
                         "(use tl.reshape, tl.trans or a mask for other selections)")

    def _broadcast_pointer(self, ptr: Value, *operands: Any) -> Value:
        """A load's or store's pointer stretched to the shape it shares with its mask and
        value (Triton broadcasts all of them together)."""
        shape = S.broadcast_shapes(*(v.shape for v in (ptr, *operands) if isinstance(v, Value)))
        return S.splat(self.b, ptr, shape)
