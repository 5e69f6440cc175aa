"""compiler.tile (cuTile style): arrays, tile-indexed loads and stores, elementwise math
and reductions, on every backend (ptx without a GPU: compiled and assembled)."""

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from tests.conftest import launch


@ct.kernel
def vector_add(a, b, c, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    x = ct.load(a, index=(bid,), shape=(TILE,))
    y = ct.load(b, index=(bid,), shape=(TILE,))
    ct.store(c, index=(bid,), tile=x + y)


def test_vector_add(backend, rng):
    n = 1000  # not a multiple of the tile: the last tile is padded and clipped
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    if launch(vector_add, (ct.cdiv(n, 256),), a, b, c, backend=backend, TILE=256):
        np.testing.assert_allclose(c, a + b, rtol=1e-6)


@ct.kernel
def scale_2d(x, y, alpha, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, (i, j), (TM, TN), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, (i, j), t * alpha + 1.0)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
def test_2d_any_strides(backend, rng, layout):
    """Strides are kernel arguments: views are read and written in place, not copied."""
    base = rng.random((40, 70), dtype=np.float32)
    x = {"contiguous": base[:, :50], "strided": base[::2, ::3],
         "transposed": base.T}[layout]
    if layout == "contiguous":
        x = np.ascontiguousarray(x)
    store = np.zeros((x.shape[0], 2 * x.shape[1]), np.float32)
    y = store[:, ::2]  # the output is a strided view too
    grid = (ct.cdiv(x.shape[0], 16), ct.cdiv(x.shape[1], 32))
    if launch(scale_2d, grid, x, y, 2.0, backend=backend, TM=16, TN=32):
        np.testing.assert_allclose(y, x * 2.0 + 1.0, rtol=1e-6)
        assert not store[:, 1::2].any()  # the elements between were not written


@ct.kernel
def padded(x, out, MODE: ct.Constant[int]):
    modes = (ct.PaddingMode.ZERO, ct.PaddingMode.NEG_INF, ct.PaddingMode.POS_INF,
             ct.PaddingMode.NAN, ct.PaddingMode.UNDETERMINED)
    t = ct.load(x, (0,), (16,), padding_mode=modes[MODE])
    ct.store(out, (0,), t)


@pytest.mark.parametrize("mode, pad", [(0, 0.0), (1, -np.inf), (2, np.inf), (3, np.nan),
                                       (4, None)])
def test_padding_modes(backend, rng, mode, pad):
    x = rng.random(11, dtype=np.float32)
    out = np.full(16, 7.0, np.float32)
    if launch(padded, (1,), x, out, backend=backend, MODE=mode):
        np.testing.assert_array_equal(out[:11], x)
        if pad is not None:
            np.testing.assert_array_equal(out[11:], np.full(5, pad, np.float32))


def _row_stats(t):
    """A plain helper: inlined without a decorator."""
    m = ct.max(t, axis=1, keepdims=True)
    return m, ct.sum(ct.exp(t - m), axis=1, keepdims=True)


@ct.kernel
def softmax(x, y, TN: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, (row, 0), (1, TN), padding_mode=ct.PaddingMode.NEG_INF)
    m, s = _row_stats(t)
    ct.store(y, (row, 0), ct.exp(t - m) / s)


def test_softmax_keepdims_and_helper(backend, rng):
    x = rng.standard_normal((6, 50), dtype=np.float32)
    y = np.zeros_like(x)
    if launch(softmax, (6,), x, y, backend=backend, TN=64):
        e = np.exp(x - x.max(1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


@ct.kernel
def reductions(x, sums, maxes, args, mins, TM: ct.Constant[int], TN: ct.Constant[int]):
    t = ct.load(x, (0, 0), (TM, TN))
    ct.store(sums, (0,), ct.sum(t, axis=0))
    ct.store(maxes, (0,), t.max(1))
    ct.store(args, (0,), ct.argmax(t, axis=1))
    ct.store(mins, (0, 0), ct.min(t, axis=1, keepdims=True))


def test_reductions(backend, rng):
    x = rng.integers(-100, 100, (8, 16)).astype(np.int32)
    sums, maxes, args = (np.zeros(n, np.int32) for n in (16, 8, 8))
    mins = np.zeros((8, 1), np.int32)
    if launch(reductions, (1,), x, sums, maxes, args, mins, backend=backend, TM=8, TN=16):
        np.testing.assert_array_equal(sums, x.sum(0))
        np.testing.assert_array_equal(maxes, x.max(1))
        np.testing.assert_array_equal(args, x.argmax(1))
        np.testing.assert_array_equal(mins, x.min(1, keepdims=True))


@ct.kernel
def elementwise(x, y, TILE: ct.Constant[int]):
    t = ct.load(x, (ct.bid(0),), (TILE,), padding_mode=ct.PaddingMode.ZERO)
    r = ct.where(t > 0.5, ct.sqrt(t), ct.maximum(t * t, 0.1)) + ct.full((TILE,), 2.0,
                                                                        ct.float32)
    ct.store(y, (ct.bid(0),), r + ct.arange(TILE, dtype=ct.float32))


def test_elementwise_creation_and_where(backend, rng):
    x = rng.random(100, dtype=np.float32)
    y = np.zeros_like(x)
    if launch(elementwise, (4,), x, y, backend=backend, TILE=32):
        want = np.where(x > 0.5, np.sqrt(x), np.maximum(x * x, 0.1)) + 2.0 \
            + np.arange(100) % 32
        np.testing.assert_allclose(y, want, rtol=1e-6)


@ct.kernel
def count_tiles(x, out, T: ct.Constant[int]):
    n = ct.num_tiles(x, 1, (1, T))
    ct.store(out, (0,), ct.full((1,), n, ct.int32) + x.shape[0] * 1000)


def test_num_tiles_and_shape(backend):
    x = np.zeros((3, 70), np.float32)
    out = np.zeros(1, np.int32)
    if launch(count_tiles, (1,), x, out, backend=backend, T=16):
        assert out[0] == 3000 + 5


def test_unit_stride_vectorizes():
    """A contiguous last dimension is the constant stride 1: rows of a 2-D f32 array load
    with 128-bit accesses."""
    x = np.zeros((64, 128), np.float32)
    ck = tc.compile(scale_2d, args=(x, x, 1.0, 16, 128), backend="ptx")
    assert "tile.view_load" in ck.asm["tile"]
    assert [name for name, _ in ck.stages][:2] == ["frontend", "lower-array-views"]
    assert "ld.global.v4.f32" in ck.asm["ptx"] and "st.global.v4.f32" in ck.asm["ptx"]
    assert ck.asm["cubin"][:4] == b"\x7fELF"


def test_compile_args_for_both_front_ends():
    from examples.vector_add import add
    a = np.zeros(1024, np.float32)
    ck = tc.compile(vector_add, args=(a, a, a, 256), backend="wgsl")
    assert "fn " in ck.asm["wgsl"] and ck.metadata.params[1].name == "a_shape0"
    assert "tile.addptr" in tc.compile(add, args=(a, a, a, 1024, 256), backend="numpy").asm["tile"]
    b, c = np.ones(1024, np.float32), np.zeros(1024, np.float32)
    tc.compile(vector_add, args=(a, a, a, 256), backend="numpy")[(4,)](a, b, c)
    np.testing.assert_array_equal(c, b)  # a compiled cuTile kernel launches like one
    with pytest.raises(tc.LaunchError, match="example arguments"):
        tc.compile(vector_add, signature="*f32,*f32,*f32", constants={"TILE": 256})


@pytest.mark.gpu
def test_torch_strided_views_on_ptx(rng):
    """PyTorch CUDA tensors with any strides: read and written in place."""
    if not tc.backends()["ptx"][0]:
        pytest.skip(tc.backends()["ptx"][1])
    torch = pytest.importorskip("torch")
    base = torch.randn(40, 70, device="cuda")
    x = base[::2, ::3]
    out = torch.zeros(20, 48, device="cuda")
    y = out[:, ::2]
    scale_2d[(2, 1)](x, y, 2.0, TM=16, TN=32, backend="ptx")
    torch.testing.assert_close(y, x * 2.0 + 1.0)
    assert not out[:, 1::2].any()


def test_verify_runs_the_reference_with_views_lowered(rng):
    x = rng.random((40, 70), dtype=np.float32)[::2, ::3]
    y = np.zeros((20, 24), np.float32)
    scale_2d[(2, 1)](x, y, 2.0, TM=16, TN=32, backend="numpy", verify=True)
    np.testing.assert_allclose(y, x * 2.0 + 1.0, rtol=1e-6)


@ct.kernel
def transpose_by_order(x, y, z, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, (j, i), (TN, TM), order=(1, 0), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, (j, i), t)
    ct.store(z, (j, i), t, order="F")


def test_load_and_store_order(backend, rng):
    """``order=(1, 0)``: tile axis k is array axis order[k], so the tile is x's block
    transposed; storing it with order 'F' puts it back where it came from."""
    x = rng.random((40, 24), dtype=np.float32)
    y, z = np.zeros((24, 40), np.float32), np.zeros((40, 24), np.float32)
    if launch(transpose_by_order, (3, 2), x, y, z, backend=backend, TM=16, TN=16):
        np.testing.assert_array_equal(y, x.T)
        np.testing.assert_array_equal(z, x)
