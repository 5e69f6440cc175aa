"""The NumPy meaning of ``tile.check_tile_index`` (registered into ``kernel.BUILDERS``):
an index whose tile lies wholly outside its array is an ``OutOfBoundsError`` naming the
array, the index and the program, at the line of the ``ct.load``/``ct.store``. cuTile
leaves such an access undefined; left alone it would read padding or write nothing."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from backends.numpy.kernel import BUILDERS, Impl
from compiler.context import source_loc
from compiler.errors import OutOfBoundsError


def _check_tile_index(op: Operation) -> Impl:
    tile = tuple(op.tile.get_values())  # pyright: ignore[reportAttributeAccessIssue]
    access = op.access.data  # pyright: ignore[reportAttributeAccessIssue]
    name = op.array.data  # pyright: ignore[reportAttributeAccessIssue]
    rank, loc = len(tile), source_loc(op)

    def impl(batch, *values: np.ndarray) -> tuple:
        start, size = values[:rank], values[rank:]
        outside = np.zeros(1, np.bool_)
        for s, n in zip(start, size, strict=True):
            outside = outside | (s < 0) | (s >= n)
        if not outside.any():
            return ()
        p = int(np.argmax(outside))  # the first such program of the batch
        pid = tuple(int(a[p]) for a in batch.pid)

        def at(v: np.ndarray) -> int:  # a value alike in every program has length 1
            return int(v[p if len(v) > 1 else 0])
        index = tuple(at(s) // t for s, t in zip(start, tile, strict=True))
        raise OutOfBoundsError(
            f"out-of-bounds {access} of {name}: tile index {index} with "
            f"tile shape {tile} lies outside the array of shape {tuple(map(at, size))} "
            f"in program {pid}", loc)
    return impl


BUILDERS["tile.check_tile_index"] = _check_tile_index
