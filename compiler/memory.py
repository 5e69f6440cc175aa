"""Arrays on any backend: ``tc.empty``, ``tc.zeros``, ``tc.asarray``, ``tc.to_numpy`` and
``tc.synchronize``, so one program runs on every backend by flag.

Each backend makes its own kind of array: NumPy arrays on numpy, ``WgslArray`` (wgpu
storage buffers) on wgsl, ``DeviceArray`` (CUDA driver allocations) on ptx; every launch on
that backend takes them. The two device kinds share ``DeviceView``: a row-major array of
one dtype at a byte offset of its memory, whose contiguous views (``a[i]``, ``a[start:stop]``,
``a.reshape(shape)``) share that memory, as NumPy's slices do. A program keeps all its
parameters in one flat array and hands each to kernels as such a view.

Importing this module imports neither wgpu nor CUDA: a backend's array code is imported
when an array is first made there (``_MODULES``).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import compiler.language as tl
from compiler import graphs
from compiler.device_arrays import host_view
from compiler.device_views import DTYPE_NAMES, DeviceView, as_dtype, as_shape
from compiler.errors import LaunchError, describe_value
from compiler.jit import resolve_backend

_MODULES = {"numpy": "backends.numpy", "wgsl": "backends.wgsl.device_memory",
            "ptx": "backends.ptx.memory"}
"""Backend -> the module that makes its arrays: ``empty(shape, dtype, zero)``,
``from_host(array)`` and ``synchronize()``."""


def empty(shape: Any, dtype: Any, backend: str | None = None) -> Any:
    """An uninitialized array of ``shape`` and ``dtype`` on ``backend``'s device (None: the
    default backend, ``tc.set_backend``/``TILEC_BACKEND``)."""
    module = _backend_module(backend)
    return module.empty(as_shape(shape, "tc.empty"), as_dtype(dtype, "tc.empty"), False)


def zeros(shape: Any, dtype: Any, backend: str | None = None) -> Any:
    """An array of zeros of ``shape`` and ``dtype`` on ``backend``'s device."""
    module = _backend_module(backend)
    return module.empty(as_shape(shape, "tc.zeros"), as_dtype(dtype, "tc.zeros"), True)


def asarray(a: Any, backend: str | None = None) -> Any:
    """A new array on ``backend``'s device holding a copy of ``a``: a NumPy array (or what
    ``np.asarray`` takes), or an array of any backend (read back first). Always a copy,
    on numpy too, so a program behaves alike on every backend."""
    module = _backend_module(backend)
    host = to_numpy(a) if isinstance(a, DeviceView) else np.asarray(a)
    if tl.dtype_from_numpy(host.dtype) is None:
        raise LaunchError(f"tc.asarray: {host.dtype} arrays are not supported (got "
                          f"{describe_value(a)}); use one of {DTYPE_NAMES}")
    return module.from_host(np.ascontiguousarray(host))


def to_numpy(a: Any) -> np.ndarray:
    """A host copy of ``a``: an array of any backend (a NumPy scalar too: what indexing
    every axis gives on numpy), or a CPU array with ``__dlpack__``. Waits for the work
    queued on it."""
    graphs.refuse("tc.to_numpy")
    if isinstance(a, np.ndarray | np.generic):
        return np.array(a)
    if isinstance(a, DeviceView):
        return a.numpy()
    view = host_view(a)
    if view is None:
        raise LaunchError(f"tc.to_numpy takes arrays of tc.empty, tc.zeros and tc.asarray, "
                          f"NumPy arrays and CPU arrays with __dlpack__, got {describe_value(a)}")
    return np.array(view)


def synchronize(backend: str | None = None) -> None:
    """Wait until the work queued on ``backend``'s device is done (nothing on numpy, where
    a launch returns when it has run)."""
    graphs.refuse("tc.synchronize")
    _backend_module(backend).synchronize()


def _backend_module(backend: str | None) -> Any:
    return importlib.import_module(_MODULES[resolve_backend(backend)])


__all__ = ["DeviceView", "asarray", "empty", "synchronize", "to_numpy", "zeros"]
