"""``tc.empty``/``tc.asarray``/``tc.synchronize`` on wgsl: ``WgslArray``s of new buffers on
tilec's wgsl device (``compiler.memory`` imports this when an array is first made here)."""

from __future__ import annotations

import math

import numpy as np

import compiler.language as tl
from backends.wgsl import UNSUPPORTED_DTYPES
from backends.wgsl.arrays import WgslArray, buffer_device
from backends.wgsl.runtime import drain, new_buffer, wgsl_device, write_padded
from compiler.device_views import itemsize
from compiler.errors import UnsupportedError


def empty(shape: tuple[int, ...], dtype: tl.dtype, zero: bool) -> WgslArray:
    """A new buffer on tilec's wgsl device. WebGPU hands out every buffer zeroed, so
    ``zero`` costs nothing more."""
    why = UNSUPPORTED_DTYPES.get(dtype.short)
    if why is not None:
        raise UnsupportedError(f"{dtype} arrays are not supported on wgsl ({why[0]}); use "
                               f"{why[1]}")
    return WgslArray(new_buffer(math.prod(shape) * itemsize(dtype)), dtype, shape)


def from_host(host: np.ndarray) -> WgslArray:
    a = empty(host.shape, tl.dtype_from_numpy(host.dtype), False)
    write_padded(buffer_device(a.buffer), a.buffer, host)
    return a


def synchronize() -> None:
    drain(wgsl_device())
