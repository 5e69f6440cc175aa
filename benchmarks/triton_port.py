"""The same kernel text under Triton and under tilec (``examples/triton_port.py``, two import
lines apart), timed side by side on the GPU: what a Triton user gets by changing imports.

Floors (H200, ~4.8 TB/s): softmax and layer norm of 8192x4096 f32 read and write 128 MiB
each, ~28 us; dropout of 2^26 f32 moves 512 MiB, ~112 us; the attention forward of
B4 H32 S4096 D64 is 550 GFLOP (half causal), ~0.6 ms at the ~990 TFLOP/s dense f16 peak
(its "bandwidth" column counts only Q, K, V and O once: it is compute bound).
Timing: triton.testing.do_bench (CUDA events, L2 flushed, median).

    python benchmarks/triton_port.py [--record]   # a CUDA machine; --record: into RESULTS.md
"""

import sys
from pathlib import Path

import torch
from triton.testing import do_bench

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import arguments, report  # noqa: E402
from examples import triton_port  # noqa: E402

ROWS, COLS, N = 8192, 4096, 1 << 26


def _inputs() -> tuple:
    x = torch.randn(ROWS, COLS, device="cuda")
    qkv = tuple(torch.randn(4, 32, 4096, 64, device="cuda", dtype=torch.float16)
                for _ in range(3))
    return x, torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda"), \
        torch.randn(N, device="cuda"), qkv


def _cases(mod, tilec: bool, inputs: tuple) -> dict:
    """name -> (launch, output, bytes moved) for the kernels of module ``mod``."""
    opts = {"backend": "ptx"} if tilec else {}
    x, w, b, v, att = inputs
    y, kept = torch.empty_like(x), torch.empty_like(v)
    mean, rstd = (torch.empty(ROWS, device="cuda") for _ in range(2))
    programs = 4 * torch.cuda.get_device_properties(0).multi_processor_count
    return {
        "softmax 8192x4096 f32, persistent rows": (lambda: mod.softmax_rows[(programs,)](
            y, x, COLS, COLS, ROWS, COLS, COLS, 2, num_warps=8, **opts), y, 8 * ROWS * COLS),
        "layer norm 8192x4096 f32": (lambda: mod.layer_norm_rows[(ROWS,)](
            x, y, w, b, mean, rstd, COLS, COLS, 1e-5, BLOCK_SIZE=COLS, num_warps=8, **opts),
            y, 8 * ROWS * COLS),
        "dropout 2^26 f32": (lambda: mod.seeded_dropout[(N // 1024,)](
            v, kept, N, 0.5, 123, BLOCK_SIZE=1024, **opts), kept, 8 * N),
        **{f"attention fwd B4 H32 S4096 D64 f16{', causal' * causal}, tutorial form": (
            _attention(mod, causal, opts, att)) for causal in (False, True)},
    }


def _attention(mod, causal: bool, opts: dict, qkv: tuple) -> tuple:
    """The tutorial's forward at its BLOCK_M 128, BLOCK_N 64, 8 warps. Triton gets one
    stage: with 2 or 3 its software pipeliner fails on this text (block pointers advanced
    in a loop that branches; "PassManager::run failed" in TritonGPUPipeline, H200,
    2026-11-24), and its tutorial has since moved to other forms."""
    q, k, v = qkv
    out, lse = torch.empty_like(q), torch.empty(4 * 32, 4096, device="cuda")
    stages = {} if opts else {"num_stages": 1}

    def run():
        mod.attention_fwd[(4096 // 128, 4 * 32)](
            q, k, v, 0.125, lse, out, *q.stride(), 32, 4096, HEAD_DIM=64, BLOCK_M=128,
            BLOCK_N=64, CAUSAL=causal, num_warps=8, **stages, **opts)
    return run, out, 4 * q.numel() * 2


def main() -> None:
    record = arguments(__doc__).parse_args().record
    inputs = _inputs()
    tilec = _cases(triton_port, True, inputs)
    triton = _cases(triton_port.as_triton(), False, inputs)
    rows = []
    for name, (run, out, moved) in tilec.items():
        times = {}
        for who, (go, got, _) in (("triton", triton[name]), ("tilec ptx", (run, out, moved))):
            go()
            torch.cuda.synchronize()
            times[who] = do_bench(go, warmup=25, rep=200, return_mode="median")
        tol = 2e-2 if out.dtype == torch.float16 else 1e-4
        torch.testing.assert_close(out, triton[name][1], rtol=tol, atol=tol)
        for who, ms in times.items():
            rows.append([f"{name}, {who}", f"{ms * 1e3:.1f} us",
                         f"{moved / ms / 1e6:.0f} GB/s", f"{times['triton'] / ms:.1%}"])
    report("GPU: the same kernel text under Triton and tilec (examples/triton_port.py; "
           "ratio: of Triton)", torch.cuda.get_device_name(),
           ["what", "median time", "bandwidth", "ratio"], rows, record=record)


if __name__ == "__main__":
    main()
