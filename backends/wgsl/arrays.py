"""The wgsl backend's arrays: ``WgslArray``, a ``wgpu.GPUBuffer`` with the dtype and shape
it holds from a byte offset, so a launch specializes on its dtype and binds just that range
(``tc.wgsl_array`` says it of a raw buffer; ``tc.empty`` and friends make them, through
``empty``/``from_host`` here).

A view's offset must be a multiple of the device's ``min-storage-buffer-offset-alignment``
(256 bytes on most) for a launch to bind it: the launch says so where it is not.
Importing this module imports no wgpu: the launch side recognizes the class by name.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

import compiler.language as tl
from compiler.device_views import DeviceView, as_dtype, as_shape, host_dtype
from compiler.errors import LaunchError


@dataclass(frozen=True)
class WgslArray(DeviceView):
    """A ``wgpu.GPUBuffer`` holding ``shape`` elements of ``dtype`` from byte ``offset``."""

    buffer: Any
    dtype: tl.dtype
    shape: tuple[int, ...]
    offset: int = 0

    def _at(self, offset: int, shape: tuple[int, ...]) -> WgslArray:
        return dataclasses.replace(self, offset=offset, shape=shape)

    def bound_range(self) -> tuple[int, int]:
        """``(offset, size)`` of its buffer that a launch binds: from its offset to its
        end rounded up to the whole words a binding is (within the buffer); all of the
        buffer for an empty array, since a binding needs some size."""
        if not self.nbytes:
            return 0, self.buffer.size
        return self.offset, min(-(-self.nbytes // 4) * 4, self.buffer.size - self.offset)

    def _read(self) -> np.ndarray:
        out = np.empty(self.shape, host_dtype(self.dtype))
        if self.nbytes:
            skip = self.offset % 4
            out.reshape(-1).view(np.uint8)[:] = self._words()[skip:skip + self.nbytes]
        return out

    def _write(self, host: np.ndarray) -> None:
        if not self.nbytes:
            return
        data = host.reshape(-1).view(np.uint8)
        start, end = self._span()
        if end - start != self.nbytes:
            # the 4-byte words at the ends hold neighbouring elements: written back as read
            words, skip = self._words(), self.offset % 4
            words[skip:skip + self.nbytes] = data
            data = words
        device = buffer_device(self.buffer)
        flush(device)  # the launches recorded before come first (``recorder``)
        device.queue.write_buffer(self.buffer, start, data)

    def _span(self) -> tuple[int, int]:
        """The bytes of the buffer copied in and out for this view: copies start and end
        at 4-byte multiples."""
        end = -(-(self.offset + self.nbytes) // 4) * 4
        return self.offset // 4 * 4, min(end, self.buffer.size)

    def _words(self) -> np.ndarray:
        """A host copy of ``_span``'s bytes."""
        start, end = self._span()
        device = buffer_device(self.buffer)
        flush(device)
        data = device.queue.read_buffer(self.buffer, start, end - start)
        return np.frombuffer(data, np.uint8).copy()


def flush(device: Any) -> None:
    """Submit the launches recorded on ``device`` (``recorder``; wgpu is loaded once a
    buffer exists)."""
    from backends.wgsl.recorder import flush as submit

    submit(device)


def buffer_device(buf: Any) -> Any:
    """The ``wgpu.GPUDevice`` that made ``buf``."""
    # wgpu-py keeps the owning device only as a private attribute (there is no public one)
    return buf._device


def wgsl_array(buffer: Any, dtype: Any, shape: Any) -> WgslArray:
    """Say what a raw ``wgpu.GPUBuffer`` holds (``dtype``: ``tl.float16``, ``"f16"`` or
    ``np.float16``; ``shape``: an int or a tuple of ints)."""
    if type(buffer).__name__ != "GPUBuffer":
        raise LaunchError(f"tc.wgsl_array takes a wgpu.GPUBuffer, got {type(buffer).__name__}")
    a = WgslArray(buffer, as_dtype(dtype, "tc.wgsl_array"), as_shape(shape, "tc.wgsl_array"))
    if a.nbytes > buffer.size:
        raise LaunchError(f"tc.wgsl_array: {a.shape} of {a.dtype.short} needs {a.nbytes} "
                          f"bytes, the buffer has {buffer.size}")
    return a
