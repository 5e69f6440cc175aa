"""The PTX backend at launch time: load a cubin through the CUDA driver and launch it.

A cached launch imports only this module, so it imports no xDSL (``printer.py`` and
``assemble.py`` compile) and touches CUDA only when a ``Launcher`` is built or
``availability()`` is asked. The driver API comes from cuda-bindings (``cuda.bindings.driver``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from backends.ptx.tensor_maps import TensorMaps
from compiler import device_arrays
from compiler.dtypes import ML_DTYPES, int1
from compiler.errors import (
    ArgumentError,
    LaunchError,
    OutOfResources,
    argument_error,
    describe_value,
    negative_strides,
)
from compiler.graphs import ACTIVE as _CAPTURES
from compiler.kinfo import GRID_LIMITS, MAX_GRID, KernelInfo, Param
from compiler.language import dtype_from_str
from compiler.specialize import cai_dtype
from compiler.timing import compilation, phase

# Scalar parameter dtype -> the C type of its slot in the kernel's parameter buffer.
_SLOT_TYPES = {
    "i1": ctypes.c_uint8, "i8": ctypes.c_int8, "u8": ctypes.c_uint8, "i16": ctypes.c_int16,
    "u16": ctypes.c_uint16, "i32": ctypes.c_int32, "u32": ctypes.c_uint32,
    "i64": ctypes.c_int64, "u64": ctypes.c_uint64,
    "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16, "f32": ctypes.c_float,
    "f64": ctypes.c_double,
}
_HOST = "numpy"  # an argument that must be staged through device memory
# A kernel may declare at most this much static .shared memory; one that needs more
# declares it dynamic (.extern) and is launched with it after opting in.
STATIC_SHARED_LIMIT = 48 * 1024

# stores an argument in its slot; returns its library's current stream (``ordinal ->
# stream``), ``_HOST`` for an array to stage through device memory, or None
Put = Callable[[Any], Any]


def _driver() -> Any:
    from cuda.bindings import driver
    return driver


class Device:
    """One GPU and its primary context (the one torch and CuPy use), through the driver
    API. cuda.core's ``Device`` did this, but importing cuda.core took 100 of the 180 ms
    of a first launch whose kernel was in the disk cache (an H100, 2026-11-24)."""

    def __init__(self, ordinal: int | None = None):
        driver = _driver()
        _check(driver.cuInit(0), "cuInit")
        if ordinal is None:  # the current context's GPU, else the first, as CUDA's runtime
            err, current = driver.cuCtxGetDevice()
            ordinal = int(current) if err == driver.CUresult.CUDA_SUCCESS else 0
        self.device_id = ordinal
        self._handle = _check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
        self._context = None

    @property
    def context(self) -> Any:
        """The GPU's primary context, retained on first use (and never released: modules
        and memory live in it)."""
        if self._context is None:
            self._context = _check(_driver().cuDevicePrimaryCtxRetain(self._handle),
                                   "cuDevicePrimaryCtxRetain")
        return self._context

    def set_current(self) -> None:
        _check(_driver().cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    @property
    def compute_capability(self) -> tuple[int, int]:
        attr = _driver().CUdevice_attribute
        return (self._attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                self._attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))

    @property
    def name(self) -> str:
        raw = _check(_driver().cuDeviceGetName(256, self._handle), "cuDeviceGetName")
        return raw.split(b"\0", 1)[0].decode()

    @property
    def shared_per_block(self) -> int:
        """Bytes of shared memory one block may opt in to."""
        attr = _driver().CUdevice_attribute
        return self._attribute(attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)

    def attribute(self, name: str) -> int:
        """The driver's ``CU_DEVICE_ATTRIBUTE_<name>`` of this GPU (``"WARP_SIZE"``)."""
        return self._attribute(getattr(_driver().CUdevice_attribute,
                                       f"CU_DEVICE_ATTRIBUTE_{name}"))

    def _attribute(self, attr: Any) -> int:
        return int(_check(_driver().cuDeviceGetAttribute(attr, self._handle),
                          "cuDeviceGetAttribute"))


def new_graph():
    """A ``tc.graph``'s CUDA graph, capturing from now on (``backends.ptx.graphs``)."""
    from backends.ptx.graphs import CudaGraph
    return CudaGraph()


def availability() -> tuple[bool, str]:
    """Whether a CUDA device that runs tilec's PTX (sm_80 or newer) is present, and why."""
    try:
        dev = Device()
        dev.set_current()
        major, minor = dev.compute_capability
        name = dev.name
    except Exception as e:  # noqa: BLE001 - no cuda-python, driver or device: "not here"
        return False, f"no usable CUDA device ({type(e).__name__}: {e})".splitlines()[0]
    if major < 8:
        return False, f"{name} is sm_{major}{minor}; tilec's PTX needs sm_80 or newer"
    return True, f"{name} (sm_{major}{minor})"


@functools.cache
def device_arch() -> str | None:
    """The current CUDA device's target, ``sm_XY``: what a launch compiles for (a cubin of
    another generation does not load there; Hopper's gets wgmma); None without one."""
    if not availability()[0]:
        return None
    major, minor = Device().compute_capability
    return f"sm_{major}{minor}"


def shared_layout(arrays: list[tuple[int, int, int | None]]) -> tuple[list[int], int]:
    """Byte offsets of shared arrays of ``(size, alignment, offset)``, each at its offset
    where it has one (``place-shared`` placed them all), else one after another, each at
    least 16-byte aligned; and the total bytes."""
    offsets, total = [], 0
    for size, align, placed in arrays:
        start = -(-total // align) * align if placed is None else placed
        offsets.append(start)
        total = max(total, start + -(-size // 16) * 16)
    return offsets, total


def shared_arrays(module_or_kernel) -> list[tuple[int, int, int | None]]:
    """The ``(size, alignment, offset)`` of every ``ptx.shared`` in ``module_or_kernel``."""
    return [(op.size.value.data, op.align.value.data,
             None if op.offset is None else op.offset.value.data)
            for op in module_or_kernel.walk() if op.name == "ptx.shared"]


def bf16_bits(x: float) -> int:
    """The bfloat16 nearest to ``x`` (ties to even), as its 16 bits."""
    if math.isnan(x):
        return 0x7FC0
    u = int(np.float32(x).view(np.uint32))
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def _check(result: tuple, what: str) -> Any:
    err, *values = result
    if int(err) != 0:
        name = _driver().cuGetErrorName(err)[1]
        raise LaunchError(f"{what} failed: {name.decode() if name else int(err)}")
    return values[0] if values else None


class Launcher:
    """Runs one compiled kernel on the GPU that holds its device-array arguments (the
    current GPU when none does: NumPy arrays, scalars); ``__call__(grid, args)`` is one
    launch. With one GPU that is a ``DeviceLauncher``; with several, one per GPU, made on
    the first launch there (loading the module into that GPU's context), and the GPU is
    made current for the launch (as torch does with ``torch.cuda.device``)."""

    def __init__(self, artifact: bytes, info: KernelInfo):
        self.info, self._artifact = info, artifact
        first = DeviceLauncher(artifact, info)
        self._launchers = {first.ordinal: first}
        self._default = first
        count = _check(_driver().cuDeviceGetCount(), "cuDeviceGetCount")
        self._single = count < 2
        self.direct = first if self._single else self  # the call for ``(grid, args)``
        self._loading = threading.Lock()  # one module load per GPU

    def __call__(self, grid: tuple[int, int, int], args: list) -> None:
        if self._single:
            self._default(grid, args)
            return
        ordinal = _device_of(args)
        launcher = self._launchers.get(self._default.ordinal if ordinal is None else ordinal)
        if launcher is None:
            with self._loading:
                launcher = self._launchers.get(ordinal)
                if launcher is None:
                    launcher = self._launchers[ordinal] = DeviceLauncher(
                        self._artifact, self.info, ordinal)
        launcher.make_current()
        launcher(grid, args)


def _device_of(args: list) -> int | None:
    """The GPU of the first device array among ``args`` (torch, CuPy, CUDA array
    interface), or None."""
    for a in args:
        get_device = getattr(a, "get_device", None)  # torch
        if get_device is not None and getattr(a, "is_cuda", False):
            return get_device()
        device = getattr(a, "device", None)  # CuPy
        if device is not None and hasattr(device, "id") and hasattr(a, "data"):
            return device.id
        cai = getattr(a, "__cuda_array_interface__", None)
        if cai is not None and cai["data"][0]:
            driver = _driver()
            attr = driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
            return _check(driver.cuPointerGetAttribute(attr, cai["data"][0]),
                          "cuPointerGetAttribute")
    return None


class DeviceLauncher:
    """Runs one compiled kernel on one GPU; ``__call__(grid, args)`` is one launch.

    The driver loads the module. Launches call its ``cuLaunchKernel`` (through
    cuda-bindings) with a parameter buffer built once here: one ctypes slot per parameter
    and the array of pointers to them. ``cuda.core.launch`` converts every argument and
    needs a ``LaunchConfig`` and ``Stream`` object per launch: 11 us per launch on an H200
    VM, where the driver call itself takes 4.3 us (ctypes is no faster). A launch here
    checks each argument and stores it into its slot: 7 us with four arguments in all.

    CUDA graphs: a launch with torch or CuPy arrays goes on that library's current stream
    (the capturing one inside ``torch.cuda.graph``) and neither copies, allocates nor
    waits, and the driver copies the parameter values into the graph node, so it
    captures and replays; loading the module is made capture-safe below. Inside a
    ``tc.graph`` every launch goes on its capture stream (``graphs.capture_stream``). A
    launch with NumPy arrays (copied through device buffers, then waited for) or with
    ``debug=True`` (a buffer read back) cannot be captured, nor, in ``torch.cuda.graph``,
    one with no torch arrays (the legacy default stream).
    """

    def __init__(self, artifact: bytes, info: KernelInfo, ordinal: int | None = None):
        driver = _driver()
        self.info = info
        self._device = Device(ordinal)
        title = f"{info.name}'s first launch on ptx"
        # the first launch may come inside a capture
        with _capture_relaxed(driver), compilation(title):
            self._device.set_current()
            image = ctypes.create_string_buffer(artifact, len(artifact))
            with phase("driver: load module (cuModuleLoadData)"):
                self._module = _check(driver.cuModuleLoadData(ctypes.addressof(image)),
                                      f"loading {info.name}'s cubin")
            self._function = _check(driver.cuModuleGetFunction(
                self._module, info.name.encode()), f"finding {info.name} in its cubin")
        # the module lives as long as this launcher (the primary context outlives both)
        weakref.finalize(self, driver.cuModuleUnload, self._module)
        self._ordinal = self.ordinal = self._device.device_id
        self._cu_launch = driver.cuLaunchKernel
        self._success = driver.CUresult.CUDA_SUCCESS
        self._invalid_context = driver.CUresult.CUDA_ERROR_INVALID_CONTEXT
        self._threads = 32 * info.num_warps
        self._dynamic_shared = info.shared if info.shared > STATIC_SHARED_LIMIT else 0
        if self._dynamic_shared:  # the printer declared it .extern: opt in to that much
            most = self._device.shared_per_block
            if self._dynamic_shared > most:
                raise OutOfResources(
                    f"{info.name} needs {self._dynamic_shared:,} bytes of shared memory, this "
                    f"GPU gives a block at most {most:,}: fewer num_stages or smaller tiles")
            attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(driver.cuFuncSetAttribute(self._function, attr, self._dynamic_shared),
                   f"allowing {info.name} {self._dynamic_shared} bytes of shared memory")
        self._slots = [ctypes.c_uint64() if p.is_ptr else _SLOT_TYPES[p.dtype]()
                       for p in info.params]
        maps = info.extra.get("tensor_maps")  # TMA descriptors, after the parameters
        self._maps = TensorMaps(maps, self._slots) if maps else None
        buffers = [*self._slots, *(self._maps.buffers if self._maps else ())]
        self._pointers = (ctypes.c_void_p * max(len(buffers), 1))(
            *[ctypes.addressof(s) for s in buffers])
        self._params = ctypes.addressof(self._pointers)
        self._puts = [_Puts(functools.partial(
            _pointer_put if p.is_ptr else _scalar_put, p, s, self._ordinal))
            for p, s in zip(info.params, self._slots, strict=True)]
        self._lock = threading.Lock()  # the slots are shared by every launch
        self._wide = [(i, info.params[i].name) for i in info.extra.get("wide_offsets", ())]

    def make_current(self) -> None:
        self._device.set_current()

    def __call__(self, grid: tuple[int, int, int], args: Sequence) -> None:
        dims = _check_grid(grid)
        if len(args) != len(self._puts):
            raise LaunchError(f"{self.info.name} takes {len(self._puts)} arguments "
                              f"(constexprs excluded), got {len(args)}")
        for i, name in self._wide:  # kernels with 64-bit offsets only: no cost elsewhere
            device_arrays.check_reach(name, args[i])
        with self._lock:
            source = staged = None
            for puts, a in zip(self._puts, args):
                kind = puts[type(a)](a)
                if kind is _HOST:
                    staged = True
                elif source is None:
                    source = kind
            stream = 0 if source is None else source(self._ordinal)
            if _CAPTURES:  # a tc.graph captures, on this thread or another
                from backends.ptx.graphs import capture_stream
                stream = capture_stream(self, dims, args, stream, staged)
            if staged:
                self._launch_staged(dims, stream, [
                    (i, _span(p, a)) for i, (p, a) in enumerate(zip(self.info.params, args))
                    if p.is_ptr and isinstance(a, np.ndarray)])
            else:
                self._launch(dims, stream)

    def _launch(self, dims: tuple[int, int, int], stream: int) -> None:
        if self._maps is not None:
            self._maps.fill()
        args = (self._function, *dims, self._threads, 1, 1, self._dynamic_shared, stream,
                self._params, 0)
        (err,) = self._cu_launch(*args)
        if err == self._invalid_context:
            self._device.set_current()  # a first launch from another thread
            (err,) = self._cu_launch(*args)
        if err != self._success:
            _check((err,), f"launching {self.info.name}")

    def _launch_staged(self, dims: tuple[int, int, int], stream: int,
                       host: list[tuple[int, np.ndarray]]) -> None:
        """Copy NumPy arrays in, launch, copy written ones back, wait, free."""
        driver = _driver()
        self._device.set_current()  # this thread's first launch: its context is not current
        buffers = []
        try:
            for i, a in host:
                ptr = _check(driver.cuMemAlloc(max(a.nbytes, 1)), "cuMemAlloc")
                buffers.append(ptr)
                self._slots[i].value = int(ptr)
                if a.nbytes:
                    _check(driver.cuMemcpyHtoDAsync(ptr, a.ctypes.data, a.nbytes, stream),
                           "copying an argument to the device")
            self._launch(dims, stream)
            for (i, a), ptr in zip(host, buffers):
                if self.info.params[i].written and a.nbytes:
                    _check(driver.cuMemcpyDtoHAsync(a.ctypes.data, ptr, a.nbytes, stream),
                           "copying a result back")
            _check(driver.cuStreamSynchronize(stream), "waiting for the kernel")
        finally:
            for ptr in buffers:
                driver.cuMemFree(ptr)


@contextlib.contextmanager
def _capture_relaxed(driver: Any):
    """Let this thread load a module while a stream captures a CUDA graph.

    Loading enqueues nothing on a stream, but torch captures in the global mode, where
    the driver may refuse calls that are not stream work ("operation not permitted when
    stream is capturing"); the relaxed mode, set and restored in the push/pop way the
    driver documentation recommends, lets the load through.
    """
    relaxed = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    previous = _check(driver.cuThreadExchangeStreamCaptureMode(relaxed),
                      "cuThreadExchangeStreamCaptureMode")
    try:
        yield
    finally:
        driver.cuThreadExchangeStreamCaptureMode(previous)


class _Puts(dict):
    """type(argument) -> the ``Put`` for arguments of that type, made on first sight."""

    def __init__(self, make: Callable[[type], Put]):
        super().__init__()
        self.make = make

    def __missing__(self, t: type) -> Put:
        put = self[t] = self.make(t)
        return put


def _check_grid(grid: tuple) -> tuple[int, int, int]:
    if type(grid) is tuple and len(grid) == 3:
        x, y, z = grid
        if (type(x) is int and type(y) is int and type(z) is int
                and 0 < x <= MAX_GRID[0] and 0 < y <= MAX_GRID[1] and 0 < z <= MAX_GRID[2]):
            return grid
    try:
        dims = tuple(int(g) for g in grid)
    except (TypeError, ValueError):
        raise LaunchError(f"grid must be a tuple of integers, got {grid!r}") from None
    if len(dims) != 3 or not all(1 <= g <= m for g, m in zip(dims, MAX_GRID)):
        raise LaunchError(f"grid {grid!r} is invalid: {GRID_LIMITS}")
    return dims  # type: ignore[return-value]


def _current_stream(source: str | None, ordinal: int) -> int:
    """The stream to launch on: the capture's while this thread captures a ``tc.graph``,
    else the current one of the library whose arrays were passed (``"torch"`` or
    ``"cupy"``), else the legacy default stream, ordered with every blocking stream."""
    if _CAPTURES:
        from backends.ptx.graphs import current_capture_stream
        captured = current_capture_stream()
        if captured is not None:
            return captured
    if source == "torch":
        return _torch_stream(sys.modules["torch"])(ordinal)
    if source == "cupy":
        return _cupy_stream(ordinal)
    return 0


def _torch_stream(torch: Any) -> Callable[[int], int]:
    """``ordinal -> `` torch's current stream there."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # cheaper, as Triton does
    return raw or (lambda ordinal: torch.cuda.current_stream(ordinal).cuda_stream)


def _cupy_stream(_ordinal: int) -> int:
    return sys.modules["cupy"].cuda.get_current_stream().ptr


def _fail(p: Param, problem: str) -> LaunchError:
    return argument_error(p.name, problem)


def _wrong_dtype(p: Param, a: Any) -> LaunchError:
    return _fail(p, f"expected an array of {dtype_from_str(p.dtype)}, got {describe_value(a)}")


def _elsewhere(p: Param, a: Any, device: Any, ordinal: int) -> LaunchError:
    return _fail(p, f"{describe_value(a)} is on device {device}; the kernel runs on device "
                    f"{ordinal}")


# -- scalar parameters -------------------------------------------------------------------

def _scalar_put(p: Param, slot: Any, _ordinal: int, t: type) -> Put:
    """Stores Python/NumPy scalars of type ``t`` into ``slot`` as ``p.dtype``."""
    kind = dtype_from_str(p.dtype)
    if not issubclass(t, int | float | np.number | np.bool_):
        raise _fail(p, f"expected a scalar of type {kind}, got {t.__name__}")
    if kind.is_float:
        bits = {"f16": lambda v: int(np.float16(v).view(np.uint16)),
                "bf16": bf16_bits}.get(p.dtype, float)

        def put_float(a: Any) -> None:
            slot.value = bits(float(a))
        return put_float
    if not issubclass(t, int | np.integer | np.bool_):
        raise _fail(p, f"expected a scalar of type {kind}, got {t.__name__}")
    lo, hi = ((0, 1) if kind.kind == "b" else (0, 2 ** kind.bits - 1) if not kind.is_signed
              else (-(2 ** (kind.bits - 1)), 2 ** (kind.bits - 1) - 1))

    def put_int(a: int) -> None:
        if not lo <= a <= hi:
            raise _fail(p, f"{describe_value(a)} does not fit {kind} (from {lo} to {hi})")
        slot.value = a
    return put_int if t is int else lambda a: put_int(int(a))


# -- pointer parameters ------------------------------------------------------------------

def _pointer_put(p: Param, slot: Any, ordinal: int, t: type) -> Put:
    """Stores the device address of arrays of type ``t`` into ``slot``; the put returns
    the array's library's current stream or ``_HOST`` for a NumPy array to stage."""
    if issubclass(t, np.ndarray):
        return functools.partial(_numpy, p, dtype_from_str(p.dtype).numpy)
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(t, torch.Tensor):
        return _torch_put(p, slot, ordinal, torch)
    cupy = sys.modules.get("cupy")
    if cupy is not None and issubclass(t, cupy.ndarray):
        return _cupy_put(p, slot, ordinal)
    if t.__module__ == "backends.ptx.memory" and t.__name__ == "DeviceArray":
        return functools.partial(_device_array, p, slot, ordinal)
    if hasattr(t, "__cuda_array_interface__"):
        return functools.partial(_cuda_array, p, slot, ordinal)
    if hasattr(t, "__dlpack__"):
        return functools.partial(_dlpack_array, p, slot, ordinal)
    raise _fail(p, "the ptx backend takes NumPy arrays and CUDA device arrays (CuPy, "
                   f"PyTorch, __cuda_array_interface__, DLPack), got {t.__name__}")


def _numpy(p: Param, dtype: np.dtype | None, a: np.ndarray) -> str:
    if a.dtype != dtype:
        raise _wrong_dtype(p, a)
    if p.written and not a.flags.writeable:
        raise _fail(p, f"{describe_value(a)} is read-only, and the kernel writes it")
    return _HOST


def _span(p: Param, a: np.ndarray) -> np.ndarray:
    """The memory a NumPy argument's strides span, staged whole (``span_view``)."""
    try:
        return device_arrays.span_view(a)
    except ArgumentError as e:
        raise e.named(p.name) from None


def _torch_put(p: Param, slot: Any, ordinal: int, torch: Any) -> Put:
    d = dtype_from_str(p.dtype)
    name = "bool" if d is int1 else ML_DTYPES.get(d, d.name)  # ml_dtypes' are torch's
    dtype = getattr(torch, name, None)
    stream = _torch_stream(torch)

    def put(t: Any) -> Callable[[int], int]:
        if t.dtype is not dtype or t.get_device() != ordinal:
            raise _torch_error(p, t, dtype, ordinal)
        slot.value = t.data_ptr()  # the view's first element; any strides, requires grad
        return stream
    return put


def _torch_error(p: Param, t: Any, dtype: Any, ordinal: int) -> LaunchError:
    if t.dtype is not dtype:
        return _wrong_dtype(p, t)
    # on another device: the description names the tensor's device
    return argument_error(p.name, f"{describe_value(t)} is not on cuda:{ordinal}, where "
                                  "the kernel runs", f"{{}}.to('cuda:{ordinal}')")


def _cupy_put(p: Param, slot: Any, ordinal: int) -> Put:
    dtype = dtype_from_str(p.dtype).numpy

    def put(a: Any) -> Callable[[int], int]:
        if a.dtype != dtype:
            raise _wrong_dtype(p, a)
        if a.device.id != ordinal:
            raise _elsewhere(p, a, a.device.id, ordinal)
        if any(s < 0 for s in a.strides):
            raise negative_strides(a).named(p.name)
        slot.value = a.data.ptr
        return _cupy_stream
    return put


def _device_array(p: Param, slot: Any, ordinal: int, a: Any) -> None:
    """``tc.empty``'s arrays (``memory.DeviceArray``): their dtype, GPU and address are at
    hand, with no interface to build or pointer to ask the driver about."""
    if a.dtype.short != p.dtype:
        raise _wrong_dtype(p, a)
    if a.device_id != ordinal:
        raise _elsewhere(p, a, a.device_id, ordinal)
    slot.value = a.ptr


def _cuda_array(p: Param, slot: Any, ordinal: int, a: Any) -> None:
    """Any other device array, through ``__cuda_array_interface__``."""
    d = a.__cuda_array_interface__
    if cai_dtype(a, d["typestr"]) != dtype_from_str(p.dtype):  # bfloat16 says "<V2"
        raise _wrong_dtype(p, a)
    if any(s < 0 for s in d.get("strides") or ()):
        raise negative_strides(a).named(p.name)
    ptr = d["data"][0]
    if ptr:
        driver = _driver()
        attr = driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        device = _check(driver.cuPointerGetAttribute(attr, ptr), "cuPointerGetAttribute")
        if device != ordinal:
            raise _elsewhere(p, a, device, ordinal)
    slot.value = ptr


def _dlpack_array(p: Param, slot: Any, ordinal: int, a: Any) -> None:
    """Any other device array, through DLPack (JAX, ...). The launch goes on the legacy
    default stream, which DLPack numbers 1: the producer orders its work before it."""
    if device_arrays.device_of(a)[0] not in (device_arrays.CUDA, device_arrays.CUDA_MANAGED):
        raise _fail(p, f"{describe_value(a)} is outside CUDA memory; pass host data as a "
                       "NumPy array")
    try:
        info = device_arrays.describe(a, stream=1)
    except ArgumentError as e:
        raise e.named(p.name) from None
    if info.dtype != p.dtype:
        raise _wrong_dtype(p, a)
    if not info.forward:
        raise negative_strides(a).named(p.name)
    if info.device_id != ordinal:
        raise _elsewhere(p, a, info.device_id, ordinal)
    slot.value = info.ptr
