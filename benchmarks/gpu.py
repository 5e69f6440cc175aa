"""GPU benchmark: tilec's PTX vector add (2^26 float32) against Triton and torch in the same
run, tilec's WGSL vector add on the same GPU's Vulkan driver, and launch overhead.

Floors: vector add moves 3 * 4 * 2^26 bytes = 805 MB (two reads, one write) and does 2^26
adds (nothing for a GPU), so it is memory bound: 805 MB / the measured copy bandwidth.
Timing: triton.testing.do_bench (CUDA events, warm-up, L2 flushed between runs, median);
WGSL: median over batches of launches closed by a device sync.

    python benchmarks/gpu.py           # on a CUDA machine; appends to benchmarks/RESULTS.md
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as ttl  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import compiler as tc  # noqa: E402
from benchmarks.common import report  # noqa: E402
from examples.vector_add import add  # noqa: E402

N = 1 << 26
BLOCK = 1024


@triton.jit
def triton_add(x, y, out, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out + offs, ttl.load(x + offs, mask=mask) + ttl.load(y + offs, mask=mask),
              mask=mask)


def gbps(ms: float, nbytes: int = 3 * 4 * N) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def copy_ceiling() -> float:
    a = torch.empty(N * 4, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    ms = do_bench(lambda: b.copy_(a), return_mode="median")
    return gbps(ms, 2 * a.numel() * 4)


def cuda_rows() -> list[list[str]]:
    x = torch.randn(N, device="cuda")
    y = torch.randn(N, device="cuda")
    out = torch.full_like(x, float("nan"))
    grid = (tc.cdiv(N, BLOCK),)
    add[grid](x, y, out, N, BLOCK=BLOCK, backend="ptx")
    torch.testing.assert_close(out, x + y)
    runs = {
        "tilec ptx": lambda: add[grid](x, y, out, N, BLOCK=BLOCK, backend="ptx"),
        "triton": lambda: triton_add[grid](x, y, out, N, BLOCK=BLOCK),
        "torch": lambda: torch.add(x, y, out=out),
    }
    rows, results = [], {}
    for name, fn in runs.items():
        results[name] = do_bench(fn, warmup=50, rep=500, return_mode="median")
    ceiling = copy_ceiling()
    for name, ms in results.items():
        rows.append([f"vector add 2^26 f32, {name}", f"{ms * 1e3:.1f} us",
                     f"{gbps(ms):.0f} GB/s", f"{gbps(ms) / gbps(results['triton']):.1%}"])
    rows.append(["device-to-device copy (ceiling)", "", f"{ceiling:.0f} GB/s", ""])
    rows += overhead_rows(x, y, out)
    return rows


def overhead_rows(x, y, out) -> list[list[str]]:
    """Host time per launch of a tiny kernel, device arrays, no sync between launches."""
    n = 1024
    fns = {"tilec ptx": lambda: add[(1,)](x, y, out, n, BLOCK=BLOCK, backend="ptx"),
           "triton": lambda: triton_add[(1,)](x, y, out, n, BLOCK=BLOCK)}
    rows = []
    for name, fn in fns.items():
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(20):
            t0 = time.perf_counter()
            for _ in range(1000):
                fn()
            samples.append((time.perf_counter() - t0) / 1000)
            torch.cuda.synchronize()
        rows.append([f"launch overhead, {name}", f"{statistics.median(samples) * 1e6:.1f} us",
                     "", ""])
    return rows


def wgsl_rows() -> list[list[str]]:
    import wgpu
    from backends.wgsl import read_buffer
    ok, why = tc.backends()["wgsl"]
    if not ok:
        return [["vector add 2^26 f32, tilec wgsl", "unavailable", why, ""]]
    device = tc.wgsl_device()
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    bx = device.create_buffer_with_data(data=xs, usage=usage)
    by = device.create_buffer_with_data(data=ys, usage=usage)
    bo = device.create_buffer(size=4 * N, usage=usage)
    grid = (tc.cdiv(N, BLOCK),)

    def launch():
        add[grid](bx, by, bo, N, BLOCK=BLOCK, backend="wgsl")

    launch()
    np.testing.assert_array_equal(read_buffer(bo, np.float32), xs + ys)
    # reading a small buffer waits for all submitted work (wgpu 0.32's
    # on_submitted_work_done_sync fails in its FFI layer)
    fence = device.create_buffer(size=16, usage=usage)
    samples = []
    for _ in range(10):
        t0 = time.perf_counter()
        for _ in range(20):
            launch()
        read_buffer(fence)
        samples.append((time.perf_counter() - t0) / 20)
    ms = statistics.median(samples) * 1e3
    return [[f"vector add 2^26 f32, tilec wgsl ({tc.backends()['wgsl'][1]})",
             f"{ms * 1e3:.1f} us", f"{gbps(ms):.0f} GB/s", ""]]


def main() -> None:
    rows = cuda_rows() + wgsl_rows()
    report("GPU: vector add", torch.cuda.get_device_name(),
           ["what", "median time", "bandwidth", "of Triton"], rows)


if __name__ == "__main__":
    main()
