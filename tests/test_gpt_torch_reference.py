"""The GPT in PyTorch (``examples.gpt.reference_torch``) against the NumPy oracle
(``examples.gpt.reference``) in float64 on the CPU: the loss, every gradient, AdamW steps
with and without clipping, and greedy generation; sampling's seed and top-k; bfloat16
autocast; and the CPU code paths of benchmarks/gpt.py and benchmarks/gpt_matmuls.py.
Needs PyTorch and is skipped without it."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from examples.gpt import reference as ref
from examples.gpt.config import PARAM_NAMES, ConfigError, GPTConfig, init_params
from examples.gpt.reference_torch import TorchGPT
from tests.conftest import ROOT, repo_pythonpath

TINY = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8)


def _params(seed: int = 0) -> dict:
    """Float64 parameters with non-trivial layer norms and biases (init_params makes them
    ones and zeros, which would hide a swapped weight and bias)."""
    rng = np.random.default_rng(seed + 100)
    return {name: (value + 0.1 * rng.standard_normal(value.shape)).astype(np.float64)
            for name, value in init_params(TINY, seed).items()}


def _batch(B: int, T: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, TINY.vocab_size, (B, T)).astype(np.int32),
            rng.integers(0, TINY.vocab_size, (B, T)).astype(np.int32))


def _model(params, **kw) -> TorchGPT:
    return TorchGPT(TINY, params, dtype=kw.pop("dtype", "float64"), device="cpu", **kw)


def _assert_close(got: dict, want: dict, rtol: float) -> None:
    assert set(got) == set(PARAM_NAMES)
    for name in PARAM_NAMES:
        assert got[name].shape == want[name].shape, name
        scale = np.abs(want[name]).max()
        err = np.abs(got[name] - want[name]).max()
        assert err <= rtol * scale, f"{name}: {err} > {rtol} * {scale}"


@pytest.mark.parametrize("T", [TINY.block_size, 5])
def test_loss_and_every_gradient_match_the_numpy_oracle(T):
    params = _params()
    idx, targets = _batch(3, T)
    loss, cache = ref.forward(params, idx, targets, TINY)
    want = ref.backward(params, cache, TINY)
    model = _model(params)
    assert model.forward_loss(idx, targets) == pytest.approx(loss, rel=1e-12)
    assert model.train_step(idx, targets, lr=0.0, grad_clip=None) == pytest.approx(loss,
                                                                                    rel=1e-12)
    _assert_close(model.grads(), want, rtol=1e-6)
    if T < TINY.block_size:  # the positions past T get no gradient
        assert not model.grads()["wpe"][T:].any()


@pytest.mark.parametrize("grad_clip", [None, 0.05])
def test_adamw_steps_match_the_oracle(grad_clip):
    params = _params(seed=2)
    model = _model(params, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.2)
    want = {k: v.copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    for t, lr in enumerate([0.1, 0.03], start=1):
        idx, targets = _batch(2, TINY.block_size, seed=t)
        _, cache = ref.forward(want, idx, targets, TINY)
        grads = ref.backward(want, cache, TINY)
        if grad_clip is not None:
            assert ref.clip_grad_norm(grads, grad_clip) > grad_clip  # really clipped
        model.train_step(idx, targets, lr=lr, grad_clip=grad_clip)
        _assert_close(model.grads(), grads, rtol=1e-6)
        for name in PARAM_NAMES:
            ref.adamw(want[name], grads[name], m[name], v[name], t, lr, beta1=0.8, beta2=0.9,
                      eps=1e-6, weight_decay=0.2)
        _assert_close(model.state_dict_numpy(), want, rtol=1e-6)
    assert not np.allclose(model.state_dict_numpy()["wte"], params["wte"])


def _greedy_oracle(params, idx, n: int) -> np.ndarray:
    """Greedy tokens from the oracle's full forward over the whole prefix each time."""
    for _ in range(n):
        _, cache = ref.forward(params, idx, np.zeros_like(idx), TINY)
        nxt = (cache["lnf"][:, -1] @ params["wte"].T).argmax(axis=-1)
        idx = np.concatenate([idx, nxt[:, None].astype(np.int32)], axis=1)
    return idx


@pytest.mark.parametrize("B,T", [(1, 1), (3, 3)])
def test_greedy_generation_with_the_kv_cache_matches_the_oracle(B, T):
    params = {k: v * 20 for k, v in _params(seed=4).items()}  # logits far from ties
    idx, _ = _batch(B, T, seed=5)
    model = _model(params)
    new = TINY.block_size - T
    got = model.generate(idx, new, temperature=0.0)
    assert got.dtype == np.int32 and got.shape == (B, TINY.block_size)
    np.testing.assert_array_equal(got, _greedy_oracle(params, idx, new))
    np.testing.assert_array_equal(model.generate(idx, 2), got[:, :T + 2])  # cache reused


def test_sampling_follows_the_seed_and_top_k():
    model = _model(_params(seed=6))
    idx, _ = _batch(4, 2, seed=7)
    a = model.generate(idx, 6, temperature=2.0, seed=11)
    assert (model.generate(idx, 6, temperature=2.0, seed=11) == a).all()
    draws = [model.generate(idx, 6, temperature=2.0, seed=s) for s in range(12, 15)]
    assert any((d != a).any() for d in draws)
    np.testing.assert_array_equal(model.generate(idx, 6, temperature=1.0, top_k=1, seed=3),
                                  model.generate(idx, 6, temperature=0.0))
    assert (model.generate(idx, 6, temperature=1.0, top_k=3, seed=3) < TINY.vocab_size).all()


def test_bfloat16_autocast_keeps_float32_master_weights():
    params = {k: v.astype(np.float32) for k, v in _params(seed=8).items()}
    idx, targets = _batch(2, TINY.block_size, seed=9)
    loss = float(ref.forward(params, idx, targets, TINY)[0])
    model = _model(params, dtype="bfloat16")
    assert model.forward_loss(idx, targets) == pytest.approx(loss, rel=2e-2)
    assert model.forward_loss(idx, targets) != pytest.approx(loss, rel=1e-6)  # really bf16
    model.train_step(idx, targets, lr=1e-3)
    state = model.state_dict_numpy()
    assert all(state[name].dtype == np.float32 for name in PARAM_NAMES)
    assert model.generate(idx[:, :3], 4).shape == (2, 7)


def test_bad_shapes_and_arguments_are_config_errors():
    params = _params()
    with pytest.raises(ConfigError, match="parameter qkvw must have shape"):
        _model({**params, "qkvw": params["qkvw"][:1]})
    with pytest.raises(ConfigError, match="dtype must be one of"):
        _model(params, dtype="float16")
    model = _model(params)
    idx, _ = _batch(1, 6)
    with pytest.raises(ConfigError, match="T \\+ max_new_tokens <= block_size"):
        model.generate(idx, 3)
    with pytest.raises(ConfigError, match="T <= block_size"):
        model.forward_loss(np.zeros((1, 9), np.int32), np.zeros((1, 9), np.int32))


def test_the_benchmark_runs_its_cpu_paths(tmp_path):
    """benchmarks/gpt.py on the CPU with a tiny model: PyTorch's rows and loss curve."""
    done = subprocess.run(
        [sys.executable, "benchmarks/gpt.py", "--device", "cpu", "--model", "tiny",
         "--providers", "tilec,torch", "--precisions", "f32", "--batch", "2", "--seq", "16",
         "--steps", "1", "--warmup", "1", "--decode-batches", "1,2", "--new", "3",
         "--decode-repeat", "1", "--curve", "3", "--lr", "1e-2", "--out", str(tmp_path)],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert done.returncode == 0, done.stderr
    for what in ("train 2x16", "decode B=1", "decode B=2"):
        assert f"| torch eager | f32 | {what} |" in done.stdout
    curve = json.loads((tmp_path / "gpt_loss_curve.json").read_text())
    assert len(curve["losses"]["torch"]) == 3
    assert curve["losses"]["torch"][0] > curve["losses"]["torch"][-1]


def test_the_matmul_benchmark_runs_its_cpu_paths():
    """benchmarks/gpt_matmuls.py at tiny shapes on the CPU (numpy, PyTorch): a row per
    layer and product, and tilec's results close to PyTorch's."""
    done = subprocess.run(
        [sys.executable, "benchmarks/gpt_matmuls.py", "--device", "cpu", "--small",
         "--only", "attproj,fc", "--warmup", "1", "--repeat", "1"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ") for line in done.stdout.splitlines()
            if line.startswith(("| attproj", "| fc"))]
    assert [r[1] for r in rows] == ["forward", "dx", "dw+db"] * 2
    assert all(float(r[-1].rstrip(" |")) < 1e-2 for r in rows)  # bf16 outputs: 2^-8
