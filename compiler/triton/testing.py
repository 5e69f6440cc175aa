"""``triton.testing`` on tilec: Triton's signatures over ``compiler.testing``.

``do_bench`` times on tilec's default backend (or ``backend=``) with tilec's clocks
(CUDA events and an L2 flush on ptx, GPU timestamps or a fenced wall clock on wgsl, the
wall clock on numpy). ``grad_to_none`` tensors lose their ``.grad`` before each call, as
in Triton, inside the timed span (a few attribute writes). ``do_bench_cudagraph`` replays
a CUDA graph of the calls on ptx where PyTorch has CUDA, else it is ``do_bench``.
``perf_report``/``Benchmark`` are tilec's (``run(return_df=True)`` gives rows as dicts,
not a pandas DataFrame). Triton's GPU-specific helpers (``get_dram_gbps``,
``get_max_tensorcore_tflops``, ``nvsmi``, ``set_gpu_clock``) are not here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler import testing
from compiler.errors import TilecError
from compiler.jit import resolve_backend
from compiler.testing import Mark, perf_report

CUDAGRAPH_RETRIES = 10  # replays of the graph of calls, each timed by one pair of events


@dataclass
class Benchmark(testing.Benchmark):
    """``tc.testing.Benchmark`` with Triton's ``color`` argument (which Triton ignores)."""

    color: Any = None


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100,
             grad_to_none: Sequence[Any] | None = None,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean", *,
             backend: str | None = None) -> float | list[float]:
    """Milliseconds a call of ``fn`` takes (``return_mode`` of the timed calls, or their
    ``quantiles``), as Triton's ``do_bench``; ``backend`` is tilec's addition."""
    return testing.do_bench(_clearing(fn, grad_to_none), warmup, rep, quantiles, return_mode,
                            backend)


def _clearing(fn: Callable[[], Any], grad_to_none: Sequence[Any] | None) -> Callable[[], Any]:
    if not grad_to_none:
        return fn

    def call() -> Any:
        for t in grad_to_none:  # a backward pass in ``fn`` must not accumulate into them
            t.grad = None
        return fn()
    return call


def do_bench_cudagraph(fn: Callable[[], Any], rep: float = 20,
                       grad_to_none: Sequence[Any] | None = None,
                       quantiles: Sequence[float] | None = None,
                       return_mode: str = "mean") -> float | list[float]:
    """Milliseconds a call of ``fn`` takes without the host's launch overhead: on ptx with
    PyTorch's CUDA, the calls are captured in a CUDA graph (on a side stream, as capture
    requires) that is replayed and timed; elsewhere this is ``do_bench(fn, rep=rep)``.
    ``fn`` must launch on PyTorch tensors to be captured (tilec copies NumPy arrays)."""
    torch = sys.modules.get("torch")
    if resolve_backend(None) != "ptx" or torch is None or not torch.cuda.is_available():
        return do_bench(fn, rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                        return_mode=return_mode)
    call = _clearing(fn, grad_to_none)
    with torch.cuda.stream(torch.cuda.Stream()):
        call()  # compiles and loads the kernels outside the capture
        estimate = _replay_ms(torch, _capture(torch, call, 1))
        n = max(1, int(rep / max(estimate, 1e-3)))
        graph = _capture(torch, call, n)
        times = [_replay_ms(torch, graph) / n for _ in range(CUDAGRAPH_RETRIES)]
    return testing.summarize(times, quantiles, return_mode)


def _capture(torch: Any, call: Callable[[], Any], n: int) -> Any:
    """A CUDA graph of ``n`` calls, captured on the current stream."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            call()
    torch.cuda.synchronize()
    return graph


def _replay_ms(torch: Any, graph: Any) -> float:
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    start.record()
    graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def assert_close(x: Any, y: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Triton's check: ``x`` and ``y`` (NumPy arrays, PyTorch or CuPy tensors, numbers)
    agree within ``atol`` (default 1e-2) and ``rtol`` (default 0), NaNs equal; either
    tolerance may be a function of ``x``'s dtype. Raises ``AssertionError``."""
    dtype = getattr(x, "dtype", None)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(dtype) if callable(atol) else atol
    rtol = rtol(dtype) if callable(rtol) else rtol
    x, y = _host(x), _host(y)
    if x.size > 1 or y.size > 1:
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
    elif not np.allclose(x, y, atol=atol, rtol=rtol, equal_nan=True):
        raise AssertionError(f"{err_msg} {x} is not close to {y} (atol={atol}, rtol={rtol})"
                             .strip())


def _host(a: Any) -> np.ndarray:
    """A NumPy copy of ``a`` in a dtype NumPy compares (bfloat16 and fp8 as float32)."""
    if hasattr(a, "detach") and hasattr(a, "cpu"):  # PyTorch
        a = a.detach()
        if "bfloat16" in str(a.dtype) or "float8" in str(a.dtype):  # NumPy has neither
            a = a.float()
        a = a.cpu().numpy()
    elif hasattr(a, "get") and hasattr(a, "__cuda_array_interface__"):  # CuPy
        a = a.get()
    out = np.asarray(a)
    if out.dtype == object:
        raise TilecError(f"assert_close compares arrays and numbers, got {type(a).__name__}")
    if out.dtype.kind == "V" or "float8" in out.dtype.name or out.dtype.name == "bfloat16":
        out = out.astype(np.float32)
    return out


__all__ = ["Benchmark", "Mark", "assert_close", "do_bench", "do_bench_cudagraph",
           "perf_report"]
