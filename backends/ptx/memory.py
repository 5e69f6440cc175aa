"""The ptx backend's arrays: ``DeviceArray``, device memory from the CUDA driver
(``cuMemAlloc``), with no PyTorch or CuPy needed. ``tc.empty``/``tc.zeros``/``tc.asarray``
make them (``empty``, ``from_host``); ``tc.to_numpy`` copies them back.

A launch takes a ``DeviceArray`` as it takes any device array, on the legacy default
stream (``_device_array`` in ``__init__.py`` reads its address); copies and ``cuMemsetD8``
go there too, so they are ordered with the kernels. Other libraries take one without a
copy by DLPack (``torch.from_dlpack(a)``) or the CUDA array interface
(``cupy.asarray(a)``).
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import compiler.language as tl
from backends.ptx import Device, _check, _driver
from compiler import dlpack, graphs
from compiler.device_arrays import CUDA
from compiler.device_views import DeviceView, host_dtype, itemsize
from compiler.dtypes import ML_DTYPES

_DEVICES: dict[int, Device] = {}


def _device(ordinal: int | None = None) -> Device:
    """tilec's ``Device`` for GPU ``ordinal`` (None: the current context's, else the
    first), one per GPU so its primary context is retained once."""
    found = Device(ordinal)
    return _DEVICES.setdefault(found.device_id, found)


@contextlib.contextmanager
def _current(device: Device) -> Iterator[Any]:
    """The driver, with ``device``'s primary context current until the block ends (the
    thread's own current context is back afterwards)."""
    driver = _driver()
    _check(driver.cuCtxPushCurrent(device.context), "cuCtxPushCurrent")
    try:
        yield driver
    finally:
        driver.cuCtxPopCurrent()


class _Memory:
    """``nbytes`` of one GPU's memory, freed when the last array on them goes."""

    def __init__(self, nbytes: int, device: Device):
        with _current(device) as driver:
            self.ptr = int(_check(driver.cuMemAlloc(max(nbytes, 1)),
                                  f"allocating {nbytes:,} bytes on GPU {device.device_id}"))
        self.device = device
        weakref.finalize(self, _free, device, self.ptr).atexit = False  # exit frees it all


def after_captures(device: Device, release: Callable[[Any], Any]) -> None:
    """``release(driver)`` with ``device``'s context current: now, or once no ``tc.graph``
    captures on ptx. A free waits for the device, which a capture cannot, and the graph
    being captured may use the memory; the garbage collector may run such finalizers
    anywhere, a capture included."""
    if _capturing():
        _DEFERRED.append((device, release))
        return
    with _current(device) as driver:
        release(driver)


def _capturing() -> bool:
    return any(g.backend == "ptx" for g in list(graphs.ACTIVE.values()))


def _free(device: Device, ptr: int) -> None:
    after_captures(device, lambda driver: driver.cuMemFree(ptr))


_DEFERRED: list[tuple[Device, Callable[[Any], Any]]] = []
"""Releases put off while a ``tc.graph`` captured on ptx, run when no capture is left."""


def free_deferred() -> None:
    """Run what ``after_captures`` put off, once no ptx capture is left."""
    while _DEFERRED and not _capturing():
        after_captures(*_DEFERRED.pop())


class DeviceArray(DeviceView):
    """A row-major array of ``dtype`` and ``shape`` in GPU memory, ``offset`` bytes into
    its allocation: ``a[i]``, ``a[start:stop]`` and ``a.reshape(shape)`` are views of it."""

    __slots__ = ("__weakref__", "dtype", "memory", "offset", "shape")

    def __init__(self, memory: _Memory, dtype: tl.dtype, shape: tuple[int, ...],
                 offset: int = 0):
        self.memory, self.dtype, self.shape, self.offset = memory, dtype, shape, offset

    def _at(self, offset: int, shape: tuple[int, ...]) -> DeviceArray:
        return DeviceArray(self.memory, self.dtype, shape, offset)

    @property
    def ptr(self) -> int:
        """The device address of the first element."""
        return self.memory.ptr + self.offset

    def arg_spec(self) -> tuple[str, str, bool]:
        return ("ptr", self.dtype.short, (self.memory.ptr + self.offset) % 16 == 0)

    @property
    def device_id(self) -> int:
        return self.memory.device.device_id

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, gpu={self.device_id})"

    @property
    def __cuda_array_interface__(self) -> dict:
        """Version 3; bfloat16 and fp8, which NumPy lacks, say only their size (``V2``,
        ``V1``) and ``dtype`` says which they are, as PyTorch's bfloat16 does. Work on it
        is on the legacy default stream (1)."""
        typestr = np.dtype(f"V{self.itemsize}").str if self.dtype in ML_DTYPES else \
            host_dtype(self.dtype).str
        return {"shape": self.shape, "typestr": typestr, "data": (self.ptr, False),
                "strides": None, "version": 3, "stream": 1}

    def __dlpack__(self, *, stream: int | None = None, max_version: Any = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """A DLPack 0.x capsule of this array (DLPack's ``max_version`` allows it). The
        consumer's ``stream`` waits for the work queued here first."""
        if copy:
            raise BufferError("a DeviceArray is exported without a copy (copy=True asked one)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"a DeviceArray is on {self.__dlpack_device__()}, not "
                              f"{tuple(dl_device)}")
        if stream not in (None, -1, 0, 1, 2):  # others wait for the legacy stream's work
            _order_before(self.memory.device, stream)
        return dlpack.capsule(self.ptr, self.__dlpack_device__(), self.dtype.short,
                              self.shape, self)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (CUDA, self.device_id)

    def _read(self) -> np.ndarray:
        out = np.empty(self.shape, host_dtype(self.dtype))
        if self.nbytes:
            with _current(self.memory.device) as driver:
                _check(driver.cuMemcpyDtoH(out.ctypes.data, self.ptr, self.nbytes),
                       "copying an array to the host")
        return out

    def _write(self, host: np.ndarray) -> None:
        if self.nbytes:
            with _current(self.memory.device) as driver:
                _check(driver.cuMemcpyHtoD(self.ptr, host.ctypes.data, self.nbytes),
                       "copying an array to the device")


def _order_before(device: Device, stream: int) -> None:
    """Make ``stream`` wait for the work queued on the legacy default stream (which the
    blocking streams do already; a non-blocking one does not)."""
    with _current(device) as driver:
        flags = int(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        event = _check(driver.cuEventCreate(flags), "creating a CUDA event")
        try:
            _check(driver.cuEventRecord(event, 0), "recording a CUDA event")
            _check(driver.cuStreamWaitEvent(stream, event, 0), "ordering the consumer's stream")
        finally:
            driver.cuEventDestroy(event)


def empty(shape: tuple[int, ...], dtype: tl.dtype, zero: bool) -> DeviceArray:
    """A new array on the current GPU (the current context's, else the first)."""
    a = DeviceArray(_Memory(math.prod(shape) * itemsize(dtype), _device()), dtype, shape)
    if zero and a.nbytes:
        with _current(a.memory.device) as driver:
            _check(driver.cuMemsetD8(a.ptr, 0, a.nbytes), "zeroing an array")
    return a


def from_host(host: np.ndarray) -> DeviceArray:
    a = empty(host.shape, tl.dtype_from_numpy(host.dtype), False)
    a._write(host)
    return a


def synchronize() -> None:
    """Wait for all work on the current GPU (its primary context)."""
    with _current(_device()) as driver:
        _check(driver.cuCtxSynchronize(), "waiting for the device")
