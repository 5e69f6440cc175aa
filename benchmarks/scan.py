"""GPU benchmark: prefix sums in blocks (``tl.cumsum`` over each program's BLOCK
elements of 2^26 f32) in tilec on PTX and WGSL and in Triton, the same kernel text,
against torch's ``cumsum`` of the blocks; by tile size and num_warps.

Floor: 2 * 4 * 2^26 bytes = 537 MB moved (one read, one write) and one add an element, so
memory bound: 537 MB / the device-to-device copy bandwidth.
Timing: triton.testing.do_bench for CUDA launches (CUDA events, warm-up, L2 flushed
between runs, median); for WGSL the GPU timestamps of the kernel's own compute pass
(``tc.testing.do_bench``, median). The values are small integers, so every sum is exact
and all four results are checked equal.

    python benchmarks/scan.py [--record]   # on a CUDA machine; --record appends to RESULTS.md
"""

import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import torch
import triton
import triton.language as ttl
from triton.testing import do_bench

import compiler as tc
from benchmarks.common import arguments, report
from examples.cumsum import block_cumsum

N = 1 << 26
CONFIGS = [(1024, 4), (2048, 1), (2048, 4), (4096, 4), (4096, 8), (8192, 8)]  # BLOCK, warps


@triton.jit
def triton_cumsum(x, out, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out + offs, ttl.cumsum(ttl.load(x + offs, mask=mask, other=0), axis=0),
              mask=mask)


def gbps(ms: float) -> float:
    return 2 * 4 * N / ms / 1e6


def _cuda_us(launch, out: torch.Tensor, want: torch.Tensor, name: str) -> float:
    out.fill_(float("nan"))
    launch()
    assert torch.equal(out, want), name
    return do_bench(launch, warmup=25, rep=200, return_mode="median") * 1e3


def _wgsl_us(x: torch.Tensor, want: torch.Tensor, block: int, warps: int) -> float | None:
    import wgpu

    from backends.wgsl import read_buffer
    if not tc.backends()["wgsl"][0]:
        return None
    device = tc.wgsl_device()
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    bx = device.create_buffer_with_data(data=x.cpu().numpy(), usage=usage)
    bo = device.create_buffer(size=4 * N, usage=usage)

    def launch():
        block_cumsum[(N // block,)](bx, bo, N, BLOCK=block, backend="wgsl", num_warps=warps)

    launch()
    assert np.array_equal(read_buffer(bo, np.float32), want.cpu().numpy()), "wgsl"
    return tc.testing.do_bench(launch, backend="wgsl", return_mode="median") * 1e3


def rows() -> list[list[str]]:
    x = torch.randint(-8, 9, (N,), device="cuda").float()
    out = torch.empty_like(x)
    table = []
    for block, warps in CONFIGS:
        want = x.view(-1, block).cumsum(1).view(-1)
        grid = (N // block,)
        ours = _cuda_us(functools.partial(block_cumsum[grid], x, out, N, BLOCK=block,
                                          backend="ptx", num_warps=warps), out, want, "tilec ptx")
        theirs = _cuda_us(functools.partial(triton_cumsum[grid], x, out, N, BLOCK=block,
                                            num_warps=warps), out, want, "triton")
        torch_us = do_bench(functools.partial(torch.cumsum, x.view(-1, block), 1), warmup=25,
                            rep=200, return_mode="median") * 1e3
        wgsl = _wgsl_us(x, want, block, warps)
        table.append([f"{block}, {warps}", f"{ours:.1f} us ({gbps(ours / 1e3):.0f} GB/s)",
                      f"{theirs:.1f} us", f"{100 * theirs / ours:.0f}%", f"{torch_us:.1f} us",
                      "unavailable" if wgsl is None else
                      f"{wgsl:.1f} us ({100 * ours / wgsl:.0f}% of PTX)"])
    return table


if __name__ == "__main__":
    record = arguments(__doc__).parse_args().record
    report("GPU: block cumsum 2^26 f32 (tl.cumsum a program)", torch.cuda.get_device_name(),
           ["BLOCK, num_warps", "tilec ptx", "triton", "tilec of triton", "torch cumsum",
            "tilec wgsl (NVIDIA Vulkan, the kernel)"], rows(), record=record)
