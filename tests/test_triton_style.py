"""``examples/triton_port.py``'s kernels, written as Triton's tutorials write them (the same
text runs under Triton), on every backend against NumPy, at sizes and edges its own run
does not try."""

import numpy as np
import pytest

import compiler as tc
from examples.triton_port import layer_norm_rows, running_sum, seeded_dropout, softmax_rows
from tests.conftest import launch


def test_softmax_persistent_rows(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 300)).astype(np.float32)
    out = np.full_like(x, np.nan)
    # the constexpr ``num_stages`` is passed by position, as the tutorial does
    if launch(softmax_rows, (8,), out, x, x.shape[1], out.shape[1], *x.shape, 512, 2,
              backend=backend):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                                   atol=1e-7)


def test_layer_norm_rows(backend):
    rng = np.random.default_rng(1)
    rows, n = 6, 1000
    x = rng.standard_normal((rows, n)).astype(np.float32)
    w, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    y = np.full_like(x, np.nan)
    mean, rstd = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    if launch(layer_norm_rows, (rows,), x, y, w, b, mean, rstd, n, n, 1e-5, backend=backend,
              BLOCK_SIZE=256):
        mu, var = x.mean(axis=1), x.var(axis=1)
        np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rstd, 1 / np.sqrt(var + 1e-5), rtol=1e-4)
        want = (x - mu[:, None]) / np.sqrt(var[:, None] + 1e-5) * w + b
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def test_seeded_dropout_is_reproducible(backend):
    x = np.arange(1, 1001, dtype=np.float32)
    outs = []
    for seed in (123, 123, 7):
        out = np.full_like(x, np.nan)
        if not launch(seeded_dropout, (tc.cdiv(x.size, 256),), x, out, x.size, 0.5, seed,
                      backend=backend, BLOCK_SIZE=256):
            return
        outs.append(out)
    assert np.array_equal(outs[0], outs[1]) and not np.array_equal(outs[0], outs[2])
    kept = outs[0] != 0
    np.testing.assert_allclose(outs[0][kept], 2 * x[kept], rtol=1e-6)
    assert 0.4 < kept.mean() < 0.6


@pytest.mark.parametrize("n", [1, 256, 1000])
def test_pointer_carried_by_while(backend, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    if launch(running_sum, (1,), x, out, n, backend=backend, BLOCK_SIZE=256):
        np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5, atol=1e-5)
