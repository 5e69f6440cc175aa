"""The NumPy meaning of the shape ops ``tile.expand_dims``, ``broadcast``, ``reshape``,
``trans``, ``convert_layout``, ``flip``, ``extract``, ``join``, ``split`` and ``gather``
(registered into ``kernel.BUILDERS``).

Values carry the program axis first (see ``kernel.py``), so tile dimension ``d`` is
array axis ``d + 1``. Pointer tiles rearrange their offsets the same way. A layout is
not a value's meaning, so ``convert_layout`` returns its operand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.ir import Operation

from backends.numpy.kernel import BUILDERS, Builder, Impl, Ptr, shape
from dialects import tile

Rearrange = Callable[[np.ndarray], np.ndarray]


def _expand_dims(op: tile.ExpandDimsOp) -> Rearrange:
    axis = op.axis.value.data + 1
    return lambda a: np.expand_dims(a, axis)


def _broadcast(op: tile.BroadcastOp) -> Rearrange:
    tile_shape = shape(op.result.type)
    return lambda a: np.broadcast_to(a, (len(a), *tile_shape))


def _reshape(op: tile.ReshapeOp) -> Rearrange:
    tile_shape = shape(op.result.type)
    return lambda a: a.reshape(len(a), *tile_shape)


def _trans(op: tile.TransOp) -> Rearrange:
    axes = (0, *(d + 1 for d in op.permutation))
    return lambda a: a.transpose(axes)


def _flip(op: tile.FlipOp) -> Rearrange:
    axis = op.dim.value.data + 1
    return lambda a: np.flip(a, axis)


def _extract(op: tile.ExtractOp) -> Rearrange:
    window = (slice(None), *(slice(o, o + n) for o, n in
                             zip(op.start, shape(op.result.type), strict=True)))
    return lambda a: a[window]


def _same(_op: Operation) -> Rearrange:
    return lambda a: a


def _builder(make: Callable[[Any], Rearrange]) -> Builder:
    def build(op: Operation) -> Impl:
        fn = make(op)
        return lambda _, x: (Ptr(x.buf, fn(x.off)) if isinstance(x, Ptr) else fn(x),)
    return build


def _join(_op: Operation) -> Impl:
    def impl(_, a: np.ndarray, b: np.ndarray) -> tuple:
        a, b = np.broadcast_arrays(a, b)  # one may be the same in every program
        return (np.stack([a, b], axis=-1),)
    return impl


def _split(_op: Operation) -> Impl:
    return lambda _, x: (x[..., 0], x[..., 1])


def _gather(op: tile.GatherOp) -> Impl:
    """Indices outside the axis are clamped to it (as the GPU backends do)."""
    axis = op.axis.value.data + 1
    n = shape(op.src.type)[axis - 1]

    def impl(_, src: np.ndarray, index: np.ndarray) -> tuple:
        lead = max(len(src), len(index))
        src = np.broadcast_to(src, (lead, *src.shape[1:]))
        index = np.broadcast_to(np.clip(index.astype(np.int64), 0, n - 1),
                                (lead, *index.shape[1:]))
        return (np.take_along_axis(src, index, axis),)
    return impl


BUILDERS.update({
    "tile.flip": _builder(_flip), "tile.extract": _builder(_extract),
    "tile.join": _join, "tile.split": _split,
    "tile.gather": _gather,
    "tile.expand_dims": _builder(_expand_dims), "tile.broadcast": _builder(_broadcast),
    "tile.reshape": _builder(_reshape), "tile.trans": _builder(_trans),
    "tile.convert_layout": _builder(_same),
})
