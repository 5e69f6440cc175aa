"""The NumPy meaning of the shape ops ``tile.expand_dims``, ``broadcast``, ``reshape``,
``trans`` and ``convert_layout`` (registered into ``kernel.BUILDERS``).

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


def _same(_op: Operation) -> Rearrange:
    return lambda a: a


def _builder(make: Callable[[Any], Rearrange]) -> Builder:
    def build(op: Operation) -> Impl:
        fn = make(op)
        return lambda _, x: (Ptr(x.buf, fn(x.off)) if isinstance(x, Ptr) else fn(x),)
    return build


BUILDERS.update({
    "tile.expand_dims": _builder(_expand_dims), "tile.broadcast": _builder(_broadcast),
    "tile.reshape": _builder(_reshape), "tile.trans": _builder(_trans),
    "tile.convert_layout": _builder(_same),
})
