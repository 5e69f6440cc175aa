"""Kernels of 2-D and 3-D tiles for tests/test_shapes.py: masked copies, broadcasting,
shape builtins, transposes through tl.trans and .T."""

import compiler as tc
import compiler.language as tl


@tc.kernel
def copy2d(x, y, M, N, sx, sy, BM: tl.constexpr, BN: tl.constexpr):
    """y[m, n] = x[m, n] * 3 over a grid of (BM, BN) tiles, masked at the edges."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    v = tl.load(x + offs_m[:, None] * sx + offs_n[None, :], mask=mask, other=0)
    tl.store(y + offs_m[:, None] * sy + offs_n[None, :], v * 3, mask=mask)


@tc.kernel
def outer(x, y, out, M, N, OP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """out[m, n] = x[m] (op) y[n]: a column and a row broadcast against each other."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    a = tl.load(x + offs_m, mask=offs_m < M, other=0)
    b = tl.load(y + offs_n, mask=offs_n < N, other=0)
    if OP == "add":
        r = a[:, None] + b[None, :]
    elif OP == "mul":
        r = tl.expand_dims(a, 1) * tl.expand_dims(b, 0)
    elif OP == "where":
        r = tl.where(offs_m[:, None] >= offs_n[None, :], a[:, None], b)
    else:
        tl.static_assert(False, "unknown OP")
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(out + offs_m[:, None] * N + offs_n[None, :], r, mask=mask)


@tc.kernel
def transpose(x, y, M, N, HOW: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """y = x.T for an (M, N) x, by tiles: load (BM, BN), store its transpose."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    v = tl.load(x + offs_m[:, None] * N + offs_n[None, :], mask=mask)
    p = y + offs_n[:, None] * M + offs_m[None, :]
    if HOW == "T":
        t, tmask = v.T, mask.T
    elif HOW == "trans":
        t, tmask = tl.trans(v), tl.trans(mask)
    elif HOW == "pointers":  # a pointer tile transposed along with the values
        p = tl.trans(y + offs_n[None, :] * M + offs_m[:, None])
        t, tmask = v.T, mask.T
    else:
        t, tmask = tl.permute(v, (1, 0)), tl.permute(mask, 1, 0)
    tl.store(p, t, mask=tmask)


@tc.kernel
def shape_ops(x, out, n, BM: tl.constexpr, BN: tl.constexpr):
    """A 1-D block as a (BM, BN) matrix: plus its row index times 1000 (broadcast_to of a
    column), plus its first row (a row broadcast), back to 1-D with ravel/reshape."""
    base = tl.program_id(0) * BM * BN
    offs = base + tl.arange(0, BM * BN)
    v = tl.reshape(tl.load(x + offs, mask=offs < n, other=0), (BM, BN))
    rows = tl.broadcast_to(tl.expand_dims(tl.arange(0, BM), 1), BM, BN)
    first = tl.reshape(tl.load(x + base + tl.arange(0, BN)), 1, BN)
    r = v + rows * 1000 + first
    tl.store(out + offs, tl.ravel(r), mask=offs < n)


@tc.kernel
def cube(x, y, A, B, C, BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    """3-D tiles: y[c, a, b] = x[a, b, c] + a (x is (A, B, C), y is (C, A, B))."""
    a = tl.program_id(0) * BA + tl.arange(0, BA)
    b = tl.program_id(1) * BB + tl.arange(0, BB)
    c = tl.program_id(2) * BC + tl.arange(0, BC)
    ia, ib, ic = a[:, None, None], b[None, :, None], c[None, None, :]
    mask = (ia < A) & (ib < B) & (ic < C)
    v = tl.load(x + (ia * B + ib) * C + ic, mask=mask, other=0) + ia
    w = tl.trans(v, 2, 0, 1)
    tl.store(y + (ic.trans(2, 0, 1) * A + ia.trans(2, 0, 1)) * B + ib.trans(2, 0, 1), w,
             mask=tl.permute(mask, (2, 0, 1)))


@tc.kernel
def accumulate(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """2-D zeros/full, a 2-D loop-free accumulation and a 1-D pointer tile broadcast."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    rows = x + offs_m * N  # a 1-D tile of pointers, broadcast below
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    acc = tl.zeros((BM, BN), tl.float32) + tl.full([BM, BN], 0.5, tl.float32)
    acc += tl.load(rows[:, None] + offs_n[None, :], mask=mask, other=0.0)
    tl.store(out + offs_m[:, None] * N + offs_n, acc, mask=mask)


@tc.kernel
def pairwise(x, out, n, BLOCK: tl.constexpr):
    """out[i, j] = x[i] - x[j]: one loaded tile needed as a column and as a row."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0)
    r = v[:, None] - v[None, :]
    tl.store(out + offs[:, None] * n + offs[None, :], r,
             mask=(offs[:, None] < n) & (offs[None, :] < n))


@tc.kernel
def broadcast3d(x, y, z, out, A, B, C, BA: tl.constexpr, BB: tl.constexpr,
                BC: tl.constexpr):
    """out[a, b, c] = x[a] * 100 + y[b] * 10 + z[c], one program per (BA, BB, BC) block."""
    a = tl.program_id(0) * BA + tl.arange(0, BA)
    b = tl.program_id(1) * BB + tl.arange(0, BB)
    c = tl.program_id(2) * BC + tl.arange(0, BC)
    va = tl.load(x + a, mask=a < A, other=0)
    vb = tl.load(y + b, mask=b < B, other=0)
    vc = tl.load(z + c, mask=c < C, other=0)
    r = va[:, None, None] * 100 + vb[None, :, None] * 10 + vc[None, None, :]
    mask = (a[:, None, None] < A) & (b[None, :, None] < B) & (c[None, None, :] < C)
    tl.store(out + (a[:, None, None] * B + b[None, :, None]) * C + c[None, None, :], r,
             mask=mask)


@tc.kernel
def row_center(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """out = x - row means: a reduction's slice layout meets expand_dims."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    v = tl.load(x + offs_m[:, None] * N + offs_n[None, :], mask=mask, other=0.0)
    mean = tl.sum(v, axis=1) / N
    tl.store(out + offs_m[:, None] * N + offs_n[None, :], v - mean[:, None], mask=mask)
    tl.store(out + M * N + offs_m, mean, mask=offs_m < M)


@tc.kernel
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b by broadcasting: a (BM, BK, 1) times b (1, BK, BN) summed over axis 1, in a
    loop over K (every tile a slice of one 3-D layout: no conversions)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        offs_k = k0 + tl.arange(0, BK)
        x = tl.load(a + offs_m[:, None] * K + offs_k[None, :],
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        y = tl.load(b + offs_k[:, None] * N + offs_n[None, :],
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.sum(x[:, :, None] * y[None, :, :], axis=1)
    tl.store(c + offs_m[:, None] * N + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@tc.kernel
def subscripts(x, out, BLOCK: tl.constexpr):
    """``None``, ``:`` and ``...`` in tile subscripts; a 3-D tile reshaped back."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    r = (v[None] + v[..., None]) * 2 + v[None, ...]
    tl.store(out + offs[:, None] * BLOCK + offs[None, :], r)
    tl.store(out + BLOCK * BLOCK + offs, tl.reshape(v[:, None, None], BLOCK) + tl.ravel(v.T))


@tc.kernel
def plane_sum(x, out, BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    """out[0, b, c] = sum over a of x[a, b, c] with keep_dims: the sum changes layout on its
    way to the store, through shared memory in rows of 32 or more (padded)."""
    ia = tl.arange(0, BA)[:, None, None]
    ib = tl.arange(0, BB)[None, :, None]
    ic = tl.arange(0, BC)[None, None, :]
    v = tl.load(x + (ia * BB + ib) * BC + ic)
    tl.store(out + ib * BC + ic, tl.sum(v, 0, keep_dims=True))
