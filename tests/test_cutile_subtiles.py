"""compiler.tile's subtile, creation, reduction and product builtins with cuTile's
meaning: ct.extract/insert/cat/astile/bitcast and x.item(), ct.arange's start and step,
reductions over several axes, ct.prod, ct.reduce/ct.scan with a plain function or an
operator, batched and vector products, and ct.mma_scaled; on every backend (ptx without
a GPU: compiled and assembled)."""

import operator

import ml_dtypes
import numpy as np
import pytest

import compiler.tile as ct
from compiler import device_arrays
from compiler.errors import LaunchError
from compiler.jit import availability
from tests.conftest import launch


@ct.kernel
def subtiles(x, e, r, ins, c0, c2, small):
    t = ct.load(x, (0, 0, 0), (4, 8, 2))
    ct.store(e, (0, 0, 0), ct.extract(t, (1, 2, 1), (2, 2, 1)))
    runtime = ct.extract(t, index=(ct.bid(0), 3, 0), shape=(4, 2, 1))  # a runtime index
    ct.store(r, (0, 0), runtime.reshape((4, 2)))
    ct.store(ins, (0, 0, 0), ct.insert(t, (1, ct.bid(0) + 1, 0),
                                       ct.full((2, 2, 2), -1.0, ct.float32)))
    lo, hi = t.extract((0, 0, 0), (2, 8, 2)), ct.extract(t, (1, 0, 0), (2, 8, 2))
    ct.store(c0, (0, 0, 0), ct.cat((lo, hi), 0))
    ct.store(c2, (0, 0, 0), ct.cat((lo, hi), -1))
    one = ct.extract(t, (2, 5, 1), ())  # a 0-d result
    pair = ct.astile(((1, 2), (3, 4)), dtype=ct.int32).reshape((4,))
    bits = ct.bitcast(ct.full((4,), 1.0, ct.float32), ct.int32)
    ct.store(small, (0, 0), ct.cat(((pair + one.astype(ct.int32)).reshape((1, 4)),
                                    (bits + ct.extract(pair, (3,), (1,)).item()).reshape((1, 4))),
                                   0))


def test_extract_insert_cat(backend):
    x = np.arange(64, dtype=np.float32).reshape(4, 8, 2)
    e, r = np.zeros((2, 2, 1), np.float32), np.zeros((4, 2), np.float32)
    ins, c0, c2 = np.zeros_like(x), np.zeros_like(x), np.zeros((2, 8, 4), np.float32)
    small = np.zeros((2, 4), np.int32)
    if launch(subtiles, (1,), x, e, r, ins, c0, c2, small, backend=backend):
        np.testing.assert_array_equal(e, x[2:4, 4:6, 1:2])
        np.testing.assert_array_equal(r, x[:, 6:8, 0])
        want = x.copy()
        want[2:4, 2:4] = -1
        np.testing.assert_array_equal(ins, want)
        np.testing.assert_array_equal(c0, np.concatenate([x[:2], x[2:]], 0))
        np.testing.assert_array_equal(c2, np.concatenate([x[:2], x[2:]], -1))
        np.testing.assert_array_equal(small, [[1 + 43, 2 + 43, 3 + 43, 4 + 43],
                                              [0x3F800000 + 4] * 4])


def _add(a, b):
    """A plain helper as a combiner: inlined."""
    return a + b


@ct.kernel
def reductions(x, sums, prods, custom, scans, ranges, flat, T: ct.Constant[int]):
    t = ct.load(x, (0, 0, 0), (2, T, T))
    ct.store(flat, (0, 0, 0), ct.argmax(t, keepdims=True))  # the flat index, kept 3-D
    ct.store(sums, (0,), ct.sum(t, axis=(0, 2)))
    ct.store(prods, (0, 0, 0), ct.prod(t, axis=1, keepdims=True))
    ct.store(custom, (0, 0), ct.reduce(t, 2, _add, 0) - ct.reduce(t, 2, operator.add, 0))
    ct.store(scans, (0, 0, 0), ct.scan(t, 1, _add, 0, reverse=True))
    ct.store(ranges, (0,), ct.arange(T, dtype=ct.float32, start=2, step=-0.5))


def test_reductions_and_scans(backend, rng):
    n = 8
    x = rng.integers(1, 3, (2, n, n)).astype(np.float32)
    x.flat[rng.integers(x.size)] = 5  # one maximum
    sums, prods = np.zeros(n, np.float32), np.zeros((2, 1, n), np.float32)
    custom, scans = np.ones((2, n), np.float32), np.zeros_like(x)
    ranges, flat = np.zeros(n, np.float32), np.zeros((1, 1, 1), np.int32)
    if launch(reductions, (1,), x, sums, prods, custom, scans, ranges, flat, backend=backend,
              T=n):
        np.testing.assert_array_equal(sums, x.sum(axis=(0, 2)))
        np.testing.assert_array_equal(prods, x.prod(axis=1, keepdims=True))
        np.testing.assert_array_equal(custom, 0)
        np.testing.assert_array_equal(scans, np.flip(np.cumsum(np.flip(x, 1), 1), 1))
        np.testing.assert_array_equal(ranges, 2 - 0.5 * np.arange(n))
        assert flat.item() == x.argmax()


@ct.kernel
def scaled(a, a_s, b, b_s, c, tm: ct.Constant[int], tn: ct.Constant[int],
           tk: ct.Constant[int], blk: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    acc = ct.zeros((tm, tn), ct.float32)
    for k in range(ct.num_tiles(a, 1, (tm, tk))):
        x = ct.load(a, (i, k), (tm, tk), padding_mode=ct.PaddingMode.ZERO)
        xs = ct.load(a_s, (i, k), (tm, tk // blk), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, (k, j), (tk, tn), padding_mode=ct.PaddingMode.ZERO)
        ys = ct.load(b_s, (k, j), (tk // blk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, (i, j), acc)


def _e8m0(bits: np.ndarray) -> np.ndarray:
    return 2.0 ** (bits.astype(np.float64) - 127)


def test_mma_scaled_fp8_with_e8m0_scales(backend, rng):
    """cuTile's block-scaled MMA (fp8 operands, e8m0 scales along K in blocks of 32),
    e8m0 arrays passed as their bytes: every scaled product is exact, so only float32
    accumulation rounds."""
    m, n, k, blk = 32, 32, 128, 32
    a = rng.standard_normal((m, k)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.float8_e4m3fn)
    a_s = rng.integers(120, 134, (m, k // blk)).astype(np.uint8)
    b_s = rng.integers(120, 134, (k // blk, n)).astype(np.uint8)
    c = np.zeros((m, n), np.float32)
    if launch(scaled, (1, 1), a, a_s, b, b_s, c, backend=backend, tm=32, tn=32, tk=64,
              blk=blk):
        want = (a.astype(np.float64) * np.repeat(_e8m0(a_s), blk, 1)) @ \
            (b.astype(np.float64) * np.repeat(_e8m0(b_s), blk, 0))
        np.testing.assert_allclose(c, want, rtol=0, atol=1e-6 * np.abs(want).max())


class E8m0Bits:
    """A DLPack producer of float8_e8m0fnu elements (PyTorch's block scales are such
    arrays): a uint8 array's capsule, its dtype retyped to DLPack's code 14."""

    def __init__(self, bits: np.ndarray):
        self.bits = bits

    def __dlpack__(self, **kwargs):
        capsule = self.bits.__dlpack__(**kwargs)
        try:
            at = device_arrays._get_pointer(capsule, b"dltensor_versioned")
            tensor = device_arrays.DLManagedTensorVersioned.from_address(at).dl_tensor
        except ValueError:  # asked without max_version: a DLPack 0.x capsule
            tensor = device_arrays.DLTensor.from_address(
                device_arrays._get_pointer(capsule, b"dltensor"))
        tensor.dtype.code = 14
        return capsule

    def __dlpack_device__(self):
        return self.bits.__dlpack_device__()


@pytest.mark.parametrize("host", ["numpy", "wgsl"])
def test_mma_scaled_takes_e8m0_arrays_as_their_bits(host, rng):
    """An array of float8_e8m0fnu, which tilec has no dtype for, is taken as its bits
    (uint8), which is how ct.mma_scaled reads e8m0 scales."""
    if not availability(host)[0]:
        pytest.skip(f"{host}: {availability(host)[1]}")
    m, n, k, blk = 32, 32, 64, 32
    a = rng.standard_normal((m, k)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((k, n)).astype(ml_dtypes.float8_e4m3fn)
    a_s = rng.integers(120, 134, (m, k // blk)).astype(np.uint8)
    b_s = rng.integers(120, 134, (k // blk, n)).astype(np.uint8)
    c = np.zeros((m, n), np.float32)
    launch(scaled, (1, 1), a, E8m0Bits(a_s), b, E8m0Bits(b_s), c, backend=host, tm=32,
           tn=32, tk=32, blk=blk)
    want = (a.astype(np.float64) * np.repeat(_e8m0(a_s), blk, 1)) @ \
        (b.astype(np.float64) * np.repeat(_e8m0(b_s), blk, 0))
    np.testing.assert_allclose(c, want, rtol=0, atol=1e-6 * np.abs(want).max())


def test_numpy_e8m0_arrays_name_the_bits():
    """ml_dtypes' float8_e8m0fnu NumPy arrays are refused, saying to pass the bits."""
    bits = np.full((32, 1), 127, np.uint8)
    a = np.zeros((32, 32), ml_dtypes.float8_e4m3fn)
    c = np.zeros((32, 32), np.float32)
    with pytest.raises(LaunchError, match=r"float8_e8m0fnu .*x\.view\(np\.uint8\)"):
        launch(scaled, (1, 1), a, bits.view(ml_dtypes.float8_e8m0fnu), a, bits.reshape(1, 32),
               c, backend="numpy", tm=32, tn=32, tk=32, blk=32)


def test_mma_scaled_float_scales(backend, rng):
    """Scales of any float dtype multiply in float32 (blocks of 16 here)."""
    m, n, k, blk = 16, 16, 32, 16
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    a_s = rng.uniform(0.5, 2, (m, k // blk)).astype(np.float32)
    b_s = rng.uniform(0.5, 2, (k // blk, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    if launch(scaled, (1, 1), a, a_s, b, b_s, c, backend=backend, tm=16, tn=16, tk=32,
              blk=blk):
        want = (a.astype(np.float64) * np.repeat(a_s, blk, 1)) @ \
            (b.astype(np.float64) * np.repeat(b_s, blk, 0))
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@ct.kernel
def batched(a, b, c, both, one_y, one_x, vy, xv, vv):
    x = ct.load(a, (0, 0, 0), (2, 16, 32))
    y = ct.load(b, (0, 0, 0), (2, 32, 16))
    x0 = ct.load(a, (0, 0, 0), (1, 16, 32))
    y0 = ct.load(b, (0, 0, 0), (1, 32, 16)).reshape((32, 16))
    v = ct.load(c, (0,), (32,))
    ct.store(both, (0, 0, 0), x @ y)
    ct.store(one_y, (0, 0, 0), ct.matmul(x, y0))
    ct.store(one_x, (0, 0, 0), ct.mma(x0, y, ct.ones((2, 16, 16), ct.float32)))
    ct.store(vy, (0,), ct.matmul(v, y0))
    ct.store(xv, (0,), x0.reshape((16, 32)) @ v)
    ct.store(vv, (0,), ct.full((1,), v @ v, ct.float32))


def test_batched_and_vector_products(backend, rng):
    """cuTile's matmul/mma broadcast batch dimensions and take vectors (NumPy's rules)."""
    a = rng.random((2, 16, 32), dtype=np.float32)
    b = rng.random((2, 32, 16), dtype=np.float32)
    c = rng.random(32, dtype=np.float32)
    both, one_y, one_x = (np.zeros((2, 16, 16), np.float32) for _ in range(3))
    vy, xv, vv = np.zeros(16, np.float32), np.zeros(16, np.float32), np.zeros(1, np.float32)
    if launch(batched, (1,), a, b, c, both, one_y, one_x, vy, xv, vv, backend=backend):
        for got, want in ((both, a @ b), (one_y, a @ b[0]), (one_x, a[0] @ b + 1),
                          (vy, c @ b[0]), (xv, a[0] @ c), (vv, [c @ c])):
            np.testing.assert_allclose(got, want, rtol=1e-5)
