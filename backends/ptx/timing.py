"""Timing on the PTX backend, for ``tc.testing.do_bench``: a pair of CUDA events recorded
around each call on the stream tilec launches on, after the L2 cache is flushed by
overwriting a buffer larger than it (as Triton's ``do_bench`` does), so each call reads
its inputs from device memory the way a kernel inside a larger program would.

Which stream: the current PyTorch stream when PyTorch is loaded, else CuPy's when CuPy
is, else the legacy default stream, which is ordered with every blocking stream.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from backends.ptx import Device, _check, _current_stream, _driver

FLUSH_BYTES = 256 << 20  # larger than the L2 of any GPU tilec targets (H200: 60 MiB)


@functools.cache
def _flush_buffer(ordinal: int) -> int:
    """Device memory overwritten before each timed call, allocated once per device."""
    return int(_check(_driver().cuMemAlloc(FLUSH_BYTES), "allocating the L2 flush buffer"))


class Clock:
    """CUDA-event times of calls on the current device, in milliseconds; ``flush=False``
    leaves the L2 cache as the program left it (a profile times kernels where they run)."""

    def __init__(self, flush: bool = True):
        device = Device()
        device.set_current()
        self.ordinal = device.device_id
        self.flush = _flush_buffer(self.ordinal) if flush else None

    def stream(self) -> int:
        source = "torch" if "torch" in sys.modules else "cupy" if "cupy" in sys.modules \
            else None
        return _current_stream(source, self.ordinal)

    def sync(self) -> None:
        _check(_driver().cuCtxSynchronize(), "waiting for the device")

    def times(self, fn: Callable[[], Any], n: int) -> list[float]:
        driver, stream = _driver(), self.stream()
        events = [(self._event(), self._event()) for _ in range(n)]
        try:
            for start, end in events:
                if self.flush is not None:
                    _check(driver.cuMemsetD32Async(self.flush, 0, FLUSH_BYTES // 4, stream),
                           "flushing the L2 cache")
                _check(driver.cuEventRecord(start, stream), "recording an event")
                fn()
                _check(driver.cuEventRecord(end, stream), "recording an event")
            _check(driver.cuEventSynchronize(events[-1][1]), "waiting for the last call")
            return [float(_check(driver.cuEventElapsedTime(start, end), "reading events"))
                    for start, end in events]
        finally:
            for pair in events:
                for event in pair:
                    driver.cuEventDestroy(event)

    def _event(self) -> Any:
        return _check(_driver().cuEventCreate(0), "creating a CUDA event")


def clock(flush: bool = True) -> Clock:
    return Clock(flush)
