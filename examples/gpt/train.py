"""Train the GPT of ``examples.gpt`` on the bytes of a text, every operation a tilec kernel
on the chosen backend: AdamW with a linear warmup and a cosine decay of the learning rate,
gradient clipping, one progress line per step (loss, time, tokens/s and, on ptx, the
model flops utilization), validation loss, npz checkpoints, a plot of the losses, and a
step-by-step comparison with the same model in PyTorch.

    python -m examples.gpt.train [--backend ptx|wgsl|numpy|auto] [--model tiny|small|gpt2]
        [--batch B] [--seq T] [--steps N] [--dtype float32|bfloat16] [--lr LR]
        [--warmup N] [--min-lr LR] [--weight-decay W] [--grad-clip G] [--vocab V]
        [--data FILE] [--eval-every N] [--eval-batches N] [--save CKPT] [--load CKPT]
        [--compare torch|torch-compile] [--json] [--plot FILE.png] [--seed S]

Started by ``torchrun --nproc_per_node N -m examples.gpt.train ...`` it trains on N
processes, data-parallel (``examples.gpt.distributed``): --batch rows a process, each
taking its share of the batch one process of N * --batch rows would draw, the gradients
averaged across them; rank 0 prints (the loss the mean over all, tokens/s counting every
process's), saves and plots, and the validation loss is the mean of each process's share.

The text is the standard library's .py files (``examples.gpt.data``) unless --data names
one. --steps is the length of the schedule: --load resumes a checkpoint at its step, with
its shape. --vocab pads the vocabulary past the 256 bytes (50304 gives GPT-2's 124M
parameters to time). MFU counts 6 flops per parameter and token (every matmul forward and
backward; the position table excluded) plus attention's 12 * layers * T * C, over the
GPU's dense bf16 tensor-core or f32 rate (the SXM datasheets' figures).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time

import numpy as np

from compiler.cli import reported_errors, script_parser
from compiler.errors import TilecError
from examples.gpt import data, distributed
from examples.gpt.config import ConfigError, GPTConfig, init_params
from examples.gpt.model import DTYPES, GPT

MODELS = {"tiny": {"block_size": 64, "n_layer": 2, "n_head": 2, "n_embd": 64},
          "small": {"block_size": 256, "n_layer": 4, "n_head": 4, "n_embd": 256},
          "gpt2": {"block_size": 1024, "n_layer": 12, "n_head": 12, "n_embd": 768}}
PEAK_FLOPS = {"H200": {"bfloat16": 989e12, "float32": 67e12},
              "H100": {"bfloat16": 989e12, "float32": 67e12},
              "A100": {"bfloat16": 312e12, "float32": 19.5e12}}
"""Dense flop/s by GPU name: bf16 on tensor cores (f32 accumulation), f32 on CUDA cores."""


class CompareError(TilecError):
    """--compare without PyTorch or the PyTorch model."""


def learning_rate(step: int, lr: float, min_lr: float, warmup: int, steps: int) -> float:
    """Step ``step``'s (from 0) rate: rising linearly to ``lr`` over ``warmup`` steps, then
    a cosine from ``lr`` down towards ``min_lr`` at ``steps``."""
    if step < warmup:
        return lr * (step + 1) / warmup
    if steps <= warmup:
        return lr
    ratio = (step - warmup) / (steps - warmup)
    return min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (lr - min_lr)


def flops_per_token(cfg: GPTConfig, num_params: int, T: int) -> float:
    """A training step's flops per token (PaLM's count, as nanoGPT makes it)."""
    matmul_params = num_params - cfg.block_size * cfg.n_embd  # the position table adds only
    return 6 * matmul_params + 12 * cfg.n_layer * T * cfg.n_embd


def peak_flops(backend: str, dtype: str) -> float | None:
    """The GPU's dense rate for ``dtype`` where its name is in ``PEAK_FLOPS`` (ptx only)."""
    if backend != "ptx":
        return None
    from backends.ptx import Device

    name = Device().name
    return next((rates[dtype] for key, rates in PEAK_FLOPS.items() if key in name), None)


def torch_model(kind: str, model: GPT):
    """The PyTorch model of ``examples.gpt.reference_torch`` holding ``model``'s parameters;
    ``kind`` "torch-compile" has it compiled."""
    try:
        from examples.gpt.reference_torch import TorchGPT
    except ImportError as e:
        raise CompareError(f"--compare {kind} needs PyTorch and examples/gpt/reference_torch.py "
                           f"({e})") from None
    return TorchGPT(model.cfg, model.state_dict(), compile=kind == "torch-compile",
                    dtype=model.dtype)


def build(a, backend: str) -> GPT:
    """The model the arguments ask for: loaded from --load, else freshly initialized."""
    if a.load:
        return GPT.load(a.load, backend, a.dtype)
    cfg = GPTConfig(vocab_size=a.vocab, **MODELS[a.model])
    model = GPT(cfg, backend, a.dtype)
    model.load_state_dict(init_params(cfg, a.seed))
    return model


def evaluate(model: GPT, batches: list) -> float:
    return float(np.mean([model.forward(idx, targets) for idx, targets in batches]))


def train(a, dp: distributed.Process) -> list[dict]:
    """Run the steps as this process's share (``dp``) of the training; one record (a dict)
    a step, printed as it comes by rank 0."""
    model = build(a, dp.backend)
    cfg = model.cfg
    T = a.seq or cfg.block_size
    if T > cfg.block_size:
        raise ConfigError(f"--seq {T} is longer than the model's block size {cfg.block_size}")
    reference = torch_model(a.compare, model) if a.compare else None
    train_data, val_data = data.load(a.data)
    rows, everyone = dp.rows(a.batch), a.batch * dp.world
    rng = np.random.default_rng(a.seed + 1)
    val_batches = [data.batch(val_data, everyone, T, rng, rows)
                   for _ in range(a.eval_batches if a.eval_every else 0)]
    peak = peak_flops(model.backend, model.dtype)
    step_flops = flops_per_token(cfg, model.num_params, T) * a.batch * T
    min_lr = a.lr / 10 if a.min_lr is None else a.min_lr
    if dp.leader:
        header(a, model, T, len(train_data), len(val_data), dp.world)
    records = []
    for s in range(model.t, a.steps):
        lr = learning_rate(s, a.lr, min_lr, a.warmup, a.steps)
        idx, targets = data.batch(train_data, everyone, T, np.random.default_rng([a.seed, s]),
                                  rows)
        r = {"step": s + 1, "lr": lr, **timed_step(model, idx, targets, lr, a, dp)}
        r["tokens_per_s"] = everyone * T / r["ms"] * 1e3
        r["mfu"] = step_flops / r["ms"] * 1e3 / peak if peak else None  # a GPU's
        if reference is not None:
            start = time.perf_counter()
            r["torch_loss"] = reference.train_step(idx, targets, lr)
            r["torch_ms"] = (time.perf_counter() - start) * 1e3
        if a.eval_every and ((s + 1) % a.eval_every == 0 or s + 1 == a.steps):
            r["val_loss"] = dp.mean(evaluate(model, val_batches))
        if dp.leader:
            report(r, a)
        records.append(r)
    if a.save and dp.leader:
        model.save(a.save)
    return records


def timed_step(model: GPT, idx, targets, lr: float, a, dp: distributed.Process) -> dict:
    """One training step on this process's rows: the loss of all processes' rows, the
    gradient norm and milliseconds."""
    start = time.perf_counter()
    loss = model.forward(idx, targets)
    model.zero_grad()
    model.backward()
    dp.average(model.grad_buffer)
    model.step(lr, weight_decay=a.weight_decay, grad_clip=a.grad_clip or None)
    norm = model.grad_norm()  # reads the device: the step has finished
    ms = (time.perf_counter() - start) * 1e3
    return {"loss": dp.mean(loss), "grad_norm": norm, "ms": ms}


def header(a, model: GPT, T: int, n_train: int, n_val: int, world: int) -> None:
    cfg = model.cfg
    batch = f"{a.batch} x {T}" if world == 1 else f"{world} processes x {a.batch} x {T}"
    text = (f"GPT: {cfg.n_layer} layers, {cfg.n_head} heads, {cfg.n_embd} wide, block "
            f"{cfg.block_size}, vocabulary {cfg.vocab_size}: {model.num_params / 1e6:.2f}M "
            f"parameters, {model.dtype} on {model.backend}; batch {batch}; "
            f"{n_train:,} training and {n_val:,} validation bytes of "
            f"{a.data or 'the standard library'}")
    print(text, file=sys.stderr if a.json else sys.stdout, flush=True)


def report(r: dict, a) -> None:
    """The step's line: a JSON object with --json, else readable text."""
    if a.json:
        print(json.dumps(r), flush=True)
        return
    line = (f"step {r['step']:>{len(str(a.steps))}}/{a.steps} | loss {r['loss']:.4f} | "
            f"lr {r['lr']:.2e} | norm {r['grad_norm']:.3f} | {r['ms']:.1f} ms | "
            f"{r['tokens_per_s']:,.0f} tok/s")
    if r["mfu"] is not None:
        line += f" | MFU {r['mfu']:.1%}"
    if "torch_ms" in r:
        line += f" | {a.compare} loss {r['torch_loss']:.4f}, {r['torch_ms']:.1f} ms"
    if "val_loss" in r:
        line += f" | val loss {r['val_loss']:.4f}"
    print(line, flush=True)


def summary(records: list[dict], a) -> None:
    """Median times past the first step (which compiles), and PyTorch's beside them."""
    timed = records[1:] or records
    if a.json or not timed:
        return
    ms = statistics.median(r["ms"] for r in timed)
    tokens = statistics.median(r["tokens_per_s"] for r in timed)
    line = f"tilec: {ms:.1f} ms/step, {tokens:,.0f} tok/s (median of {len(timed)})"
    if a.compare:
        torch_ms = statistics.median(r["torch_ms"] for r in timed)
        line += f"; {a.compare}: {torch_ms:.1f} ms/step (tilec / torch: {ms / torch_ms:.2f})"
    print(line, flush=True)


def plot(records: list[dict], path: str) -> None:
    """The training and validation losses against the step, as a PNG."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print(f"train: matplotlib is not installed, so no plot at {path} (pip install "
              f"matplotlib)", file=sys.stderr)
        return
    fig = Figure(figsize=(7, 4.5), layout="tight")
    ax = fig.subplots()
    ax.plot([r["step"] for r in records], [r["loss"] for r in records], label="train")
    val = [r for r in records if "val_loss" in r]
    if val:
        ax.plot([r["step"] for r in val], [r["val_loss"] for r in val], "o-",
                label="validation")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats a byte)")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.savefig(path, dpi=100)


def parser():
    p = script_parser(__doc__)
    p.prog = "python -m examples.gpt.train"
    p.add_argument("--model", choices=MODELS, default="tiny")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, help="positions a sequence (default: the block size)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--min-lr", type=float, help="the cosine's floor (default: lr / 10)")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0, help="0: no clipping")
    p.add_argument("--vocab", type=int, default=data.VOCAB_SIZE)
    p.add_argument("--data", help="a text file (default: the standard library's sources)")
    p.add_argument("--eval-every", type=int, default=0, help="steps between validations")
    p.add_argument("--eval-batches", type=int, default=4)
    p.add_argument("--save", help="write an npz checkpoint here at the end")
    p.add_argument("--load", help="resume from this npz checkpoint")
    p.add_argument("--compare", choices=["torch", "torch-compile"])
    p.add_argument("--json", action="store_true", help="one JSON object a step")
    p.add_argument("--plot", help="save the loss curves as this PNG")
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv: list[str] | None = None) -> None:
    p = parser()
    a = p.parse_args(argv)
    if min(a.batch, a.steps, a.eval_batches, a.seq or 1) < 1 or a.vocab < data.VOCAB_SIZE:
        p.error(f"--batch, --seq, --steps and --eval-batches must be positive and --vocab "
                f"at least {data.VOCAB_SIZE}")
    if a.compare and distributed.world_size() > 1:
        p.error(f"--compare runs the PyTorch model in one process, not in each of "
                f"{distributed.world_size()}: drop it, or run without torchrun")
    with reported_errors():
        dp = distributed.start(a.backend)
        try:
            records = train(a, dp)
        finally:
            dp.close()
        if dp.leader:
            summary(records, a)
            if a.plot:
                plot(records, a.plot)


if __name__ == "__main__":
    main()
