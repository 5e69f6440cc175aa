"""Triton's shape builtins: ``tl.expand_dims``, ``tl.broadcast_to``, ``tl.broadcast``,
``tl.reshape``, ``tl.ravel``, ``tl.trans``/``x.T``, ``tl.permute`` (and the same as tile
methods, ``x.reshape(...)``).

Implicit broadcasting in operators, ``where`` and memory ops lives in
``compiler.frontend.values`` (``broadcast``); subscripts (``x[:, None]``) in the code
generator; this module adds the explicit forms. Shapes follow Triton: every dimension a
power of two (1 included), and tilec allows 1 to 5 dimensions (``MAX_RANK``).
"""

from __future__ import annotations

from math import prod
from typing import Any

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.table import builtin, tile_property
from compiler.frontend.values import Value, broadcast_shapes, expand, splat, value_type
from dialects import tile

# -- checks -------------------------------------------------------------------------------


def _shape_tile(cg: CodeGenerator, x: Any, what: str) -> Value:
    if not isinstance(x, Value) or not x.shape:
        got = x.describe() if isinstance(x, Value) else type(x).__name__
        cg.fail(f"{what} expects a tile, got {got}")
    return x


def _shape_dims(cg: CodeGenerator, shape: Any, what: str) -> tuple[int, ...]:
    """A shape given as ints, a tuple or a list: constexpr powers of two, rank 1..5."""
    if len(shape) == 1 and isinstance(shape[0], tuple | list):
        shape = shape[0]
    shape = tuple(shape)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 and not n & (n - 1)
               for n in shape):
        cg.fail(f"{what}: tile dimensions must be constexpr powers of two, got {list(shape)}")
    cg.check_rank(len(shape), what)
    return shape


def _shape_axis(cg: CodeGenerator, axis: Any, rank: int, what: str) -> int:
    """``axis`` in ``-rank .. rank - 1``, normalized."""
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        cg.fail(f"{what}: axis {axis!r} is out of range for {rank} dimensions")
    return axis % rank


# -- builtins -----------------------------------------------------------------------------


@builtin("expand_dims", method=True)
def expand_dims(cg: CodeGenerator, x: Any, axis: Any) -> Value:
    """Dimensions of size 1 inserted at ``axis`` (an int or a sequence of ints, counted
    in the result)."""
    if not isinstance(x, Value):
        cg.fail("tl.expand_dims expects a tile or scalar value")
    axes = list(axis) if isinstance(axis, tuple | list) else [axis]
    rank = len(x.shape) + len(axes)
    cg.check_rank(rank, "tl.expand_dims")
    axes = sorted(_shape_axis(cg, a, rank, "tl.expand_dims") for a in axes)
    if len(set(axes)) != len(axes):
        cg.fail(f"tl.expand_dims: repeated axis in {axis!r}")
    if not x.shape:
        return splat(cg.b, x, (1,) * rank)
    for a in axes:
        x = expand(cg.b, x, a)
    return x


@builtin("broadcast_to", method=True)
def broadcast_to(cg: CodeGenerator, x: Any, *shape: Any) -> Value:
    shape = _shape_dims(cg, shape, "tl.broadcast_to")
    if not isinstance(x, Value):
        cg.fail("tl.broadcast_to expects a tile or scalar value")
    return splat(cg.b, x, shape)


@builtin("broadcast")
def broadcast(cg: CodeGenerator, x: Any, y: Any) -> tuple[Value, Value]:
    xv, yv = (_shape_tile(cg, v, "tl.broadcast") for v in (x, y))
    shape = broadcast_shapes(xv.shape, yv.shape)
    return splat(cg.b, xv, shape), splat(cg.b, yv, shape)


@builtin("reshape", method=True)
def reshape(cg: CodeGenerator, x: Any, *shape: Any, can_reorder: bool = False) -> Value:
    """Row-major order is always kept (``can_reorder`` is accepted and unused)."""
    x = _shape_tile(cg, x, "tl.reshape")
    shape = _shape_dims(cg, shape, "tl.reshape")
    if prod(shape) != prod(x.shape):
        cg.fail(f"tl.reshape: cannot reshape {x.describe()} to {list(shape)} "
                "(the number of elements differs)")
    if shape == x.shape:
        return x
    t = value_type(x.dtype, shape, x.is_ptr)
    return cg.b.value(tile.ReshapeOp(x.ssa, t), x.dtype, shape, x.is_ptr)


@builtin("view", method=True)
def view(cg: CodeGenerator, x: Any, *shape: Any) -> Value:
    return reshape(cg, x, *shape, can_reorder=True)


@builtin("ravel", method=True)
def ravel(cg: CodeGenerator, x: Any) -> Value:
    x = _shape_tile(cg, x, "tl.ravel")
    return reshape(cg, x, prod(x.shape))


@builtin("trans", method=True)
def trans(cg: CodeGenerator, x: Any, *dims: Any) -> Value:
    """Dimensions permuted by ``dims``; none given: reversed (a 2-D transpose)."""
    x = _shape_tile(cg, x, "tl.trans")
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        dims = tuple(dims[0])
    rank = len(x.shape)
    order = tuple(_shape_axis(cg, d, rank, "tl.trans") for d in dims) if dims else \
        tuple(range(rank - 1, -1, -1))
    if sorted(order) != list(range(rank)):
        cg.fail(f"tl.trans: {list(dims)} is not a permutation of {rank} dimensions")
    if order == tuple(range(rank)):
        return x
    shape = tuple(x.shape[d] for d in order)
    return cg.b.value(tile.TransOp(x.ssa, order), x.dtype, shape, x.is_ptr)


@builtin("permute", method=True)
def permute(cg: CodeGenerator, x: Any, *dims: Any) -> Value:
    if not dims:
        cg.fail("tl.permute needs the new order of the dimensions")
    return trans(cg, x, *dims)


@tile_property("T")
def transpose(cg: CodeGenerator, x: Value) -> Value:
    return trans(cg, x)
