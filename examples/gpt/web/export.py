"""The GPT's inference for the web: the decoding step (every kernel of a token's forward
pass, the greedy choice and the move to the next position, all on the device) captured on
wgsl as a ``tc.graph`` and exported with ``tc.export_graph``: ``gpt.js`` (the kernels and
their launches), ``gpt.bin`` (the float32 weights), ``model.json`` (the config), beside the
shared ``tilec-runtime.js``. ``generate.js`` runs it: the prompt one token a step, then a
step a new token, each step one command buffer.

    python -m examples.gpt.web.export --load ckpt.npz --out examples/gpt/web
    python -m examples.gpt.web.export --model tiny --seed 0 --out /tmp/gpt-web   # untrained

The kernels are those ``GPT.generate`` runs on every backend (``examples.gpt``), compiled for
WGSL; the page (``index.html``) and Deno (``tests/test_gpt_web.py``) load the same files.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import compiler as tc
from examples.gpt.config import GPTConfig, init_params
from examples.gpt.model import GPT


def export(model: GPT, out: str | Path) -> dict:
    """``model`` (on wgsl, float32) as ``gpt.js``, ``gpt.bin`` and ``model.json`` in
    ``out``; returns what ``model.json`` holds."""
    if model.backend != "wgsl" or model.dtype != "float32":
        raise ValueError("the web export takes a float32 GPT on wgsl")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    g = model._generation(1)  # the decoding step's buffers, as generate makes them
    with tc.graph("wgsl") as graph:
        model._step(g, 1, 1)
    tc.export_graph(graph, out / "gpt.js", names={k: g[k] for k in ("tok", "pos", "hist")},
                    keep=[model.params[name] for name in model.params])
    meta = {"config": dataclasses.asdict(model.cfg), "tokens": "bytes",
            "launches_per_token": len(graph.launches)}
    (out / "model.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--load", help="a checkpoint that examples.gpt.train saved (npz)")
    p.add_argument("--model", choices=["tiny", "small"], default="tiny",
                   help="without --load: this config, initialized with --seed")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(Path(__file__).parent))
    a = p.parse_args()
    if a.load:
        model = GPT.load(a.load, backend="wgsl")
    else:
        from examples.gpt.train import MODELS
        cfg = GPTConfig(vocab_size=256, **MODELS[a.model])
        model = GPT(cfg, backend="wgsl")
        model.load_state_dict(init_params(cfg, seed=a.seed))
    meta = export(model, a.out)
    print(f"wrote {a.out}/gpt.js, gpt.bin, model.json: {meta['launches_per_token']} launches "
          f"a token")


if __name__ == "__main__":
    main()
