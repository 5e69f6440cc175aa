"""Roofline of tilec's PTX kernels: vector add (2^26 f32), softmax and layernorm forward
(8192 x 4096 f32, one program per row) and the f16 matmul 4096^3 (128 x 256 x 64 tiles,
8 warps, 4 stages), each plotted at its arithmetic intensity against the two ceilings of
the GPU, as ``roofline.png`` (with the ``plot`` extra) and a table; ``--record`` appends
the table to RESULTS.md and writes the plot into benchmarks/.

Floors: a kernel doing F flops on B bytes of compulsory HBM traffic (each input read once,
each output written once) runs at best at min(P, F / B * W) flop/s. W is the HBM bandwidth
(memory clock * 2 (double data rate) * bus width, read from the device; 4.8 TB/s, the H200
datasheet's, when the device does not say), P the dense f16 tensor rate (~989 TFLOP/s on an
H100/H200 SXM datasheet; no API reports it). The ridge lies at P / W ~ 200 flop/byte.
Vector add does 1 flop per 12 bytes, softmax 5 and layernorm 7 flops per 8 bytes (each
elementwise op, exp and step of a reduction counted as one flop): bound by bandwidth, their
f32 flops far under the CUDA cores' rate too. The matmul does 2 * 4096^3 flops over
3 * 32 MiB, 1365 flop/byte: bound by the tensor rate.
Timing: compiler.testing.do_bench on ptx (CUDA events, warm-up, L2 flushed, median).

    python benchmarks/roofline.py [--record] [--out DIR]   # on a CUDA machine
"""

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import compiler as tc
from benchmarks.common import arguments, plot_path, report
from compiler.testing import do_bench
from examples import layernorm as tc_layernorm
from examples import matmul as tc_matmul
from examples import softmax as tc_softmax
from examples.vector_add import add

H200_BANDWIDTH = 4.8e12  # bytes/s, H200 SXM datasheet: the roof when the device says nothing
TENSOR_F16_PEAK = 989e12  # flop/s, dense f16 (f32 accumulate), H100/H200 SXM datasheet

VECTOR_N = 1 << 26
ROWS, COLS, ROW_WARPS = 8192, 4096, 16
MATMUL_N = 4096
MATMUL_CONFIG = {"BM": 128, "BN": 256, "BK": 64, "num_warps": 8, "num_stages": 4}


@dataclass(frozen=True)
class Work:
    """What one launch of a kernel must do: its flops and its compulsory bytes."""

    name: str
    flops: float
    nbytes: float

    @property
    def intensity(self) -> float:
        return self.flops / self.nbytes


def workloads() -> dict[str, Work]:
    """The benchmarked kernels' flop and byte counts, from their shapes."""
    cells = ROWS * COLS
    norm_extra = 2 * 4 * COLS + 2 * 4 * ROWS  # weight and bias read, mean and 1/std written
    return {w.name: w for w in (
        Work(f"vector add 2^{VECTOR_N.bit_length() - 1} f32", VECTOR_N, 3 * 4 * VECTOR_N),
        Work(f"softmax {ROWS}x{COLS} f32", 5 * cells, 2 * 4 * cells),
        Work(f"layernorm fwd {ROWS}x{COLS} f32", 7 * cells, 2 * 4 * cells + norm_extra),
        Work(f"matmul {MATMUL_N}^3 f16", 2 * MATMUL_N**3, 3 * 2 * MATMUL_N**2),
    )}


def hbm_bandwidth(memory_clock_khz: int | None, bus_width_bits: int | None) -> float:
    """Peak bytes/s of memory clocked at ``memory_clock_khz`` on a ``bus_width_bits`` bus
    (two transfers a clock); the H200 datasheet's figure when either is unknown."""
    if not memory_clock_khz or not bus_width_bits:
        return H200_BANDWIDTH
    return memory_clock_khz * 1e3 * 2 * bus_width_bits / 8


def attainable(intensity: float, bandwidth: float, peak: float = TENSOR_F16_PEAK) -> float:
    """The roof: the most flop/s a kernel of ``intensity`` flop/byte can reach."""
    return min(peak, intensity * bandwidth)


def ridge(bandwidth: float, peak: float = TENSOR_F16_PEAK) -> float:
    """The intensity where the bandwidth roof meets the compute roof."""
    return peak / bandwidth


def plot(points: list[tuple[str, float, float]], bandwidth: float, path: Path, title: str,
         peak: float = TENSOR_F16_PEAK) -> None:
    """Log-log roofline: each ``(name, flop/byte, flop/s)`` point under the two ceilings."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [x for _, x, _ in points] + [ridge(bandwidth, peak)]
    span = np.geomspace(min(xs) / 4, max(xs) * 4, 200)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(span, span * bandwidth / 1e12, "k--", lw=1,
              label=f"HBM {bandwidth / 1e12:.2f} TB/s")
    ax.axhline(peak / 1e12, color="k", ls=":", lw=1,
               label=f"f16 tensor {peak / 1e12:.0f} TFLOP/s")
    ax.plot(span, [attainable(x, bandwidth, peak) / 1e12 for x in span], "k", lw=2)
    for name, x, flops in points:
        share = flops / attainable(x, bandwidth, peak)
        ax.scatter(x, flops / 1e12, zorder=3, label=f"{name}: {share:.0%} of roof")
    ax.set(xlabel="arithmetic intensity (flop/byte)", ylabel="TFLOP/s", title=title)
    ax.set_ylim(top=peak / 1e12 * 4)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def device_bandwidth() -> tuple[float, str]:
    """The HBM roof of device 0 and where it comes from."""
    from cuda.core import Device
    props = Device(0).properties
    clock, bus = props.memory_clock_rate, props.global_memory_bus_width
    if clock and bus:
        return hbm_bandwidth(clock, bus), f"{clock / 1e3:.0f} MHz x {bus} bits x 2"
    return H200_BANDWIDTH, "H200 datasheet (the device did not say)"


def launches(torch) -> dict[str, tuple]:
    """Per kernel (in ``workloads()`` order): a launch on fresh CUDA tensors and a check of
    its output against torch."""
    x, y = torch.randn(VECTOR_N, device="cuda"), torch.randn(VECTOR_N, device="cuda")
    vec = torch.empty_like(x)
    rows = torch.randn(ROWS, COLS, device="cuda") * 4
    w, b = torch.randn(COLS, device="cuda"), torch.randn(COLS, device="cuda")
    out = torch.empty_like(rows)
    mean, rstd = torch.empty(ROWS, device="cuda"), torch.empty(ROWS, device="cuda")
    a, bm = (torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.float16)
             for _ in range(2))
    c = torch.empty_like(a)
    close = torch.testing.assert_close
    return dict(zip(workloads(), (
        (lambda: add[(tc.cdiv(VECTOR_N, 1024),)](x, y, vec, VECTOR_N, BLOCK=1024,
                                                  backend="ptx"),
         lambda: close(vec, x + y)),
        (lambda: tc_softmax.launch(rows, out, "ptx", num_warps=ROW_WARPS),
         lambda: close(out, torch.softmax(rows, dim=1), rtol=1e-4, atol=1e-7)),
        (lambda: tc_layernorm.launch(rows, w, b, out, mean, rstd, backend="ptx",
                                     num_warps=ROW_WARPS),
         lambda: close(out, torch.nn.functional.layer_norm(rows, (COLS,), w, b, 1e-5),
                       rtol=1e-4, atol=1e-4)),
        (lambda: tc_matmul.launch(a, bm, c, "ptx", **MATMUL_CONFIG),
         lambda: close(c, a @ bm, rtol=2e-2, atol=0.25)),  # K = 4096 f16 products per sum
    )))


def main() -> None:
    args = arguments(__doc__, plots=True).parse_args()
    import torch
    device = torch.cuda.get_device_name()
    bandwidth, source = device_bandwidth()
    rows, points = [], []
    for name, (run, check) in launches(torch).items():
        run()
        check()
        work = workloads()[name]
        ms = do_bench(run, return_mode="median", backend="ptx")
        flops = work.flops / (ms * 1e-3)
        roof = attainable(work.intensity, bandwidth)
        points.append((name, work.intensity, flops))
        rows.append([name, f"{ms * 1e3:.1f} us", f"{work.intensity:.3g}",
                     f"{work.nbytes / (ms * 1e-3) / 1e9:.0f}", f"{flops / 1e12:.3g}",
                     f"{roof / 1e12:.3g}", f"{flops / roof:.1%}"])
    report(f"GPU: roofline (HBM {bandwidth / 1e12:.2f} TB/s from {source}, f16 tensor "
           f"{TENSOR_F16_PEAK / 1e12:.0f} TFLOP/s datasheet)", device,
           ["kernel", "median time", "flop/byte", "GB/s", "TFLOP/s", "roof TFLOP/s",
            "of roof"], rows, record=args.record)
    path = plot_path(args, "roofline.png")
    try:
        if path is not None:
            plot(points, bandwidth, path, device)
    except ImportError:
        print("matplotlib is not installed: no plot")


if __name__ == "__main__":
    main()
