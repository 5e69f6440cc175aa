"""``tc.wgsl_array(buffer, dtype, shape)``: a ``wgpu.GPUBuffer`` with what it holds, so a
launch specializes on its dtype instead of taking every raw buffer as float32.

Importing this module imports no wgpu: the launch side recognizes the wrapper by class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

import compiler.language as tl
from compiler.errors import LaunchError


@dataclass(frozen=True)
class WgslArray:
    """A ``wgpu.GPUBuffer`` holding ``shape`` elements of ``dtype`` from its start."""

    buffer: Any
    dtype: tl.dtype
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def numpy(self) -> np.ndarray:
        """A host copy of the contents."""
        from backends.wgsl import read_buffer

        return read_buffer(self.buffer, self.dtype.numpy)[:self.size].reshape(self.shape)


def wgsl_array(buffer: Any, dtype: Any, shape: Any) -> WgslArray:
    """Say what a raw ``wgpu.GPUBuffer`` holds (``dtype``: ``tl.float16``, ``"f16"`` or
    ``np.float16``; ``shape``: an int or a tuple of ints)."""
    if type(buffer).__name__ != "GPUBuffer":
        raise LaunchError(f"tc.wgsl_array takes a wgpu.GPUBuffer, got {type(buffer).__name__}")
    d = _dtype(dtype)
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not all(isinstance(n, (int, np.integer)) and n >= 0 for n in dims):
        raise LaunchError(f"tc.wgsl_array: shape must be non-negative ints, got {shape!r}")
    need = math.prod(dims) * d.bits // 8
    if need > buffer.size:
        raise LaunchError(f"tc.wgsl_array: {dims} of {d.short} needs {need} bytes, the "
                          f"buffer has {buffer.size}")
    return WgslArray(buffer, d, tuple(int(n) for n in dims))


def _dtype(dtype: Any) -> tl.dtype:
    if isinstance(dtype, tl.dtype):
        return dtype
    try:
        found = tl.dtype_from_str(dtype) if isinstance(dtype, str) else \
            tl.dtype_from_numpy(np.dtype(dtype))
    except (TypeError, ValueError):
        found = None
    if found is None:
        raise LaunchError(f"tc.wgsl_array: unknown dtype {dtype!r}")
    return found
