"""GPT-2 training and generation: the tilec GPT (``examples.gpt.model``, when it imports)
beside the same model in PyTorch (``examples.gpt.reference_torch``), eager and under
``torch.compile``, all from the same initial weights (``init_params`` with ``--seed``), one
after another in one process; a provider that fails is reported and the others still run.

Training: a step is forward, backward and AdamW (PyTorch's also clips the gradient norm
to 1) on one batch of B x T tokens (16 x 1024), the median over ``--steps`` after
``--warmup``; "first loss" is the first step's, the same for every provider when they
agree. MFU: flops per token 6 N + 6 L T C over the dense peak of an H200 for the precision
(bf16 989, tf32 494, f32 67 TFLOP/s). N counts the parameters but ``wpe`` (a lookup, no
arithmetic; ``wte`` once, as the head's matmul); 6 L T C is attention's QK^T and PV,
forward and backward, over the causal half. "f32" is full float32 (PyTorch's matmul
precision "highest", as tilec's dots); "tf32" lets PyTorch's matmuls use TF32 (PyTorch
only).
Generation: greedy tokens/s from a one-token prompt, ``--new`` tokens at each of
``--decode-batches`` (PyTorch eager, and ``torch.compile(mode="reduce-overhead")``: CUDA
graphs; tilec on ptx replays its decoding step as a ``tc.graph``, a CUDA graph too).
``--curve STEPS``: the loss per step of tilec and PyTorch eager (both clipping at 1)
from the same weights on the same batches (random windows of ``--data``'s bytes as
tokens), as JSON and, with matplotlib, a PNG (both into ``--out``; printed otherwise).

    python benchmarks/gpt.py [--model gpt2] [--batch 16 --seq 1024] [--record]
    python benchmarks/gpt.py --providers tilec,torch-compile --precisions bf16 --rounds 5
    python benchmarks/gpt.py --curve 200 --data README.md --out /tmp/curve
    python benchmarks/gpt.py --device cpu --model tiny --steps 2   # the code paths, no GPU
"""

import contextlib
import gc
import json
import platform
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

import compiler as tc
from benchmarks.common import arguments, median_seconds, plot_path, report
from examples.gpt.config import GPTConfig, init_params, param_shapes

MODELS = {"gpt2": GPTConfig(vocab_size=50257, block_size=1024, n_layer=12, n_head=12,
                            n_embd=768),
          "tiny": GPTConfig(vocab_size=256, block_size=64, n_layer=2, n_head=2, n_embd=32)}
PEAK = {"bf16": 989e12, "tf32": 494e12, "f32": 67e12}  # H200 SXM dense, flop/s
TORCH_DTYPE = {"bf16": "bfloat16", "tf32": "float32", "f32": "float32"}
TILEC_DTYPE = {"bf16": "bfloat16", "f32": "float32"}
PROVIDERS = ("tilec", "torch", "torch-compile")


@dataclass
class Runner:
    """One model ready to time: its training step (the loss before it), its greedy
    generation, the wait for its device work, and the token arrays as it takes them."""

    step: Callable[[Any, Any, float], float]
    generate: Callable[[np.ndarray, int], np.ndarray]
    sync: Callable[[], None]
    inputs: Callable[[np.ndarray], Any]


def torch_runner(cfg, params, precision, compiled, device, grad_clip=1.0) -> Runner:
    from examples.gpt.reference_torch import TorchGPT

    model = TorchGPT(cfg, params, compile=compiled, dtype=TORCH_DTYPE[precision],
                     device=device)
    return Runner(lambda i, t, lr: model.train_step(i, t, lr, grad_clip=grad_clip),
                  lambda idx, n: model.generate(idx, n),
                  torch.cuda.synchronize if model.device.type == "cuda" else lambda: None,
                  model.tokens)


def tilec_runner(cfg, params, precision, backend, grad_clip=1.0) -> Runner:
    from examples.gpt.model import GPT

    if precision not in TILEC_DTYPE:
        raise ValueError(f"tilec's GPT has no {precision} (its float32 dots are full f32)")
    model = GPT(cfg, backend=backend, dtype=TILEC_DTYPE[precision])
    model.load_state_dict(params)

    def step(idx, targets, lr):
        loss = model.forward(idx, targets)
        model.zero_grad()
        model.backward()
        model.step(lr, grad_clip=grad_clip)
        return loss

    return Runner(step, lambda idx, n: model.generate(idx, n, temperature=0.0),
                  lambda: tc.synchronize(backend), lambda a: a)


@contextlib.contextmanager
def matmul_precision(precision: str):
    """PyTorch's float32 matmuls in TF32 for "tf32", in full float32 otherwise."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def flops_per_token(cfg: GPTConfig, T: int) -> float:
    """Training flops per token: 6 N (N: the parameters but wpe) + 6 L T C (attention)."""
    n = sum(int(np.prod(s)) for name, s in param_shapes(cfg).items() if name != "wpe")
    return 6 * n + 6 * cfg.n_layer * T * cfg.n_embd


def measure(runner: Runner, batch, args, cfg, precision, on_gpu: bool) -> list[list[str]]:
    """The training row and one generation row per batch size of ``runner``."""
    idx, targets = runner.inputs(batch[0]), runner.inputs(batch[1])
    first = runner.step(idx, targets, args.lr)
    t = median_seconds(lambda: runner.step(idx, targets, args.lr), warmup=args.warmup,
                       repeat=args.steps, sync=runner.sync)
    B, T = batch[0].shape
    rate = B * T / t
    mfu = f"{rate * flops_per_token(cfg, T) / PEAK[precision]:.1%}" if on_gpu else "—"
    rows = [[f"train {B}x{T}", f"{rate:,.0f}", f"{t * 1e3:.1f}", mfu, f"{first:.4f}"]]
    new = min(args.new, cfg.block_size - 1)
    for b in args.decode_batches:
        prompt = batch[0][:1, :1].repeat(b, axis=0)
        t = median_seconds(lambda p=prompt: runner.generate(p, new), warmup=args.warmup,
                           repeat=args.decode_repeat, sync=runner.sync)
        rows.append([f"decode B={b}", f"{b * new / t:,.0f}", f"{t / new * 1e3:.2f}", "—",
                     "—"])
    return rows


def tilec_missing() -> str | None:
    """Why the tilec GPT cannot be timed (its module does not import), or None."""
    try:
        from examples.gpt.model import GPT  # noqa: F401
    except ImportError as e:
        return f"{type(e).__name__}: {e}"
    return None


def providers(cfg, params, args):
    """(name, precision, factory) for every provider and precision asked for."""
    backend = args.tilec_backend or ("ptx" if args.device == "cuda" else "numpy")
    missing = "tilec" in args.providers and tilec_missing()
    if missing:
        print(f"the tilec GPT is not timed: {missing}")
    for precision in args.precisions:
        for name in args.providers:
            if name == "tilec":
                if precision in TILEC_DTYPE and not missing:
                    yield (f"tilec ({backend})", precision,
                           lambda p=precision: tilec_runner(cfg, params, p, backend))
            else:
                compiled = name == "torch-compile"
                yield ("torch.compile" if compiled else "torch eager", precision,
                       lambda p=precision, c=compiled: torch_runner(cfg, params, p, c,
                                                                     args.device))


def release(device: str) -> None:
    """Frees the last provider's model: torch.compile's caches and CUDA graphs hold it."""
    torch._dynamo.reset()
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def speed_rows(cfg, params, args) -> list[list[str]]:
    rng = np.random.default_rng(args.seed)
    batch = (rng.integers(0, cfg.vocab_size, (args.batch, args.seq)).astype(np.int32),
             rng.integers(0, cfg.vocab_size, (args.batch, args.seq)).astype(np.int32))
    rows = []
    for name, precision, factory in providers(cfg, params, args):
        print(f"timing {name} {precision} ...", flush=True)
        try:
            with matmul_precision(precision):
                runner = factory()
                rows += [[name, precision, *r] for r in
                         measure(runner, batch, args, cfg, precision, args.device == "cuda")]
        except Exception as e:  # noqa: BLE001 - reported as its row; the others still run
            traceback.print_exc()
            rows.append([name, precision, "failed", f"{type(e).__name__}: {e}"[:120],
                         "", "", ""])
        runner = None
        release(args.device)
    return rows


def rounds_rows(cfg, params, args) -> list[list[str]]:
    """Training only, the providers' steps timed in turn for ``--rounds`` rounds, all
    models built first: the machine's speed drifts from one run to the next (an H200
    here stepped ``torch.compile``'s GPT-2 in 20.4 to 30.6 ms on different runs), so a
    comparison is made inside one run. Per provider the median of its rounds' medians,
    each round's beside it."""
    rng = np.random.default_rng(args.seed)
    batch = (rng.integers(0, cfg.vocab_size, (args.batch, args.seq)).astype(np.int32),
             rng.integers(0, cfg.vocab_size, (args.batch, args.seq)).astype(np.int32))
    B, T = batch[0].shape
    rows = []
    for precision in args.precisions:
        with matmul_precision(precision):
            runners = [(name, factory()) for name, p, factory in providers(cfg, params, args)
                       if p == precision]
            inputs = [(r.inputs(batch[0]), r.inputs(batch[1])) for _, r in runners]
            times: list[list[float]] = [[] for _ in runners]
            for round_ in range(args.rounds):
                for (_, runner), (idx, targets), kept in zip(runners, inputs, times,
                                                              strict=True):
                    kept.append(median_seconds(lambda r=runner, i=idx, t=targets:
                                               r.step(i, t, args.lr),
                                               warmup=args.warmup if round_ == 0 else 1,
                                               repeat=args.steps, sync=runner.sync))
        for (name, _), kept in zip(runners, times, strict=True):
            t = float(np.median(kept))
            mfu = f"{B * T / t * flops_per_token(cfg, T) / PEAK[precision]:.1%}" \
                if args.device == "cuda" else "—"
            each = " / ".join(f"{k * 1e3:.1f}" for k in kept)
            rows.append([name, precision, f"train {B}x{T}, {args.rounds} rounds",
                         f"{B * T / t:,.0f}", f"{t * 1e3:.1f} ({each})", mfu, "—"])
        runners = inputs = None
        release(args.device)
    return rows


def byte_batches(path: str, steps: int, B: int, T: int, seed: int):
    """``steps`` batches of B random windows of T + 1 bytes of ``path`` (inputs, targets)."""
    data = np.frombuffer(Path(path).read_bytes(), np.uint8).astype(np.int32)
    if len(data) < T + 2:
        raise SystemExit(f"--data {path} has {len(data)} bytes; --seq {T} needs {T + 2}")
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        at = rng.integers(0, len(data) - T - 1, B)[:, None] + np.arange(T + 1)
        yield data[at][:, :-1], data[at][:, 1:]


def loss_curves(cfg, params, args) -> dict[str, list[float]]:
    """The loss per step of tilec and PyTorch eager from ``params`` on the same batches."""
    if cfg.vocab_size < 256:
        raise SystemExit("--curve needs a vocabulary of at least 256 (byte tokens)")
    batches = list(byte_batches(args.data, args.curve, args.batch, args.seq, args.seed))
    backend = args.tilec_backend or ("ptx" if args.device == "cuda" else "numpy")
    curves = {}
    if missing := tilec_missing():
        print(f"no tilec curve: {missing}")
    for name, factory in (
            ("tilec", lambda: tilec_runner(cfg, params, args.curve_precision, backend)),
            ("torch", lambda: torch_runner(cfg, params, args.curve_precision, False,
                                           args.device))):
        if name == "tilec" and missing:
            continue
        try:
            with matmul_precision(args.curve_precision):
                runner = factory()
                curves[name] = [runner.step(runner.inputs(x), runner.inputs(y), args.lr)
                                for x, y in batches]
        except Exception:  # noqa: BLE001 - reported; the other curve still runs
            traceback.print_exc()
        runner = None
        release(args.device)
    return curves


def save_curves(curves: dict[str, list[float]], args) -> None:
    """JSON (and a PNG when matplotlib imports) into ``--out``, or a table on stdout."""
    data = {"model": args.model, "batch": args.batch, "seq": args.seq, "lr": args.lr,
            "precision": args.curve_precision, "seed": args.seed, "data": args.data,
            "losses": curves}
    if len(curves) == 2:
        print(f"largest loss difference, tilec - torch: "
              f"{max(abs(a - b) for a, b in zip(*curves.values())):.4g}")
    path = plot_path(args, "gpt_loss_curve.json")
    if path is None:
        every = max(1, args.curve // 20)
        for s in range(0, args.curve, every):
            print(f"step {s + 1}: " + ", ".join(f"{k} {v[s]:.4f}" for k, v in curves.items()))
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {path}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, label=name)
    ax.set(xlabel="step", ylabel="loss",
           title=f"GPT {args.model}, {args.batch}x{args.seq} bytes, {args.curve_precision}")
    ax.legend()
    png = plot_path(args, "gpt_loss_curve.png")
    fig.savefig(png, dpi=120, bbox_inches="tight")
    print(f"wrote {png}")


def parse():
    p = arguments(__doc__, plots=True)
    p.add_argument("--model", choices=MODELS, default="gpt2")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, help="tokens per row (default: the block size)")
    p.add_argument("--steps", type=int, default=10, help="timed training steps")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--tilec-backend", help="default: ptx on cuda, numpy on cpu")
    p.add_argument("--providers", type=lambda s: s.split(","), default=list(PROVIDERS),
                   help=f"comma-separated, of {', '.join(PROVIDERS)}")
    p.add_argument("--precisions", type=lambda s: s.split(","), default=["bf16", "f32"],
                   help=f"comma-separated, of {', '.join(PEAK)}")
    p.add_argument("--decode-batches", type=lambda s: [int(b) for b in s.split(",")],
                   default=[1, 16])
    p.add_argument("--new", type=int, default=128, help="tokens generated per decode run")
    p.add_argument("--decode-repeat", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1,
                   help="more than 1: training only, the providers timed in turn, rounds times")
    p.add_argument("--curve", type=int, metavar="STEPS", help="also the loss curves")
    p.add_argument("--curve-precision", choices=list(TILEC_DTYPE), default="f32")
    p.add_argument("--data", default=str(Path(__file__).resolve().parent.parent / "README.md"),
                   help="the text whose bytes are the curves' tokens (default: README.md)")
    args = p.parse_args()
    cfg = MODELS[args.model]
    args.seq = args.seq or cfg.block_size
    bad = [x for x in args.providers if x not in PROVIDERS] + \
        [x for x in args.precisions if x not in PEAK]
    if bad or not 1 <= args.seq <= cfg.block_size:
        p.error(f"unknown providers or precisions {bad}, or --seq {args.seq} not in "
                f"1..{cfg.block_size}")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("no CUDA device: --device cpu --model tiny runs the code paths on the CPU")
    return args, cfg


def main() -> None:
    args, cfg = parse()
    params = init_params(cfg, args.seed)
    device = (torch.cuda.get_device_name() if args.device == "cuda"
              else platform.processor() or "cpu")
    rows = rounds_rows(cfg, params, args) if args.rounds > 1 else speed_rows(cfg, params, args)
    report(f"GPT {args.model} ({sum(int(np.prod(v.shape)) for v in params.values()):,} "
           f"parameters), training and greedy decoding", device,
           ["provider", "precision", "what", "tokens/s", "ms/step (decode: /token)", "MFU",
            "first loss"], rows, record=args.record)
    if args.curve:
        save_curves(loss_curves(cfg, params, args), args)


if __name__ == "__main__":
    main()
