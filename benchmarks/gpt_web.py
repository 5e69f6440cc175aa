"""Tokens per second of the GPT's decoding step exported for the web
(``examples/gpt/web``), in Deno (whose WebGPU is wgpu: lavapipe on a machine without a
GPU): greedy generation of ``--new`` tokens after a prompt, each step one command buffer,
timed after a first run that builds the pipelines; the tokens are read back once at the
end. The weights are a checkpoint's (``--load``) or a config's initial ones (the speed
does not depend on them).

    python benchmarks/gpt_web.py [--model tiny|small] [--load ckpt.npz] [--new 100] [--record]
"""

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import arguments, report
from examples.gpt.config import GPTConfig, init_params
from examples.gpt.model import GPT
from examples.gpt.train import MODELS
from examples.gpt.web import export
from tests.test_web_export import _deno, run_js

PROMPT = "    def __init__(self, "

SCRIPT = """
import { load } from "./gpt.js";
import { generate } from "./generate.js";
import { gpu } from "./harness.js";
const device = await gpu();
const meta = JSON.parse(await Deno.readTextFile("model.json"));
const graph = await load(device, await Deno.readFile("gpt.bin"));
const prompt = Array.from(new TextEncoder().encode(PROMPT));
await generate(device, graph, prompt, 2, meta.config.block_size);
const start = performance.now();
await generate(device, graph, prompt, NEW, meta.config.block_size);
const seconds = (performance.now() - start) / 1000;
const info = device.adapterInfo ?? {};
console.log(JSON.stringify({ steps: prompt.length + NEW - 1, seconds,
                             adapter: info.description || info.vendor || "" }));
"""


def main() -> None:
    p = arguments(__doc__)
    p.add_argument("--model", choices=["tiny", "small"], default="small")
    p.add_argument("--load", help="a checkpoint that examples.gpt.train saved (npz)")
    p.add_argument("--new", type=int, default=100)
    args = p.parse_args()
    deno = _deno()
    if deno is None:
        raise SystemExit("no deno: set TILEC_DENO (scripts/test.sh installs it)")
    if args.load:
        model = GPT.load(args.load, backend="wgsl")
    else:
        cfg = GPTConfig(vocab_size=256, **MODELS[args.model])
        model = GPT(cfg, backend="wgsl")
        model.load_state_dict(init_params(cfg, seed=0))
    cfg = model.cfg
    if len(PROMPT) + args.new - 1 > cfg.block_size:
        raise SystemExit(f"--new {args.new} does not fit the block size {cfg.block_size}")
    with tempfile.TemporaryDirectory() as where:
        meta = export.export(model, where)
        (Path(where) / "generate.js").write_text((ROOT / "examples/gpt/web/generate.js")
                                                 .read_text())
        script = SCRIPT.replace("PROMPT", json.dumps(PROMPT)).replace("NEW", str(args.new))
        out = json.loads(run_js(deno, Path(where), script).splitlines()[-1])
    rate = out["steps"] / out["seconds"]
    report(f"GPT decoding step exported for the web, in Deno ({cfg.n_layer} layers of "
           f"{cfg.n_embd}, {meta['launches_per_token']} launches a token)",
           f"Deno WebGPU on {out['adapter'] or 'its adapter'}",
           ["steps (prompt + new)", "seconds", "tokens/s", "ms a token"],
           [[str(out["steps"]), f"{out['seconds']:.2f}", f"{rate:.1f}", f"{1e3 / rate:.1f}"]],
           record=args.record)


if __name__ == "__main__":
    main()
