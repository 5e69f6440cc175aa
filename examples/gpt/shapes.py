"""What the host functions read of their arrays: shapes, never data, so that the same
function launches on NumPy arrays and on device arrays alike."""

from __future__ import annotations

import math

from compiler.errors import LaunchError


def rows(a, width: int | None = None) -> int:
    """The number of rows of ``a`` seen as a matrix of its last axis (checked to be
    ``width`` when given)."""
    if width is not None and tuple(a.shape)[-1:] != (width,):
        raise LaunchError(f"expected an array whose last axis is {width} wide, got shape "
                          f"{tuple(a.shape)}")
    return math.prod(tuple(a.shape)[:-1])


def expect(name: str, a, shape: tuple[int, ...]) -> None:
    """``a`` must hold exactly ``shape``'s elements, laid out as ``shape`` (any leading
    axes may be merged: (B, T, C) stands for (B*T, C))."""
    got = tuple(a.shape)
    if math.prod(got) != math.prod(shape) or got[-1:] != shape[-1:]:
        raise LaunchError(f"{name} must have shape {shape} (leading axes may be split), "
                          f"got {got}")


def padded_width(n: int) -> int:
    """``n`` rounded up to a multiple of 128: the row length that an (M, n) matrix may be
    stored with (llm.c pads GPT-2's vocabulary of 50257 so, to 50304), so that each row
    starts 16-byte aligned where TMA and the tensor cores' tiles can reach it."""
    return -(-n // 128) * 128


def row_length(name: str, a, shape: tuple[int, ...]) -> int:
    """``expect(name, a, shape)``, where ``a``'s last axis may also be
    ``padded_width(shape[-1])`` long (the columns past ``shape[-1]`` neither read nor
    written); the row length of ``a``."""
    width = shape[-1]
    stored = tuple(a.shape)[-1] if tuple(a.shape) else width
    if stored == padded_width(width) != width:
        shape = (*shape[:-1], stored)
    expect(name, a, shape)
    return stored


def size(a) -> int:
    return math.prod(tuple(a.shape))


def pow2(n: int) -> int:
    """The smallest power of two >= ``n`` (a tile dimension)."""
    return 1 << max(0, n - 1).bit_length()
