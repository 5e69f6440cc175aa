"""Timing on the WGSL backend, for ``tc.testing.do_bench``: timestamps written on the GPU
by an empty compute pass submitted before and one after each call, when the device has
the ``timestamp-query`` feature; otherwise the wall clock around each call, with the
queue drained before and after it (wgpu submissions run asynchronously).

Both time the work submitted to tilec's default device (``tc.wgsl_device()``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import wgpu

from backends.wgsl.runtime import wgsl_device

CHUNK = 1024  # calls timed per query set: WebGPU allows at most 4096 queries in a set


def clock():
    """The best clock tilec's default device offers."""
    device = wgsl_device()
    if "timestamp-query" in device.features:
        return TimestampClock(device)
    return FencedClock(device)


class FencedClock:
    """Wall-clock milliseconds of each call, the queue drained before and after it."""

    def __init__(self, device: wgpu.GPUDevice):
        self.device = device
        self.fence = device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC)

    def sync(self) -> None:
        """Wait for all submitted work: reading a buffer back copies it after that work
        and waits for the copy (wgpu-py 0.32's ``on_submitted_work_done_sync`` is broken)."""
        self.device.queue.read_buffer(self.fence)

    def times(self, fn: Callable[[], Any], n: int) -> list[float]:
        out = []
        for _ in range(n):
            self.sync()
            start = time.perf_counter()
            fn()
            self.sync()
            out.append((time.perf_counter() - start) * 1e3)
        return out


class TimestampClock(FencedClock):
    """GPU-clock milliseconds from the start marker before a call to the end marker
    after it (what CUDA events measure on the PTX backend)."""

    def __init__(self, device: wgpu.GPUDevice):
        super().__init__(device)
        self.period_ns = timestamp_period(device)
        self.queries = device.create_query_set(type="timestamp", count=2 * CHUNK)
        self.resolved = device.create_buffer(
            size=16 * CHUNK, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)

    def times(self, fn: Callable[[], Any], n: int) -> list[float]:
        out: list[float] = []
        while len(out) < n:
            count = min(CHUNK, n - len(out))
            for i in range(count):
                self.mark({"beginning_of_pass_write_index": 2 * i})
                fn()
                self.mark({"end_of_pass_write_index": 2 * i + 1})
            out += self.read(count)
        return out

    def mark(self, where: dict) -> None:
        encoder = self.device.create_command_encoder()
        encoder.begin_compute_pass(timestamp_writes={"query_set": self.queries, **where}).end()
        self.device.queue.submit([encoder.finish()])

    def read(self, count: int) -> list[float]:
        encoder = self.device.create_command_encoder()
        encoder.resolve_query_set(self.queries, 0, 2 * count, self.resolved, 0)
        self.device.queue.submit([encoder.finish()])
        ticks = np.frombuffer(self.device.queue.read_buffer(self.resolved, 0, 16 * count),
                              np.uint64).astype(np.float64)
        return [float(t) for t in (ticks[1::2] - ticks[::2]) * self.period_ns / 1e6]


def timestamp_period(device: wgpu.GPUDevice) -> float:
    """Nanoseconds per timestamp tick. wgpu-py does not wrap wgpu-native's
    ``wgpuQueueGetTimestampPeriod``, so it is called through wgpu-py's FFI; 1.0 (what
    WebGPU promises) where that is not possible."""
    try:
        from wgpu.backends.wgpu_native._api import lib
        return float(lib.wgpuQueueGetTimestampPeriod(device.queue._internal))
    except (ImportError, AttributeError):
        return 1.0
