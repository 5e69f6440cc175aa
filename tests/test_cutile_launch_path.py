"""The launch path of compiler.tile kernels: a launch like an earlier one reads its arrays'
dtype, shape, strides and address as attributes, with no DLPack capsule, CUDA array
interface or dtype lookup per launch (each costs microseconds, and small kernels are
launched as often as Triton's), and its launch key still tells apart what compiles
differently: an integer argument of 1 compiles as the constant."""

from collections import Counter

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from compiler import arrays
from compiler.jit import availability

C = ct.Constant[int]
N = 64


@ct.kernel
def scaled(a, out, k, TILE: C):
    t = ct.load(a, index=(ct.bid(0),), shape=(TILE,))
    ct.store(out, index=(ct.bid(0),), tile=t * k)


@ct.kernel
def added(a, b, c, TILE: C):
    i = ct.bid(0)
    ct.store(c, index=(i,), tile=ct.load(a, index=(i,), shape=(TILE,)) +
             ct.load(b, index=(i,), shape=(TILE,)))


def _scaled(kernel, k: int) -> np.ndarray:
    a = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    ct.launch(None, (N // 16,), kernel, (a, out, k, 16), backend="numpy")
    return out


def test_an_integer_of_1_and_then_of_3_launch_different_kernels():
    """1 compiles as the constant 1 (a unit stride vectorizes), so a later 3 must not
    launch that kernel."""
    assert _scaled(scaled, 1)[5] == 5
    assert _scaled(scaled, 3)[5] == 15


def test_an_integer_of_3_does_not_load_the_kernel_compiled_for_1(monkeypatch, tmp_path):
    """Nor may the disk cache give a new kernel object of the same function that one."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    assert _scaled(ct.kernel(scaled.fn), 1)[5] == 5
    assert _scaled(ct.kernel(scaled.fn), 3)[5] == 15


def test_launch_hints_are_keyed_by_their_values():
    """Triton's launch hints are checked on each new value (a launch like an earlier one
    checks nothing), and taken as Triton-style kernels take them: a dict included."""
    a, out = np.arange(N, dtype=np.float32), np.zeros(N, np.float32)
    ct.launch(None, (1,), scaled, (a, out, 2, N), backend="numpy", maxnreg=100)
    with pytest.raises(tc.LaunchError, match="maxnreg must be None or 1 to 255"):
        ct.launch(None, (1,), scaled, (a, out, 2, N), backend="numpy", maxnreg=1000)
    ct.launch(None, (1,), scaled, (a, out, 3, N), backend="numpy",
              extern_libs={"libdevice": "unread.bc"})
    assert out[5] == 15


def _counting(fn, counts: Counter, name: str):
    """``fn`` (a function, method or property getter), counting its calls in ``counts``."""
    def counted(*args, **kwargs):
        counts[name] += 1
        return fn(*args, **kwargs)
    return counted


def _calls_after_the_first_launch(counts: Counter, a, b, c, backend: str = "numpy") -> dict:
    """The counted calls of three launches of ``added`` after a first one (which
    specializes and compiles)."""
    ct.launch(None, (N // 16,), added, (a, b, c, 16), backend=backend)
    counts.clear()
    for _ in range(3):
        ct.launch(None, (N // 16,), added, (a, b, c, 16), backend=backend)
    return dict(counts)


def test_numpy_arrays_are_read_once_per_kind(monkeypatch, rng):
    """``host_array`` (the dtype lookup, the view of strided memory) runs for the first
    launch of a kind of array only; the results stay right, strided arrays included."""
    a = rng.standard_normal(2 * N, dtype=np.float32)[::2]  # strided: its span is passed
    b = rng.standard_normal(N, dtype=np.float32)
    c = np.zeros(N, np.float32)
    counts = Counter()
    monkeypatch.setattr(arrays, "host_array", _counting(arrays.host_array, counts, "host"))
    assert _calls_after_the_first_launch(counts, a, b, c) == {}
    np.testing.assert_array_equal(c, a + b)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def counted_interfaces(torch, monkeypatch):
    """torch's DLPack export and CUDA array interface, counted."""
    counts = Counter()
    for name in ("__dlpack__", "__dlpack_device__"):
        monkeypatch.setattr(torch.Tensor, name,
                            _counting(getattr(torch.Tensor, name), counts, name))
    interface = "__cuda_array_interface__"
    getter = _counting(getattr(torch.Tensor, interface).fget, counts, interface)
    monkeypatch.setattr(torch.Tensor, interface, property(getter))
    return counts


def test_torch_cpu_tensors_make_no_dlpack_capsule_per_launch(torch, counted_interfaces):
    a, b = torch.randn(N), torch.randn(2 * N)[::2]
    c = torch.zeros(N)
    assert _calls_after_the_first_launch(counted_interfaces, a, b, c) == {}
    torch.testing.assert_close(c, a + b)


def _as_cuda(torch, t):
    """A CPU tensor that says it is a CUDA tensor: the launch path takes it as one (its
    memory itself, or a 1-D tensor of its span), and the numpy backend still runs it."""

    class CudaLike(torch.Tensor):
        is_cuda = property(lambda self: True)
        is_cpu = property(lambda self: False)
        __torch_function__ = torch._C._disabled_torch_function_impl

    return t.as_subclass(CudaLike)


def test_cuda_tensors_make_no_cuda_array_interface_per_launch(torch, counted_interfaces):
    a, b, c = torch.randn(N), torch.randn(3 * N)[::3], torch.zeros(N)
    calls = _calls_after_the_first_launch(counted_interfaces,
                                          *(_as_cuda(torch, t) for t in (a, b, c)))
    assert "__cuda_array_interface__" not in calls  # (the numpy backend reads by DLPack)
    torch.testing.assert_close(c, a + b)


@pytest.mark.gpu
def test_ptx_launches_read_torch_tensors_by_attributes_gpu(torch, counted_interfaces):
    ok, why = availability("ptx")
    if not ok or not torch.cuda.is_available():
        pytest.skip(f"ptx: {why}")
    a, b = torch.randn(N, device="cuda"), torch.randn(2 * N, device="cuda")[::2]
    c = torch.zeros(N, device="cuda")
    assert _calls_after_the_first_launch(counted_interfaces, a, b, c, backend="ptx") == {}
    torch.testing.assert_close(c, a + b)
