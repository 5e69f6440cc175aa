"""Tuning aid: tilec's PTX softmax and layernorm forward (8192x4096 f32) and Triton's, for
num_warps 4, 8 and 16 (do_bench medians, microseconds). Prints a table; appends nothing.

    python benchmarks/warps_sweep.py      # on a CUDA machine
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from benchmarks.gpu import COLS, EPS, ROW_BLOCK, ROWS, triton_layernorm, triton_softmax  # noqa: E402
from examples.layernorm import layernorm  # noqa: E402
from examples.softmax import softmax  # noqa: E402


def main() -> None:
    x = torch.randn(ROWS, COLS, device="cuda")
    w, b = torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda")
    out = torch.empty_like(x)
    mean, rstd = torch.empty(ROWS, device="cuda"), torch.empty(ROWS, device="cuda")
    sm = (x, out, COLS, COLS, COLS)
    ln = (x, w, b, out, mean, rstd, COLS, EPS)
    print("| kernel | num_warps | tilec ptx us | triton us |\n|---|---|---|---|")
    for warps in (4, 8, 16):
        for name, ours, theirs in (
            ("softmax", lambda: softmax[(ROWS,)](*sm, BLOCK=ROW_BLOCK, backend="ptx",
                                                 num_warps=warps),
             lambda: triton_softmax[(ROWS,)](*sm, BLOCK=ROW_BLOCK, num_warps=warps)),
            ("layernorm", lambda: layernorm[(ROWS,)](*ln, BLOCK=ROW_BLOCK, backend="ptx",
                                                     num_warps=warps),
             lambda: triton_layernorm[(ROWS,)](*ln, BLOCK=ROW_BLOCK, num_warps=warps)),
        ):
            t_ours = do_bench(ours, return_mode="median") * 1e3
            t_theirs = do_bench(theirs, return_mode="median") * 1e3
            print(f"| {name} | {warps} | {t_ours:.1f} | {t_theirs:.1f} |")


if __name__ == "__main__":
    main()
