"""tilec kernels as PyTorch custom operators (``examples/torch_custom_op.py``):
``tilec::layer_norm`` and its backward match ``torch.nn.functional.layer_norm``, eagerly,
under ``torch.compile(fullgraph=True)`` and, on ptx, replayed from a CUDA graph.

CPU tensors run on the numpy and wgsl backends (through DLPack), CUDA tensors on ptx.
Every test needs PyTorch and is skipped without it.
"""

import os
import subprocess
import sys

import pytest

import compiler as tc
from compiler.jit import availability
from tests.conftest import ROOT, repo_pythonpath

torch = pytest.importorskip("torch")
from examples import torch_custom_op as ops  # registers the operators

CPU_BACKENDS = ["numpy", "wgsl"]


@pytest.fixture(params=CPU_BACKENDS)
def cpu_backend(request):
    """The default backend, where the operators send CPU tensors, for one test."""
    ok, why = availability(request.param)
    if not ok:
        pytest.skip(f"{request.param}: {why}")
    tc.set_backend(request.param)
    yield request.param
    tc.set_backend(None)


@pytest.fixture
def numpy_backend():
    tc.set_backend("numpy")
    yield
    tc.set_backend(None)


def _close(got, want):
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-3)


def test_forward_matches_torch_and_keeps_each_rows_statistics(cpu_backend):
    x = torch.randn(3, 5, 40) * 2 + 1  # leading dimensions are rows
    weight, bias = torch.randn(40), torch.randn(40)
    y, mean, rstd = torch.ops.tilec.layer_norm(x, weight, bias, 1e-5)
    torch.testing.assert_close(y, ops.torch_layer_norm(x, weight, bias), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(mean, x.mean(-1))
    torch.testing.assert_close(rstd, (x.var(-1, unbiased=False) + 1e-5).rsqrt())


def test_gradients_match_torch(cpu_backend):
    x, weight, bias, dy = ops.inputs(20, 70, "cpu")
    _close(ops.gradients(ops.layer_norm, x, weight, bias, dy),
           ops.gradients(ops.torch_layer_norm, x, weight, bias, dy))


def test_backward_takes_a_broadcast_gradient(numpy_backend):
    """``y.sum()``'s gradient reaches the backward expanded, with stride 0."""
    leaves = [t.requires_grad_() for t in (torch.randn(9, 30), torch.randn(30), torch.randn(30))]
    ops.layer_norm(*leaves).sum().backward()
    want = [t.detach().clone().requires_grad_() for t in leaves]
    ops.torch_layer_norm(*want).sum().backward()
    _close([t.grad for t in leaves], [t.grad for t in want])


def test_opcheck_finds_schemas_fakes_and_autograd_consistent(numpy_backend):
    """``torch.library.opcheck``: the schema, the fake against the real outputs, the
    autograd registration, and tracing by AOTAutograd with dynamic shapes."""
    x, weight, bias, dy = ops.inputs(6, 24, "cpu")
    _, mean, rstd = torch.ops.tilec.layer_norm(x, weight, bias, 1e-5)
    cases = [(torch.ops.tilec.layer_norm.default,
              (x.requires_grad_(), weight.requires_grad_(), bias, 1e-5)),
             (torch.ops.tilec.layer_norm_backward.default,
              (dy, x.detach(), weight.detach(), mean, rstd))]
    for op, args in cases:
        results = torch.library.opcheck(op, args)
        assert set(results.values()) == {"SUCCESS"}, (op, results)


def test_compiled_fullgraph_with_inductor(numpy_backend):
    """Inductor calls the opaque operator, forward and backward, as an external kernel
    (nothing to compile in C++ around it)."""
    torch._dynamo.reset()
    x, weight, bias, dy = ops.inputs(16, 50, "cpu")
    compiled = torch.compile(ops.layer_norm, fullgraph=True)  # a graph break raises
    _close(ops.gradients(compiled, x, weight, bias, dy),
           ops.gradients(ops.torch_layer_norm, x, weight, bias, dy))


def test_compiled_fullgraph_among_other_ops_and_new_shapes(numpy_backend):
    """In a graph with torch's own ops, and recompiled for a new shape with symbolic
    sizes, which only the fake implementations see (``aot_eager``: no C++ compiler)."""
    torch._dynamo.reset()

    def step(norm):
        return lambda x, weight, bias: norm(x * 2, weight, bias).relu() + x

    compiled = torch.compile(step(ops.layer_norm), fullgraph=True, backend="aot_eager")
    for rows in (12, 7):
        x, weight, bias, dy = ops.inputs(rows, 50, "cpu")
        _close(ops.gradients(compiled, x, weight, bias, dy),
               ops.gradients(step(ops.torch_layer_norm), x, weight, bias, dy))


def test_example_runs():
    r = subprocess.run([sys.executable, "examples/torch_custom_op.py", "--backend", "numpy",
                        "--rows", "8", "--cols", "24"], cwd=ROOT, capture_output=True,
                       check=False, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on numpy (eager, torch.compile(fullgraph=True)): OK" in r.stdout


# ---------------------------------------------------------------- ptx: a CUDA GPU

@pytest.fixture
def cuda():
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")


@pytest.mark.gpu
def test_cuda_tensors_eager_and_compiled(cuda):
    x, weight, bias, dy = ops.inputs(64, 300, "cuda")
    want = ops.gradients(ops.torch_layer_norm, x, weight, bias, dy)
    _close(ops.gradients(ops.layer_norm, x, weight, bias, dy), want)
    torch._dynamo.reset()
    compiled = torch.compile(ops.layer_norm, fullgraph=True)
    _close(ops.gradients(compiled, x, weight, bias, dy), want)


@pytest.mark.gpu
def test_cuda_graph_replays_forward_and_backward_on_new_inputs(cuda):
    x, weight, bias, dy = ops.inputs(64, 300, "cuda")
    new_x, _, _, new_dy = ops.inputs(64, 300, "cuda", seed=1)
    got = ops.cuda_graph_step(x, weight, bias, dy, new_x, new_dy)
    _close(got, ops.gradients(ops.torch_layer_norm, new_x, weight, bias, new_dy))
