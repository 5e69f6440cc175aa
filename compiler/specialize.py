"""What a launch's runtime arguments specialize a kernel by: kind (pointer or scalar),
element type and divisibility by 16 (``arg_spec``), and the cheaper stand-in for it
that keys the per-launch cache (``fast_spec``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import compiler.language as tl
from compiler import device_arrays
from compiler.errors import LaunchError, UnsupportedError


def _scalar_spec(v: Any) -> tuple[str, str, bool]:
    if isinstance(v, (bool, np.bool_)):
        return ("scalar", "i1", False)
    if isinstance(v, (int, np.integer)):
        d = tl.dtype_from_numpy(v.dtype) if isinstance(v, np.integer) else \
            tl.literal_int_dtype(int(v))
        return ("scalar", d.short, int(v) % 16 == 0)
    if isinstance(v, (float, np.floating)):
        d = tl.dtype_from_numpy(v.dtype) if isinstance(v, np.floating) else tl.float32
        return ("scalar", d.short, False)
    raise LaunchError(f"unsupported argument of type {type(v).__name__}")


def arg_spec(v: Any) -> tuple[str, str, bool]:
    """(kind, dtype, divisible-by-16) of one runtime argument."""
    if isinstance(v, np.ndarray):
        if not v.flags.c_contiguous:
            raise LaunchError("array arguments must be contiguous (use np.ascontiguousarray)")
        d = tl.dtype_from_numpy(v.dtype)
        if d is None:
            raise LaunchError(f"arrays of dtype {v.dtype} are not supported")
        return ("ptr", d.short, True)
    cai = getattr(v, "__cuda_array_interface__", None)
    if cai is not None:
        d = _cai_dtype(v, cai["typestr"])
        if not _cai_contiguous(cai):
            raise LaunchError("array arguments must be contiguous (call .contiguous())")
        if d is None:
            raise LaunchError(f"arrays of dtype {cai['typestr']} are not supported")
        return ("ptr", d.short, cai["data"][0] % 16 == 0)
    if type(v).__name__ == "GPUBuffer":
        return ("ptr", getattr(v, "tilec_dtype", "f32"), True)
    if type(v).__name__ == "WgslArray":  # tc.wgsl_array: a buffer with its dtype
        return ("ptr", v.dtype.short, True)
    if hasattr(v, "__dlpack__"):  # PyTorch CPU tensors, JAX arrays, ... (device_arrays.py)
        return device_arrays.arg_spec(v)
    if type(v).__name__ == "TensorDescriptor":  # compiler.triton.tools' (or Triton's)
        raise UnsupportedError("host tensor descriptors are not supported yet; use "
                               "tl.make_tensor_descriptor inside the kernel")
    return _scalar_spec(v)


def _cai_dtype(v: Any, typestr: str) -> tl.dtype | None:
    """The element type of a device array: NumPy's, or bfloat16 where the interface can only
    say "2 bytes" (``<V2``) and the array's own dtype says bfloat16 (PyTorch)."""
    if np.dtype(typestr).kind == "V" and str(getattr(v, "dtype", "")).endswith("bfloat16"):
        return tl.bfloat16
    return tl.dtype_from_numpy(np.dtype(typestr))


def _cai_contiguous(cai: dict) -> bool:
    strides = cai.get("strides")
    if strides is None:
        return True
    expect = np.dtype(cai["typestr"]).itemsize
    for dim, stride in zip(reversed(cai["shape"]), reversed(strides)):
        if dim > 1 and stride != expect:
            return False
        expect *= dim
    return True


def is_one(v: Any) -> bool:
    """Whether an integer argument is 1, which compiles as the constant, as Triton
    specializes it: a unit stride then tells the axis analysis that accesses are
    contiguous (a block pointer's, say), so they vectorize."""
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) and v == 1


def fast_spec(v: Any) -> Any:
    """A cheap stand-in for ``arg_spec`` in launch-cache keys, by the argument's type."""
    t = type(v)
    if t is int:  # the commonest, first
        return (int, v % 16 == 0, -2**31 <= v < 2**31, v == 1)
    spec = _SPECS.get(t)
    if spec is None:
        spec = _SPECS[t] = _spec_for(t)
    return spec(v)


def _spec_for(t: type) -> Callable[[Any], Any]:
    if t is np.ndarray:
        return lambda v: (np.ndarray, v.dtype, v.flags.c_contiguous)
    if t.__module__.startswith("torch"):
        return lambda v: (t, v.dtype, v.data_ptr() % 16 == 0)
    return lambda v: (t, arg_spec(v))


_SPECS: dict[type, Callable[[Any], Any]] = {type(None): lambda v: None, float: lambda v: float,
                                            bool: lambda v: bool}
