"""Launching on several GPUs: each launch runs on the GPU its device arrays are on (one
module per GPU, loaded on first use), mixing GPUs in one launch is a ``LaunchError`` naming
the argument, and ``examples/multi_gpu.py`` splits a batch of products across them, in one
process or as a ``torchrun`` NCCL data-parallel step. The GPU tests need two GPUs
(``nvidia-h200-x2``); how a launch finds the GPU, and the example's fused kernel, are
checked here."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import compiler as tc
from backends.ptx import _device_of
from compiler.jit import availability
from examples import multi_gpu
from examples.vector_add import add
from tests.conftest import ROOT, launch, repo_pythonpath


class _Torchish:
    is_cuda = True

    def __init__(self, device: int):
        self.device_index = device

    def get_device(self) -> int:
        return self.device_index


def test_the_examples_fused_kernel(backend):
    x, y = np.arange(3000, dtype=np.float32), np.ones(3000, np.float32)
    out = np.zeros_like(x)
    if launch(multi_gpu.scaled_add, (3,), x, y, out, 2.0, 3000, backend=backend, BLOCK=1024):
        np.testing.assert_array_equal(out, 2 * x + 1)


def test_the_first_device_array_picks_the_gpu():
    assert _device_of([np.zeros(4), 3, _Torchish(1), _Torchish(0)]) == 1
    assert _device_of([np.zeros(4), 2.0]) is None


def _two_gpus():
    torch = pytest.importorskip("torch")
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    return torch


@pytest.mark.gpu
def test_one_kernel_runs_on_each_gpu_in_turn():
    torch = _two_gpus()
    n = 10_000
    for device in ("cuda:1", "cuda:0", "cuda:1"):
        x, y = (torch.randn(n, device=device) for _ in range(2))
        out = torch.empty(n, device=device)
        add[(tc.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend="ptx")
        torch.testing.assert_close(out, x + y)


@pytest.mark.gpu
def test_arrays_on_two_gpus_in_one_launch_are_an_error():
    torch = _two_gpus()
    x, out = torch.ones(8, device="cuda:0"), torch.empty(8, device="cuda:0")
    y = torch.ones(8, device="cuda:1")
    with pytest.raises(tc.LaunchError, match="'y'.*cuda:1"):
        add[(1,)](x, y, out, 8, BLOCK=8, backend="ptx")


@pytest.mark.gpu
def test_example_splits_a_batch_across_gpus():
    torch = _two_gpus()
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((4, 256, 256)).astype(np.float16) for _ in range(2))
    c = multi_gpu.split_matmul(a, b, torch.cuda.device_count())
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-9 * np.abs(want).max())


@pytest.mark.gpu
def test_example_under_torchrun_all_reduces_over_two_ranks():
    _two_gpus()
    torchrun = shutil.which("torchrun") or [sys.executable, "-m", "torch.distributed.run"]
    cmd = [torchrun] if isinstance(torchrun, str) else torchrun
    r = subprocess.run([*cmd, "--nproc-per-node", "2", "examples/multi_gpu.py", "--batch", "4",
                        "--size", "256"], capture_output=True, text=True, timeout=300,
                       check=False, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "on 2 ranks, all-reduced: OK" in r.stdout
