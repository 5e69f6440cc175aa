"""Tuning aid: tilec's PTX softmax and layernorm forward (8192x4096 f32) and Triton's, for
num_warps 4, 8 and 16 (do_bench medians over rounds taken in turn, microseconds).
Prints the table; ``--record`` appends it to RESULTS.md.

tilec's ``/`` and ``tl.sqrt`` round correctly (``div.rn``, ``sqrt.rn``), Triton's are
approximate: the column "layernorm, no div/sqrt" runs tilec's layernorm written with a
reciprocal argument and ``tl.rsqrt`` instead, which tells that choice's cost apart from
the compiler's; "softmax, one division" multiplies by one reciprocal a row instead of
dividing every element.

    python benchmarks/warps_sweep.py [--record]     # on a CUDA machine
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
from triton.testing import do_bench

import compiler as tc
import compiler.language as tl
from benchmarks.common import arguments, report
from benchmarks.gpu import COLS, EPS, ROW_BLOCK, ROWS, triton_layernorm, triton_softmax
from examples.layernorm import layernorm
from examples.softmax import softmax

ROUNDS = 3


@tc.kernel
def layernorm_reciprocal(x, weight, bias, out, mean, rstd, n_cols, inv_n, eps,
                         BLOCK: tl.constexpr):
    """``examples/layernorm.py`` with ``* inv_n`` for ``/ n_cols`` and ``tl.rsqrt``."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * n_cols + cols, mask=mask, other=0.0)
    mu = tl.sum(v, axis=0) * inv_n
    centered = tl.where(mask, v - mu, 0.0)
    inv_std = tl.rsqrt(tl.sum(centered * centered, axis=0) * inv_n + eps)
    w = tl.load(weight + cols, mask=mask)
    b = tl.load(bias + cols, mask=mask)
    tl.store(out + row * n_cols + cols, centered * inv_std * w + b, mask=mask)
    tl.store(mean + row, mu)
    tl.store(rstd + row, inv_std)


@tc.kernel
def softmax_reciprocal(x, out, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    """``examples/softmax.py`` with ``e * (1 / sum)`` for ``e / sum``."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x + row * x_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row * out_stride + cols, e * (1.0 / tl.sum(e, axis=0)), mask=mask)


def kernels(warps: int) -> dict:
    x = torch.randn(ROWS, COLS, device="cuda")
    w, b = torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda")
    out = torch.empty_like(x)
    mean, rstd = torch.empty(ROWS, device="cuda"), torch.empty(ROWS, device="cuda")
    sm = (x, out, COLS, COLS, COLS)
    ln = (x, w, b, out, mean, rstd, COLS, EPS)
    lnr = (x, w, b, out, mean, rstd, COLS, 1.0 / COLS, EPS)
    ours = {"backend": "ptx", "num_warps": warps, "BLOCK": ROW_BLOCK}
    return {
        "softmax": lambda: softmax[(ROWS,)](*sm, **ours),
        "softmax, one division": lambda: softmax_reciprocal[(ROWS,)](*sm, **ours),
        "softmax, triton": lambda: triton_softmax[(ROWS,)](*sm, BLOCK=ROW_BLOCK,
                                                           num_warps=warps),
        "layernorm": lambda: layernorm[(ROWS,)](*ln, **ours),
        "layernorm, no div/sqrt": lambda: layernorm_reciprocal[(ROWS,)](*lnr, **ours),
        "layernorm, triton": lambda: triton_layernorm[(ROWS,)](*ln, BLOCK=ROW_BLOCK,
                                                               num_warps=warps),
    }


def main() -> None:
    record = arguments(__doc__).parse_args().record
    runs = {warps: kernels(warps) for warps in (4, 8, 16)}
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(ROUNDS):
        for warps, fns in runs.items():
            for name, fn in fns.items():
                times.setdefault((warps, name), []).append(
                    do_bench(fn, return_mode="median") * 1e3)
    names = list(runs[4])
    rows = [[str(warps)] + [f"{statistics.median(times[warps, n]):.1f}" for n in names]
            for warps in runs]
    report("GPU: softmax and layernorm 8192x4096 f32 by num_warps (us, median of "
           f"{ROUNDS} rounds in turn; benchmarks/warps_sweep.py)",
           torch.cuda.get_device_name(), ["num_warps", *names], rows, record=record)


if __name__ == "__main__":
    main()
