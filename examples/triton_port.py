"""Kernels written the way Triton's tutorials write them, ported by changing two imports:
``as_triton()`` loads this very file with ``import triton.language as tl`` and ``from
triton import jit`` instead of the two lines below, so the same text runs under both.

The idioms a tile compiler must get right (and fast) to take such code as it is: a
persistent loop over rows with ``tl.range(..., num_stages=)`` and a constexpr passed by
position, pointer arguments advanced in place (``X += row * stride``), an accumulator
first bound to a Python number, column blocks in ``for`` loops, ``tl.rand`` dropout, a
pointer carried by a ``while`` loop, and the fused-attention tutorial's forward: block
pointers advanced in the loop, a ``@jit`` function called from the kernel, a branch in the
loop binding the same names, ``x: tl.constexpr = ...``, ``Out.type.element_ty``.

    python examples/triton_port.py [--backend ptx|wgsl|numpy|auto]
"""

import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

import compiler.jit
import compiler.language as tl
from compiler import kernel as jit
from compiler.cli import reported_errors, script_parser

_IMPORTS = ("import compiler.language as tl\nfrom compiler import kernel as jit\n",
            "import triton.language as tl\nfrom triton import jit\n")


@jit
def softmax_rows(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                 BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    """Rows ``pid, pid + programs, ...`` of a persistent grid."""
    first, step = tl.program_id(0), tl.num_programs(0)
    for row in tl.range(first, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@jit
def layer_norm_rows(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """A row per program, in column blocks: mean, variance, then the normalized row."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc2 += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc2, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * tl.load(W + cols, mask=mask) + tl.load(B + cols, mask=mask)
        tl.store(Y + cols, y, mask=mask)


@jit
def seeded_dropout(x_ptr, out_ptr, n, p, seed, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@jit
def running_sum(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    """The sum of ``n`` values by one program: a pointer and a count carried by a loop."""
    p = x_ptr
    total = 0.0
    done = 0
    while done < n:
        cols = tl.arange(0, BLOCK_SIZE)
        total += tl.sum(tl.load(p + cols, mask=done + cols < n, other=0.0), axis=0)
        p += BLOCK_SIZE
        done += BLOCK_SIZE
    tl.store(out_ptr, total)


@jit
def attention_inner(acc, l_i, m_i, q, K_block, V_block, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr, offs_m: tl.constexpr, offs_n: tl.constexpr,
                    N_CTX: tl.constexpr):
    """Keys and values block by block into the online softmax; on and past the diagonal
    block (causal) the scores are masked. A ``@jit`` function called by a kernel."""
    diagonal = start_m * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, N_CTX, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        qk = tl.dot(q, tl.load(K_block))
        if start_n >= diagonal:
            visible = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(visible, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V_block)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
        K_block = tl.advance(K_block, (0, BLOCK_N))
        V_block = tl.advance(V_block, (BLOCK_N, 0))
    return acc, l_i, m_i


@jit
def attention_fwd(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_m, stride_d, H,
                  N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Flash attention forward as Triton's fused-attention tutorial writes it: block
    pointers (K read transposed through its ``order``), int64 head offsets, exp2 with the
    scale folded in, and the row's log-sum-exp stored to ``M``."""
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    head = (off_hz // H).to(tl.int64) * stride_z + (off_hz % H).to(tl.int64) * stride_h
    rows: tl.constexpr = (1, 0)
    Q_block = tl.make_block_ptr(base=Q + head, shape=(N_CTX, HEAD_DIM),
                                strides=(stride_m, stride_d), offsets=(start_m * BLOCK_M, 0),
                                block_shape=(BLOCK_M, HEAD_DIM), order=rows)
    K_block = tl.make_block_ptr(base=K + head, shape=(HEAD_DIM, N_CTX),
                                strides=(stride_d, stride_m), offsets=(0, 0),
                                block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    V_block = tl.make_block_ptr(base=V + head, shape=(N_CTX, HEAD_DIM),
                                strides=(stride_m, stride_d), offsets=(0, 0),
                                block_shape=(BLOCK_N, HEAD_DIM), order=rows)
    O_block = tl.make_block_ptr(base=Out + head, shape=(N_CTX, HEAD_DIM),
                                strides=(stride_m, stride_d), offsets=(start_m * BLOCK_M, 0),
                                block_shape=(BLOCK_M, HEAD_DIM), order=rows)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1 / ln(2): exp2 instead of exp
    acc, l_i, m_i = attention_inner(acc, l_i, m_i, tl.load(Q_block), K_block, V_block,
                                    start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, CAUSAL,
                                    offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(O_block, (acc / l_i[:, None]).to(Out.type.element_ty))


def attention_reference(q, k, v, causal: bool) -> np.ndarray:
    s = q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True) @ v.astype(np.float64)


def as_triton():
    """This module with Triton's imports in place of tilec's (the same kernel text)."""
    text = Path(__file__).read_text()
    assert text.count(_IMPORTS[0]) == 1
    path = Path(tempfile.mkdtemp(prefix="triton_port_")) / "triton_port_triton.py"
    path.write_text(text.replace(_IMPORTS[0], _IMPORTS[1]))
    spec = importlib.util.spec_from_file_location("triton_port_triton", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton reads the kernels' source through it
    spec.loader.exec_module(module)
    return module


def run_all(backend: str | None = None) -> None:
    """Each kernel once on ``backend``, checked against NumPy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 300)).astype(np.float32)
    out = np.full_like(x, np.nan)
    softmax_rows[(8,)](out, x, 300, 300, 37, 300, 512, 2, backend=backend)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    w, b = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    mean, rstd = np.zeros(37, np.float32), np.zeros(37, np.float32)
    layer_norm_rows[(37,)](x, out, w, b, mean, rstd, 300, 300, 1e-5, BLOCK_SIZE=128,
                           backend=backend)
    want = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, want * w + b, rtol=1e-4, atol=1e-4)
    v = np.arange(1, 1001, dtype=np.float32)
    kept = np.full_like(v, np.nan)
    seeded_dropout[(4,)](v, kept, 1000, 0.5, 123, BLOCK_SIZE=256, backend=backend)
    assert ((kept == 0) | (kept == 2 * v)).all() and 0.4 < (kept != 0).mean() < 0.6
    total = np.zeros(1, np.float32)
    running_sum[(1,)](v, total, 1000, BLOCK_SIZE=256, backend=backend)
    np.testing.assert_allclose(total[0], v.sum(), rtol=1e-6)
    for causal in (False, True):
        q, k, vv = (rng.standard_normal((2, 2, 128, 64)).astype(np.float16) for _ in range(3))
        o, lse = np.zeros_like(q), np.zeros((4, 128), np.float32)
        strides = [s // 2 for s in q.strides]
        attention_fwd[(2, 4)](q, k, vv, 0.125, lse, o, *strides, 2, 128, HEAD_DIM=64,
                              BLOCK_M=64, BLOCK_N=32, CAUSAL=causal, backend=backend)
        np.testing.assert_allclose(o, attention_reference(q, k, vv, causal), atol=2e-2)
    print("triton_port: softmax_rows, layer_norm_rows, seeded_dropout, running_sum, "
          f"attention_fwd on {compiler.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    with reported_errors():
        run_all(p.parse_args().backend)
