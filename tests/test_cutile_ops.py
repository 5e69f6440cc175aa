"""compiler.tile: matrix products, shape ops, astype, scans, gather/scatter, atomics and
ct.launch, against NumPy on every backend (ptx without a GPU: compiled and assembled)."""

import numpy as np
import pytest

import compiler.tile as ct
from tests.conftest import launch


@ct.kernel
def products(a, b, c, d, T: ct.Constant[int], TF32: ct.Constant[bool]):
    x = ct.load(a, (0, 0), (T, T))
    y = ct.load(b, (0, 0), (T, T))
    if TF32:
        x = x.astype(ct.tfloat32)
        y = ct.astype(y, ct.tfloat32)
    ct.store(c, (0, 0), ct.mma(x, y, ct.ones((T, T), ct.float32)))
    ct.store(d, (0, 0), x @ ct.transpose(y))


@pytest.mark.parametrize("dtype, tf32", [(np.float32, False), (np.float32, True),
                                         (np.float16, False)])
def test_mma_and_matmul(backend, rng, dtype, tf32):
    a = rng.standard_normal((32, 32)).astype(dtype)
    b = rng.standard_normal((32, 32)).astype(dtype)
    c = np.zeros((32, 32), np.float32)
    d = np.zeros((32, 32), dtype)
    if launch(products, (1,), a, b, c, d, backend=backend, T=32, TF32=tf32):
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        tol = 2e-2 if tf32 or dtype == np.float16 else 1e-4
        np.testing.assert_allclose(c, a32 @ b32 + 1, rtol=tol, atol=tol)
        np.testing.assert_allclose(d.astype(np.float32), a32 @ b32.T, rtol=tol, atol=tol)


@ct.kernel
def small_products(a, b, c, out, M: ct.Constant[int], K: ct.Constant[int],
                   N: ct.Constant[int], B: ct.Constant[int]):
    """Products smaller than a tensor-core tile (an FFT's 2x2 stages), batched."""
    x = ct.load(a, (0, 0), (M, K))
    y = ct.load(b, (0, 0, 0), (B, K, N))
    acc = ct.load(c, (0, 0, 0), (B, M, N))
    ct.store(out, (0, 0, 0), ct.mma(ct.reshape(x, (1, M, K)), y, acc) + x @ y)


@pytest.mark.parametrize("m, k, n, b, dtype", [(2, 2, 2, 4, np.float32), (16, 4, 16, 1, np.float16),
                                               (32, 32, 8, 2, np.float32)])
def test_products_below_a_tensor_core_tile(backend, rng, m, k, n, b, dtype):
    a = rng.standard_normal((m, k)).astype(dtype)
    y = rng.standard_normal((b, k, n)).astype(dtype)
    c = rng.standard_normal((b, m, n)).astype(np.float32)
    out = np.zeros((b, m, n), np.float32)
    if launch(small_products, (1,), a, y, c, out, backend=backend, M=m, K=k, N=n, B=b):
        want = a.astype(np.float32) @ y.astype(np.float32)
        tol = 1e-5
        if dtype == np.float16:  # matmul gives the operands' dtype: rounded to f16, where
            want = want + want.astype(np.float16).astype(np.float32) + c  # another sum
            tol = 2.0 ** -10  # order may land on the other side of a rounding tie
        else:
            want = 2 * want + c
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


@ct.kernel
def shapes(x, t_out, p_out, r_out, e_out):
    t = ct.load(x, (0, 0, 0), (2, 4, 8))
    ct.store(t_out, (0, 0, 0), ct.transpose(t, 0, 2))
    ct.store(p_out, (0, 0, 0), ct.permute(t, (1, 2, 0)))
    ct.store(r_out, (0, 0), ct.reshape(t, (8, 8)))
    row = ct.reshape(ct.load(x, (0, 0, 0), (1, 1, 8)), (8,))
    ct.store(e_out, (0, 0, 0), ct.expand_dims(row, 1).reshape((1, 8, 1)))


def test_shape_ops(backend, rng):
    x = rng.standard_normal((2, 4, 8), dtype=np.float32)
    t_out, p_out = np.zeros((8, 4, 2), np.float32), np.zeros((4, 8, 2), np.float32)
    r_out, e_out = np.zeros((8, 8), np.float32), np.zeros((1, 8, 1), np.float32)
    if launch(shapes, (1,), x, t_out, p_out, r_out, e_out, backend=backend):
        np.testing.assert_array_equal(t_out, x.transpose(2, 1, 0))
        np.testing.assert_array_equal(p_out, x.transpose(1, 2, 0))
        np.testing.assert_array_equal(r_out, x.reshape(8, 8))
        np.testing.assert_array_equal(e_out.reshape(8), x[0, 0])


@ct.kernel
def scans(x, sums, casts, T: ct.Constant[int]):
    t = ct.load(x, (0, 0), (T, T))
    ct.store(sums, (0, 0), ct.cumsum(t, axis=1))
    ct.store(casts, (0, 0), (t * 3).astype(ct.int32) + ct.cumsum(t, 0).astype(casts.dtype))


def test_cumsum_and_astype(backend, rng):
    x = rng.integers(-20, 20, (16, 16)).astype(np.float32)
    sums, casts = np.zeros_like(x), np.zeros((16, 16), np.int32)
    if launch(scans, (1,), x, sums, casts, backend=backend, T=16):
        np.testing.assert_array_equal(sums, np.cumsum(x, 1))
        np.testing.assert_array_equal(casts, (x * 3).astype(np.int32)
                                      + np.cumsum(x, 0).astype(np.int32))


@ct.kernel
def gather_scatter(x, idx, out, y, T: ct.Constant[int]):
    i = ct.load(idx, (0,), (T,))
    rows = i // 8
    cols = i % 8
    g = ct.gather(x, (rows[:, None], ct.arange(4, dtype=ct.int32)[None, :]))
    ct.store(out, (0, 0), g)
    ct.scatter(y, (rows, cols), ct.full((T,), -1.0, ct.float32))


def test_gather_scatter_out_of_range(backend, rng):
    x = rng.standard_normal((5, 8), dtype=np.float32)
    idx = np.array([0, 9, 39, 40, 77, -3, 12, 33], np.int32)  # 40, 77, -3: outside
    out, y = np.zeros((8, 4), np.float32), np.zeros((5, 8), np.float32)
    if launch(gather_scatter, (1,), x, idx, out, y, backend=backend, T=8):
        rows, cols = idx // 8, idx % 8  # Python's floor division, as cuTile's
        inside = (0 <= rows) & (rows < 5)
        want = np.where(inside[:, None], x[np.clip(rows, 0, 4), :4], 0)
        np.testing.assert_array_equal(out, want)
        expect = np.zeros_like(y)
        written = inside & (0 <= cols) & (cols < 8)
        expect[rows[written], cols[written]] = -1.0
        np.testing.assert_array_equal(y, expect)


@ct.kernel
def histogram(values, counts, old, T: ct.Constant[int]):
    v = ct.load(values, (ct.bid(0),), (T,), padding_mode=ct.PaddingMode.ZERO)
    before = ct.atomic_add(counts, v, ct.full((T,), 1, ct.int32))
    ct.store(old, (ct.bid(0),), before)


def test_atomic_add_on_array(backend, rng):
    values = rng.integers(0, 10, 200).astype(np.int32)
    counts, old = np.zeros(8, np.int32), np.zeros(200, np.int32)  # 8, 9: outside, dropped
    if launch(histogram, (4,), values, counts, old, backend=backend, T=64):
        want = np.bincount(values, minlength=10)[:8]
        np.testing.assert_array_equal(counts, want + np.array([56] + [0] * 7))  # padding
        assert (old[values >= 8] == 0).all()


@ct.kernel
def exchange(flags, got, swapped):
    i = ct.arange(4, dtype=ct.int32)
    ct.store(got, (0,), ct.atomic_cas(flags, i, ct.full((4,), 1, ct.int32),
                                      ct.full((4,), 5, ct.int32)))
    ct.store(swapped, (0,), ct.atomic_xchg(flags, i + 2, ct.full((4,), 9, ct.int32)))


def test_atomic_cas_and_xchg(backend):
    flags = np.array([1, 0, 1, 0, 3], np.int32)
    got, swapped = np.zeros(4, np.int32), np.zeros(4, np.int32)
    if launch(exchange, (1,), flags, got, swapped, backend=backend):
        np.testing.assert_array_equal(got, [1, 0, 1, 0])
        np.testing.assert_array_equal(swapped, [5, 0, 3, 0])
        np.testing.assert_array_equal(flags, [5, 0, 9, 9, 9])


@ct.kernel
def twice(x, y, T: ct.Constant[int]):
    ct.store(y, (ct.bid(0),), ct.load(x, (ct.bid(0),), (T,)) * 2)


@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
def test_launch_spelling(backend, rng):
    x = rng.random(300, dtype=np.float32)
    y = np.zeros_like(x)
    ct.launch(None, (ct.cdiv(300, 128),), twice, (x, y, 128), backend=backend)
    np.testing.assert_array_equal(y, 2 * x)


@ct.kernel
def python_division(x, y, q, r, fq, T: ct.Constant[int]):
    a = ct.load(x, (0,), (T,))
    b = ct.load(y, (0,), (T,))
    ct.store(q, (0,), a // b)
    ct.store(r, (0,), a % b)
    ct.store(fq, (0,), a.astype(ct.float32) // 2.5)


def test_floor_division_is_pythons(backend, rng):
    """cuTile's // and % are Python's (floor), unlike Triton's (truncating)."""
    x = rng.integers(-50, 50, 64).astype(np.int32)
    y = rng.choice([-7, -3, 2, 5], 64).astype(np.int32)
    q, r = np.zeros(64, np.int32), np.zeros(64, np.int32)
    fq = np.zeros(64, np.float32)
    if launch(python_division, (1,), x, y, q, r, fq, backend=backend, T=64):
        np.testing.assert_array_equal(q, x // y)
        np.testing.assert_array_equal(r, x % y)
        np.testing.assert_array_equal(fq, np.floor(x / np.float32(2.5)))
