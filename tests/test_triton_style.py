"""``examples/triton_port.py``'s kernels, written as Triton's tutorials write them (the same
text runs under Triton), on every backend against NumPy, at sizes and edges its own run
does not try."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from examples.triton_port import (
    attention_fwd,
    attention_reference,
    layer_norm_rows,
    running_sum,
    seeded_dropout,
    softmax_rows,
)
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


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_tutorial_form(backend, causal):
    """Block pointers advanced in a loop, a @jit function called by the kernel, int64 head
    offsets (two 32-bit words on WGSL), seq_len 96 and 3 heads."""
    args = _attention_args(causal)
    q, k, v, out = args[0], args[1], args[2], args[5]
    if launch(attention_fwd, (3, 6), *args[:-1], backend=backend, HEAD_DIM=32, BLOCK_M=32,
              BLOCK_N=32, CAUSAL=causal):
        np.testing.assert_allclose(out, attention_reference(q, k, v, causal), atol=2e-2)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_tutorial_form_copies_k_and_v_to_wgmma(causal):
    """At Hopper's sizes (BLOCK_N 64, 8 warps): K, which reaches its dot through a
    transpose, and V are copied by cp.async into swizzled stages that wgmma reads (Q and P
    from registers); run where there is a GPU."""
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((1, 2, 256, 64)).astype(np.float16) for _ in range(3))
    out, lse = np.zeros_like(q), np.zeros((2, 256), np.float32)
    args = (q, k, v, 0.125, lse, out, *[s // 2 for s in q.strides], 2, 256)
    consts = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": causal}
    ptx = attention_fwd.compile_for(attention_fwd.bind(args, consts), "ptx", 8, False,
                                    num_stages=3).asm["ptx"]
    loop = ptx[ptx.index("$L__for1:"):ptx.index("$L__for1_end:")]
    assert "cp.async.cg.shared.global" in loop and "wgmma.mma_async" in loop
    assert "ld.global" not in loop
    if launch(attention_fwd, (2, 2), *args, backend="ptx", num_warps=8, num_stages=3, **consts):
        np.testing.assert_allclose(out, attention_reference(q, k, v, causal), atol=2e-2)


def _attention_args(causal: bool) -> tuple:
    rng = np.random.default_rng(int(causal))
    q, k, v = (rng.standard_normal((2, 3, 96, 32)).astype(np.float16) for _ in range(3))
    out, lse = np.zeros_like(q), np.zeros((6, 96), np.float32)
    strides = [s // 2 for s in q.strides]
    return (q, k, v, 32 ** -0.5, lse, out, *strides, 3, 96, causal)


@tc.kernel
def _scale(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


@tc.kernel
def _calls_a_kernel(x, out, n, BLOCK: tl.constexpr):
    """A kernel calling another one, inlined (a @triton.jit function is both)."""
    _scale(x, out, n, BLOCK)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(out + offs, mask=offs < n)
    tl.store(out + offs, y.to(out.type.element_ty) + 1, mask=offs < n)


def test_a_kernel_called_from_a_kernel(backend):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    if launch(_calls_a_kernel, (2,), x, out, 100, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(out, 2 * x + 1)
