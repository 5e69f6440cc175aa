"""Linear layers: ``out = x @ w.T + b`` with fused epilogues (GELU, saving the
pre-activation; a residual added), and their backward: ``dx = dy @ w`` (optionally times
GELU's derivative at the layer input's pre-activation) and ``dw += dy.T @ x``,
``db += dy`` summed over rows, in one kernel.

``x`` is (M, K) row-major, ``w`` (N, K) as PyTorch and llm.c keep it. Products go through
``tl.dot`` (tensor cores on ptx for bf16, f16 and, with ``precision="tf32"``, f32 inputs)
accumulating in f32; inputs may be float32 or bfloat16, outputs take their array's dtype.
Tiles are ordered in groups (``examples.matmul.tile_of``) so neighbouring programs share
operands in the cache. Parameter gradients accumulate (``+=``), as llm.c's do: the tied
``wte`` gets both the output head's and the embedding's share, and several backward passes
add up until the gradients are zeroed.
"""

from __future__ import annotations

import compiler as tc
import compiler.language as tl
from examples.gpt.shapes import expect, rows
from examples.matmul import tile_of

GELU_SCALE = 0.7978845608028654  # sqrt(2 / pi)
GELU_CUBE = 0.044715


@tc.func
def gelu(x):
    """GELU, tanh form."""
    return 0.5 * x * (1.0 + tl.tanh(GELU_SCALE * (x + GELU_CUBE * x * x * x)))


@tc.func
def gelu_grad(x):
    """d gelu(x) / dx."""
    t = tl.tanh(GELU_SCALE * (x + GELU_CUBE * x * x * x))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_SCALE * (1.0 + 3.0 * GELU_CUBE * x * x)


@tc.kernel
def linear_forward_kernel(x, w, b, res, pre, out, M, N, K, BM: tl.constexpr,
                          BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                          BIAS: tl.constexpr, GELU: tl.constexpr, RESIDUAL: tl.constexpr,
                          PRECISION: tl.constexpr):
    pm, pn = tile_of(tl.program_id(0), M, N, BM, BN, GROUP)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(x + rm[:, None] * K + ks[None, :],
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        wt = tl.load(w + rn[None, :] * K + ks[:, None],  # w.T's (BK, BN) tile
                     mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, wt, acc, input_precision=PRECISION)
    if BIAS:
        acc += tl.load(b + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    at = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if GELU:
        tl.store(pre + at, acc.to(pre.dtype), mask=mask)
        acc = gelu(acc)
    if RESIDUAL:
        acc += tl.load(res + at, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + at, acc.to(out.dtype), mask=mask)


@tc.kernel
def linear_backward_x_kernel(dy, w, pre, dx, M, N, K, BM: tl.constexpr, BK: tl.constexpr,
                             BN: tl.constexpr, GROUP: tl.constexpr, GELU: tl.constexpr,
                             PRECISION: tl.constexpr):
    pm, pk = tile_of(tl.program_id(0), M, K, BM, BK, GROUP)
    rm = pm * BM + tl.arange(0, BM)
    rk = pk * BK + tl.arange(0, BK)
    rn = tl.arange(0, BN)
    acc = tl.zeros((BM, BK), tl.float32)
    for n0 in range(0, N, BN):
        ns = n0 + rn
        g = tl.load(dy + rm[:, None] * N + ns[None, :],
                    mask=(rm[:, None] < M) & (ns[None, :] < N), other=0.0)
        wk = tl.load(w + ns[:, None] * K + rk[None, :],
                     mask=(ns[:, None] < N) & (rk[None, :] < K), other=0.0)
        acc = tl.dot(g, wk, acc, input_precision=PRECISION)
    at = rm[:, None] * K + rk[None, :]
    mask = (rm[:, None] < M) & (rk[None, :] < K)
    if GELU:
        acc *= gelu_grad(tl.load(pre + at, mask=mask, other=0.0).to(tl.float32))
    tl.store(dx + at, acc.to(dx.dtype), mask=mask)


@tc.kernel
def linear_backward_w_kernel(dy, x, dw, db, M, N, K, BN: tl.constexpr, BK: tl.constexpr,
                             BM: tl.constexpr, GROUP: tl.constexpr, BIAS: tl.constexpr,
                             PRECISION: tl.constexpr):
    pn, pk = tile_of(tl.program_id(0), N, K, BN, BK, GROUP)
    rn = pn * BN + tl.arange(0, BN)
    rk = pk * BK + tl.arange(0, BK)
    rm = tl.arange(0, BM)
    acc = tl.zeros((BN, BK), tl.float32)
    acc_b = tl.zeros((BN,), tl.float32)
    for m0 in range(0, M, BM):
        ms = m0 + rm
        gt = tl.load(dy + ms[None, :] * N + rn[:, None],  # dy.T's (BN, BM) tile
                     mask=(ms[None, :] < M) & (rn[:, None] < N), other=0.0)
        xs = tl.load(x + ms[:, None] * K + rk[None, :],
                     mask=(ms[:, None] < M) & (rk[None, :] < K), other=0.0)
        acc = tl.dot(gt, xs, acc, input_precision=PRECISION)
        if BIAS:
            acc_b += tl.sum(gt.to(tl.float32), axis=1)
    at = rn[:, None] * K + rk[None, :]
    mask = (rn[:, None] < N) & (rk[None, :] < K)
    tl.store(dw + at, (tl.load(dw + at, mask=mask, other=0.0) + acc).to(dw.dtype), mask=mask)
    if BIAS:
        # every column of tiles sums the same dy; the first one adds it (a mask, not a
        # branch on the program id, so the NumPy backend still runs all programs at once)
        first = (rn < N) & (pk == 0)
        tl.store(db + rn, (tl.load(db + rn, mask=first, other=0.0) + acc_b).to(db.dtype),
                 mask=first)


@tc.kernel
def gelu_backward_kernel(dout, pre, dpre, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(dout + offs, mask=mask, other=0.0).to(tl.float32)
    d = g * gelu_grad(tl.load(pre + offs, mask=mask, other=0.0).to(tl.float32))
    tl.store(dpre + offs, d.to(dpre.dtype), mask=mask)


def linear_forward(x, w, b, out, pre=None, residual=None, backend: str | None = None,
                   precision: str = "ieee", BM: int = 64, BN: int = 64, BK: int = 32,
                   num_warps: int = 4) -> None:
    """``out = x @ w.T + b`` (no bias when ``b`` is None); with ``pre``: ``pre`` gets
    that and ``out`` its GELU; with ``residual``: ``out`` gets ``residual`` added last."""
    N, K = w.shape
    M = rows(x, K)
    expect("out", out, (M, N))
    for name, a, shape in (("b", b, (N,)), ("pre", pre, (M, N)),
                           ("residual", residual, (M, N))):
        if a is not None:
            expect(name, a, shape)
    grid = (tc.cdiv(M, BM) * tc.cdiv(N, BN),)
    linear_forward_kernel[grid](
        x, w, x if b is None else b, x if residual is None else residual,
        out if pre is None else pre, out, M, N, K, BM=BM, BN=BN, BK=BK, GROUP=8,
        BIAS=b is not None, GELU=pre is not None, RESIDUAL=residual is not None,
        PRECISION=precision, backend=backend, num_warps=num_warps)


def linear_backward(dy, x, w, dx, dw, db=None, pre=None, backend: str | None = None,
                    precision: str = "ieee", BM: int = 64, BN: int = 64, BK: int = 32,
                    num_warps: int = 4) -> None:
    """``dx = dy @ w`` (times ``gelu_grad(pre)`` when ``pre``, the pre-activation whose
    GELU was ``x``, is given), ``dw += dy.T @ x``, ``db += dy`` summed over rows (no bias
    when ``db`` is None); ``dx`` None skips it (the first layer's input needs none)."""
    N, K = w.shape
    M = rows(x, K)
    expect("dy", dy, (M, N))
    expect("dw", dw, (N, K))
    for name, a, shape in (("dx", dx, (M, K)), ("db", db, (N,)), ("pre", pre, (M, K))):
        if a is not None:
            expect(name, a, shape)
    if dx is not None:
        linear_backward_x_kernel[(tc.cdiv(M, BM) * tc.cdiv(K, BK),)](
            dy, w, dx if pre is None else pre, dx, M, N, K, BM=BM, BK=BK, BN=BN, GROUP=8,
            GELU=pre is not None, PRECISION=precision, backend=backend, num_warps=num_warps)
    linear_backward_w_kernel[(tc.cdiv(N, BN) * tc.cdiv(K, BK),)](
        dy, x, dw, dw if db is None else db, M, N, K, BN=BN, BK=BK, BM=BM, GROUP=8,
        BIAS=db is not None, PRECISION=precision, backend=backend, num_warps=num_warps)


def gelu_backward(dout, pre, dpre, backend: str | None = None, BLOCK: int = 1024) -> None:
    """``dpre = dout * gelu_grad(pre)``, elementwise."""
    n = rows(pre) * pre.shape[-1]
    expect("dout", dout, tuple(pre.shape))
    expect("dpre", dpre, tuple(pre.shape))
    gelu_backward_kernel[(tc.cdiv(n, BLOCK),)](dout, pre, dpre, n, BLOCK=BLOCK,
                                               backend=backend)
