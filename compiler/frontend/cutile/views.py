"""cuTile's other ways into an array, built on ``ct.load``/``ct.store`` and
``ct.gather``/``ct.scatter``: ``arr.tiled_view(tile_shape, padding_mode=...)`` (a
``TiledView``: ``tv.load(index)``, ``tv.store(index, tile)``, ``tv.num_tiles(axis)``,
``tv.tile_shape``, ``tv.dtype``) and ``ct.load_advanced_indexing``/
``ct.store_advanced_indexing`` with ``ct.Slice(start, length)``.

A tiled view whose ``traversal_steps`` differ from its tile shape (overlapping or spaced
tiles), ``arr.slice`` and ``arr.get_raw_memory`` are not supported yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile import arrays, indexed
from compiler.frontend.cutile.arrays import Array, array_arg
from compiler.frontend.cutile.table import TABLE, builtin
from compiler.frontend.triton import shape as shapes
from compiler.frontend.triton.reduce import _axis_index
from compiler.frontend.values import Value
from compiler.tile._enums import PaddingMode

PADDING_VALUES = {PaddingMode.UNDETERMINED: 0, PaddingMode.ZERO: 0,
                  PaddingMode.NEG_ZERO: -0.0, PaddingMode.NAN: float("nan"),
                  PaddingMode.POS_INF: float("inf"), PaddingMode.NEG_INF: float("-inf")}


def _shape(x: Any) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


@dataclass(frozen=True)
class TiledView:
    """``arr.tiled_view(tile_shape)`` in a kernel: the array cut into tiles."""

    array: Array
    tile_shape: tuple[int, ...]
    padding_mode: Any

    @property
    def dtype(self) -> tl.dtype:
        return self.array.dtype

    @property
    def traversal_steps(self) -> tuple[int, ...]:
        return self.tile_shape

    def describe(self) -> str:
        return f"a tiled view of {self.array.describe()} by {list(self.tile_shape)}"


@TABLE.method("tiled_view", on=Array)
def tiled_view(cg: CodeGenerator, arr: Array, tile_shape: Any,
               padding_mode: Any = PaddingMode.UNDETERMINED,
               traversal_steps: Any = None) -> TiledView:
    dims = arrays.tile_shape(cg, _shape(tile_shape), arr.ndim, "arr.tiled_view")
    if traversal_steps is not None and _shape(traversal_steps) != dims:
        cg.fail(f"arr.tiled_view: traversal_steps {traversal_steps!r} other than the tile "
                f"shape (overlapping or spaced tiles) are not supported by tilec yet")
    return TiledView(arr, dims, padding_mode)


@TABLE.method("load", on=TiledView)
def view_load(cg: CodeGenerator, tv: TiledView, index: Any, check_bounds: Any = True,
              latency: Any = None, allow_tma: Any = None) -> Value:
    return arrays.load(cg, tv.array, _shape(index), tv.tile_shape,
                       padding_mode=tv.padding_mode)


@TABLE.method("store", on=TiledView)
def view_store(cg: CodeGenerator, tv: TiledView, index: Any, tile: Any,
               check_bounds: Any = True, latency: Any = None, allow_tma: Any = None) -> None:
    if isinstance(tile, Value) and tile.shape != tv.tile_shape:
        tile = shapes.broadcast_to(cg, tile, tv.tile_shape)
    arrays.store(cg, tv.array, _shape(index), tile)


@TABLE.method("num_tiles", on=TiledView)
def view_num_tiles(cg: CodeGenerator, tv: TiledView, axis: Any) -> Value:
    return arrays.num_tiles(cg, tv.array, axis, tv.tile_shape)


def _refuse(name: str, why: str) -> None:
    def handler(cg: CodeGenerator, _arr: Array, *_args: Any, **_kwargs: Any) -> None:
        cg.fail(f"arr.{name} is not supported by tilec yet: {why}")
    TABLE.method(name, on=Array)(handler)


_refuse("slice", "load the tiles of the part with ct.gather, or pass that part (a view "
                 "of the array) as an argument")
_refuse("get_raw_memory", "address elements with ct.gather, ct.scatter and the atomics")


# ---------------------------------------------------------------- advanced indexing


@dataclass(frozen=True)
class Slice:
    """``ct.Slice(start, length)`` in a kernel."""

    start: Any
    length: int

    def describe(self) -> str:
        return f"ct.Slice(start, {self.length})"


@builtin("Slice")
def slice_(cg: CodeGenerator, start: Any, length: Any) -> Slice:
    n = cg.const_int(length, "ct.Slice length")
    if n <= 0 or n & (n - 1):
        cg.fail(f"ct.Slice: length must be a power of two, got {n}")
    return Slice(start, n)


def _indices(cg: CodeGenerator, arr: Array, indices: Any, what: str) -> tuple[Value, ...]:
    """One index tile per dimension, each in the result's shape along its own axis."""
    items = _shape(indices)
    if len(items) != arr.ndim:
        cg.fail(f"{what}: an array of rank {arr.ndim} needs {arr.ndim} indices, "
                f"got {len(items)}")
    tiles = [i for i in items if not isinstance(i, Slice)]
    if len(tiles) != 1 or not isinstance(tiles[0], Value) or len(tiles[0].shape) != 1:
        cg.fail(f"{what}: exactly one index must be a 1-D integer tile, the others "
                f"ct.Slice(start, length)")
    shape = tuple(i.length if isinstance(i, Slice) else i.shape[0] for i in items)
    cg.check_rank(len(shape), what)
    out = []
    for d, i in enumerate(items):
        line = i if isinstance(i, Value) else \
            ops.binary(cg.b, "add", _axis_index(cg, (i.length,), 0), i.start)
        at = [1] * len(shape)
        at[d] = shape[d]
        out.append(shapes.reshape(cg, line, tuple(at)))
    return tuple(out)


@builtin("load_advanced_indexing")
def load_advanced_indexing(cg: CodeGenerator, array: Any, indices: Any,
                           padding_mode: Any = PaddingMode.UNDETERMINED, latency: Any = None,
                           allow_tma: Any = None) -> Value:
    what = "ct.load_advanced_indexing"
    arr = array_arg(cg, array, what)
    if padding_mode not in PADDING_VALUES:
        cg.fail(f"{what}: padding_mode must be a ct.PaddingMode, got {padding_mode!r}")
    pad = PADDING_VALUES[padding_mode]
    if isinstance(pad, float) and pad != 0 and not arr.dtype.is_float:
        cg.fail(f"{what}: padding mode {padding_mode.name} needs a float array, got "
                f"{arr.dtype}")
    return indexed.gather(cg, arr, _indices(cg, arr, indices, what), padding_value=pad)


@builtin("store_advanced_indexing")
def store_advanced_indexing(cg: CodeGenerator, array: Any, indices: Any, tile: Any,
                            latency: Any = None, allow_tma: Any = None) -> None:
    what = "ct.store_advanced_indexing"
    arr = array_arg(cg, array, what)
    indexed.scatter(cg, arr, _indices(cg, arr, indices, what), tile)
