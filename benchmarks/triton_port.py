"""The same kernel text under Triton and under tilec (``examples/triton_port.py``, two import
lines apart), timed side by side on the GPU: what a Triton user gets by changing imports.

Floors (H200, ~4.8 TB/s): softmax and layer norm of 8192x4096 f32 read and write 128 MiB
each, ~28 us; dropout of 2^26 f32 moves 512 MiB, ~112 us.
Timing: triton.testing.do_bench (CUDA events, L2 flushed, median).

    python benchmarks/triton_port.py    # on a CUDA machine; appends to RESULTS.md
"""

import sys
from pathlib import Path

import torch
from triton.testing import do_bench

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import report  # noqa: E402
from examples import triton_port  # noqa: E402

ROWS, COLS, N = 8192, 4096, 1 << 26


def _inputs() -> tuple:
    x = torch.randn(ROWS, COLS, device="cuda")
    return x, torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda"), \
        torch.randn(N, device="cuda")


def _cases(mod, tilec: bool, inputs: tuple) -> dict:
    """name -> (launch, output, bytes moved) for the kernels of module ``mod``."""
    opts = {"backend": "ptx"} if tilec else {}
    x, w, b, v = inputs
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
    }


def main() -> None:
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
        torch.testing.assert_close(out, triton[name][1], rtol=1e-4, atol=1e-4)
        for who, ms in times.items():
            rows.append([f"{name}, {who}", f"{ms * 1e3:.1f} us",
                         f"{moved / ms / 1e6:.0f} GB/s", f"{times['triton'] / ms:.1%}"])
    report("GPU: the same kernel text under Triton and tilec (examples/triton_port.py; "
           "ratio: of Triton)", torch.cuda.get_device_name(),
           ["what", "median time", "bandwidth", "ratio"], rows)


if __name__ == "__main__":
    main()
