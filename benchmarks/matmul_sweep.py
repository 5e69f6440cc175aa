"""GPU sweep of square f16 matmuls, 512^3 .. 8192^3: tilec (Hopper's wgmma path where the
GPU has it; pointer loads through cp.async, and tensor descriptors through TMA), Triton's
tutorial kernel and cuBLAS (``torch.matmul``) in one run, as a table and a plot
(``matmul_sweep.png``, with the ``plot`` extra); ``--record`` appends the table to RESULTS.md
and writes the plot into benchmarks/.

Floors: 2 N^3 flops at the GPU's dense f16 rate (~990 TFLOP/s on an H100/H200 datasheet,
~750-790 reached by cuBLAS); small sizes are bound by launch and by too few tiles for the
132 SMs (512^3 with 128 x 256 tiles is 8 programs).
Timing: ``benchmarks.matmul.in_turn`` (do_bench medians, contenders in turn, 5 rounds).

    python benchmarks/matmul_sweep.py [--record] [--out DIR]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import triton

from benchmarks.common import arguments, plot_path, report
from benchmarks.matmul import in_turn, tflops, triton_matmul
from examples import matmul as tc_matmul

SIZES = (512, 1024, 2048, 3072, 4096, 6144, 8192)
CONFIG = {"BM": 128, "BN": 256, "BK": 64, "num_warps": 8, "num_stages": 4}


def measure(size: int) -> dict[str, float]:
    """TFLOP/s of each implementation at ``size``^3."""
    a, b = (torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    runs = {
        "cuBLAS": lambda: torch.matmul(a, b, out=c),
        "Triton": lambda: triton_matmul[(triton.cdiv(size, 128) * triton.cdiv(size, 256),)](
            a, b, c, size, size, size, size, size, size, BM=128, BN=256, BK=64, GROUP=8,
            num_warps=8, num_stages=3),
        "tilec": lambda: tc_matmul.launch(a, b, c, "ptx", **CONFIG),
        "tilec TMA": lambda: tc_matmul.launch_descriptor(a, b, c, "ptx", **CONFIG),
    }
    for fn in runs.values():
        fn()
    return {name: float(tflops(2.0 * size**3, ms))
            for name, ms in in_turn(runs, rep=40).items()}


def plot(results: dict[int, dict[str, float]], path: Path, device: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    places = range(len(results))  # evenly spaced sizes, labelled
    for name in next(iter(results.values())):
        ax.plot(places, [r[name] for r in results.values()], marker="o", label=name)
    ax.set(xlabel="N (N x N x N, f16)", ylabel="TFLOP/s", title=device)
    ax.set_xticks(places, [str(n) for n in results])
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    args = arguments(__doc__, plots=True).parse_args()
    device = torch.cuda.get_device_name()
    results = {n: measure(n) for n in SIZES}
    rows = [[str(n), *(f"{r[k]:.1f}" for k in ("tilec", "tilec TMA", "Triton", "cuBLAS")),
             f"{r['tilec TMA'] / r['cuBLAS']:.1%}", f"{r['tilec TMA'] / r['Triton']:.1%}"]
            for n, r in results.items()]
    report("GPU: f16 matmul sweep (TFLOP/s)", device,
           ["N", "tilec", "tilec TMA", "Triton", "cuBLAS", "TMA/cuBLAS", "TMA/Triton"], rows,
           record=args.record)
    path = plot_path(args, "matmul_sweep.png")
    try:
        if path is not None:
            plot(results, path, device)
    except ImportError:
        print("matplotlib is not installed: no plot")


if __name__ == "__main__":
    main()
