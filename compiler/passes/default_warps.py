"""How many warps a kernel gets when its language leaves the choice to the compiler, as
cuTile's does (a ``ct.kernel`` names tile shapes, never threads). Read on the tile dialect
before layouts are assigned; nothing is rewritten.

Four warps (one warp group) at least, as Triton's default. A kernel with dots gets a warp
for every 4,096 elements of its largest accumulator, up to 8 (two warp groups): a
128 x 256 f32 accumulator is 128 registers a thread on 8 warps, and 256 on 4, which
spills (cuTile's MatMul sample ran at 9% of cuBLAS so). Other kernels get a warp for
every 1,024 elements of their largest tile (32 a thread), up to 8.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import ModuleOp, TensorType

from dialects.tile import DotOp

LEAST, MOST = 4, 8
PER_WARP_DOT, PER_WARP = 4096, 1024


def default_warps(module: ModuleOp) -> int:
    """The warps for ``module``'s kernel, from its largest accumulator or tile."""
    dots = [math.prod(op.result.type.get_shape()) for op in module.walk()
            if isinstance(op, DotOp)]
    if dots:
        return _clamp(max(dots) // PER_WARP_DOT)
    tiles = [math.prod(r.type.get_shape()) for op in module.walk() for r in op.results
             if isinstance(r.type, TensorType)]
    return _clamp(max(tiles, default=0) // PER_WARP)


def _clamp(warps: int) -> int:
    """``warps`` rounded up to a power of two, within [LEAST, MOST]."""
    return min(MOST, max(LEAST, 1 << max(warps - 1, 0).bit_length()))
