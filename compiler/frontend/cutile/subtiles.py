"""cuTile's subtile builtins: ``ct.extract`` (a subtile by subtile index, also
``x.extract``), ``ct.insert``, ``ct.cat``, ``ct.astile``, ``ct.bitcast`` and ``x.item()``.

They are data movements composed of the shape ops every backend has (reshape, trans,
join, split, broadcast), at most rank 3 on the way. ``extract`` flattens the tile to
``[P, L]`` around one dimension (``P`` the elements before it, ``L`` the rest) and halves
``L`` until one subtile is left: each halving is a split of ``[P, 2, L / 2]``, keeping the
half the index's bit names (a select of both where the index is a runtime value).
``insert`` repeats the value over the tile (a broadcast per dimension) and selects it
where the subtile index matches; ``cat`` joins the two flattened tiles and moves the pair
dimension before ``L``.
"""

from __future__ import annotations

from math import prod
from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.dtypes import dtype_arg
from compiler.frontend.cutile.table import builtin, method
from compiler.frontend.triton import TABLE as TRITON
from compiler.frontend.triton import more_shape, reduce
from compiler.frontend.triton import shape as shapes
from compiler.frontend.values import Value, constant


def _tile(cg: CodeGenerator, x: Any, what: str) -> Value:
    if not isinstance(x, Value) or x.is_ptr or not x.shape:
        got = x.describe() if isinstance(x, Value) else type(x).__name__
        cg.fail(f"{what} expects a tile, got {got}")
    return x


def _index(cg: CodeGenerator, index: Any, counts: tuple[int, ...], what: str) -> list[Any]:
    """A subtile index: one integer (constant, or a runtime scalar) per dimension, each
    constant in ``[0, counts[d])``."""
    items = list(index) if isinstance(index, tuple | list) else [index]
    if len(items) != len(counts):
        cg.fail(f"{what}: a tile of rank {len(counts)} needs an index of {len(counts)} "
                f"entries, got {len(items)}")
    for d, (i, n) in enumerate(zip(items, counts, strict=True)):
        if isinstance(i, Value):
            if i.shape or not i.dtype.is_int() or i.dtype is tl.int1:
                cg.fail(f"{what}: index entries are integer scalars, got {i.describe()}")
        elif isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
            cg.fail(f"{what}: index {i!r} at dimension {d} is outside [0, {n}) (the number "
                    f"of subtiles there)")
    return items


def _counts(cg: CodeGenerator, big: tuple[int, ...], small: tuple[int, ...],
            what: str) -> tuple[int, ...]:
    if len(small) != len(big) or any(s <= 0 or b % s for b, s in zip(big, small, strict=True)):
        cg.fail(f"{what}: a subtile shape {list(small)} must have the tile's rank and divide "
                f"its shape {list(big)}")
    return tuple(b // s for b, s in zip(big, small, strict=True))


def _flat(cg: CodeGenerator, x: Value, d: int) -> Value:
    """``x`` as ``[P, L]``: the dimensions before ``d``, and ``d`` with those after it."""
    return shapes.reshape(cg, x, (prod(x.shape[:d]), prod(x.shape[d:])))


def _take(cg: CodeGenerator, x: Value, d: int, n: int, i: Any) -> Value:
    """Subtile ``i`` of the ``n`` along dimension ``d``."""
    t = _flat(cg, x, d)
    p, length = t.shape
    bits = n.bit_length() - 1
    for step in range(bits):
        half = length // 2
        pair = shapes.reshape(cg, t, (p, 2)) if half == 1 else \
            shapes.trans(cg, shapes.reshape(cg, t, (p, 2, half)), (0, 2, 1))
        lo, hi = more_shape.split(cg, pair)
        shift = bits - 1 - step
        if isinstance(i, Value):
            bit = ops.binary(cg.b, "and", ops.binary(cg.b, "rshift", i, shift), 1)
            t = ops.select(cg.b, ops.compare(cg.b, "ne", bit, 0), hi, lo)
        else:
            t = hi if i >> shift & 1 else lo
        length = half
        if half == 1:
            t = shapes.reshape(cg, t, (p, 1))
    out = list(x.shape)
    out[d] //= n
    return shapes.reshape(cg, t, tuple(out))


def _shape_arg(cg: CodeGenerator, s: Any, rank: int, what: str) -> tuple[tuple[int, ...], bool]:
    """A subtile shape (an int for a 1-D tile; ``()``: all ones, the result 0-d) and
    whether the result is 0-d."""
    dims = tuple(s) if isinstance(s, tuple | list) else (s,)
    if any(isinstance(n, Value | bool) or not isinstance(n, int) for n in dims):
        cg.fail(f"{what}: the subtile shape must be constant integers, got {s!r}")
    return ((1,) * rank, True) if not dims else (dims, False)


@builtin("extract")
@method("extract")
def extract(cg: CodeGenerator, x: Any, index: Any, shape: Any) -> Value:
    xv = _tile(cg, x, "ct.extract")
    dims, scalar = _shape_arg(cg, shape, len(xv.shape), "ct.extract")
    counts = _counts(cg, xv.shape, dims, "ct.extract")
    items = _index(cg, index, counts, "ct.extract")
    for d, (n, i) in enumerate(zip(counts, items, strict=True)):
        if n > 1:
            xv = _take(cg, xv, d, n, i)
    return item(cg, xv) if scalar else xv


@builtin("insert")
@method("insert")
def insert(cg: CodeGenerator, x: Any, index: Any, value: Any) -> Value:
    xv = _tile(cg, x, "ct.insert")
    if not isinstance(value, Value):
        value = constant(cg.b, value, xv.dtype)
    if value.dtype != xv.dtype:
        cg.fail(f"ct.insert: a value of {value.dtype} does not go into a tile of {xv.dtype}")
    v = value if value.shape else shapes.reshape(cg, value, (1,) * len(xv.shape))
    counts = _counts(cg, xv.shape, v.shape, "ct.insert")
    items = _index(cg, index, counts, "ct.insert")
    inside: Any = True
    for d, (n, i) in enumerate(zip(counts, items, strict=True)):
        if n == 1:
            continue
        t = _flat(cg, v, d)
        p, length = t.shape
        t = shapes.broadcast_to(cg, shapes.reshape(cg, t, (p, 1, length)), (p, n, length))
        size = list(v.shape)
        size[d] *= n
        v = shapes.reshape(cg, t, tuple(size))
        coord = reduce._axis_index(cg, xv.shape, d)
        here = ops.compare(cg.b, "eq", ops.binary(cg.b, "floordiv", coord, xv.shape[d] // n),
                           i)
        inside = here if inside is True else ops.binary(cg.b, "and", inside, here)
    return v if inside is True else ops.select(cg.b, inside, v, xv)


@builtin("cat")
def cat(cg: CodeGenerator, tiles: Any, axis: Any) -> Value:
    if not isinstance(tiles, tuple | list) or not 1 <= len(tiles) <= 2:
        cg.fail(f"ct.cat takes a pair of tiles, got {tiles!r}")
    if len(tiles) == 1:
        return _tile(cg, tiles[0], "ct.cat")
    a, b = (_tile(cg, t, "ct.cat") for t in tiles)
    rank = len(a.shape)
    d = cg.const_int(axis, "ct.cat axis")
    if not -rank <= d < rank:
        cg.fail(f"ct.cat: axis {d} is out of range for a tile of rank {rank}")
    d %= rank
    if a.shape != b.shape or a.dtype != b.dtype:
        cg.fail(f"ct.cat needs two tiles of one shape and dtype (the result's dimensions "
                f"are powers of two), got {a.describe()} and {b.describe()}")
    p, length = _flat(cg, a, d).shape
    pair = more_shape.join(cg, _flat(cg, a, d), _flat(cg, b, d))
    out = list(a.shape)
    out[d] *= 2
    flat = shapes.reshape(cg, shapes.trans(cg, pair, (0, 2, 1)), (p, 2 * length))
    return shapes.reshape(cg, flat, tuple(out))


@builtin("astile")
def astile(cg: CodeGenerator, value: Any, dtype: Any) -> Value:
    d = dtype_arg(cg, dtype, "ct.astile")
    leaves, dims = _nested(cg, value)
    if not dims:
        return ops.materialize(cg.b, leaves[0], d, ())
    index = reduce._axis_index(cg, (len(leaves),), 0)
    out = ops.materialize(cg.b, leaves[0], d, (len(leaves),))
    for k, leaf in enumerate(leaves[1:], 1):
        out = ops.select(cg.b, ops.compare(cg.b, "eq", index, k),
                         ops.materialize(cg.b, leaf, d, ()), out)
    return shapes.reshape(cg, out, dims)


def _nested(cg: CodeGenerator, value: Any) -> tuple[list[Any], tuple[int, ...]]:
    """The scalars of nested tuples, row-major, and the shape their nesting makes."""
    if not isinstance(value, tuple | list):
        if isinstance(value, Value) and value.shape or \
                not isinstance(value, Value | bool | int | float):
            cg.fail(f"ct.astile takes scalars or nested tuples of them, got {value!r}")
        return [value], ()
    parts = [_nested(cg, v) for v in value]
    inner = {dims for _, dims in parts}
    n = len(parts)
    if len(inner) != 1 or n & (n - 1) or n == 0:
        cg.fail("ct.astile: every tuple must be a power of two long, and sibling tuples "
                "one length")
    return [leaf for leaves, _ in parts for leaf in leaves], (n, *inner.pop())


@builtin("bitcast")
def bitcast(cg: CodeGenerator, x: Any, dtype: Any) -> Value:
    d = dtype_arg(cg, dtype, "ct.bitcast")
    if not isinstance(x, Value):
        x = constant(cg.b, x, tl.float32 if isinstance(x, float) else tl.int32)
    return TRITON.functions["cast"](cg, x, d, bitcast=True)


@method("item")
def item(cg: CodeGenerator, x: Any) -> Value:
    """The element of a one-element tile, as a scalar."""
    xv = _tile(cg, x, "x.item()")
    if prod(xv.shape) != 1:
        cg.fail(f"x.item() needs a tile of one element, got {xv.describe()}")
    return reduce._reduce_all(cg, [xv], None, False, reduce._binary("add"))[0]

