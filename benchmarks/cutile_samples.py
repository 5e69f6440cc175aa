"""NVIDIA's cuTile samples on tilec, each timed against the PyTorch computation the sample
checks itself with: ``python benchmarks/cutile_samples.py --samples DIR [--only MatMul]``.

DIR holds the samples as published (``VectorAddition.py``, ``MatMul.py``, ...; they are not
part of this repository). ``cuda.tile`` is tilec's ``compiler.tile`` (the alias of ``tilec
run --as-cutile``) and each sample is imported as a module, so its own host function runs
(``cutile_matmul``, ``bmm``, ...), at a larger shape than its demonstration's. Each side is
timed with CUDA events around one call at a time after an L2 flush, after two untimed
calls (compilation), in turn twice: the lower of each side's two medians. Needs a CUDA
GPU and torch.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("TILEC_BACKEND", "ptx")

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.peers import lower_of_two_medians, print_table
from compiler.tile import install_as_cutile


def _rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def vector_addition(s):
    a, b = _rand(1 << 26), _rand(1 << 26)
    return ("VectorAddition 2^26 f32", lambda: s.vec_add(a, b), lambda: a + b,
            3 * 4 * a.numel(), 0)


def matmul(s, persistent=False):
    a, b = _rand(4096, 4096, dtype=torch.float16), _rand(4096, 4096, dtype=torch.float16)
    return (f"MatMul{' persistent' if persistent else ''} 4096^3 f16",
            lambda: s.cutile_matmul(a, b, persistent=persistent), lambda: a @ b, 0,
            2 * 4096 ** 3)


def matmul_persistent(s):
    return matmul(s, persistent=True)


def batch_matmul(s):
    a, b = _rand(16, 1024, 1024, dtype=torch.float16), _rand(16, 1024, 1024, dtype=torch.float16)
    return ("BatchMatMul 16x1024^3 f16", lambda: s.bmm(a, b, torch.float16),
            lambda: torch.bmm(a, b), 0, 2 * 16 * 1024 ** 3)


def transpose(s):
    x = _rand(8192, 8192, dtype=torch.float16)
    return ("Transpose 8192^2 f16", lambda: s.cutile_transpose(x),
            lambda: x.T.contiguous(), 2 * 2 * x.numel(), 0)


def layer_norm(s):
    x = _rand(8192, 4096, dtype=torch.bfloat16)
    w, b = _rand(4096, dtype=torch.bfloat16), _rand(4096, dtype=torch.bfloat16)
    return ("LayerNorm fwd 8192x4096 bf16", lambda: s.cutile_layer_norm(x, w, b, 1e-5),
            lambda: s.torch_layer_norm(x, w, b, 1e-5), 2 * 2 * x.numel(), 0)


def fft(s):
    x = torch.randn(1 << 16, 64, dtype=torch.complex64, device="cuda")
    return ("FFT 65536 x 64-point c64", lambda: s.cutile_fft(x, (4, 4, 4), 2),
            lambda: torch.fft.fft(x, axis=-1), 2 * 8 * x.numel(), 0)


def attention(s, causal=False):
    q, k, v = (_rand(4, 32, 4096, 64, dtype=torch.float16) for _ in range(3))
    flops = 4 * 4 * 32 * 4096 * 4096 * 64 * (0.5 if causal else 1)
    return (f"AttentionFMHA B4 H32 S4096 D64 f16{' causal' if causal else ''}",
            lambda: s.cutile_fmha(q, k, v, causal=causal),
            lambda: s.torch_fmha(q, k, v, is_causal=causal, enable_gqa=False), 0, flops)


def attention_causal(s):
    return attention(s, causal=True)


def moe(s):
    tokens, hidden, experts, inter, topk = 1024, 512, 64, 1024, 8
    x = _rand(tokens, hidden, dtype=torch.bfloat16) * 0.5
    w1 = _rand(experts, 2 * inter, hidden, dtype=torch.bfloat16) * 0.1
    w2 = _rand(experts, hidden, inter, dtype=torch.bfloat16) * 0.1
    ids = torch.stack([torch.randperm(experts, device="cuda")[:topk] for _ in range(tokens)])
    weights = torch.softmax(_rand(tokens, topk), dim=-1).to(torch.bfloat16)
    flops = 2 * tokens * topk * (2 * inter * hidden + hidden * inter)
    return (f"MoE {tokens} tokens, {experts} experts, top {topk}, bf16",
            lambda: s.cutile_moe(x, w1, w2, weights, ids, 128, 128, 64),
            lambda: s.torch_moe(x, w1, w2, weights, ids), 0, flops)


WORKLOADS = {"VectorAddition": [vector_addition], "MatMul": [matmul, matmul_persistent],
             "BatchMatMul": [batch_matmul], "Transpose": [transpose],
             "LayerNorm": [layer_norm], "FFT": [fft],
             "AttentionFMHA": [attention, attention_causal], "MoE": [moe]}


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"sample_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measure(sample, workload, reps: int) -> dict:
    label, ours, theirs, nbytes, flops = workload(sample)
    t0 = time.perf_counter()
    for _ in range(2):
        ours()
    torch.cuda.synchronize()
    print(f"  tilec: first two calls {time.perf_counter() - t0:.1f} s", flush=True)
    theirs()
    return {"what": label, "bytes": nbytes, "flops": flops,
            **lower_of_two_medians({"tilec": ours, "torch": theirs}, reps)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=Path, required=True)
    p.add_argument("--only", help="comma-separated sample names")
    p.add_argument("--reps", type=int, default=30)
    args = p.parse_args()
    install_as_cutile()
    sys.path.insert(0, str(args.samples.resolve()))
    rows = []
    for name, workloads in WORKLOADS.items():
        if args.only and name not in args.only.split(","):
            continue
        for workload in workloads:
            print(f"{name}: {workload.__name__}", flush=True)
            try:
                rows.append(_measure(_load(args.samples / f"{name}.py"), workload, args.reps))
            except Exception:  # noqa: BLE001 - one sample's failure is reported, not fatal
                traceback.print_exc(limit=4)
                rows.append({"what": f"{name} {workload.__name__}: failed"})
    print_table(rows, "sample kernel", "torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
