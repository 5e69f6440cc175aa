"""Arrays as arguments of ``compiler.tile`` kernels (cuTile's arrays), on the launch side.

A kernel parameter that receives an array becomes several kernel parameters: the pointer
to its first element, then its shape and its strides (in elements) as ``i32`` scalars.
A last stride of 1 is not passed: it is specialized to the constant 1, so the contiguity
analysis sees a unit-stride dimension and accesses along it vectorize. Shapes and the
other strides are specialized on divisibility by 16, as integer arguments are.

Strided NumPy arrays are passed as a 1-D view of the memory they span (no copy: writes
land in the user's array); device arrays likewise (a PyTorch tensor as a 1-D tensor of it).
``TileKernel`` is ``@ct.kernel``: ``KernelFunction`` with this expansion, and a launch
path that reads the common arrays by their attributes (below). No xDSL here.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

import compiler.language as tl
from compiler import device_arrays, launch_hints
from compiler.errors import ArgumentError, contiguous_fix, describe_value, unsupported_dtype
from compiler.jit import KernelFunction
from compiler.kinfo import ArgSpec
from compiler.specialize import arg_spec, cai_dtype, cuda_interface, fast_spec, is_one

MAX_DIMS = 5  # as cuTile's arrays (and tilec's tiles: compiler.frontend.cutile.leading)


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
        return _shape_facts(self.shape, self.strides).layout

    def scalars(self) -> list[int]:
        return list(_shape_facts(self.shape, self.strides).scalars)


class _ShapeFacts(NamedTuple):
    """What a launch needs of an array's shape and strides (elements), worked out once per
    shape and strides: its layout (and the layout's fields as a plain tuple, which a launch
    key hashes and compares faster), whether it is row-major, the elements from its first
    to one past its last, and its shape and strides as kernel arguments."""

    layout: ArrayLayout
    layout_key: tuple
    contiguous: bool
    span: int
    scalars: tuple[int, ...]


@functools.lru_cache(maxsize=1024)
def _shape_facts(shape: tuple[int, ...], strides: tuple[int, ...]) -> _ShapeFacts:
    """Raises ``_Refused`` for a shape a kernel cannot take (``_check_extent``)."""
    _check_extent(shape, strides)
    unit = strides[-1] == 1
    fields = (len(shape), tuple(n % 16 == 0 for n in shape),
              tuple(s % 16 == 0 for s in strides), unit)
    return _ShapeFacts(ArrayLayout(*fields), fields, tuple(strides) == _c_strides(shape),
                       _span(shape, strides), (*shape, *(strides[:-1] if unit else strides)))


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
    return HostArray(d, a.shape, strides, True, _spanned(a, _span(a.shape, strides)))


def _spanned(a: np.ndarray, span: int) -> np.ndarray:
    """What a pointer parameter takes of NumPy array ``a``: ``a``, or where it is not
    row-major the 1-D view of the ``span`` elements from its first (writes reach ``a``)."""
    if a.flags.c_contiguous:
        return a
    return np.lib.stride_tricks.as_strided(a, (span,), (a.itemsize,))


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
    shape: _ShapeFacts
    key: tuple  # the launch key: dtype, alignment, layout


@functools.lru_cache(maxsize=1024)
def _device_facts(typestr: str, shape: tuple[int, ...], byte_strides: tuple[int, ...] | None,
                  aligned: bool, dtype: tl.dtype | None) -> _DeviceFacts:
    """``dtype``: the element type where the typestr cannot say it (bfloat16)."""
    nd = np.dtype(typestr)
    strides = _c_strides(shape) if byte_strides is None else \
        _element_strides(byte_strides, nd.itemsize)
    facts = _shape_facts(shape, strides)
    d = dtype or _element_type(nd)
    return _DeviceFacts(d, strides, facts, ("array", d.short, aligned, facts.layout))


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
    if f.shape.contiguous:
        return v
    return _DeviceSpan(cai, f.shape.span, getattr(v, "dtype", None))


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
        """As ``KernelFunction``'s: the constexprs' and launch hints' values and, by each
        argument's type, a cheap stand-in for its specialization (``_KEYS``)."""
        keys, cpos = _KEYS, self._constexpr_positions
        key = [a if i in cpos else keys[type(a)](a) for i, a in enumerate(args)]
        if kwargs:
            key += [(k, v if k in self.constexprs else repr(v) if k in launch_hints.NAMES
                     else keys[type(v)](v)) for k, v in kwargs.items()]
        return (opts, *key)

    def runtime_args(self, args: Sequence[Any], kwargs: dict, sources: tuple | None) -> list:
        return self.expand_args(super().runtime_args(args, kwargs, sources))

    @staticmethod
    def expand_args(args: Sequence[Any]) -> list:
        """Runtime arguments as the compiled kernel takes them: each array as its memory,
        shape and strides."""
        runtime: list = []
        expanders = _EXPANDERS
        for v in args:
            expanders[type(v)](runtime, v)
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
    """What of a runtime argument of any kind decides the compiled kernel (an integer's
    being 1 too: it compiles as the constant)."""
    cai = _device_interface(v)
    if cai is not None:
        return _facts_of(v, cai).key
    if is_array(v):
        h = host_array(v)
        return ("array", h.dtype.short, h.aligned, h.layout())
    if is_array_list(v):
        return ("list", *map(_array_key, v))
    return (*arg_spec(v), is_one(v))


def _expand(runtime: list, v: Any) -> None:
    """Append to ``runtime`` what a runtime argument of any kind becomes: an array its
    memory, shape and strides; a list of arrays each of those; anything else itself."""
    cai = _device_interface(v)
    if cai is not None:  # CuPy, tilec's device arrays: facts cached by the interface
        f = _facts_of(v, cai)
        runtime += [_device_memory(v, cai, f), *f.shape.scalars]
    elif is_array(v):
        h = host_array(v)
        runtime += [h.memory, *h.scalars()]
    elif is_array_list(v):  # item by item
        for a in v:
            _EXPANDERS[type(a)](runtime, a)
    else:
        runtime.append(v)


# -- the launch path of the common arguments ----------------------------------------------
#
# A launch like an earlier one reads each argument twice, for its launch key and for the
# runtime arguments, so both are made cheap for the arguments most launches pass: Python
# numbers, NumPy arrays and PyTorch tensors. An array's shape and strides are read as
# attributes and their facts (``_shape_facts``) found in a cache; no DLPack capsule or
# CUDA array interface is made (each a few microseconds on torch). Anything else, and any
# array these cannot take, goes the way of every argument (``_array_key``, ``_expand``),
# which also says what is wrong with it.

class _ByType(dict):
    """type -> how a launch reads arguments of that type, chosen on first sight of it."""

    def __init__(self, choose: Callable[[type], Callable]):
        super().__init__()
        self.choose = choose

    def __missing__(self, t: type) -> Callable:
        read = self[t] = self.choose(t)
        return read


def _kind(t: type) -> str:
    """``"number"``, ``"numpy"``, ``"tensor"`` (PyTorch) or ``"any"``. None is "any": a
    compiler.tile kernel takes no None for an array or a number."""
    if t in (int, float, bool):
        return "number"
    if issubclass(t, np.ndarray):
        return "numpy"
    torch = sys.modules.get("torch")  # a tensor's type is seen after torch is imported
    if torch is not None and issubclass(t, torch.Tensor):
        return "tensor"
    return "any"


def _numpy_facts(a: np.ndarray) -> _ShapeFacts | None:
    """``a``'s shape facts; None for one left to ``host_array``: 0-d (a scalar, as in
    ``is_array``), or refused (which it explains)."""
    try:
        return _strided_facts(a.shape, a.strides, a.itemsize)
    except _Refused:
        return None


@functools.lru_cache(maxsize=1024)
def _strided_facts(shape: tuple[int, ...], byte_strides: tuple[int, ...],
                   itemsize: int) -> _ShapeFacts:
    return _shape_facts(shape, _element_strides(byte_strides, itemsize))


def _numpy_key(a: np.ndarray) -> Any:
    f = _numpy_facts(a)
    return _array_key(a) if f is None else (type(a), a.dtype, f.layout_key)


def _numpy_expand(runtime: list, a: np.ndarray) -> None:
    f = _numpy_facts(a)
    if f is None:
        _expand(runtime, a)
        return
    runtime.append(_spanned(a, f.span))
    runtime += f.scalars


def _tensor_facts(t: Any) -> _ShapeFacts | None:
    """A CUDA or CPU tensor's shape facts; None for one left to ``host_array``: on another
    device, 0-d, without strides (sparse), or refused (which it explains)."""
    if not (t.is_cuda or t.is_cpu):
        return None
    try:
        return _shape_facts(t.shape, t.stride())
    except (_Refused, RuntimeError):
        return None


def _tensor_key(t: Any) -> Any:
    """Type, dtype, device, alignment and layout. The alignment is a CUDA tensor's first
    element's; a CPU tensor goes as NumPy's view of it, which a kernel takes as aligned."""
    f = _tensor_facts(t)
    if f is None:
        return _array_key(t)
    cuda = t.is_cuda
    return (type(t), t.dtype, cuda, cuda and t.data_ptr() % 16 == 0, f.layout_key)


def _tensor_expand(runtime: list, t: Any) -> None:
    """A CUDA tensor is its memory itself (the ptx launcher takes its ``data_ptr()``), or
    where it is strided a 1-D tensor of its span: still torch's, so the launch goes on
    torch's current stream, and its length is what the debug build checks bounds
    against. A CPU tensor is NumPy's view of it."""
    f = _tensor_facts(t)
    if f is None:
        _expand(runtime, t)
        return
    if t.is_cuda:
        runtime.append(t if f.contiguous else
                       device_arrays.detached(t).as_strided((f.span,), (1,)))
    else:
        runtime.append(_spanned(_cpu_view(t), f.span))
    runtime += f.scalars


def _cpu_view(t: Any) -> np.ndarray:
    """NumPy's view of a CPU tensor: ``numpy()``, the cheap way, where it gives one; else
    DLPack's (bfloat16, fp8, a tensor that requires grad)."""
    try:
        return t.numpy()
    except (TypeError, RuntimeError):
        return device_arrays.host_view(t)


_KEYS = _ByType(lambda t: {"number": fast_spec, "numpy": _numpy_key, "tensor": _tensor_key,
                           "any": _array_key}[_kind(t)])
"""type -> its arguments' part of the launch key."""
_EXPANDERS = _ByType(lambda t: {"number": list.append, "numpy": _numpy_expand,
                                "tensor": _tensor_expand, "any": _expand}[_kind(t)])
"""type -> ``(runtime, argument)``: append the runtime arguments it becomes."""
