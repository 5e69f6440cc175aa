"""The launch path of compiler.tile kernels: its launch key tells apart what compiles
differently: an integer argument of 1 compiles as the constant."""

import numpy as np

import compiler.tile as ct

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
