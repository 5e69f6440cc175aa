"""Linear layers: ``out = x @ w.T + b`` with fused epilogues (GELU, saving the
pre-activation; a residual added), and their backward: ``dx = dy @ w`` (optionally times
GELU's derivative at the layer input's pre-activation), ``dw += dy.T @ x`` and
``db += dy`` summed over rows.

``x`` is (M, K) row-major, ``w`` (N, K) as PyTorch and llm.c keep it; ``out``, and ``dy``
in the backward, may store their rows ``shapes.padded_width(N)`` long (the output head's,
whose vocabulary of 50257 would leave rows unaligned for TMA). Products go through
``tl.dot`` (tensor cores on ptx for bf16, f16 and, with ``precision="tf32"``, f32 inputs)
accumulating in f32; inputs may be float32 or bfloat16, outputs take their array's dtype.
Tiles are ordered in groups (``examples.matmul.tile_of``) so neighbouring programs share
operands in the cache. Parameter gradients accumulate (``+=``), as llm.c's do: the tied
``wte`` gets both the output head's and the embedding's share, and several backward passes
add up until the gradients are zeroed.

Operands are read through tensor descriptors: on Hopper, 16-bit ones are copied by TMA
into swizzled stages that wgmma reads in place (``w``'s rows transposed as the forward's
B, ``dy``'s as ``dw``'s A), and elsewhere the same loads are pointers and masks. The
product of ``dw`` sums over all M rows into a small matrix (768 x 768 is 36 tiles of
128 x 128 for 132 SMs), so it is split along M over ``split`` programs per tile, which add
their shares atomically. ``db`` is its own kernel (column sums of ``dy``, also split):
in the product's loop ``dy`` waits in a stage only the tensor cores read. Tile shapes come
from ``matmul_configs``.
"""

from __future__ import annotations

import compiler as tc
import compiler.language as tl
from examples.gpt.matmul_configs import (
    backward_w_config,
    backward_x_config,
    bias_config,
    forward_config,
)
from examples.gpt.shapes import expect, row_length, rows
from examples.matmul import tile_of

GELU_SCALE = 0.7978845608028654  # sqrt(2 / pi)
GELU_CUBE = 0.044715
LOG2E = 1.4426950408889634


@tc.func
def gelu_sigmoid(x):
    """``(1 + tanh(u)) / 2`` of GELU's ``u = GELU_SCALE (x + GELU_CUBE x^3)``: the sigmoid
    of ``2 u``, its reciprocal as ``exp2(-log2(.))``: two approximate instructions on
    ptx, where a rounded division is an f64 sequence per element in a kernel with wgmma
    (which a call would serialize), enough to spill a 128 x 128 epilogue."""
    e = tl.exp2(-2.0 * LOG2E * GELU_SCALE * (x + GELU_CUBE * x * x * x))
    return tl.exp2(-tl.log2(1.0 + e))


@tc.func
def gelu(x):
    """GELU, tanh form."""
    return x * gelu_sigmoid(x)


@tc.func
def gelu_grad(x):
    """d gelu(x) / dx."""
    s = gelu_sigmoid(x)
    return s + 2.0 * x * s * (1.0 - s) * GELU_SCALE * (1.0 + 3.0 * GELU_CUBE * x * x)


@tc.func
def matrix(a, R, C, LD, BR: tl.constexpr, BC: tl.constexpr):
    """The row-major (R, C) matrix at ``a``, its rows LD apart, as a descriptor of (BR, BC)
    tiles."""
    return tl.make_tensor_descriptor(a, shape=[R, C], strides=[LD, 1], block_shape=[BR, BC])


@tc.kernel
def linear_forward_kernel(x, w, b, res, pre, out, M, N, K, LDO, BM: tl.constexpr,
                          BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                          BIAS: tl.constexpr, GELU: tl.constexpr, RESIDUAL: tl.constexpr,
                          PRECISION: tl.constexpr):
    pm, pn = tile_of(tl.program_id(0), M, N, BM, BN, GROUP)
    xs, ws = matrix(x, M, K, K, BM, BK), matrix(w, N, K, K, BN, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        # w.T's (BK, BN) tile: w's rows, which wgmma reads K-major where TMA put them
        acc = tl.dot(xs.load([pm * BM, k0]), tl.trans(ws.load([pn * BN, k0])), acc,
                     input_precision=PRECISION)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    if BIAS:
        acc += tl.load(b + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    at = rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if GELU:  # the last store goes by TMA: the pre-activation, f32 in the model
        tl.store(out + rm[:, None] * LDO + rn[None, :], gelu(acc).to(out.dtype), mask=mask)
        matrix(pre, M, N, N, BM, BN).store([pm * BM, pn * BN], acc.to(pre.dtype))
    else:
        if RESIDUAL:
            acc += tl.load(res + at, mask=mask, other=0.0).to(tl.float32)
        matrix(out, M, N, LDO, BM, BN).store([pm * BM, pn * BN], acc.to(out.dtype))


@tc.kernel
def linear_backward_x_kernel(dy, w, pre, dx, M, N, K, LDY, BM: tl.constexpr,
                             BK: tl.constexpr,
                             BN: tl.constexpr, GROUP: tl.constexpr, GELU: tl.constexpr,
                             PRECISION: tl.constexpr):
    pm, pk = tile_of(tl.program_id(0), M, K, BM, BK, GROUP)
    gs, ws = matrix(dy, M, N, LDY, BM, BN), matrix(w, N, K, K, BN, BK)
    acc = tl.zeros((BM, BK), tl.float32)
    for n0 in range(0, N, BN):
        acc = tl.dot(gs.load([pm * BM, n0]), ws.load([n0, pk * BK]), acc,
                     input_precision=PRECISION)
    if GELU:
        rm = pm * BM + tl.arange(0, BM)
        rk = pk * BK + tl.arange(0, BK)
        at = rm[:, None] * K + rk[None, :]
        mask = (rm[:, None] < M) & (rk[None, :] < K)
        acc *= gelu_grad(tl.load(pre + at, mask=mask, other=0.0).to(tl.float32))
    matrix(dx, M, K, K, BM, BK).store([pm * BM, pk * BK], acc.to(dx.dtype))


@tc.func
def split_rows(M, BM: tl.constexpr):
    """The first row and the number of rows of M that this program's split
    (``program_id(1)`` of ``num_programs(1)``) sums: whole BM-row blocks, the same count in
    every split (the last one's past M are zeros), so that the NumPy backend still runs
    all programs at once."""
    share = tl.cdiv(tl.cdiv(M, BM), tl.num_programs(1)) * BM
    return tl.program_id(1) * share, share


@tc.kernel
def linear_backward_w_kernel(dy, x, dw, M, N, K, LDY, BN: tl.constexpr, BK: tl.constexpr,
                             BM: tl.constexpr, GROUP: tl.constexpr, ATOMIC: tl.constexpr,
                             PRECISION: tl.constexpr):
    pn, pk = tile_of(tl.program_id(0), N, K, BN, BK, GROUP)
    gs, xs = matrix(dy, M, N, LDY, BM, BN), matrix(x, M, K, K, BM, BK)
    first, share = split_rows(M, BM)
    acc = tl.zeros((BN, BK), tl.float32)
    for m0 in range(0, share, BM):
        # dy.T's (BN, BM) tile: dy's rows, which wgmma takes as A through ldmatrix.trans
        acc = tl.dot(tl.trans(gs.load([first + m0, pn * BN])), xs.load([first + m0, pk * BK]),
                     acc, input_precision=PRECISION)
    rn = pn * BN + tl.arange(0, BN)
    rk = pk * BK + tl.arange(0, BK)
    at = rn[:, None] * K + rk[None, :]
    mask = (rn[:, None] < N) & (rk[None, :] < K)
    if ATOMIC:  # several splits add into the same tile
        tl.atomic_add(dw + at, acc, mask=mask, sem="relaxed")
    else:
        tl.store(dw + at, (tl.load(dw + at, mask=mask, other=0.0) + acc).to(dw.dtype),
                 mask=mask)


@tc.kernel
def bias_backward_kernel(dy, db, M, N, LDY, BM: tl.constexpr, BN: tl.constexpr,
                         ATOMIC: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    first, share = split_rows(M, BM)
    acc = tl.zeros((BN,), tl.float32)
    for m0 in tl.range(0, share, BM, num_stages=3):
        rm = first + m0 + tl.arange(0, BM)
        g = tl.load(dy + rm[:, None] * LDY + rn[None, :],
                    mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(g.to(tl.float32), axis=0)
    if ATOMIC:
        tl.atomic_add(db + rn, acc, mask=rn < N, sem="relaxed")
    else:
        tl.store(db + rn, (tl.load(db + rn, mask=rn < N, other=0.0) + acc).to(db.dtype),
                 mask=rn < N)


@tc.kernel
def gelu_backward_kernel(dout, pre, dpre, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(dout + offs, mask=mask, other=0.0).to(tl.float32)
    d = g * gelu_grad(tl.load(pre + offs, mask=mask, other=0.0).to(tl.float32))
    tl.store(dpre + offs, d.to(dpre.dtype), mask=mask)


def linear_forward(x, w, b, out, pre=None, residual=None, backend: str | None = None,
                   precision: str = "ieee", **tiles) -> None:
    """``out = x @ w.T + b`` (no bias when ``b`` is None); with ``pre``: ``pre`` gets
    that and ``out`` its GELU; with ``residual``: ``out`` gets ``residual`` added last.
    ``tiles`` (BM, BN, BK, num_warps, num_stages) replace ``forward_config``'s."""
    N, K = w.shape
    M = rows(x, K)
    ldo = row_length("out", out, (M, N))
    for name, a, shape in (("b", b, (N,)), ("pre", pre, (M, N)),
                           ("residual", residual, (M, N))):
        if a is not None:
            expect(name, a, shape)
    epilogue = "gelu" if pre is not None else "residual" if residual is not None else ""
    c = forward_config(M, N, K, x, backend, ldo, epilogue, **tiles)
    linear_forward_kernel[(tc.cdiv(M, c.BM) * tc.cdiv(N, c.BN),)](
        x, w, x if b is None else b, x if residual is None else residual,
        out if pre is None else pre, out, M, N, K, ldo, BM=c.BM, BN=c.BN, BK=c.BK, GROUP=8,
        BIAS=b is not None, GELU=pre is not None, RESIDUAL=residual is not None,
        PRECISION=precision, backend=backend, num_warps=c.num_warps,
        num_stages=c.num_stages)


def linear_backward(dy, x, w, dx, dw, db=None, pre=None, backend: str | None = None,
                    precision: str = "ieee", **tiles) -> None:
    """``dx = dy @ w`` (times ``gelu_grad(pre)`` when ``pre``, the pre-activation whose
    GELU was ``x``, is given), ``dw += dy.T @ x``, ``db += dy`` summed over rows (no bias
    when ``db`` is None); ``dx`` None skips it (the first layer's input needs none).
    ``tiles`` (BM, BN, BK, num_warps, num_stages, split) replace the configs' for every
    product."""
    N, K = w.shape
    row_length("dy", dy, (rows(x, K), N))
    expect("dw", dw, (N, K))
    if dx is not None:
        linear_backward_x(dy, w, dx, pre, backend, precision, **tiles)
    linear_backward_w(dy, x, dw, db, backend, precision, **tiles)


def linear_backward_x(dy, w, dx, pre=None, backend: str | None = None,
                      precision: str = "ieee", **tiles) -> None:
    """``dx = dy @ w``, times ``gelu_grad(pre)`` when ``pre`` is given."""
    N, K = w.shape
    M = rows(dx, K)
    ldy = row_length("dy", dy, (M, N))
    if pre is not None:
        expect("pre", pre, (M, K))
    c = backward_x_config(M, N, K, dy, backend, pre is not None, ldy, **tiles)
    linear_backward_x_kernel[(tc.cdiv(M, c.BM) * tc.cdiv(K, c.BK),)](
        dy, w, dx if pre is None else pre, dx, M, N, K, ldy, BM=c.BM, BK=c.BK, BN=c.BN,
        GROUP=8,
        GELU=pre is not None, PRECISION=precision, backend=backend, num_warps=c.num_warps,
        num_stages=c.num_stages)


def linear_backward_w(dy, x, dw, db=None, backend: str | None = None,
                      precision: str = "ieee", **tiles) -> None:
    """``dw += dy.T @ x`` and ``db += dy`` summed over rows (no bias when ``db`` is None)."""
    N, K = dw.shape
    M = rows(x, K)
    ldy = row_length("dy", dy, (M, N))
    if db is not None:
        expect("db", db, (N,))
    c = backward_w_config(M, N, K, dy, backend, ldy, **tiles)
    linear_backward_w_kernel[(tc.cdiv(N, c.BN) * tc.cdiv(K, c.BK), c.split)](
        dy, x, dw, M, N, K, ldy, BN=c.BN, BK=c.BK, BM=c.BM, GROUP=8, ATOMIC=c.split > 1,
        PRECISION=precision, backend=backend, num_warps=c.num_warps,
        num_stages=c.num_stages)
    if db is not None:
        c = bias_config(M, ldy, dy, backend, tiles.get("split"))
        bias_backward_kernel[(tc.cdiv(N, c.BN), c.split)](
            dy, db, M, N, ldy, BM=c.BM, BN=c.BN, ATOMIC=c.split > 1, backend=backend,
            num_warps=c.num_warps)


def gelu_backward(dout, pre, dpre, backend: str | None = None, BLOCK: int = 1024) -> None:
    """``dpre = dout * gelu_grad(pre)``, elementwise."""
    n = rows(pre) * pre.shape[-1]
    expect("dout", dout, tuple(pre.shape))
    expect("dpre", dpre, tuple(pre.shape))
    gelu_backward_kernel[(tc.cdiv(n, BLOCK),)](dout, pre, dpre, n, BLOCK=BLOCK,
                                               backend=backend)
