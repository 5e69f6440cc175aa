"""GPU benchmark: tilec's PTX vector add (2^26 float32) against Triton and torch in the same
run, tilec's WGSL vector add on the same GPU's Vulkan driver, and launch overhead; then the
row-wise kernels softmax and layernorm forward (8192 x 4096 float32, one program per row)
against Triton (the same kernels, written below) and torch, on PTX and WGSL; then the
first launch in a fresh process against Triton's (``first_launch.py``).

Floors: vector add moves 3 * 4 * 2^26 bytes = 805 MB (two reads, one write) and does 2^26
adds (nothing for a GPU), so it is memory bound: 805 MB / the measured copy bandwidth.
Softmax and layernorm read the matrix once and write it once (2 * 128 MiB; layernorm's
weight, bias, mean and 1/std are under 0.1% more), so they are memory bound too.
Timing: triton.testing.do_bench (CUDA events, warm-up, L2 flushed between runs, median);
WGSL: median over batches of launches closed by a device sync.

    python benchmarks/gpu.py [--record]   # on a CUDA machine; --record appends to RESULTS.md
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import triton
import triton.language as ttl
from triton.testing import do_bench

import compiler as tc
from benchmarks.common import arguments, report
from benchmarks.first_launch import rows as first_launch_rows
from examples.layernorm import layernorm
from examples.softmax import softmax
from examples.vector_add import add

N = 1 << 26
BLOCK = 1024


@triton.jit
def triton_add(x, y, out, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out + offs, ttl.load(x + offs, mask=mask) + ttl.load(y + offs, mask=mask),
              mask=mask)


ROWS, COLS = 8192, 4096
ROW_BLOCK, ROW_WARPS = 4096, 16  # Triton's tutorial picks 16 warps for 4096-wide rows
ROW_BYTES = 2 * 4 * ROWS * COLS
EPS = 1e-5


@triton.jit
def triton_softmax(x, out, n_cols, x_stride, out_stride, BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    cols = ttl.arange(0, BLOCK)
    mask = cols < n_cols
    v = ttl.load(x + row * x_stride + cols, mask=mask, other=-float("inf"))
    e = ttl.exp(v - ttl.max(v, axis=0))
    ttl.store(out + row * out_stride + cols, e / ttl.sum(e, axis=0), mask=mask)


@triton.jit
def triton_layernorm(x, weight, bias, out, mean, rstd, n_cols, eps, BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    cols = ttl.arange(0, BLOCK)
    mask = cols < n_cols
    v = ttl.load(x + row * n_cols + cols, mask=mask, other=0.0)
    mu = ttl.sum(v, axis=0) / n_cols
    centered = ttl.where(mask, v - mu, 0.0)
    inv_std = 1.0 / ttl.sqrt(ttl.sum(centered * centered, axis=0) / n_cols + eps)
    w = ttl.load(weight + cols, mask=mask)
    b = ttl.load(bias + cols, mask=mask)
    ttl.store(out + row * n_cols + cols, centered * inv_std * w + b, mask=mask)
    ttl.store(mean + row, mu)
    ttl.store(rstd + row, inv_std)


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
    ms = wgsl_ms(device, launch)
    return [[f"vector add 2^26 f32, tilec wgsl ({tc.backends()['wgsl'][1]})",
             f"{ms * 1e3:.1f} us", f"{gbps(ms):.0f} GB/s", ""]]


def wgsl_ms(device, launch) -> float:
    """Median milliseconds per launch over batches of 20, each closed by a device sync."""
    import wgpu

    from backends.wgsl import read_buffer
    # reading a small buffer waits for all submitted work (wgpu 0.32's
    # on_submitted_work_done_sync fails in its FFI layer)
    fence = device.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE
                                 | wgpu.BufferUsage.COPY_SRC)
    samples = []
    for _ in range(10):
        t0 = time.perf_counter()
        for _ in range(20):
            launch()
        read_buffer(fence)
        samples.append((time.perf_counter() - t0) / 20)
    return statistics.median(samples) * 1e3


def row_kernel_rows() -> list[list[str]]:
    """Softmax and layernorm forward, 8192 x 4096 f32: tilec PTX, Triton, torch, WGSL."""
    x = torch.randn(ROWS, COLS, device="cuda") * 4
    w, b = torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda")
    out = torch.empty_like(x)
    mean, rstd = torch.empty(ROWS, device="cuda"), torch.empty(ROWS, device="cuda")
    grid = (ROWS,)
    softmax_args = (x, out, COLS, COLS, COLS)
    norm_args = (x, w, b, out, mean, rstd, COLS, EPS)
    kernels = {
        "softmax": {
            "tilec ptx": lambda: softmax[grid](*softmax_args, BLOCK=ROW_BLOCK, backend="ptx",
                                               num_warps=ROW_WARPS),
            "triton": lambda: triton_softmax[grid](*softmax_args, BLOCK=ROW_BLOCK,
                                                   num_warps=ROW_WARPS),
            "torch": lambda: torch.softmax(x, dim=1),
        },
        "layernorm forward": {
            "tilec ptx": lambda: layernorm[grid](*norm_args, BLOCK=ROW_BLOCK, backend="ptx",
                                                 num_warps=ROW_WARPS),
            "triton": lambda: triton_layernorm[grid](*norm_args, BLOCK=ROW_BLOCK,
                                                     num_warps=ROW_WARPS),
            "torch": lambda: torch.nn.functional.layer_norm(x, (COLS,), w, b, EPS),
        },
    }
    checks = {"softmax": lambda: torch.softmax(x, dim=1),
              "layernorm forward": lambda: torch.nn.functional.layer_norm(x, (COLS,), w, b, EPS)}
    atol = {"softmax": 1e-7, "layernorm forward": 1e-4}  # softmax values are ~1 / COLS
    rows = []
    for kernel, runs in kernels.items():
        results = {}
        for name, fn in runs.items():
            if name != "torch":
                out.fill_(float("nan"))
                fn()
                torch.testing.assert_close(out, checks[kernel](), rtol=1e-4, atol=atol[kernel])
            results[name] = do_bench(fn, warmup=25, rep=200, return_mode="median")
        for name, ms in results.items():
            rows.append([f"{kernel} {ROWS}x{COLS} f32, {name}", f"{ms * 1e3:.1f} us",
                         f"{gbps(ms, ROW_BYTES):.0f} GB/s",
                         f"{results['triton'] / ms:.1%}"])
        rows += wgsl_row_kernel(kernel, x, w, b)
    return rows


def wgsl_row_kernel(kernel: str, x, w, b) -> list[list[str]]:
    """The same kernel on WGSL buffers, checked against the PTX result's reference."""
    import wgpu

    from backends.wgsl import read_buffer
    ok, why = tc.backends()["wgsl"]
    if not ok:
        return [[f"{kernel} {ROWS}x{COLS} f32, tilec wgsl", "unavailable", why, ""]]
    device = tc.wgsl_device()
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    host = x.cpu().numpy()
    bx, bo = device.create_buffer_with_data(data=host, usage=usage), \
        device.create_buffer(size=host.nbytes, usage=usage)
    if kernel == "softmax":
        want, atol = torch.softmax(x, dim=1).cpu().numpy(), 1e-7

        def launch():
            softmax[(ROWS,)](bx, bo, COLS, COLS, COLS, BLOCK=ROW_BLOCK, backend="wgsl",
                             num_warps=ROW_WARPS)
    else:
        want, atol = torch.nn.functional.layer_norm(x, (COLS,), w, b, EPS).cpu().numpy(), 1e-4
        bw, bb = (device.create_buffer_with_data(data=t.cpu().numpy(), usage=usage)
                  for t in (w, b))
        bm, br = (device.create_buffer(size=4 * ROWS, usage=usage) for _ in range(2))

        def launch():
            layernorm[(ROWS,)](bx, bw, bb, bo, bm, br, COLS, EPS, BLOCK=ROW_BLOCK,
                               backend="wgsl", num_warps=ROW_WARPS)
    launch()
    got = read_buffer(bo, np.float32).reshape(ROWS, COLS)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)
    ms = wgsl_ms(device, launch)
    # the kernel's own compute pass, timestamped on the GPU (backends/wgsl/timing.py)
    gpu_ms = tc.testing.do_bench(launch, backend="wgsl", return_mode="median")
    name = f"{kernel} {ROWS}x{COLS} f32, tilec wgsl ({tc.backends()['wgsl'][1]})"
    return [[name, f"{ms * 1e3:.1f} us", f"{gbps(ms, ROW_BYTES):.0f} GB/s", ""],
            [f"{name}, the kernel alone (GPU timestamps of its pass)",
             f"{gpu_ms * 1e3:.1f} us", f"{gbps(gpu_ms, ROW_BYTES):.0f} GB/s", ""]]


def main() -> None:
    record = arguments(__doc__).parse_args().record
    rows = cuda_rows() + wgsl_rows()
    report("GPU: vector add", torch.cuda.get_device_name(),
           ["what", "median time", "bandwidth", "of Triton"], rows, record=record)
    report("GPU: softmax and layernorm forward", torch.cuda.get_device_name(),
           ["what", "median time", "bandwidth", "of Triton"], row_kernel_rows(), record=record)
    report("GPU: first launch in a fresh process", torch.cuda.get_device_name(),
           ["what", "time"], first_launch_rows(), record=record)


if __name__ == "__main__":
    main()
