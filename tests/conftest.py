"""Shared fixtures: run a kernel on a backend, or (ptx without a GPU) compile and
assemble it for sm_90 so CI still checks every PTX kernel."""

import os
from pathlib import Path

import numpy as np
import pytest

import compiler as tc
from compiler.jit import availability

ROOT = Path(__file__).resolve().parent.parent


def repo_pythonpath() -> str:
    """PYTHONPATH for a subprocess: the repo first, then whatever PYTHONPATH already holds
    (carried wheels on a GPU host, say)."""
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)


BACKENDS = ["numpy", "wgsl", pytest.param("ptx", marks=pytest.mark.gpu)]


@pytest.fixture(params=BACKENDS)
def backend(request):
    name = request.param
    if name == "wgsl" and not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    return name


def launch(kernel, grid, *args, backend, num_warps=4, debug=False, num_stages=2,
           **constexprs) -> bool:
    """Launch on ``backend``; returns False when it could only compile (ptx, no GPU):
    the kernel was then compiled to PTX and assembled to a cubin for sm_90."""
    if backend == "ptx" and not availability("ptx")[0]:
        bound = kernel.bind(args, constexprs)
        ck = kernel.compile_for(bound, "ptx", num_warps, debug, num_stages=num_stages)
        assert ck.asm["cubin"][:4] == b"\x7fELF"
        assert ".entry" in ck.asm["ptx"]
        return False
    kernel[grid](*args, backend=backend, num_warps=num_warps, debug=debug,
                 num_stages=num_stages, **constexprs)
    return True


@pytest.fixture
def torch_cuda():
    """torch, where a CUDA GPU is seen by both tilec and torch; else the test skips."""
    torch = pytest.importorskip("torch")
    if not availability("ptx")[0] or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU that both tilec and torch see")
    return torch


@pytest.fixture
def rng():
    return np.random.default_rng()


def tolerance(dtype, op: str = "") -> dict:
    """Tolerances that say what each backend computes: the GPU backends use fast
    transcendental instructions (ex2.approx, lg2.approx, sin.approx) as Triton does."""
    if np.dtype(dtype) == np.float16:
        return {"rtol": 2e-3, "atol": 2e-3}
    if op in ("exp", "exp2", "log", "log2", "sin", "cos", "rsqrt", "sigmoid", "pow"):
        return {"rtol": 2e-5, "atol": 2e-5}
    return {"rtol": 1e-6, "atol": 0}


def pytest_report_header(config):
    return ["tilec backends: " + ", ".join(
        f"{n}={'yes' if ok else 'no'}" for n, (ok, _) in tc.backends().items())]
