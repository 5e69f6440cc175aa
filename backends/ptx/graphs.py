"""``tc.graph`` on ptx (``compiler.graphs``): a CUDA graph captured from a stream of its own.

Capture needs a stream other than the legacy default one, where tilec launches otherwise
go; it is created non-blocking, so that work on the legacy stream (copies, allocations'
zeroing, other threads' launches) neither waits for it nor breaks the capture. It captures
in the relaxed mode: loading a module (a kernel's first launch inside the capture) and
allocating are calls that the stricter modes refuse while any stream captures. Freeing
device memory waits for the device, which a capture cannot, so frees wait for the capture's
end (``memory._free``). A replay launches the instantiated graph on the legacy stream.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from backends.ptx import _check, _driver
from backends.ptx.memory import _current, _device, after_captures, free_deferred
from compiler.errors import LaunchError
from compiler.kinfo import KernelInfo


class CudaGraph:
    """A capture on the current GPU, begun when made; ``end`` instantiates it and
    ``launch`` replays it."""

    def __init__(self):
        driver = _driver()
        self.device = _device()
        with _current(self.device):
            flags = int(driver.CUstream_flags.CU_STREAM_NON_BLOCKING)
            self.stream = _check(driver.cuStreamCreate(flags), "creating a stream to capture on")
            relaxed = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
            (err,) = driver.cuStreamBeginCapture(self.stream, relaxed)
            if int(err) != 0:
                driver.cuStreamDestroy(self.stream)
                _check((err,), "beginning a CUDA graph capture")
        self._exec: Any = None

    def end(self, keep: bool) -> None:
        """End the capture; instantiate the graph when ``keep`` (the block ended without
        an exception)."""
        try:
            with _current(self.device) as driver:
                err, graph = driver.cuStreamEndCapture(self.stream)
                driver.cuStreamDestroy(self.stream)
                try:
                    if keep:
                        if int(err) != 0:
                            _check((err,), "capturing a CUDA graph (a call inside the capture "
                                           "that stream capture does not allow)")
                        self._exec = _check(driver.cuGraphInstantiate(graph, 0),
                                            "instantiating a CUDA graph")
                        weakref.finalize(self, _destroy, self.device, self._exec)
                finally:
                    if int(err) == 0:
                        driver.cuGraphDestroy(graph)  # the instantiated graph is a copy
        finally:
            free_deferred()

    def launch(self) -> None:
        with _current(self.device) as driver:
            _check(driver.cuGraphLaunch(self._exec, 0), "launching a CUDA graph")


def _destroy(device: Any, graph_exec: Any) -> None:
    after_captures(device, lambda driver: driver.cuGraphExecDestroy(graph_exec))


def capture_stream(launcher: Any, grid: tuple[int, int, int], args: list, stream: Any,
                   staged: bool) -> Any:
    """The stream a ptx launch goes on while a ``tc.graph`` may capture: this thread's
    capture stream (the launch taken into its graph), else ``stream``. Refuses a launch
    that cannot be captured."""
    from compiler.graphs import capturing

    graph = capturing()
    if graph is None:
        return stream
    if graph.backend == "ptx":
        info: KernelInfo = launcher.info
        if staged:
            raise _host_arrays(info, args)
        if launcher.ordinal != graph._cuda.device.device_id:
            raise LaunchError(f"{info.name} runs on GPU {launcher.ordinal}, inside a tc.graph "
                              f"capture on GPU {graph._cuda.device.device_id}: a graph's "
                              "launches run on one GPU")
    graph.take(launcher, grid, args, "ptx")
    return graph._cuda.stream


def _host_arrays(info: KernelInfo, args: list) -> LaunchError:
    name = next(p.name for p, a in zip(info.params, args) if isinstance(a, np.ndarray))
    return LaunchError(f"{info.name}: argument {name!r} is a NumPy array, which a ptx launch "
                       "copies to the device and back around it; a tc.graph capture cannot "
                       "do that: pass arrays of tc.asarray or tc.empty")


def current_capture_stream() -> Any:
    """This thread's capture stream when it captures on ptx, else None (``_current_stream``
    for cuBLAS and timing)."""
    from compiler.graphs import capturing

    graph = capturing()
    return graph._cuda.stream if graph is not None and graph._cuda is not None else None


__all__ = ["CudaGraph", "capture_stream", "current_capture_stream"]
