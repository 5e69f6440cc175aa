"""GPU benchmark: a tiled f32 transpose (8192 x 8192) in tilec and in Triton, the same
kernel text, at tiles a thread owns at most 32 elements of (64x64, 4 warps) and more
(128x128 at 4 warps and 64x64 at 1 warp: 128 a thread, which ``strip-mine`` turns into a
loop over chunks of rows), against torch's ``copy_(x.t())``; with each one's first launch
(compile included) in this process.

Floor: 2 * 4 * 8192^2 bytes = 537 MB moved (one read, one write), no arithmetic, so
memory bound: 537 MB / the device-to-device copy bandwidth.
Timing: triton.testing.do_bench (CUDA events, warm-up, L2 flushed between runs, median).

    python benchmarks/transpose.py [--record]   # on a CUDA machine; --record appends to RESULTS.md
"""

import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import triton
import triton.language as ttl
from triton.testing import do_bench

import compiler as tc
import compiler.language as tl
from benchmarks.common import arguments, report

M = N = 8192
CONFIGS = [(64, 64, 4), (128, 128, 4), (64, 64, 1)]  # BM, BN, num_warps


@tc.kernel
def transpose(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * N + rn[None, :])
    tl.store(y + rn[:, None] * M + rm[None, :], v.T)


@triton.jit
def triton_transpose(x, y, M, N, BM: ttl.constexpr, BN: ttl.constexpr):
    rm = ttl.program_id(0) * BM + ttl.arange(0, BM)
    rn = ttl.program_id(1) * BN + ttl.arange(0, BN)
    v = ttl.load(x + rm[:, None] * N + rn[None, :])
    ttl.store(y + rn[:, None] * M + rm[None, :], v.T)


def gbps(ms: float) -> float:
    return 2 * 4 * M * N / ms / 1e6


def _timed(name: str, launch, x: torch.Tensor, y: torch.Tensor) -> list[str]:
    y.fill_(float("nan"))
    t0 = time.perf_counter()
    launch()
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    assert torch.equal(y, x.t()), name
    ms = do_bench(launch, warmup=25, rep=200, return_mode="median")
    return [name, f"{first * 1e3:.0f} ms", f"{ms * 1e3:.0f} us", f"{gbps(ms):.0f} GB/s"]


def rows() -> list[list[str]]:
    x = torch.randn(M, N, device="cuda")
    y = torch.empty(N, M, device="cuda")
    out = []
    for bm, bn, warps in CONFIGS:
        grid = (M // bm, N // bn)
        tag = f"{bm}x{bn}, {warps} warp{'s' * (warps > 1)}"
        out.append(_timed(f"tilec ptx {tag}", functools.partial(
            transpose[grid], x, y, M, N, BM=bm, BN=bn, backend="ptx", num_warps=warps), x, y))
        out.append(_timed(f"triton {tag}", functools.partial(
            triton_transpose[grid], x, y, M, N, BM=bm, BN=bn, num_warps=warps), x, y))
    out.append(_timed("torch copy_(x.t())", lambda: y.copy_(x.t()), x, y))
    return out


if __name__ == "__main__":
    record = arguments(__doc__).parse_args().record
    report(f"GPU: transpose {M}x{N} f32", torch.cuda.get_device_name(),
           ["what", "first launch", "median time", "bandwidth"], rows(), record=record)
