"""Leading dimensions of size 1 in cuTile's tiles.

cuTile's tiles have any number of dimensions, tilec's at most five (``MAX_RANK``), as many
as an array has. So where a shape has more than five dimensions and the first ones are
1, tilec drops those (``tile_dims``): such a ``reshape`` or ``ct.full`` gives the tile of
the last five.

The array-view ops drop more (``compiler.frontend.cutile.arrays``): every leading
dimension of size 1 while more than two remain, so the ``(1, tm, tk)`` tile of a batch of
matrices is a 2-D access, and the user's reshape of it to ``(tm, tk)`` undoes the
``expand_dims`` that made it 3-D (``reshape``) instead of moving it through shared memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton import shape as triton_shape
from compiler.frontend.values import MAX_RANK, Value, expand, splat, value_type
from dialects import tile


def leading_ones(shape: Sequence[int], keep: int) -> int:
    """How many of ``shape``'s first dimensions are 1, leaving at least ``keep``."""
    n = 0
    while n < len(shape) - keep and shape[n] == 1:
        n += 1
    return n


def tile_dims(cg: CodeGenerator, shape: Sequence[int], what: str) -> tuple[int, ...]:
    """A cuTile tile shape as tilec holds it: without the first dimensions beyond five,
    which must be 1."""
    extra = len(shape) - MAX_RANK
    if extra <= 0:
        return tuple(shape)
    if any(n != 1 for n in shape[:extra]):
        cg.fail(f"{what}: tilec's tiles have at most {MAX_RANK} dimensions, so a shape of "
                f"{len(shape)} needs its first {extra} to be 1, got {list(shape)}")
    return tuple(shape[extra:])


def add_leading(cg: CodeGenerator, x: Value, n: int) -> Value:
    """``x`` with ``n`` dimensions of size 1 in front."""
    if not x.shape:
        return splat(cg.b, x, (1,) * n)
    for _ in range(n):
        x = expand(cg.b, x, 0)
    return x


def drop_axes(cg: CodeGenerator, x: Value, axes: Sequence[int]) -> Value:
    """``x`` without its dimensions ``axes`` (of size 1, and not all of them): the tile
    the ``expand_dims`` that made them were given, where they did, else a reshape."""
    left = set(axes)
    while left:
        owner = x.ssa.owner
        axis = owner.axis.value.data if isinstance(owner, tile.ExpandDimsOp) else None
        if axis not in left:
            shape = tuple(n for d, n in enumerate(x.shape) if d not in left)
            op = tile.ReshapeOp(x.ssa, value_type(x.dtype, shape, x.is_ptr))
            return cg.b.value(op, x.dtype, shape, x.is_ptr)
        x = Value(owner.src, x.dtype, x.shape[:axis] + x.shape[axis + 1:], x.is_ptr)
        left = {d - (d > axis) for d in left if d != axis}
    return x


def reshape(cg: CodeGenerator, x: Any, new_shape: Sequence[int], what: str) -> Value:
    """``x`` in ``new_shape`` (first dimensions beyond five dropped, ``tile_dims``):
    adding or removing leading dimensions of size 1 is an ``expand_dims`` or its undoing,
    any other change a ``tile.reshape``."""
    shape = tile_dims(cg, new_shape, what)
    if isinstance(x, Value) and x.shape and shape:
        k = len(shape) - len(x.shape)
        if k >= 0 and shape[k:] == x.shape and leading_ones(shape, 0) >= k:
            return add_leading(cg, x, k)
        if k < 0 and x.shape[-k:] == shape and leading_ones(x.shape, 0) >= -k:
            return drop_axes(cg, x, range(-k))
    return triton_shape.reshape(cg, x, shape)
