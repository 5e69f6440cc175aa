"""What a launch's runtime arguments specialize a kernel by: kind (pointer or scalar),
element type and divisibility by 16 (``arg_spec``), and the cheaper stand-in for it
that keys the per-launch cache (``fast_spec``); a host tensor descriptor's, as its parts
(``descriptor_spec``, ``descriptor_key``; ``compiler.descriptors``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import compiler.language as tl
from compiler import descriptors, device_arrays
from compiler.device_views import DeviceView
from compiler.errors import (
    ArgumentError,
    LaunchError,
    UnsupportedError,
    argument_error,
    describe_value,
    negative_strides,
    unsupported_dtype,
)
from compiler.kinfo import ArgSpec, Param

ACCEPTED = "an array (NumPy, CuPy, PyTorch, wgpu buffer) or a number"
"""What a runtime argument may be, for messages."""


def cuda_interface(v: Any) -> dict | None:
    """``v.__cuda_array_interface__``, or None where it has none (a PyTorch tensor that
    requires grad gives its detached self's: a launch reads and writes its data). An
    interface that cannot name its dtype (PyTorch's fp8: the interface has no typestr
    for it) counts as none where DLPack, which names fp8, describes the array."""
    try:
        return getattr(device_arrays.detached(v), "__cuda_array_interface__", None)
    except RuntimeError as e:
        raise ArgumentError(f"{describe_value(v)} cannot be passed: {e}") from None
    except (KeyError, TypeError):
        if hasattr(v, "__dlpack__"):
            return None
        raise unsupported_dtype(v, getattr(v, "dtype", "its dtype")) from None


def _scalar_spec(v: Any) -> tuple[str, str, bool]:
    if isinstance(v, (bool, np.bool_)):
        return ("scalar", "i1", False)
    if isinstance(v, (int, np.integer)):
        d = _numpy_scalar_dtype(v) if isinstance(v, np.integer) else \
            tl.literal_int_dtype(int(v))
        return ("scalar", d.short, int(v) % 16 == 0)
    if isinstance(v, (float, np.floating)):
        # np.float64 is a Python float, so float32 as in Triton (``1 / np.sqrt(d)``)
        d = tl.float32 if isinstance(v, float) else _numpy_scalar_dtype(v)
        return ("scalar", d.short, False)
    raise ArgumentError(f"expected {ACCEPTED}, got {describe_value(v)}")


def _numpy_scalar_dtype(v: np.generic) -> tl.dtype:
    d = tl.dtype_from_numpy(v.dtype)
    if d is None:
        raise ArgumentError(f"{v.dtype} scalars are not supported (got {describe_value(v)}); pass "
                            "a Python int or float")
    return d


def arg_spec(v: Any) -> tuple[str, str, bool]:
    """(kind, dtype, divisible-by-16) of one runtime argument."""
    if isinstance(v, DeviceView):  # tc.empty's arrays, on ptx and wgsl
        return v.arg_spec()
    if isinstance(v, np.ndarray):  # any strides: the backends take the memory they span
        if any(s < 0 for s in v.strides):
            raise negative_strides(v)
        d = tl.dtype_from_numpy(v.dtype)
        if d is None:
            raise unsupported_dtype(v, v.dtype)
        return ("ptr", d.short, True)
    cai = cuda_interface(v)
    if cai is not None:
        d = cai_dtype(v, cai["typestr"])
        if any(s < 0 for s in cai.get("strides") or ()):
            raise negative_strides(v)
        if d is None:
            raise unsupported_dtype(v, getattr(v, "dtype", cai["typestr"]))
        return ("ptr", d.short, cai["data"][0] % 16 == 0)
    if type(v).__name__ == "GPUBuffer":
        return ("ptr", getattr(v, "tilec_dtype", "f32"), True)
    if type(v).__name__ == "WgslArray":  # tc.wgsl_array: a buffer with its dtype
        return ("ptr", v.dtype.short, True)
    if hasattr(v, "__dlpack__"):  # PyTorch CPU tensors, JAX arrays, ... (device_arrays.py)
        return device_arrays.arg_spec(v)
    if type(v).__name__ == "TensorDescriptor":  # where a kernel's parameter takes none
        raise ArgumentError("a tensor descriptor is an argument of Triton-style kernels "
                            f"(@tc.kernel, @triton.jit) only; expected {ACCEPTED}")
    return _scalar_spec(v)


def cai_dtype(v: Any, typestr: str) -> tl.dtype | None:
    """The element type of a device array: NumPy's, or bfloat16 where the interface can only
    say "2 bytes" (``<V2``) and the array's own dtype says bfloat16 (PyTorch); a tilec
    ``DeviceArray``'s own (its fp8 says only ``V1``)."""
    if isinstance(getattr(v, "dtype", None), tl.dtype):
        return v.dtype
    if np.dtype(typestr).kind == "V" and str(getattr(v, "dtype", "")).endswith("bfloat16"):
        return tl.bfloat16
    return tl.dtype_from_numpy(np.dtype(typestr))


def compiled_for(p: Param, value: Any) -> LaunchError:
    """The error for ``value``, not what a compiled kernel's parameter ``p`` takes."""
    d = tl.dtype_from_str(p.dtype)
    want = f"an array of {d}" if p.is_ptr else f"a scalar of type {d}"
    return argument_error(p.name, f"the kernel was compiled for {want}, got "
                                  f"{describe_value(value)}")


def check_dtypes(specs: list[ArgSpec], values: dict[str, Any], backend: str,
                 refused: dict[str, tuple[str, str]]) -> None:
    """Refuse, naming it, an argument of a dtype the backend has no type for: ``refused``
    maps a short dtype to (why, what to use instead), as in ``UNSUPPORTED_DTYPES`` of
    ``backends/wgsl``."""
    for spec in specs:
        why = refused.get(spec.dtype.short) if spec.kind != "constexpr" else None
        if why is not None:
            kind = "scalars" if spec.kind == "scalar" else "arrays"
            raise UnsupportedError(
                f"argument {spec.name!r}: {spec.dtype} {kind} are not supported on {backend} "
                f"({why[0]}); use {why[1]} (got {describe_value(values[spec.name])})")


def is_one(v: Any) -> bool:
    """Whether an integer argument is 1, which compiles as the constant, as Triton
    specializes it: a unit stride then tells the axis analysis that accesses are
    contiguous (a block pointer's, say), so they vectorize."""
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) and v == 1


def fast_spec(v: Any) -> Any:
    """A cheap stand-in for ``arg_spec`` in launch-cache keys, by the argument's type."""
    t = type(v)
    if t is int:  # the commonest, first; its width as ``literal_int_dtype`` types it
        return (int, v % 16 == 0, 0 if -2**31 <= v < 2**31 else 1 if v < 2**63 else 2,
                v == 1)
    spec = _SPECS.get(t)
    if spec is None:
        spec = _SPECS[t] = _spec_for(t)
    return spec(v)


def _spec_for(t: type) -> Callable[[Any], Any]:
    if t is np.ndarray:
        return lambda v: (np.ndarray, v.dtype, v.flags.c_contiguous)
    if t.__module__.startswith("torch"):
        return lambda v: (t, v.dtype, v.data_ptr() % 16 == 0)
    if t.__name__ == "TensorDescriptor":
        return descriptor_key
    if issubclass(t, DeviceView):
        return lambda v: (t, v.arg_spec())
    return lambda v: (t, arg_spec(v))


_SPECS: dict[type, Callable[[Any], Any]] = {type(None): lambda v: None, float: lambda v: float,
                                            bool: lambda v: bool}


def _part_key(n: int) -> tuple[bool, bool]:
    return (n % 16 == 0, -2**31 <= n < 2**31)


def descriptor_key(desc: Any, base_key: Callable[[Any], Any] = fast_spec) -> tuple:
    """What of a descriptor argument decides the compiled kernel: its base's
    ``base_key``, block shape, padding, and its shape's and strides' divisibility and
    width. Raises ``ArgumentError`` for a descriptor a kernel cannot take."""
    parts = descriptors.parts(desc)
    return ("descriptor", base_key(desc.base), tuple(int(b) for b in desc.block_shape),
            desc.padding, *map(_part_key, parts))


def descriptor_spec(name: str, desc: Any) -> ArgSpec:
    """The specialization of descriptor parameter ``name``: kind ``"descriptor"``, the
    base's dtype and alignment, and a ``DescriptorLayout`` whose scalar parameters are
    specialized as integer arguments are (the last stride, checked to be 1, as 1)."""
    parts = descriptors.parts(desc)
    try:
        kind, dtype, aligned = arg_spec(desc.base)
    except ArgumentError as e:
        raise ArgumentError(f"a tensor descriptor's base: {e.problem}", e.fix) from None
    if kind != "ptr":
        raise ArgumentError(f"a tensor descriptor's base must be an array, got "
                            f"{describe_value(desc.base)}")
    rank = len(desc.block_shape)
    names = [f"{name}_shape{d}" for d in range(rank)] + \
        [f"{name}_stride{d}" for d in range(rank)]
    specs = []
    for i, (part, n) in enumerate(zip(names, parts, strict=True)):
        _, short, div16 = _scalar_spec(n)
        specs.append(ArgSpec(part, "scalar", tl.dtype_from_str(short), div16,
                             one=i == len(parts) - 1))
    layout = descriptors.DescriptorLayout(tuple(int(b) for b in desc.block_shape),
                                          desc.padding, tuple(specs))
    return ArgSpec(name, "descriptor", tl.dtype_from_str(dtype), aligned, layout)
