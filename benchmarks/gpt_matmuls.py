"""GPT-2 124M's linear layers one product at a time: tilec's ``examples.gpt.matmul`` against
PyTorch, at B*T = 8192 rows with bf16 operands, as the model runs them. Per layer (qkv,
attention projection, MLP up with GELU, MLP down, output head): the forward (``out = x
@ w.T + b`` with the model's epilogue: bias, GELU saving the bf16 pre-activation, the f32
residual added, the bf16 logits), dx (``dy @ w``, times GELU's derivative for the MLP
down) and dw (``dw += dy.T @ x`` into f32; with ``db += dy.sum(0)`` where the layer has a bias,
as the model runs it). PyTorch computes the bare products (``F.linear`` with the bias,
``torch.matmul``, bf16 out: cuBLAS's ceiling), and ``dy.sum(0)`` beside dw's.

All in one process, one product after another; CUDA events around each call, the median
of ``--repeat`` after ``--warmup``; TFLOP/s of ``2 M N K``. "error" is tilec's largest
difference from the same result computed by PyTorch in f32 (with the epilogue), relative
to that result's largest magnitude: bf16 products of 768 or more terms leave about 1e-2.
``--sweep`` also times tilec at other tiles per product (the configs'
``examples/gpt/matmul_configs.py`` chooses from), to set them by measurement.

    python benchmarks/gpt_matmuls.py [--record] [--sweep] [--only qkv,fc]
    python benchmarks/gpt_matmuls.py --device cpu --small   # the code paths, no GPU
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ml_dtypes
import numpy as np
import torch
import torch.nn.functional as F

from benchmarks.common import arguments, report
from examples.gpt import matmul

# name -> (N, K) of w, and the forward's epilogue
LAYERS = {"qkv": (2304, 768, "bias"), "attproj": (768, 768, "residual"),
          "fc": (3072, 768, "gelu"), "fcproj": (768, 3072, "residual"),
          "lm head": (50304, 768, "")}
SMALL = {"qkv": (192, 64, "bias"), "attproj": (64, 64, "residual"), "fc": (256, 64, "gelu"),
         "fcproj": (64, 256, "residual"), "lm head": (320, 64, "")}
ROWS, SMALL_ROWS = 8192, 256
SWEEP = {
    "forward": [{"BM": 128, "BN": n, "BK": 64, "num_warps": 8, "num_stages": s}
                for n in (128, 256) for s in (3, 4)],
    "dx": [{"BM": 128, "BK": n, "BN": 64, "num_warps": 8, "num_stages": s}
           for n in (128, 256) for s in (3, 4)],
    "dw": [{"BN": 128, "BK": 128, "BM": 64, "num_warps": 8, "num_stages": 4, "split": s}
           for s in (1, 2, 3, 4, 6, 8, 11)],
}


@dataclass
class Device:
    """Where the products run: torch's device, tilec's backend, a clock."""

    torch: str
    backend: str

    def tilec(self, t: torch.Tensor):
        """``t`` as tilec takes it there: the tensor itself on a GPU, NumPy on the CPU."""
        if self.torch == "cuda":
            return t
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()

    def result(self, a) -> torch.Tensor:
        return a.float() if isinstance(a, torch.Tensor) else torch.from_numpy(
            np.asarray(a, np.float32))

    def seconds(self, fn, warmup: int, repeat: int) -> float:
        """Median seconds of ``fn()``: CUDA events on a GPU, the wall clock elsewhere."""
        for _ in range(warmup):
            fn()
        if self.torch != "cuda":
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            return statistics.median(times)
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(repeat)]
        torch.cuda.synchronize()
        for start, end in events:
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in events) / 1e3


def gelu_grad(x: torch.Tensor) -> torch.Tensor:
    """d gelu(x) / dx of GELU's tanh form."""
    u = matmul.GELU_SCALE * (x + matmul.GELU_CUBE * x ** 3)
    t = torch.tanh(u)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * matmul.GELU_SCALE * (
        1 + 3 * matmul.GELU_CUBE * x * x)


class Layer:
    """One linear layer's arrays (torch, bf16 where the model has bf16) and its products."""

    def __init__(self, M: int, N: int, K: int, epilogue: str, dev: Device):
        g = torch.Generator(device=dev.torch).manual_seed(N * 7 + K)

        def randn(*shape, dtype=torch.bfloat16, scale=1.0):
            return (torch.randn(*shape, generator=g, device=dev.torch) * scale).to(dtype)

        self.M, self.N, self.K, self.epilogue, self.dev = M, N, K, epilogue, dev
        self.x, self.w = randn(M, K), randn(N, K, scale=K ** -0.5)
        self.b = randn(N, dtype=torch.float32) if epilogue else None
        self.bb = None if self.b is None else self.b.to(torch.bfloat16)  # the model's copy
        self.res = randn(M, N, dtype=torch.float32) if epilogue == "residual" else None
        wide = torch.float32 if epilogue == "residual" else torch.bfloat16
        self.out = torch.empty(M, N, dtype=wide, device=dev.torch)
        self.pre = (torch.empty(M, N, dtype=torch.bfloat16, device=dev.torch)
                    if epilogue == "gelu" else None)
        self.dy = randn(M, N)
        self.dx = torch.empty(M, K, dtype=torch.bfloat16, device=dev.torch)
        self.prex = randn(M, K) if K > N else None  # MLP down's input's pre-activation
        self.dw = torch.zeros(N, K, device=dev.torch)
        self.db = torch.zeros(N, device=dev.torch) if epilogue else None

    def tilec(self, product: str, **tiles):
        t, be = self.dev.tilec, self.dev.backend
        opt = {k: None if v is None else t(v) for k, v in vars(self).items()
               if isinstance(v, torch.Tensor) or v is None}
        if product == "forward":
            return lambda: matmul.linear_forward(opt["x"], opt["w"], opt["bb"], opt["out"],
                                                 pre=opt["pre"], residual=opt["res"],
                                                 backend=be, **tiles)
        if product == "dx":
            return lambda: matmul.linear_backward_x(opt["dy"], opt["w"], opt["dx"],
                                                    pre=opt["prex"], backend=be, **tiles)
        return lambda: matmul.linear_backward_w(opt["dy"], opt["x"], opt["dw"], opt["db"],
                                                backend=be, **tiles)

    def torch(self, product: str):
        if product == "forward":
            return lambda: F.linear(self.x, self.w, self.bb)
        if product == "dx":
            return lambda: torch.matmul(self.dy, self.w)
        if self.db is None:
            return lambda: torch.matmul(self.dy.t(), self.x)
        return lambda: (torch.matmul(self.dy.t(), self.x), self.dy.sum(0))

    def error(self, product: str, **tiles) -> float:
        """tilec's result against PyTorch's in f32, relative to its largest magnitude."""
        x, w, dy = self.x.float(), self.w.float(), self.dy.float()
        if product == "forward":
            want = F.linear(x, w, None if self.bb is None else self.bb.float())
            if self.pre is not None:
                want = F.gelu(want, approximate="tanh")
            if self.res is not None:
                want = want + self.res
            got = self.out
        elif product == "dx":
            want, got = dy @ w, self.dx
            if self.prex is not None:
                want = want * gelu_grad(self.prex.float())
        else:
            for grad in (self.dw, self.db):  # they accumulate
                if grad is not None:
                    grad.zero_()
            want, got = dy.t() @ x, self.dw
        self.tilec(product, **tiles)()
        err = _relative(self.dev.result(got), want)
        if product == "dw" and self.db is not None:
            err = max(err, _relative(self.dev.result(self.db), dy.sum(0)))
        return err

    def flops(self) -> float:
        return 2 * self.M * self.N * self.K


def _relative(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got - want).abs().max() / want.abs().max())


PRODUCTS = ("forward", "dx", "dw")


def rows_of(args, dev: Device) -> tuple[list[list[str]], list[list[str]]]:
    """The comparison table's rows, and the sweep's."""
    shapes = SMALL if args.small else LAYERS
    M = SMALL_ROWS if args.small else ROWS
    table, sweep = [], []
    for name, (N, K, epilogue) in shapes.items():
        if args.only and name not in args.only:
            continue
        layer = Layer(M, N, K, epilogue, dev)
        for product in PRODUCTS:
            err = layer.error(product)
            mine = dev.seconds(layer.tilec(product), args.warmup, args.repeat)
            theirs = dev.seconds(layer.torch(product), args.warmup, args.repeat)
            rate = layer.flops() / 1e12
            label = "dw+db" if product == "dw" and epilogue else product
            table.append([name, label, f"{M}x{N}x{K}", f"{mine * 1e6:.1f}", f"{rate / mine:.1f}",
                          f"{theirs * 1e6:.1f}", f"{rate / theirs:.1f}",
                          f"{theirs / mine:.1%}", f"{err:.1e}"])
            for tiles in SWEEP.get(product, []) if args.sweep else []:
                err = layer.error(product, **tiles)
                t = dev.seconds(layer.tilec(product, **tiles), args.warmup, args.repeat)
                sweep.append([name, label, " ".join(f"{k}={v}" for k, v in tiles.items()),
                              f"{t * 1e6:.1f}", f"{rate / t:.1f}", f"{theirs / t:.1%}",
                              f"{err:.1e}"])
        del layer
        if dev.torch == "cuda":
            torch.cuda.empty_cache()
    return table, sweep


def main() -> None:
    p = arguments(__doc__)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda: tilec on ptx, PyTorch on the GPU; cpu: numpy and PyTorch CPU")
    p.add_argument("--small", action="store_true", help="tiny shapes (the code paths)")
    p.add_argument("--sweep", action="store_true", help="also time tilec at other tiles")
    p.add_argument("--only", type=lambda s: s.split(","), help="layers, comma-separated")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    dev = Device(args.device, "ptx" if args.device == "cuda" else "numpy")
    torch.manual_seed(0)
    table, sweep = rows_of(args, dev)
    name = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor()
    shapes = f"B*T = {SMALL_ROWS if args.small else ROWS}, bf16"
    report(f"GPT-2 matmuls, tilec against PyTorch ({shapes})", name or "cpu",
           ["layer", "product", "M x N x K", "tilec us", "TFLOP/s", "torch us", "TFLOP/s",
            "of torch", "error"], table, record=args.record)
    if sweep:
        report(f"GPT-2 matmuls, tilec's tiles ({shapes})", name or "cpu",
               ["layer", "product", "tiles", "us", "TFLOP/s", "of torch", "error"], sweep,
               record=args.record)


if __name__ == "__main__":
    main()
