"""DLPack arguments on the launch side: any producer (``__dlpack__``/``__dlpack_device__``:
PyTorch, CuPy, JAX, NumPy). No xDSL, wgpu or CUDA import here.

A DLPack capsule is read in place with ctypes (the ``DLManagedTensor`` layout of DLPack
0.x, which every producer still hands out when asked without ``max_version``): its data
pointer, device, dtype, shape and strides. Nothing is copied: CPU producers become NumPy
views (``np.from_dlpack``) for the numpy and wgsl backends, GPU producers a device pointer
for ptx. NumPy takes no bfloat16 or fp8 through DLPack, so such a capsule is handed to it
as unsigned integers and the view is of ml_dtypes' type (``ml_dtypes_view``). tilec has no
e8m0 dtype: an array of float8_e8m0fnu (block scales) is taken as its bits, uint8, which
is how ``ct.mma_scaled`` reads e8m0 scales.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.errors import (
    ArgumentError,
    contiguous_fix,
    describe_value,
    negative_strides,
    unsupported_dtype,
)
from compiler.fp8 import numpy_dtype

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13  # DLDeviceType values tilec meets

# (DLDataTypeCode, bits) -> tilec dtype: 0 int, 1 uint, 2 float, 4 bfloat, 6 bool,
# 10 float8_e4m3fn, 12 float8_e5m2, 14 float8_e8m0fnu: its bits (DLPack 1.1)
_FP8 = {(10, 8): "fp8e4nv", (12, 8): "fp8e5"}
_E8M0 = {(14, 8): "u8"}
_ML_DTYPES = _FP8 | _E8M0 | {(4, 16): "bf16"}  # what NumPy cannot take through DLPack
DL_DTYPES = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8",
             (1, 16): "u16", (1, 32): "u32", (1, 64): "u64", (2, 16): "f16", (2, 32): "f32",
             (2, 64): "f64", (4, 16): "bf16", (6, 8): "i1"} | _FP8
_TAKEN = DL_DTYPES | _E8M0  # e8m0 is taken as its bits; a u8 array is exported as u8
_UINT = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    """DLPack 1.x's ``DLManagedTensorVersioned``, up to its tensor."""

    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@dataclass(frozen=True)
class DLArray:
    """What a DLPack capsule says about an array (``dtype`` None: one tilec lacks)."""

    ptr: int
    device_type: int
    device_id: int
    dtype: str | None
    shape: tuple[int, ...]
    contiguous: bool
    forward: bool  # no negative stride: the array lies after its first element
    strides: tuple[int, ...] | None = None  # in elements; None: row-major


def describe(v: Any, stream: int | None = None) -> DLArray:
    """Read ``v.__dlpack__()``'s capsule. ``stream``: the CUDA stream the consumer will use
    (DLPack's convention: 1 is the legacy default stream), so the producer orders its
    pending work before it."""
    v = detached(v)
    try:
        try:
            capsule = v.__dlpack__() if stream is None else v.__dlpack__(stream=stream)
        except TypeError:  # a producer older than the stream argument
            capsule = v.__dlpack__()
        t = DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
    except (TypeError, ValueError, BufferError, RuntimeError) as e:
        raise ArgumentError(f"{describe_value(v)} cannot be read through DLPack: {e}") from None
    shape = tuple(t.shape[i] for i in range(t.ndim))
    dtype = _TAKEN.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    strides = None if not t.strides else tuple(t.strides[i] for i in range(t.ndim))
    return DLArray((t.data or 0) + t.byte_offset, t.device.device_type, t.device.device_id,
                   dtype, shape, _contiguous(shape, strides),
                   all(s >= 0 for s in strides or ()), strides)


def _contiguous(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> bool:
    """Row-major without gaps (strides in elements, as DLPack gives them)."""
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides or ())):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def device_of(v: Any) -> tuple[int, int]:
    """``v.__dlpack_device__()``: (DLDeviceType, device id)."""
    kind, index = v.__dlpack_device__()
    return int(kind), int(index)


def arg_spec(v: Any) -> tuple[str, str, bool]:
    """(kind, dtype, 16-byte aligned) of a DLPack argument, as ``jit.arg_spec`` gives."""
    info = describe(v)
    if info.dtype is None:
        raise unsupported_dtype(v, getattr(v, "dtype", "this DLPack dtype"))
    if not info.forward:
        raise negative_strides(v)
    return ("ptr", info.dtype, info.ptr % 16 == 0)


def detached(v: Any) -> Any:
    """A PyTorch tensor that requires grad as the same memory without autograd, which is
    what torch exports by DLPack and the CUDA array interface: a launch reads and writes
    its data, as Triton's does; anything else as it is."""
    return v.detach() if getattr(v, "requires_grad", False) else v


INDEX_REACH = 2**31  # elements a 32-bit index reaches from an array's first element


def check_reach(name: str, a: Any) -> None:
    """Refuse an array a kernel moves through by 64-bit offsets where the GPU backends
    cannot follow: they index with 32 bits, so an offset past ``INDEX_REACH`` would wrap
    (a wrong element, not an error)."""
    n = reach(a)
    if n > INDEX_REACH:
        raise ArgumentError(f"{describe_value(a)} spans {n:,} elements; the kernel moves "
                            "through it by 64-bit offsets, but tilec's GPU backends index "
                            "with 32 bits (at most 2**31 elements): split the array"
                            ).named(name)


def reach(a: Any) -> int:
    """Elements from ``a``'s first element to the end of the memory a kernel may address
    through it: a PyTorch tensor's storage, else the array itself."""
    if callable(getattr(a, "untyped_storage", None)):
        return a.untyped_storage().nbytes() // a.element_size() - a.storage_offset()
    if isinstance(a, np.ndarray):
        return span_view(a).size
    size = getattr(a, "size", None)
    if isinstance(size, int):
        return size
    shape = getattr(a, "shape", None)
    return int(np.prod(shape)) if shape is not None else 0


def span_view(a: np.ndarray) -> np.ndarray:
    """``a`` where it is contiguous, else a 1-D view of its memory from its first element
    to its last (writes reach ``a``): a kernel takes an array as a pointer to its first
    element and addresses it with the strides it is given, so a backend takes (copies,
    binds, checks bounds against) the memory those strides span."""
    if a.flags.c_contiguous:
        return a
    if any(s < 0 for s in a.strides):
        raise negative_strides(a)
    if any(s % a.itemsize for s in a.strides):
        raise ArgumentError(f"{describe_value(a, strides=True)} has strides that are not "
                            f"multiples of its element size ({a.itemsize} bytes)",
                            contiguous_fix(a))
    span = 0 if a.size == 0 else 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides,
                                                                    strict=True)) // a.itemsize
    # as unsigned integers: as_strided rebuilds the array from its typestr, and ml_dtypes'
    # float8_e5m2 says "<f1", which NumPy cannot read back
    raw = a.view(np.dtype(f"u{a.itemsize}"))
    return np.lib.stride_tricks.as_strided(raw, (span,), (a.itemsize,)).view(a.dtype)


def host_view(v: Any) -> np.ndarray | None:
    """A NumPy view of a DLPack producer's CPU memory (writes reach the producer), or
    None when ``v`` is no DLPack producer or its memory is not the CPU's."""
    if not hasattr(v, "__dlpack__") or not hasattr(v, "__dlpack_device__"):
        return None
    if device_of(v)[0] not in (CPU, CUDA_HOST):
        return None
    try:
        return np.from_dlpack(detached(v))
    except (TypeError, BufferError, RuntimeError) as e:
        view = ml_dtypes_view(detached(v))
        if view is None:
            raise ArgumentError(f"{describe_value(v)} cannot be viewed as a NumPy array: "
                                f"{e}") from None
        return view


class _Capsule:
    """A DLPack producer that hands out one capsule (``ml_dtypes_view``'s, retyped)."""

    def __init__(self, capsule: Any, device: tuple[int, int]):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **_options: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


def ml_dtypes_view(v: Any) -> np.ndarray | None:
    """A NumPy view (of ml_dtypes' dtype; e8m0's: uint8) of a DLPack producer's CPU array of
    bfloat16, fp8 or e8m0, which ``np.from_dlpack`` refuses, or None if its elements are
    none of them: its capsule says ``uint16`` or ``uint8`` once read here, before NumPy
    takes it (the same bytes; the producer's memory is still released by its deleter).
    Asked for a DLPack 1.x capsule, which says whether the memory may be written (NumPy
    makes an older one read-only)."""
    try:
        capsule = v.__dlpack__(max_version=(1, 0))
        versioned = _get_pointer(capsule, b"dltensor_versioned")
        tensor = DLManagedTensorVersioned.from_address(versioned).dl_tensor
    except (TypeError, ValueError):  # a producer older than DLPack 1.0
        capsule = v.__dlpack__()
        tensor = DLTensor.from_address(_get_pointer(capsule, b"dltensor"))
    short = _ML_DTYPES.get((tensor.dtype.code, tensor.dtype.bits))
    if short is None or tensor.dtype.lanes != 1:
        return None
    tensor.dtype.code = _UINT
    raw = np.from_dlpack(_Capsule(capsule, device_of(v)))
    return raw.view(numpy_dtype(short))
