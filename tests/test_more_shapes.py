"""The "more shape" builtins (``tl.join``, ``split``, ``interleave``, ``cat``, ``flip``,
``gather``, ``sort``, ``topk``, ``histogram``, ``swizzle2d``, ``permute`` of rank 3) on every backend
against NumPy, their errors, and PTX assembled here."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

M, N = 8, 16


@tc.kernel
def pair_kernel(x, y, out, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    a = tl.load(x + r * N + c)
    b = tl.load(y + r * N + c)
    if OP == "join":
        tl.store(out + (r * N + c)[:, :, None] * 2 + tl.arange(0, 2)[None, None, :],
                 tl.join(a, b))
    elif OP == "split":
        lo, hi = tl.split(tl.join(a + b, a - b))
        tl.store(out + r * N + c, lo * 3 + hi)
    elif OP == "split_of_loaded":
        j = tl.reshape(a, M, N // 2, 2)
        lo, hi = j.split()
        tl.store(out + r * (N // 2) + tl.arange(0, N // 2)[None, :], lo - hi)
    elif OP == "interleave":
        tl.store(out + r * 2 * N + tl.arange(0, 2 * N)[None, :], tl.interleave(a, b))
    elif OP == "cat":
        tl.store(out + tl.arange(0, 2 * M)[:, None] * N + c, tl.cat(a, b, can_reorder=True))
    elif OP == "flip0":
        tl.store(out + r * N + c, tl.flip(a, 0))
    elif OP == "flip1":
        tl.store(out + r * N + c, a.flip(dim=1))
    elif OP == "gather0":
        tl.store(out + r * N + c, tl.gather(a, b.to(tl.int32), 0))
    elif OP == "gather1":
        tl.store(out + r * N + c, tl.gather(a, b.to(tl.int32), 1))
    elif OP == "sort":
        tl.store(out + r * N + c, tl.sort(a))
    elif OP == "sort_desc":
        tl.store(out + r * N + c, tl.sort(a, dim=1, descending=True))
    else:
        tl.store(out + r * N + c, tl.permute(tl.reshape(a, 2, M, N // 2), 1, 0, 2).reshape(M, N))


def _reference(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == "join":
        return np.stack([a, b], -1)
    if op == "split":
        return (a + b) * 3 + (a - b)
    if op == "split_of_loaded":
        return a[:, 0::2] - a[:, 1::2]
    if op == "interleave":
        return np.stack([a, b], -1).reshape(M, 2 * N)
    if op == "cat":
        return np.concatenate([a, b])
    if op == "flip0":
        return a[::-1]
    if op == "flip1":
        return a[:, ::-1]
    if op.startswith("gather"):
        axis = int(op[-1])
        index = np.clip(b.astype(np.int32), 0, a.shape[axis] - 1)  # as b.to(tl.int32)
        return np.take_along_axis(a, index, axis)
    if op == "sort":
        return np.sort(a, -1)
    if op == "sort_desc":
        return np.sort(a, -1)[:, ::-1]
    return a.reshape(2, M, N // 2).transpose(1, 0, 2).reshape(M, N)


def _inputs(op: str, dtype, rng) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(-50, 50, (M, N)).astype(dtype)  # duplicates for sort
    if op.startswith("gather"):  # indices, a few outside the axis (clamped)
        b = rng.integers(-2, max(M, N) + 2, (M, N)).astype(dtype)
    else:
        b = rng.integers(-50, 50, (M, N)).astype(dtype)
    return a, b


def _run(op, a, b, backend) -> np.ndarray | None:
    want = _reference(op, a, b)
    out = np.zeros(want.size, a.dtype)
    if not launch(pair_kernel, (1,), a, b, out, backend=backend, M=M, N=N, OP=op):
        return None
    np.testing.assert_array_equal(out.reshape(want.shape), want)
    return out


OPS = ["join", "split", "split_of_loaded", "interleave", "cat", "flip0", "flip1", "gather0",
       "gather1", "sort", "sort_desc", "permute3"]


@pytest.mark.parametrize("op", OPS)
def test_shape_op_f32(backend, rng, op):
    a, b = _inputs(op, np.float32, rng)
    a = a + rng.random((M, N)).astype(np.float32) if op.startswith("sort") else a
    _run(op, a, b, backend)


@pytest.mark.parametrize("op", ["join", "split", "cat", "flip1", "gather1", "sort"])
@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.uint32])
def test_shape_op_dtypes(backend, rng, op, dtype):
    a, b = _inputs(op, np.int32, rng)
    if dtype is np.uint32 and not op.startswith("gather"):
        a = (a.astype(np.int64) * 40_000_000).astype(np.uint32)  # above 2^31 as well
    _run(op, a.astype(dtype), b.astype(dtype), backend)


def test_sort_puts_nan_last_and_keeps_infinities(backend):
    a = np.tile(np.array([3.0, np.nan, -np.inf, 1.0, np.inf, -0.0, 0.0, -2.0] * 2,
                         np.float32), (M, 1))
    rng = np.random.default_rng(5)
    a = rng.permuted(a, axis=1)
    for op in ("sort", "sort_desc"):
        want = _reference(op, a, a)
        out = np.zeros(a.size, np.float32)
        if launch(pair_kernel, (1,), a, a, out, backend=backend, M=M, N=N, OP=op):
            np.testing.assert_array_equal(out.reshape(M, N), want)


# ---------------------------------------------------------------- 1-D forms, histogram


@tc.kernel
def vector_kernel(x, out, out2, N: tl.constexpr, BINS: tl.constexpr, OP: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x + offs)
    if OP == "histogram":
        tl.store(out + tl.arange(0, BINS), tl.histogram(v, BINS))
    elif OP == "histogram_masked":
        tl.store(out + tl.arange(0, BINS), tl.histogram(v, BINS, mask=offs < N // 2))
    elif OP == "join_scalar":
        j = tl.join(v, 7)
        tl.store(out + offs[:, None] * 2 + tl.arange(0, 2)[None, :], j)
    elif OP == "split_pair":
        pair = tl.load(x + tl.arange(0, 2))
        lo, hi = tl.split(pair)
        tl.store(out + tl.arange(0, 2), tl.join(hi, lo))  # two scalars: a tile of 2
        tl.store(out2, lo)
    else:
        tl.store(out + offs, tl.sort(v, descending=True))


def test_histogram(backend, rng):
    x = rng.integers(-3, 20, 256).astype(np.int32)  # some outside [0, 16): counted nowhere
    out = np.zeros(16, np.int32)
    if launch(vector_kernel, (1,), x, out, out, backend=backend, N=256, BINS=16,
              OP="histogram"):
        np.testing.assert_array_equal(out, np.bincount(x[(x >= 0) & (x < 16)], minlength=16))
    if launch(vector_kernel, (1,), x, out, out, backend=backend, N=256, BINS=16,
              OP="histogram_masked"):
        first = x[:128]
        np.testing.assert_array_equal(
            out, np.bincount(first[(first >= 0) & (first < 16)], minlength=16))


def test_join_broadcasts_a_scalar_and_split_of_a_pair(backend, rng):
    x = rng.integers(-9, 9, 64).astype(np.int32)
    out = np.zeros(128, np.int32)
    if launch(vector_kernel, (1,), x, out, out, backend=backend, N=64, BINS=1,
              OP="join_scalar"):
        np.testing.assert_array_equal(out.reshape(64, 2), np.stack([x, np.full(64, 7)], -1))
    swapped, lo = np.zeros(2, np.int32), np.zeros(1, np.int32)
    if launch(vector_kernel, (1,), x, swapped, lo, backend=backend, N=64, BINS=1,
              OP="split_pair"):
        assert swapped.tolist() == [x[1], x[0]] and lo[0] == x[0]


def test_sort_1d_descending(backend, rng):
    x = rng.standard_normal(128).astype(np.float32)
    out = np.zeros(128, np.float32)
    if launch(vector_kernel, (1,), x, out, out, backend=backend, N=128, BINS=1, OP="sort"):
        np.testing.assert_array_equal(out, np.sort(x)[::-1])


@tc.kernel
def topk_kernel(x, out, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                ROWS: tl.constexpr):
    c = tl.arange(0, N)
    if ROWS:
        r = tl.arange(0, M)[:, None]
        tl.store(out + r * K + tl.arange(0, K)[None, :],
                 tl.topk(tl.load(x + r * N + c[None, :]), K))
    else:
        top = tl.load(x + c).topk(K)
        tl.store(out + tl.arange(0, K), top)


@pytest.mark.parametrize("rows", [False, True])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_topk(backend, rng, rows, k):
    """The k largest along the last dimension, largest first, of 1-D and 2-D tiles."""
    x = rng.standard_normal((M, N) if rows else N).astype(np.float32)
    out = np.zeros((M, k) if rows else k, np.float32)
    if launch(topk_kernel, (1,), x, out, backend=backend, M=M, N=N, K=k, ROWS=rows):
        np.testing.assert_array_equal(out, -np.sort(-x, axis=-1)[..., :k])


def test_topk_k_must_be_a_power_of_two_within_the_tile():
    x = np.zeros(N, np.float32)
    with pytest.raises(tc.CompileError, match="power of two of at most 16"):
        topk_kernel[(1,)](x, x, M=M, N=N, K=3, ROWS=False, backend="numpy")


# ---------------------------------------------------------------- swizzle2d


@tc.kernel
def swizzle_kernel(out_i, out_j, SIZE_I: tl.constexpr, SIZE_J: tl.constexpr,
                   SIZE_G: tl.constexpr):
    ij = tl.arange(0, SIZE_I * SIZE_J)
    i, j = tl.swizzle2d(ij // SIZE_J, ij % SIZE_J, SIZE_I, SIZE_J, SIZE_G)
    tl.store(out_i + ij, i)
    tl.store(out_j + ij, j)
    si, sj = tl.swizzle2d(1, 0, SIZE_I, SIZE_J, SIZE_G)  # constexprs: folded
    tl.store(out_i + SIZE_I * SIZE_J, si * 100 + sj)


@pytest.mark.parametrize("size_i,size_j,size_g", [(8, 4, 2), (4, 8, 4), (8, 8, 3)])
def test_swizzle2d(backend, size_i, size_j, size_g):
    n = size_i * size_j
    out_i, out_j = np.zeros(2 * n, np.int32), np.zeros(n, np.int32)
    if not launch(swizzle_kernel, (1,), out_i, out_j, backend=backend, SIZE_I=size_i,
                  SIZE_J=size_j, SIZE_G=size_g):
        return
    got = list(zip(out_i[:n].tolist(), out_j.tolist(), strict=True))
    assert sorted(got) == [(i, j) for i in range(size_i) for j in range(size_j)]
    # consecutive indices walk each group of size_g rows column by column
    order, first = [], 0
    while first < size_i:
        rows = range(first, min(first + size_g, size_i))
        order += [(i, j) for j in range(size_j) for i in rows]
        first += size_g
    assert got == order
    assert out_i[n] == got[size_j][0] * 100 + got[size_j][1]


# ---------------------------------------------------------------- errors and PTX


@tc.kernel
def bad_kernel(x, out, OP: tl.constexpr):
    offs = tl.arange(0, 16)
    v = tl.load(x + offs)
    if OP == "split":
        tl.split(tl.reshape(v, 4, 4))
    elif OP == "cat":
        tl.cat(v, tl.reshape(v, 2, 8))
    elif OP == "sort":
        tl.sort(tl.reshape(v, 4, 4), dim=0)
    elif OP == "gather":
        tl.gather(v, v, 0)
    elif OP == "histogram":
        tl.histogram(v, 8)
    else:
        tl.join(x + offs, x + offs)
    tl.store(out + offs, v)


@pytest.mark.parametrize("op,message", [
    ("split", "tl.split needs a last dimension of 2"),
    ("cat", "tl.cat needs tiles of one shape"),
    ("sort", "tl.sort sorts along the last dimension only"),
    ("gather", "tl.gather index must be integers"),
    ("histogram", "tl.histogram needs a 1-D integer tile"),
    ("join", "tl.join of pointer tiles is not supported"),
])
def test_errors_point_at_the_line(op, message):
    with pytest.raises(tc.CompileError, match=message) as e:
        bad_kernel[(1,)](np.zeros(16, np.float32), np.zeros(16, np.float32), OP=op,
                         backend="numpy")
    assert "test_more_shapes.py" in str(e.value)


@pytest.mark.parametrize("op", OPS)
def test_assembles_for_ptx(op):
    ck = tc.compile(pair_kernel, signature={"x": "*f32", "y": "*f32", "out": "*f32"},
                    constants={"M": M, "N": N, "OP": op}, backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF"


@tc.kernel
def big_kernel(x, i, out, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    if OP == "gather":
        tl.store(out + r, tl.gather(tl.load(x + r), tl.load(i + r), 0))
    else:
        tl.store(out + r, tl.sort(tl.load(x + r), descending=True))


@pytest.mark.parametrize("op", ["gather", "sort"])
def test_gather_source_limit_on_gpu_backends(rng, op):
    """NumPy gathers (and sorts) any tile; the GPU backends read at most 4096 elements."""
    x = rng.standard_normal((64, 128)).astype(np.float32)
    i = rng.integers(0, 64, (64, 128)).astype(np.int32)
    out = np.zeros_like(x)
    big_kernel[(1,)](x, i, out, M=64, N=128, OP=op, backend="numpy")
    want = np.take_along_axis(x, i, 0) if op == "gather" else np.sort(x, -1)[:, ::-1]
    np.testing.assert_array_equal(out, want)
    with pytest.raises(tc.UnsupportedError, match="from more than 4096 elements"):
        tc.compile(big_kernel, signature={"x": "*f32", "i": "*i32", "out": "*f32"},
                   constants={"M": 64, "N": 128, "OP": op}, backend="ptx")
