"""Timing on the WGSL backend, for ``tc.testing.do_bench``: timestamps written on the GPU
by the compute passes of the call's tilec kernels (or, for a call with none, by empty
passes submitted before and after it), when the device has the ``timestamp-query``
feature; otherwise the wall clock around each call, with the queue drained before and
after it (wgpu submissions run asynchronously).

Both time the work submitted to tilec's default device (``tc.wgsl_device()``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import wgpu

from backends.wgsl.recorder import flush
from backends.wgsl.runtime import PASS_TIMESTAMPS, drain, wgsl_device

CHUNK = 1024  # calls timed per query set of 4 a call: WebGPU allows at most 4096 queries


def clock(flush: bool = True):
    """The best clock tilec's default device offers (``flush`` is ignored: WebGPU offers
    no way to evict caches, so both clocks time calls with whatever the caches hold)."""
    device = wgsl_device()
    if "timestamp-query" in device.features:
        return TimestampClock(device)
    return FencedClock(device)


class FencedClock:
    """Wall-clock milliseconds of each call, the queue drained before and after it."""

    def __init__(self, device: wgpu.GPUDevice):
        self.device = device

    def sync(self) -> None:
        """Wait for all submitted work."""
        drain(self.device)

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
    """GPU-clock milliseconds of each call: from the start of its first tilec kernel to
    the end of its last, written by the kernels' own compute passes (``PASS_TIMESTAMPS``).
    A call that launches no tilec kernel is timed from a marker pass submitted before it
    to one after it (what CUDA events measure): there the host's time between them shows,
    and for a kernel it would be the ~100 us wgpu takes to submit it, not the kernel."""

    def __init__(self, device: wgpu.GPUDevice):
        super().__init__(device)
        self.period_ns = timestamp_period(device)
        self.queries = device.create_query_set(type="timestamp", count=4 * CHUNK)
        self.resolved = device.create_buffer(
            size=32 * CHUNK, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)

    def times(self, fn: Callable[[], Any], n: int) -> list[float]:
        # Inside another timing (a profiled launch in an autotuning trial) the passes'
        # timestamp writes are the outer timing's: this one takes the fenced wall clock.
        if PASS_TIMESTAMPS.current is not None:
            return super().times(fn, n)
        out: list[float] = []
        while len(out) < n:
            count = min(CHUNK, n - len(out))
            kernels = []  # per call: whether its kernels wrote their own timestamps
            for i in range(count):
                self.mark({"beginning_of_pass_write_index": 4 * i})
                kernels.append(PASS_TIMESTAMPS.timed(
                    {"query_set": self.queries, "beginning_of_pass_write_index": 4 * i + 2,
                     "end_of_pass_write_index": 4 * i + 3}, fn))
                self.mark({"end_of_pass_write_index": 4 * i + 1})
                if not kernels[-1]:  # resolving a query never written hangs NVIDIA's driver
                    self.mark({"beginning_of_pass_write_index": 4 * i + 2,
                               "end_of_pass_write_index": 4 * i + 3})
            out += self.read(kernels)
        return out

    def mark(self, where: dict) -> None:
        """Submit an empty pass writing ``where``, after the launches recorded before it
        (``recorder``): the end mark after the call's kernels."""
        flush(self.device)
        encoder = self.device.create_command_encoder()
        encoder.begin_compute_pass(timestamp_writes={"query_set": self.queries, **where}).end()
        self.device.queue.submit([encoder.finish()])

    def read(self, kernels: list[bool]) -> list[float]:
        flush(self.device)
        count = len(kernels)
        encoder = self.device.create_command_encoder()
        encoder.resolve_query_set(self.queries, 0, 4 * count, self.resolved, 0)
        self.device.queue.submit([encoder.finish()])
        ticks = np.frombuffer(self.device.queue.read_buffer(self.resolved, 0, 32 * count),
                              np.uint64).astype(np.float64).reshape(count, 4)
        spans = np.where(kernels, ticks[:, 3] - ticks[:, 2], ticks[:, 1] - ticks[:, 0])
        return [float(t) for t in spans * self.period_ns / 1e6]


def timestamp_period(device: wgpu.GPUDevice) -> float:
    """Nanoseconds per timestamp tick. wgpu-py does not wrap wgpu-native's
    ``wgpuQueueGetTimestampPeriod``, so it is called through wgpu-py's FFI; 1.0 (what
    WebGPU promises) where that is not possible."""
    try:
        from wgpu.backends.wgpu_native._api import lib
        return float(lib.wgpuQueueGetTimestampPeriod(device.queue._internal))
    except (ImportError, AttributeError):
        return 1.0
