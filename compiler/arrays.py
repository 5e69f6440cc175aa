"""Arrays as arguments of ``compiler.tile`` kernels (cuTile's arrays), on the launch side.

A kernel parameter that receives an array becomes several kernel parameters: the pointer
to its first element, then its shape and its strides (in elements) as ``i32`` scalars.
A last stride of 1 is not passed: it is specialized to the constant 1, so the contiguity
analysis sees a unit-stride dimension and accesses along it vectorize. Shapes and the
other strides are specialized on divisibility by 16, as integer arguments are.

Strided NumPy arrays are passed as a 1-D view of the memory they span (no copy: writes
land in the user's array); device arrays (``__cuda_array_interface__``) likewise.
``TileKernel`` is ``@ct.kernel``: ``KernelFunction`` with this expansion. No xDSL here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

import compiler.language as tl
from compiler import device_arrays
from compiler.errors import ArgumentError, contiguous_fix, describe_value, unsupported_dtype
from compiler.jit import KernelFunction
from compiler.kinfo import ArgSpec
from compiler.specialize import arg_spec, cai_dtype, cuda_interface, is_one

MAX_DIMS = 5  # as cuTile's arrays (tiles have at most four: compiler.frontend.cutile.leading)


@dataclass(frozen=True)
class ArrayLayout:
    """How one array parameter is specialized: its rank, which shape and stride values
    are divisible by 16, and whether the last stride is the constant 1."""

    rank: int
    shape_div16: tuple[bool, ...]
    stride_div16: tuple[bool, ...]
    unit_last: bool

    def param_names(self, name: str) -> list[str]:
        """The scalar parameters after the pointer: ``x_shape0``, ..., ``x_stride0``, ..."""
        strides = self.rank - self.unit_last
        return [f"{name}_shape{d}" for d in range(self.rank)] + \
            [f"{name}_stride{d}" for d in range(strides)]


@dataclass(frozen=True)
class HostArray:
    """What a launch needs of an array argument: its element type, shape and strides
    (elements), 16-byte alignment, and the object that carries its memory."""

    dtype: tl.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    aligned: bool
    memory: Any

    def layout(self) -> ArrayLayout:
        unit = bool(self.strides) and self.strides[-1] == 1
        return ArrayLayout(len(self.shape), tuple(n % 16 == 0 for n in self.shape),
                           tuple(s % 16 == 0 for s in self.strides), unit)

    def scalars(self) -> list[int]:
        strides = self.strides[:-1] if self.layout().unit_last else self.strides
        return [*self.shape, *strides]


def is_array(v: Any) -> bool:
    """Whether ``v`` is an array argument: a NumPy or device array (CUDA array interface
    or DLPack: PyTorch, CuPy, JAX) of one dimension or more, or a wgpu buffer."""
    if isinstance(v, np.ndarray):
        return v.ndim > 0
    return cuda_interface(v) is not None or type(v).__name__ in _BUFFERS or \
        hasattr(v, "__dlpack__") and getattr(v, "ndim", 1) != 0


_BUFFERS = ("GPUBuffer", "WgslArray")  # wgpu buffers, bare or with dtype and shape


def host_array(v: Any) -> HostArray:
    """``v`` (an array argument, ``is_array``) as a ``HostArray``."""
    try:
        if isinstance(v, np.ndarray):
            h = _numpy_array(v)
        elif (cai := cuda_interface(v)) is not None:
            h = _device_array(v, cai)
        elif type(v).__name__ in _BUFFERS:
            h = _buffer(v)
        else:
            h = _dlpack_array(v)
        _check_extent(h.shape, h.strides)
    except _Refused as e:
        raise e.of(v) from None
    return h


def _buffer(v: Any) -> HostArray:
    """A ``tc.wgsl_array``, or a bare ``wgpu.GPUBuffer`` (of ``tilec_dtype`` and
    ``tilec_shape`` where it has them; else 1-D float32)."""
    if type(v).__name__ == "WgslArray":
        d, shape = v.dtype, tuple(v.shape)
    else:
        d = tl.dtype_from_str(getattr(v, "tilec_dtype", "f32"))
        shape = tuple(getattr(v, "tilec_shape", (v.size // max(1, d.bits // 8),)))
    return HostArray(d, shape, _c_strides(shape), True, v)


def _dlpack_array(v: Any) -> HostArray:
    """A DLPack producer: CPU memory as the NumPy view of it (numpy and wgsl backends take
    that), device memory as the producer itself (ptx takes its first element's address)."""
    view = device_arrays.host_view(v)
    if view is not None:
        return _numpy_array(view)
    info = device_arrays.describe(v)
    if info.dtype is None:
        raise _Refused(dtype=getattr(v, "dtype", "this DLPack dtype"))
    strides = info.strides or _c_strides(info.shape)
    if any(s < 0 for s in strides):
        raise _Refused("has negative strides", copy=True)
    return HostArray(tl.dtype_from_str(info.dtype), info.shape, strides, info.ptr % 16 == 0, v)


class _Refused(Exception):
    """An array's shape, strides or dtype that compiler.tile cannot take, found from those
    alone (a device array's facts are cached by them): ``of`` says it of the array.
    ``problem`` follows the array's description; ``copy``: a contiguous copy would do."""

    def __init__(self, problem: str = "", dtype: np.dtype | None = None, copy: bool = False):
        super().__init__(problem)
        self.problem, self.dtype, self.copy = problem, dtype, copy

    def of(self, v: Any) -> ArgumentError:
        if self.dtype is not None:
            return unsupported_dtype(v, self.dtype)
        return ArgumentError(f"{describe_value(v, strides=True)} {self.problem}",
                             contiguous_fix(v) if self.copy else "")


def _check_extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
    if not 1 <= len(shape) <= MAX_DIMS:
        raise _Refused(f"has {len(shape)} dimensions; compiler.tile kernels take arrays of "
                       f"1 to {MAX_DIMS} dimensions")
    if max(*shape, *strides) >= 2**31:
        raise _Refused("has a shape or stride of 2**31 or more; shapes and strides are "
                       "32-bit kernel arguments")


def _element_type(nd: np.dtype) -> tl.dtype:
    d = tl.dtype_from_numpy(nd)
    if d is None:
        raise _Refused(dtype=nd)
    return d


def _element_strides(byte_strides: Sequence[int], itemsize: int) -> tuple[int, ...]:
    if any(s < 0 or s % itemsize for s in byte_strides):
        raise _Refused("has strides that are negative or not multiples of its element "
                       f"size ({itemsize} bytes)", copy=True)
    return tuple(s // itemsize for s in byte_strides)


def _span(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements from the first to one past the last element of a strided array."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


def _c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _numpy_array(a: np.ndarray) -> HostArray:
    d = _element_type(a.dtype)
    strides = _element_strides(a.strides, a.itemsize)
    memory = a
    if not a.flags.c_contiguous:
        memory = np.lib.stride_tricks.as_strided(a, (_span(a.shape, strides),),
                                                 (a.itemsize,))
    return HostArray(d, a.shape, strides, True, memory)


class _DeviceSpan:
    """A device array's memory as the 1-D contiguous array a pointer parameter takes, with
    the array's ``dtype`` (where the interface says only "2 bytes", it says bfloat16)."""

    def __init__(self, cai: dict, elements: int, dtype: Any):
        self._interface = {"shape": (elements,), "typestr": cai["typestr"],
                           "data": cai["data"], "strides": None, "version": 3}
        self.dtype = dtype

    @property
    def __cuda_array_interface__(self) -> dict:  # a class attribute: launchers look there
        return self._interface


class _DeviceFacts(NamedTuple):
    """What a device array's interface says, worked out once per kind of array."""

    dtype: tl.dtype
    strides: tuple[int, ...]
    contiguous: bool
    span: int
    key: tuple  # the launch key: dtype, alignment, layout
    scalars: tuple[int, ...]  # shape and strides as kernel arguments


@functools.lru_cache(maxsize=1024)
def _device_facts(typestr: str, shape: tuple[int, ...], byte_strides: tuple[int, ...] | None,
                  aligned: bool, dtype: tl.dtype | None) -> _DeviceFacts:
    """``dtype``: the element type where the typestr cannot say it (bfloat16)."""
    nd = np.dtype(typestr)
    strides = _c_strides(shape) if byte_strides is None else \
        _element_strides(byte_strides, nd.itemsize)
    _check_extent(shape, strides)
    h = HostArray(dtype or _element_type(nd), shape, strides, aligned, None)
    layout = h.layout()
    return _DeviceFacts(h.dtype, strides, strides == _c_strides(shape),
                        _span(shape, strides), ("array", h.dtype.short, aligned, layout),
                        tuple(h.scalars()))


def _facts_of(v: Any, cai: dict) -> _DeviceFacts:
    """The facts of device array ``v``, whose interface is ``cai``."""
    strides, typestr = cai.get("strides"), cai["typestr"]
    try:
        return _device_facts(typestr, tuple(cai["shape"]),
                             None if strides is None else tuple(strides),
                             cai["data"][0] % 16 == 0,
                             cai_dtype(v, typestr) if "V" in typestr else None)
    except _Refused as e:
        raise e.of(v) from None


def _device_memory(v: Any, cai: dict, f: _DeviceFacts) -> Any:
    """What the pointer parameter takes: ``v`` itself, or the span of a strided array."""
    return v if f.contiguous else _DeviceSpan(cai, f.span, getattr(v, "dtype", None))


def _device_array(v: Any, cai: dict) -> HostArray:
    f = _facts_of(v, cai)
    return HostArray(f.dtype, tuple(cai["shape"]), f.strides, cai["data"][0] % 16 == 0,
                     _device_memory(v, cai, f))


def _is_constant(annotation: Any) -> bool:
    """``ct.Constant[int]``, ``tl.constexpr`` or their spellings as strings."""
    if isinstance(annotation, str):
        return "Constant" in annotation or annotation.split(".")[-1] == "constexpr"
    return annotation is tl.constexpr or isinstance(annotation, tl.constexpr)


class TileKernel(KernelFunction):
    """A ``@ct.kernel``: array arguments expand to pointer, shape and strides."""

    language = "cutile"
    decorator = "@ct.kernel"
    default_warps = None  # cuTile names no threads: the compiler chooses from the tiles
    default_stages = None  # nor stages

    def __init__(self, fn, source: str | None = None):
        super().__init__(fn, source)
        params = inspect.signature(fn).parameters
        self.constexprs = {n for n, p in params.items() if _is_constant(p.annotation)}
        self._constexpr_positions = frozenset(
            i for i, n in enumerate(self.arg_names) if n in self.constexprs)

    def __call__(self, *args, **kwargs):
        from compiler.errors import TilecError
        raise TilecError(f"{self.__name__} is a kernel: launch it with ct.launch(stream, "
                         f"grid, {self.__name__}, args) or {self.__name__}[grid](...)")

    def specialize(self, bound: dict[str, Any]) -> list[ArgSpec]:
        specs = []
        for name, v in bound.items():
            if name not in self.constexprs and is_array(v):
                h = host_array(v)
                specs.append(ArgSpec(name, "array", h.dtype, h.aligned, h.layout()))
            elif name not in self.constexprs and is_array_list(v):
                specs.append(_list_spec(name, v))
            else:
                specs += super().specialize({name: v})
        return specs

    def _spec_key(self, bound: dict[str, Any]) -> tuple:
        return tuple(("c", repr(v)) if n in self.constexprs else _array_key(v)
                     for n, v in bound.items())

    def _launch_key(self, opts: tuple, args: Sequence[Any], kwargs: dict) -> tuple:
        cpos = self._constexpr_positions
        key = [a if i in cpos else _array_key(a) for i, a in enumerate(args)]
        key += [(k, v if k in self.constexprs else _array_key(v)) for k, v in kwargs.items()]
        return (opts, *key)

    def runtime_args(self, args: Sequence[Any], kwargs: dict, sources: tuple | None) -> list:
        return self.expand_args(super().runtime_args(args, kwargs, sources))

    @staticmethod
    def expand_args(args: Sequence[Any]) -> list:
        """Runtime arguments as the compiled kernel takes them: each array as its memory,
        shape and strides."""
        runtime = []
        for v in args:
            cai = _device_interface(v)
            if cai is not None:  # the launch path of GPU arrays: cached facts
                f = _facts_of(v, cai)
                runtime += [_device_memory(v, cai, f), *f.scalars]
            elif is_array(v):
                h = host_array(v)
                runtime += [h.memory, *h.scalars()]
            elif is_array_list(v):  # item by item
                runtime += TileKernel.expand_args(v)
            else:
                runtime.append(v)
        return runtime


def is_array_list(v: Any) -> bool:
    """Whether ``v`` is cuTile's list parameter: a Python list of arrays (not a tuple,
    which cuTile takes element by element)."""
    return type(v) is list and bool(v) and all(map(is_array, v))


def _list_spec(name: str, arrays: list) -> ArgSpec:
    """A list of arrays specializes the kernel by its length and each array's layout;
    the arrays share one dtype and rank (so any of them can stand for ``lst[i]``)."""
    hosts = [host_array(a) for a in arrays]
    first = hosts[0]
    for i, h in enumerate(hosts):
        if (h.dtype, len(h.shape)) != (first.dtype, len(first.shape)):
            raise ArgumentError(f"the arrays of a list share one dtype and rank: item 0 is "
                                f"{len(first.shape)}-D {first.dtype}, item {i} "
                                f"{len(h.shape)}-D {h.dtype}")
    return ArgSpec(name, "array_list", first.dtype, all(h.aligned for h in hosts),
                   tuple((h.aligned, h.layout()) for h in hosts))


def _device_interface(v: Any) -> dict | None:
    if isinstance(v, np.ndarray | int | float):
        return None
    return cuda_interface(v)


def _array_key(v: Any) -> Any:
    """What of a runtime argument decides the compiled kernel (an integer's being 1 too:
    it compiles as the constant)."""
    cai = _device_interface(v)
    if cai is not None:
        return _facts_of(v, cai).key
    if is_array(v):
        h = host_array(v)
        return ("array", h.dtype.short, h.aligned, h.layout())
    if is_array_list(v):
        return ("list", *map(_array_key, v))
    return (*arg_spec(v), is_one(v))
