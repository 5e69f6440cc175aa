"""The GPT model object (``examples.gpt.model``), its data and its command lines: loss and
every gradient against a float64 run of the NumPy oracle (``examples.gpt.reference``),
AdamW steps against the oracle's, greedy generation through the key/value cache against a
greedy loop over the oracle's forward, seeded sampling, a short training run whose loss
falls, checkpoints, and ``python -m examples.gpt.train`` / ``sample``. On numpy and wgsl
(lavapipe) with the tiny model; on ptx where there is a GPU; every kernel of a step and of
generation is also compiled and assembled for sm_90 without one."""

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from compiler.jit import KernelFunction, availability
from examples.gpt import data, embedding, kvcache
from examples.gpt import reference as ref
from examples.gpt.config import ConfigError, GPTConfig, init_params
from examples.gpt.model import GPT, ModelError, check_config, pick
from examples.gpt.train import learning_rate
from tests.conftest import ROOT, repo_pythonpath
from tests.test_gpt_kernels import _compile_only

TINY = GPTConfig(vocab_size=256, block_size=64, n_layer=2, n_head=2, n_embd=64)


@pytest.fixture(params=["numpy", "wgsl", pytest.param("ptx", marks=pytest.mark.gpu)])
def backend(request):
    if not availability(request.param)[0]:
        pytest.skip(f"{request.param}: {availability(request.param)[1]}")
    return request.param


def _params(scale: float, seed: int = 0) -> dict[str, np.ndarray]:
    """GPT-2's initialization with noise on top, so that the logits are far apart (greedy
    choices with clear margins) and no gradient is trivially zero."""
    rng = np.random.default_rng(seed)
    return {k: (v + rng.standard_normal(v.shape) * scale).astype(np.float32)
            for k, v in init_params(TINY, seed).items()}


def _tokens(shape, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, TINY.vocab_size, shape).astype(np.int32)


def _model(backend: str, params: dict, dtype: str = "float32") -> GPT:
    model = GPT(TINY, backend, dtype)
    model.load_state_dict(params)
    return model


def _f64(params: dict) -> dict:
    return {k: v.astype(np.float64) for k, v in params.items()}


# ---------------------------------------------------------------- against the oracle

def _against_reference(model, params, idx, targets):
    """The model's loss and gradients of one step, and the float64 reference's."""
    loss = model.forward(idx, targets)
    model.zero_grad()
    model.backward()
    want_loss, cache = ref.forward(_f64(params), idx, targets, TINY)
    return loss, model.grads(), want_loss, ref.backward(_f64(params), cache, TINY)


def test_loss_and_gradients_match_the_float64_reference(backend):
    params, idx, targets = _params(0.05), _tokens((2, 16)), _tokens((2, 16), 2)
    model = _model(backend, params)
    loss, grads, want_loss, want = _against_reference(model, params, idx, targets)
    assert loss == pytest.approx(want_loss, rel=1e-4)
    for name, g in want.items():
        np.testing.assert_allclose(grads[name], g, rtol=1e-4, atol=1e-4 * np.abs(g).max(),
                                   err_msg=name)


@pytest.mark.parametrize("where", ["numpy", pytest.param("ptx", marks=pytest.mark.gpu)])
def test_bfloat16_keeps_float32_master_weights_and_bf16_accuracy(where):
    """bfloat16 inputs to every product (tensor cores on ptx; numpy emulates them): the
    loss and gradients within a few units of bf16's rounding (2^-8) of the float64 ones."""
    if not availability(where)[0]:
        pytest.skip(f"{where}: {availability(where)[1]}")
    params, idx, targets = _params(0.05), _tokens((2, 16)), _tokens((2, 16), 2)
    model = _model(where, params, "bfloat16")
    loss, grads, want_loss, want = _against_reference(model, params, idx, targets)
    assert loss == pytest.approx(want_loss, rel=2e-3)
    for name, g in want.items():
        np.testing.assert_allclose(grads[name], g, rtol=0, atol=8 * 2**-8 * np.abs(g).max(),
                                   err_msg=name)
    for name, p in model.state_dict().items():  # float32 masters, not rounded to bf16
        np.testing.assert_array_equal(p, params[name])


def test_adamw_steps_match_the_reference(backend):
    """Two steps (the bias corrections of t = 1 and 2), the gradients clipped to norm 1
    (theirs is about 3) on the device."""
    params = _params(0.05)
    model = _model(backend, params)
    want = _f64(params)
    m = {k: np.zeros_like(v) for k, v in want.items()}
    v = {k: np.zeros_like(a) for k, a in want.items()}
    for t in (1, 2):
        model.forward(_tokens((2, 16), t), _tokens((2, 16), t + 10))
        model.zero_grad()
        model.backward()
        grads = _f64(model.grads())
        model.step(1e-2, weight_decay=0.1, grad_clip=1.0)
        norm = ref.clip_grad_norm(grads, 1.0)
        assert norm > 1.0 and model.grad_norm() == pytest.approx(norm, rel=1e-5)
        for name in want:
            ref.adamw(want[name], grads[name], m[name], v[name], t, 1e-2, weight_decay=0.1)
    assert model.t == 2
    for name, p in model.state_dict().items():
        np.testing.assert_allclose(p, want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def _reference_greedy(params: dict, idx: np.ndarray, new: int) -> np.ndarray:
    """The oracle's greedy continuation, the whole (cropped) context run each step; checks
    that every choice wins by a margin float32 cannot overturn."""
    p = _f64(params)
    for _ in range(new):
        ctx = idx[:, -TINY.block_size:]
        _, cache = ref.forward(p, ctx, ctx, TINY)
        logits = cache["lnf"][:, -1] @ p["wte"].T
        top2 = np.sort(logits, axis=-1)[:, -2:]
        assert (top2[:, 1] - top2[:, 0]).min() > 1e-3
        idx = np.concatenate([idx, logits.argmax(axis=-1)[:, None].astype(np.int32)], axis=1)
    return idx


def test_greedy_generation_matches_the_reference(backend):
    """A prompt of 61 tokens and 6 new ones: the prompt's prefill, three decoding steps
    through the cache up to the block size of 64, then two steps on the last 64 tokens."""
    params, prompt = _params(0.1), _tokens((2, 61))
    model = _model(backend, params)
    want = _reference_greedy(params, prompt, 6)
    np.testing.assert_array_equal(model.generate(prompt, 6, temperature=0), want)
    _, cache = ref.forward(_f64(params), prompt, prompt, TINY)
    np.testing.assert_allclose(model.forward(prompt), cache["lnf"][:, -1] @ params["wte"].T,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_generation_replaying_a_graph_of_the_decoding_step_equals_launching_it(
        backend, dtype):
    """Greedy and seeded draws, through the block size: the decoding step launched, and
    captured once in a tc.graph (a CUDA graph on ptx) and replayed, then replayed again
    by the next call."""
    if dtype == "bfloat16" and backend == "wgsl":
        pytest.skip("WGSL has no bfloat16")
    params, prompt = _params(0.1), _tokens((2, 58))
    model = _model(backend, params, dtype)
    launched = model.generate(prompt, 9, temperature=0, graph=False)
    assert model._gen["graph"] is None
    np.testing.assert_array_equal(model.generate(prompt, 9, temperature=0, graph=True),
                                  launched)
    graph = model._gen["graph"]
    assert graph is not None and len(graph.launches) > 2 * TINY.n_layer
    if dtype == "float32":
        np.testing.assert_array_equal(launched, _reference_greedy(params, prompt, 9))
    drawn = model.generate(prompt[:, :3], 5, temperature=1.0, seed=3, graph=False)
    np.testing.assert_array_equal(
        model.generate(prompt[:, :3], 5, temperature=1.0, seed=3, graph=True), drawn)
    assert model._gen["graph"] is graph


def test_decoding_steps_launch_alike_at_every_position():
    """The position is read on the device, not passed: the kernels a decoding step
    launches compile once, whatever the position."""
    model = _model("numpy", _params(0.1))
    kernels = [k for k in vars(kvcache).values() if isinstance(k, KernelFunction)]
    kernels.append(embedding.embedding_forward_kernel)
    model.generate(_tokens((1, 1)), 2, temperature=0)
    compiled = {k.__name__: len(k._cache) for k in kernels}
    model.generate(_tokens((1, 1)), 20, temperature=0)
    assert {k.__name__: len(k._cache) for k in kernels} == compiled


def test_sampling_is_seeded_and_top_k_keeps_the_likeliest():
    model = _model("numpy", _params(0.1))
    prompt = _tokens((2, 5))
    draw = model.generate(prompt, 6, temperature=1.0, seed=3)
    np.testing.assert_array_equal(model.generate(prompt, 6, temperature=1.0, seed=3), draw)
    assert (model.generate(prompt, 6, temperature=1.0, seed=4) != draw).any()
    np.testing.assert_array_equal(model.generate(prompt, 6, temperature=2.0, top_k=1, seed=5),
                                  model.generate(prompt, 6, temperature=0))
    logits = np.log(np.array([[0.1, 0.5, 0.15, 0.25]] * 20000))
    counts = np.bincount(pick(logits, 1.0, None, np.random.default_rng(0)), minlength=4)
    np.testing.assert_allclose(counts / 20000, [0.1, 0.5, 0.15, 0.25], atol=0.01)
    counts = np.bincount(pick(logits, 1.0, 2, np.random.default_rng(0)), minlength=4)
    np.testing.assert_allclose(counts / 20000, [0, 0.5 / 0.75, 0, 0.25 / 0.75], atol=0.01)


# ---------------------------------------------------------------- training

@pytest.fixture(scope="module")
def corpus():
    return data.load(limit=200_000)


def test_corpus_is_the_standard_library_split_90_10(corpus):
    train, val = corpus
    assert len(train) == 180_000 and len(val) == 20_000
    assert data.decode(train[:400]).count("\n") > 3  # Python source, one token a byte
    np.testing.assert_array_equal(data.load(limit=200_000)[0], train)
    idx, targets = data.batch(train, 3, 10, np.random.default_rng(1))
    assert idx.shape == targets.shape == (3, 10) and idx.dtype == np.int32
    np.testing.assert_array_equal(idx[:, 1:], targets[:, :-1])
    np.testing.assert_array_equal(data.batch(train, 3, 10, np.random.default_rng(1))[0], idx)
    assert data.decode(data.encode("é\n")) == "é\n"


def test_training_lowers_the_loss(backend, corpus):
    model = _model(backend, init_params(TINY, 0))
    losses = []
    for s in range(30):
        idx, targets = data.batch(corpus[0], 4, 32, np.random.default_rng([0, s]))
        losses.append(model.forward(idx, targets))
        model.zero_grad()
        model.backward()
        model.step(learning_rate(s, 3e-3, 3e-4, 5, 30))
    assert np.mean(losses[-5:]) < losses[0] - 1.0, losses


def test_checkpoint_round_trip_gives_the_same_next_loss(tmp_path, corpus):
    model = _model("numpy", init_params(TINY, 0))
    batches = [data.batch(corpus[0], 2, 16, np.random.default_rng(s)) for s in range(4)]
    for idx, targets in batches[:2]:
        model.forward(idx, targets)
        model.zero_grad()
        model.backward()
        model.step(1e-3)
    model.save(str(tmp_path / "ckpt.npz"))
    loaded = GPT.load(str(tmp_path / "ckpt.npz"), "numpy")
    assert loaded.cfg == TINY and loaded.t == 2
    for m in (model, loaded):  # one more step: the moments and t come back too
        m.forward(*batches[2])
        m.zero_grad()
        m.backward()
        m.step(1e-3)
    assert loaded.forward(*batches[3]) == model.forward(*batches[3])


def test_learning_rate_warms_up_then_decays_by_a_cosine():
    rates = [learning_rate(s, 1.0, 0.1, 4, 12) for s in range(12)]
    assert rates[:4] == [0.25, 0.5, 0.75, 1.0]
    assert rates[4] == 1.0 and rates[8] == pytest.approx(0.55)
    assert all(a > b > 0.1 for a, b in itertools.pairwise(rates[4:]))


# ---------------------------------------------------------------- errors

def test_the_model_says_what_it_cannot_do(tmp_path):
    with pytest.raises(ConfigError, match="n_embd must be a multiple of 64 .*got 40"):
        check_config(GPTConfig(256, 16, 1, 2, 40), "wgsl", "float32")
    with pytest.raises(ConfigError, match="WGSL has no bfloat16"):
        check_config(TINY, "wgsl", "bfloat16")
    with pytest.raises(ConfigError, match="dtype must be one of float32, bfloat16"):
        GPT(TINY, "numpy", "float16")
    model = GPT(TINY, "numpy")
    with pytest.raises(ModelError, match="needs a GPT.forward"):
        model.backward()
    with pytest.raises(ModelError, match=r"tokens in 0\.\.255, got 0\.\.256"):
        model.forward(np.array([[0, 256]]), np.array([[0, 1]]))
    with pytest.raises(ModelError, match="65 positions, more than the block size 64"):
        model.forward(np.zeros((1, 65), np.int32), np.zeros((1, 65), np.int32))
    with pytest.raises(ConfigError, match="unknown GPT parameters wtf"):
        model.load_state_dict({"wtf": np.zeros(1)})
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ModelError, match="bad.npz is not a GPT checkpoint"):
        GPT.load(str(tmp_path / "bad.npz"))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_every_kernel_of_training_and_generation_assembles_for_sm90(monkeypatch, dtype):
    compiled: list = []
    model = GPT(TINY, "numpy", dtype)
    monkeypatch.setattr(KernelFunction, "__getitem__", _compile_only(compiled))
    idx = _tokens((2, 16))
    model.forward(idx, idx)
    model.zero_grad()
    model.backward()
    model.step(1e-3)
    model.generate(idx[:, :4], 2, temperature=0)
    names = {name for name, _ in compiled}
    assert {"cached_attention_kernel", "copy_rows_kernel", "zero_kernel", "adamw_kernel",
            "attention_dkv_kernel", "linear_backward_w_kernel"} <= names
    assert ("convert_kernel" in names) == (dtype == "bfloat16")
    for name, ck in compiled:
        assert ck.asm["cubin"][:4] == b"\x7fELF", name
        if dtype == "bfloat16" and ("attention" in name or name.startswith("linear")):
            assert "mma" in ck.asm["ptx"], f"{name} does not use tensor cores"


# ---------------------------------------------------------------- command lines

def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False,
                          env={**os.environ, "PYTHONPATH": repo_pythonpath()})


def test_train_prints_json_and_sample_continues_the_prompt(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text((ROOT / "examples/gpt/model.py").read_text())
    ckpt = str(tmp_path / "ckpt.npz")
    r = _run("examples.gpt.train", "--backend", "numpy", "--steps", "3", "--json",
             "--batch", "2", "--seq", "16", "--data", str(text), "--eval-every", "3",
             "--save", ckpt)
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert [rec["step"] for rec in records] == [1, 2, 3]
    assert all(rec["loss"] > 0 and rec["ms"] > 0 and rec["mfu"] is None for rec in records)
    assert "val_loss" in records[-1]
    r = _run("examples.gpt.sample", "--load", ckpt, "--backend", "numpy", "--prompt",
             "def f", "--max-new-tokens", "5", "--temperature", "0")
    assert r.returncode == 0 and r.stdout.startswith("def f"), r.stderr


def test_compare_says_it_needs_pytorch(tmp_path):
    hidden = tmp_path / "torch"  # a machine without PyTorch, even where it is installed
    hidden.mkdir()
    (hidden / "__init__.py").write_text("raise ImportError('No module named torch')\n")
    text = tmp_path / "text.txt"
    text.write_text("def f(x):\n    return x\n" * 200)
    r = subprocess.run([sys.executable, "-m", "examples.gpt.train", "--backend", "numpy",
                        "--steps", "1", "--data", str(text), "--compare", "torch"], cwd=ROOT,
                       capture_output=True, text=True, check=False,
                       env={**os.environ,
                            "PYTHONPATH": os.pathsep.join([str(tmp_path), repo_pythonpath()])})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "--compare torch needs PyTorch" in r.stderr.splitlines()[-1]
