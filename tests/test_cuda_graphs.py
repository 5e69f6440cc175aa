"""tilec PTX launches captured in a CUDA graph (``torch.cuda.graph``) and replayed.

Capture records launches without running them; a replay runs them again on whatever the
captured tensors hold then, so the inputs are changed in place between replays.
"""

import pytest

import compiler as tc
from compiler.jit import availability
from examples.vector_add import add

pytestmark = pytest.mark.gpu
N = 10_000


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def _add(x, y, out, block):
    add[(tc.cdiv(N, block),)](x, y, out, N, BLOCK=block, backend="ptx")


def _capture_chain(torch, x, y, tmp, out, block):
    """A graph of three dependent launches: out = ((x + y) + y) * 2, the last in place."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        _add(x, y, tmp, block)
        _add(tmp, y, out, block)
        _add(out, out, out, block)
    return graph


def _replay_and_check(torch, graph, x, y, out):
    for _ in range(2):
        x.copy_(torch.randn(N, device="cuda"))
        y.copy_(torch.randn(N, device="cuda"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, ((x + y) + y) * 2, rtol=0, atol=0)


def _tensors(torch):
    return [torch.randn(N, device="cuda") for _ in range(2)] + [
        torch.empty(N, device="cuda") for _ in range(2)]


def test_graph_of_warmed_up_launches_replays_on_new_inputs(torch):
    x, y, tmp, out = _tensors(torch)
    side = torch.cuda.Stream()  # warm up off the default stream, as torch's docs do
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        _add(x, y, tmp, 1024)
    torch.cuda.current_stream().wait_stream(side)
    graph = _capture_chain(torch, x, y, tmp, out, 1024)
    _replay_and_check(torch, graph, x, y, out)


def test_first_launch_inside_capture_compiles_and_loads(torch):
    """A specialization first seen during capture: compiling touches no stream and the
    launcher loads its module in the relaxed capture mode."""
    x, y, tmp, out = _tensors(torch)
    graph = _capture_chain(torch, x, y, tmp, out, 256)
    _replay_and_check(torch, graph, x, y, out)
