"""cuTile's parameter annotations and type names: ``ct.Constant`` (a compile-time
parameter: it specializes the kernel), and the hints that change nothing in tilec but
must exist for ported kernels to import (``ct.Array``, ``ct.Tile``, ``ct.Scalar``,
``ct.ScalarInt64``, ``ct.IndexedWithInt64``, ``ct.ArrayAnnotation``, ...).

tilec gives array shapes and strides 32 bits (launching a larger array is refused) and a
scalar argument 64 bits when its value needs them, so the int64 hints add nothing;
``static_shape_dims``/``static_stride_dims`` are tilec's specialization's business (a
unit last stride is already a constant).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import compiler.language as tl

T = TypeVar("T")


class _ConstantType(tl.constexpr):
    """``ct.Constant[int]`` (or bare ``ct.Constant``): a parameter that is a compile-time
    constant, like ``tl.constexpr``."""

    def __getitem__(self, item: object) -> tl.constexpr:
        return tl.constexpr(item)


Constant = _ConstantType()
ConstantInt = Constant[int]
ConstantBool = Constant[bool]


class ConstantAnnotation:
    """cuTile's ``Annotated`` marker of constants; tilec reads ``ct.Constant[...]``."""


@dataclass(frozen=True, kw_only=True)
class ArrayAnnotation:
    """cuTile's array parameter hints (``Annotated[ct.Array, ct.ArrayAnnotation(...)]``)."""

    index_dtype: Any = tl.int32
    static_shape_dims: tuple[int, ...] = ()
    static_stride_dims: tuple[int, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ScalarAnnotation:
    """cuTile's scalar parameter hint: its integer width."""

    dtype: Any


@dataclass(frozen=True, kw_only=True)
class ListAnnotation:
    """cuTile's hint for a parameter that is a list of arrays."""

    element: Any


IndexedWithInt64 = Annotated[T, ArrayAnnotation(index_dtype=tl.int64)]
ScalarInt64 = Annotated[T, ScalarAnnotation(dtype=tl.int64)]


class Array:
    """An array parameter, as a type hint (in a kernel: ``arr.shape``, ``arr.dtype``,
    ``arr.strides``, ``arr.ndim``, ``arr.tiled_view(...)``)."""


class Tile:
    """A tile, as a type hint."""


class Scalar:
    """A scalar, as a type hint."""


class TiledView:
    """``arr.tiled_view(tile_shape)``'s type: ``tv.load(index)``, ``tv.store(index, t)``,
    ``tv.num_tiles(axis)``, ``tv.tile_shape``, ``tv.dtype``."""
