"""GPU benchmark of compiler.tile (cuTile style) against tilec's Triton-style kernels, in
one run on the same GPU: vector add (2^26 float32), row softmax and layernorm forward (8192
x 4096 float32, one block per row, 16 warps) and matmul (4096^3 float16, tl.dot's kernel in
examples/matmul.py against examples/tile/matmul.py); then both vector adds on WGSL (wgpu
buffers, the GPU's Vulkan driver). The cuTile kernels are those of examples/tile/.

Timing: triton.testing.do_bench (CUDA events, L2 flushed, median) on torch CUDA tensors;
WGSL: benchmarks/gpu.py's median over batches closed by a device sync. Prints a table.

    python benchmarks/cutile_gpu.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
from triton.testing import do_bench

import compiler.tile as ct
from examples.layernorm import layernorm as tl_layernorm
from examples.matmul import matmul as tl_matmul
from examples.softmax import softmax as tl_softmax
from examples.tile.layernorm import layernorm_fwd as ct_layernorm
from examples.tile.matmul import matmul as ct_matmul
from examples.tile.softmax import softmax as ct_softmax
from examples.tile.vector_add import vector_add as ct_add
from examples.vector_add import add as tl_add

N = 1 << 26
ROWS, COLS = 8192, 4096
SIZE = 4096


def bench(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=50, rep=300, return_mode="median")


def vector_add() -> list[tuple[str, float, str]]:
    x, y, out = (torch.randn(N, device="cuda") for _ in range(3))
    grid = (ct.cdiv(N, 1024),)
    rows = []
    for name, fn in {
        "tl vector add": lambda: tl_add[grid](x, y, out, N, BLOCK=1024, backend="ptx"),
        "ct vector add": lambda: ct_add[grid](x, y, out, 1024, backend="ptx"),
    }.items():
        out.zero_()
        ms = bench(fn)
        assert torch.allclose(out, x + y)
        rows.append((name, ms, f"{3 * 4 * N / ms / 1e6:.0f} GB/s"))
    return rows


def softmax() -> list[tuple[str, float, str]]:
    x = torch.randn(ROWS, COLS, device="cuda")
    out = torch.empty_like(x)
    rows = []
    for name, fn in {
        "tl softmax": lambda: tl_softmax[(ROWS,)](x, out, COLS, COLS, COLS, BLOCK=COLS,
                                                  num_warps=16, backend="ptx"),
        "ct softmax": lambda: ct_softmax[(ROWS,)](x, out, COLS, num_warps=16, backend="ptx"),
    }.items():
        out.zero_()
        ms = bench(fn)
        assert torch.allclose(out, torch.softmax(x, 1), atol=1e-6)
        rows.append((name, ms, f"{2 * 4 * ROWS * COLS / ms / 1e6:.0f} GB/s"))
    return rows


def layernorm() -> list[tuple[str, float, str]]:
    x = torch.randn(ROWS, COLS, device="cuda")
    w, b = torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda")
    out = torch.empty_like(x)
    mean, rstd = (torch.empty(ROWS, device="cuda") for _ in range(2))
    rows = []
    for name, fn in {
        "tl layernorm": lambda: tl_layernorm[(ROWS,)](x, w, b, out, mean, rstd, COLS, 1e-5,
                                                      BLOCK=COLS, num_warps=16, backend="ptx"),
        "ct layernorm": lambda: ct_layernorm[(ROWS,)](x, w, b, out, mean, rstd, 1e-5, COLS,
                                                      num_warps=16, backend="ptx"),
    }.items():
        out.zero_()
        ms = bench(fn)
        want = torch.nn.functional.layer_norm(x, (COLS,), w, b, eps=1e-5)
        assert torch.allclose(out, want, atol=1e-4)
        rows.append((name, ms, f"{2 * 4 * ROWS * COLS / ms / 1e6:.0f} GB/s"))
    return rows


def matmul() -> list[tuple[str, float, str]]:
    a, b = (torch.randn(SIZE, SIZE, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(SIZE, SIZE, device="cuda", dtype=torch.float16)
    bm = bn = 128
    grid2 = (SIZE // bm, SIZE // bn)
    rows = []
    for name, fn in {
        "tl matmul f16": lambda: tl_matmul[(grid2[0] * grid2[1],)](
            a, b, c, SIZE, SIZE, SIZE, SIZE, SIZE, SIZE, BM=bm, BN=bn, BK=64, GROUP=8,
            ACTIVATION="", backend="ptx", num_warps=8, num_stages=3),
        "ct matmul f16": lambda: ct_matmul[grid2](a, b, c, bm, bn, 64, False, backend="ptx",
                                                  num_warps=8, num_stages=3),
    }.items():
        c.zero_()
        ms = bench(fn)
        ref = (a.float() @ b.float())
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        rows.append((name, ms, f"{2 * SIZE**3 / ms / 1e9:.0f} TFLOP/s (rel err {err:.1e})"))
    return rows


def wgsl_vector_add() -> list[tuple[str, float, str]]:
    """Both vector adds on wgpu buffers through the GPU's Vulkan driver."""
    import numpy as np
    import wgpu

    import compiler as tc
    from backends.wgsl import read_buffer
    from benchmarks.gpu import wgsl_ms
    ok, why = tc.backends()["wgsl"]
    if not ok:
        return [("wgsl", 0.0, f"unavailable: {why}")]
    device = tc.wgsl_device()
    xs, ys = (np.random.default_rng(i).standard_normal(N, dtype=np.float32) for i in (0, 1))
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    bx, by = (device.create_buffer_with_data(data=v, usage=usage) for v in (xs, ys))
    bo = device.create_buffer(size=4 * N, usage=usage)
    grid = (ct.cdiv(N, 1024),)
    rows = []
    for name, fn in {
        "tl vector add wgsl": lambda: tl_add[grid](bx, by, bo, N, BLOCK=1024, backend="wgsl"),
        "ct vector add wgsl": lambda: ct_add[grid](bx, by, bo, 1024, backend="wgsl"),
    }.items():
        fn()
        assert (read_buffer(bo, np.float32) == xs + ys).all()
        ms = wgsl_ms(device, fn)
        rows.append((name, ms, f"{3 * 4 * N / ms / 1e6:.0f} GB/s"))
    return rows


def main() -> None:
    print(torch.cuda.get_device_name())
    for part in (vector_add, softmax, layernorm, matmul, wgsl_vector_add):
        try:
            for name, ms, rate in part():
                print(f"{name:16s} {ms * 1000:9.1f} us  {rate}")
        except Exception as e:  # noqa: BLE001 - report and go on to the next kernel
            print(f"{part.__name__}: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
