"""The GPT example trained data-parallel (``examples.gpt.distributed``): two processes
started by torchrun, each on half of every batch, train as one process on the whole batch
(per-step losses, gradient norms, validation losses and the final parameters); the batch
split; a single process never imports PyTorch; what several processes cannot do. The
torchrun tests skip without PyTorch (CI has none)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from compiler.jit import availability
from examples.gpt import data
from tests.conftest import ROOT, repo_pythonpath

STEPS = 4
TRAIN = ["--steps", str(STEPS), "--seq", "16", "--warmup", "2", "--eval-every", "2",
         "--eval-batches", "2", "--json"]


def _run(args: list[str], world: dict | None = None, prefix: tuple[str, ...] = ("-m",)
         ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env.update(PYTHONPATH=repo_pythonpath(), OMP_NUM_THREADS="1", **(world or {}))
    return subprocess.run([sys.executable, *prefix, *args], cwd=ROOT, capture_output=True,
                          check=False, text=True, env=env, timeout=600)


def _records(r: subprocess.CompletedProcess) -> list[dict]:
    assert r.returncode == 0, r.stderr[-3000:]
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def test_a_batch_split_across_processes_is_the_one_process_batch():
    tokens = np.arange(1000, dtype=np.uint8)
    whole = data.batch(tokens, 6, 8, np.random.default_rng([3, 7]))
    shares = [data.batch(tokens, 6, 8, np.random.default_rng([3, 7]), slice(r * 2, r * 2 + 2))
              for r in range(3)]
    for i in range(2):  # inputs, targets
        np.testing.assert_array_equal(np.concatenate([s[i] for s in shares]), whole[i])
        assert all(s[i].shape == (2, 8) for s in shares)


@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
def test_two_processes_train_as_one_with_the_doubled_batch(backend, tmp_path):
    pytest.importorskip("torch.distributed")
    if not availability(backend)[0]:
        pytest.skip(f"{backend}: {availability(backend)[1]}")
    one, two = tmp_path / "one.npz", tmp_path / "two.npz"
    single = _records(_run(["examples.gpt.train", "--backend", backend, "--batch", "4",
                            "--save", str(one), *TRAIN]))
    pair = _records(_run(["--standalone", "--nproc_per_node", "2", "-m", "examples.gpt.train",
                          "--backend", backend, "--batch", "2", "--save", str(two), *TRAIN],
                         prefix=("-m", "torch.distributed.run")))
    assert len(pair) == len(single) == STEPS  # rank 0 alone reports
    for s, p in zip(single, pair, strict=True):
        assert p.keys() == s.keys()
        # the sums over 64 positions and over two halves of 32 round differently
        for key in ("loss", "val_loss"):
            if key in s:
                assert p[key] == pytest.approx(s[key], rel=1e-6), (s["step"], key)
        assert p["grad_norm"] == pytest.approx(s["grad_norm"], rel=1e-5)
        assert p["tokens_per_s"] == pytest.approx(4 * 16 / p["ms"] * 1e3)  # both processes'
    with np.load(one) as a, np.load(two) as b:
        assert a.files == b.files and int(b["step"]) == STEPS
        for name in a.files:
            want, got = a[name], b[name]
            if name == "param.qkvb":
                # the key biases' gradient is zero but for round-off, which AdamW's steps
                # scale up: they stay near 0 on both sides, with no digits in common
                C = want.shape[1] // 3
                assert max(np.abs(want[:, C:2 * C]).max(), np.abs(got[:, C:2 * C]).max()) < 1e-5
                want, got = np.delete(want, np.s_[C:2 * C], 1), np.delete(got, np.s_[C:2 * C], 1)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5 * np.abs(want).max(),
                                       err_msg=name)


def test_one_process_never_imports_torch():
    code = ("import sys; from examples.gpt.train import main; "
            "main(['--backend', 'numpy', '--steps', '1', '--seq', '8', '--batch', '1']); "
            "print('torch' in sys.modules)")
    r = _run(["-c", code], prefix=())
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[-1] == "False"


def test_several_processes_need_pytorch_and_no_compare():
    world = {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0"}
    code = ("import sys; sys.modules['torch'] = None; from examples.gpt.train import main; "
            "main(['--backend', 'numpy', '--steps', '1'])")
    r = _run(["-c", code], world, prefix=())
    assert r.returncode == 1
    assert "training on WORLD_SIZE=2 processes needs PyTorch" in r.stderr
    r = _run(["examples.gpt.train", "--backend", "numpy", "--compare", "torch"], world)
    assert r.returncode == 2
    assert "--compare runs the PyTorch model in one process" in r.stderr
