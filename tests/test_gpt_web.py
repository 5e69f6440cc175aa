"""The GPT in a browser's WebGPU: ``examples/gpt/web`` exports the decoding step of a
float32 GPT on wgsl (``tc.export_graph``) and ``generate.js`` runs it, one command buffer a
step; in Deno (wgpu on lavapipe) its greedy tokens equal the numpy backend's
``GPT.generate`` for the same weights and prompt."""

import json
import shutil

import numpy as np
import pytest

import compiler as tc
from examples.gpt.config import GPTConfig, init_params
from examples.gpt.model import GPT
from examples.gpt.train import MODELS
from examples.gpt.web import export as web_export
from tests.conftest import ROOT
from tests.test_web_export import deno, run_js  # noqa: F401 - deno is a fixture

WEB = ROOT / "examples" / "gpt" / "web"


def _params(cfg: GPTConfig) -> dict[str, np.ndarray]:
    """Weights far from uniform predictions: the initial ones with the products' and
    embeddings' scaled up, so that each greedy choice wins by a wide margin (rounding
    differs between backends; a near tie could go either way)."""
    def scaled(name: str) -> bool:
        return name in ("wte", "wpe") or name.endswith("w") and not name.startswith("ln")
    return {k: v * 8 if scaled(k) else v for k, v in init_params(cfg, seed=3).items()}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    cfg = GPTConfig(vocab_size=256, **MODELS["tiny"])
    params = _params(cfg)
    model = GPT(cfg, backend="wgsl")
    model.load_state_dict(params)
    where = tmp_path_factory.mktemp("gpt-web")
    meta = web_export.export(model, where)
    shutil.copyfile(WEB / "generate.js", where / "generate.js")
    reference = GPT(cfg, backend="numpy")
    reference.load_state_dict(params)
    return where, meta, reference


PROMPTS = ["def main():", "import numpy as np\n"]


def test_greedy_tokens_in_deno_equal_numpys(deno, exported):  # noqa: F811
    where, meta, reference = exported
    count = 24
    out = run_js(deno, where, f"""
import {{ load }} from "./gpt.js";
import {{ generate }} from "./generate.js";
import {{ gpu }} from "./harness.js";
const device = await gpu();
const graph = await load(device, await Deno.readFile("gpt.bin"));
for (const text of {json.dumps(PROMPTS)}) {{
  const prompt = Array.from(new TextEncoder().encode(text));
  const streamed = [];
  const all = await generate(device, graph, prompt, {count}, {meta["config"]["block_size"]});
  await generate(device, graph, prompt, {count}, {meta["config"]["block_size"]},
                 (t) => streamed.push(t));
  console.log(JSON.stringify({{ all, streamed }}));
}}
""")
    for text, line in zip(PROMPTS, out.splitlines(), strict=True):
        got = json.loads(line)
        prompt = np.frombuffer(text.encode(), np.uint8).astype(np.int32)[None]
        want = reference.generate(prompt, count, temperature=0.0)[0, prompt.shape[1]:]
        assert got["all"] == want.tolist() == got["streamed"], text


def test_export_writes_the_step_and_the_weights(exported):
    """One graph of the step's launches (2 layers: embedding, 8 a layer, final layer norm,
    head, greedy choice, position), the weights in gpt.bin, the config in model.json."""
    where, meta, _ = exported
    cfg = meta["config"]
    assert meta["launches_per_token"] == 1 + 8 * cfg["n_layer"] + 4
    text = (where / "gpt.js").read_text()
    assert 'import { kernel, program as makeProgram } from "./tilec-runtime.js";' in text
    assert text.count("kernel({") == 10  # distinct kernels (three linear_forward variants)
    n_params = sum(int(np.prod(s)) for s in init_params(GPTConfig(**cfg), 0).values())
    assert (where / "gpt.bin").stat().st_size >= 4 * n_params
    assert json.loads((where / "model.json").read_text()) == meta


def test_export_graph_errors():
    with pytest.raises(tc.LaunchError, match="tc.graph\\('wgsl'\\) whose capture has ended"):
        tc.export_graph(tc.graph("numpy"), "x.js")
    with pytest.raises(tc.LaunchError, match="whose capture has ended"):
        tc.export_graph(tc.graph("wgsl"), "x.js")
