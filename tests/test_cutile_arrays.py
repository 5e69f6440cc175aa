"""compiler.tile arrays as cuTile takes them: arrays of 4 and 5 dimensions read and
written through tiles whose leading dimensions are 1, a batch of matrices loaded as
(1, tm, tk) tiles, one-element loads and stores (``shape=()``), and the kinds of arrays a
launch accepts. Every backend (ptx without a GPU: compiled and assembled)."""

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from compiler.jit import availability
from tests.conftest import launch

C = ct.Constant[int]


# -- arrays of 4 and 5 dimensions ----------------------------------------------------------

@ct.kernel
def scale_heads(q, out, alpha, TM: C, D: C):
    """One (TM, D) block of one head of a (batch, heads, seq, dim) array per program."""
    b, h, m = ct.bid(0), ct.bid(1), ct.bid(2)
    block = ct.load(q, index=(b, h, m, 0), shape=(1, 1, TM, D)).reshape((TM, D))
    scaled = block.astype(ct.float32) * alpha
    ct.store(out, index=(b, h, m, 0), tile=scaled.reshape((1, 1, TM, D)).astype(out.dtype))


def test_4d_blocks_scaled(backend, rng):
    q = rng.standard_normal((2, 3, 40, 16)).astype(np.float16)  # seq not a tile multiple
    out = np.zeros_like(q)
    if launch(scale_heads, (2, 3, 3), q, out, 0.5, backend=backend, TM=16, D=16):
        np.testing.assert_allclose(out, (q.astype(np.float32) * 0.5).astype(np.float16))


@ct.kernel
def keys_transposed(k, kt, TN: C, D: C):
    """Attention's K^T block: a (D, TN) tile of a (batch, heads, seq, dim) array."""
    b, h, j = ct.bid(0), ct.bid(1), ct.bid(2)
    t = ct.load(k, index=(b, h, 0, j), shape=(1, 1, D, TN), order=(0, 1, 3, 2))
    ct.store(kt, index=(b, h, 0, j), tile=t.reshape((D, TN)).reshape((1, 1, D, TN)))


def test_4d_load_in_another_order(backend, rng):
    k = rng.random((2, 2, 32, 8), dtype=np.float32)
    kt = np.zeros((2, 2, 8, 32), np.float32)
    if launch(keys_transposed, (2, 2, 2), k, kt, backend=backend, TN=16, D=8):
        np.testing.assert_array_equal(kt, k.transpose(0, 1, 3, 2))


@ct.kernel
def add_5d(x, y, out, T: C):
    i, j = ct.bid(0), ct.bid(1)
    a = ct.load(x, index=(i, j, 0, 0, 0), shape=(1, 1, 2, T, T))
    b = ct.load(y, index=(i, j, 0, 0, 0), shape=(1, 1, 2, T, T))
    ct.store(out, index=(i, j, 0, 0, 0), tile=a + b)


def test_5d_tiles_keep_their_last_four_dimensions(backend, rng):
    x, y = (rng.random((2, 3, 2, 8, 8), dtype=np.float32) for _ in range(2))
    out = np.zeros_like(x)
    if launch(add_5d, (2, 3), x, y, out, backend=backend, T=8):
        np.testing.assert_array_equal(out, x + y)


@ct.kernel
def two_batches_at_once(q, out, TM: C, D: C):
    """A 4-D tile: two batches of two heads, and their sum over the heads."""
    t = ct.load(q, index=(0, 0, 0, 0), shape=(2, 2, TM, D))
    ct.store(out, index=(0, 0, 0, 0), tile=t * 2 + ct.sum(t, axis=1, keepdims=True))


@ct.kernel
def outer_axes_moved(q, out, TM: C, D: C):
    """A 4-D tile loaded with its first and third axes swapped, and swapped back."""
    t = ct.load(q, index=(0, 0, 0, 0), shape=(TM, 2, 2, D), order=(2, 1, 0, 3))
    ct.store(out, index=(0, 0, 0, 0), tile=ct.permute(t, (2, 1, 0, 3)))


def test_4d_tiles_of_4d_arrays(backend, rng):
    q = rng.random((2, 2, 8, 8), dtype=np.float32)
    out = np.zeros_like(q)
    if launch(two_batches_at_once, (1,), q, out, backend=backend, TM=8, D=8):
        np.testing.assert_allclose(out, q * 2 + q.sum(1, keepdims=True), rtol=1e-6)
    out = np.zeros_like(q)
    if launch(outer_axes_moved, (1,), q, out, backend=backend, TM=8, D=8):
        np.testing.assert_array_equal(out, q)


@ct.kernel
def five_at_once(x, out, T: C):
    ct.store(out, index=(0,) * 5, tile=ct.load(x, index=(0,) * 5, shape=(2, 2, 2, T, T)))


@ct.kernel
def outer_axes_reversed(x, out):
    """A 5-D tile loaded with its first three axes reversed, and reversed back."""
    t = ct.load(x, index=(0,) * 5, shape=(4, 2, 2, 8, 8), order=(2, 1, 0, 3, 4))
    ct.store(out, index=(0,) * 5, tile=ct.permute(t, (2, 1, 0, 3, 4)))


def test_5d_tiles_of_5d_arrays(backend, rng):
    x = rng.random((2, 2, 2, 8, 8), dtype=np.float32)
    out = np.zeros_like(x)
    if launch(five_at_once, (1,), x, out, backend=backend, T=8):
        np.testing.assert_array_equal(out, x)
    x = rng.random((2, 2, 4, 8, 8), dtype=np.float32)
    out = np.zeros_like(x)
    if launch(outer_axes_reversed, (1,), x, out, backend=backend):
        np.testing.assert_array_equal(out, x)


@ct.kernel
def six_dimensions(x, out):
    t = ct.load(x, index=(0,) * 5, shape=(2, 2, 2, 8, 8))
    ct.store(out, index=(0,) * 5, tile=ct.reshape(ct.reshape(t, (2, 1, 2, 2, 8, 8)), t.shape))


def test_tiles_beyond_five_dimensions_are_refused():
    x = np.zeros((2, 2, 2, 8, 8), np.float32)
    with pytest.raises(tc.CompileError) as e:
        six_dimensions[(1,)](x, x, backend="numpy")
    assert e.value.message == ("ct.reshape: tilec's tiles have at most 5 dimensions, so a "
                               "shape of 6 needs its first 1 to be 1, got [2, 1, 2, 2, 8, 8]")


@ct.kernel
def leading_axes_swapped(x, out, T: C):
    """A 5-D array's two leading axes swapped by ``order``: both are left out of the
    access, in either order."""
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, index=(j, i, 0, 0, 0), shape=(1, 1, 2, T, T), order=(1, 0, 2, 3, 4))
    ct.store(out, index=(j, i, 0, 0, 0), tile=t * 2, order=(1, 0, 2, 3, 4))


@ct.kernel
def size_one_axis_moved(x, out, sums):
    """Tile axis 0 is array axis 3 and tile axis 3 array axis 0, both of size 1: the
    kernel's tile is (1, 4, 8, 1, 8), array axes 3, 1, 2, 0 and 4."""
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, index=(j, 0, 0, i, 0), shape=(1, 4, 8, 1, 8), order=(3, 1, 2, 0, 4))
    ct.store(out, index=(j, 0, 0, i, 0), tile=t * 2, order=(3, 1, 2, 0, 4))
    ct.store(sums, index=(i, j, 0, 0), tile=ct.reshape(ct.sum(t, axis=2), (1, 1, 4, 8)))


def test_5d_orders_that_move_axes_of_size_one(backend, rng):
    x = rng.random((2, 3, 2, 8, 8), dtype=np.float32)
    out = np.zeros_like(x)
    if launch(leading_axes_swapped, (2, 3), x, out, backend=backend, T=8):
        np.testing.assert_array_equal(out, x * 2)
    x = rng.random((2, 4, 8, 3, 8), dtype=np.float32)
    out, sums = np.zeros_like(x), np.zeros((2, 3, 4, 8), np.float32)
    if launch(size_one_axis_moved, (2, 3), x, out, sums, backend=backend):
        np.testing.assert_array_equal(out, x * 2)
        np.testing.assert_allclose(sums, x.sum(axis=2).transpose(0, 2, 1, 3), rtol=1e-6)


# -- a batch of matrices: (1, tm, tk) tiles are 2-D accesses --------------------------------

@ct.kernel
def batch_matmul(a, b, c, TM: C, TN: C, TK: C):
    batch, i, j = ct.bid(0), ct.bid(1), ct.bid(2)
    acc = ct.full((TM, TN), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[2], TK)):
        x = ct.load(a, index=(batch, i, k), shape=(1, TM, TK), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, index=(batch, k, j), shape=(1, TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(ct.reshape(x, (TM, TK)), ct.reshape(y, (TK, TN)), acc)
    ct.store(c, index=(batch, i, j), tile=ct.reshape(ct.astype(acc, c.dtype), (1, TM, TN)))


def test_batch_matmul(backend, rng):
    a = rng.standard_normal((2, 64, 96)).astype(np.float16)
    b = rng.standard_normal((2, 96, 128)).astype(np.float16)
    c = np.zeros((2, 64, 128), np.float16)
    if launch(batch_matmul, (2, 1, 1), a, b, c, backend=backend, TM=64, TN=128, TK=32):
        want = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=5e-2)


def test_batch_tiles_need_no_reshape():
    """The reshapes between the 3-D tiles and the 2-D mma undo the access's own unit
    dimension: no tile.reshape is left to move a tile through shared memory."""
    a = np.zeros((1, 128, 128), np.float16)
    b, c = np.zeros((1, 128, 256), np.float16), np.zeros((1, 128, 256), np.float16)
    ck = tc.compile(batch_matmul, args=(a, b, c, 128, 256, 128), backend="wgsl")
    assert "tile.reshape" not in ck.asm["tile"]
    assert "tensor<128x128xf16>" in ck.asm["tile"].split("tile.view_load")[1].split("\n")[0]


def test_big_fp16_matmul_tile_stays_small_in_wgsl():
    """BatchMatMul's 128x256x128 fp16 tiles: lavapipe's compile time grows faster than the
    WGSL's size (36,000 lines took it over 9 minutes, 6,800 under one)."""
    a = np.zeros((1, 128, 128), np.float16)
    b, c = np.zeros((1, 128, 256), np.float16), np.zeros((1, 128, 256), np.float16)
    wgsl = tc.compile(batch_matmul, args=(a, b, c, 128, 256, 128), backend="wgsl").asm["wgsl"]
    assert len(wgsl.splitlines()) < 8000


@ct.kernel
def copy_big(x, y, TM: C, TN: C):
    ct.store(y, index=(ct.bid(0), 0), tile=ct.load(x, index=(ct.bid(0), 0), shape=(TM, TN)))


def test_large_copy_is_strip_mined():
    """A tile of 256 elements per thread moves in a loop over chunks, as in a Triton-style
    kernel: the tile-index checks no longer sit between its load and its store."""
    x = np.zeros((128, 256), np.float16)
    ck = tc.compile(copy_big, args=(x, x, 128, 256), backend="wgsl")
    mined = dict(ck.stages)["strip-mine"]
    assert "scf.for" in mined and "tensor<128x256xf16>" not in mined


# -- one element: shape=() -------------------------------------------------------------------

@ct.kernel
def routed_rows(expert_of, weights, out, TN: C):
    """MoE's pattern: a scalar read from a 1-D array picks the block of a 3-D array."""
    r = ct.bid(0)
    e = ct.load(expert_of, index=r, shape=())
    w = ct.load(weights, index=(e, 0, 0), shape=(1, 1, TN)).reshape((1, TN))
    ct.store(out, index=(r, 0), tile=w)
    ct.store(out, index=(r, 0), tile=ct.load(out, index=(r, 0), shape=()) + e)


def test_scalar_index_from_an_array(backend, rng):
    expert_of = np.array([2, 0, 1, 2], np.int32)
    weights = rng.random((3, 1, 16), dtype=np.float32)
    out = np.zeros((4, 16), np.float32)
    if launch(routed_rows, (4,), expert_of, weights, out, backend=backend, TN=16):
        want = weights[expert_of, 0, :]
        want[:, 0] += expert_of
        np.testing.assert_allclose(out, want, rtol=1e-6)


@ct.kernel
def scalars(x, total, flags):
    s = ct.sum(ct.load(x, index=(0,), shape=(16,)))
    ct.store(total, index=(ct.bid(0),), tile=s)
    ct.store(flags, index=(ct.bid(0), 1), tile=7)


def test_scalar_stores(backend, rng):
    x = rng.random(16, dtype=np.float32)
    total, flags = np.zeros(2, np.float32), np.zeros((2, 3), np.int32)
    if launch(scalars, (2,), x, total, flags, backend=backend):
        np.testing.assert_allclose(total, [x.sum()] * 2, rtol=1e-5)
        np.testing.assert_array_equal(flags, [[0, 7, 0]] * 2)


# -- what a launch takes as an array -----------------------------------------------------------

@ct.kernel
def doubled(x, y, TM: C, TN: C):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(y, index=(i, 0), tile=(t * 2).astype(y.dtype))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float8_e4m3fn"])
def test_torch_cpu_tensors(host_backend, dtype):
    torch = pytest.importorskip("torch")
    d = getattr(torch, dtype)
    x = torch.arange(32 * 16, dtype=torch.float32).reshape(32, 16).remainder(50).to(d)
    y = torch.zeros(32, 16, dtype=d)
    doubled[(4,)](x, y, 8, 16, backend=host_backend)
    assert torch.equal(y.float(), (x.float() * 2).to(d).float())


def test_torch_views_and_tensors_that_require_grad(host_backend):
    torch = pytest.importorskip("torch")
    x = torch.arange(256.0).reshape(16, 16).requires_grad_()
    y = torch.zeros(16, 8)
    doubled[(2,)](x[:, ::2], y, 8, 8, backend=host_backend)  # a strided view
    assert torch.equal(y, x.detach()[:, ::2] * 2)


def test_typed_wgpu_buffers():
    if not tc.backends()["wgsl"][0]:
        pytest.skip(tc.backends()["wgsl"][1])
    import wgpu
    device, usage = tc.wgsl_device(), wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    data = np.arange(64, dtype=np.float16).reshape(8, 8)
    x = tc.wgsl_array(device.create_buffer_with_data(data=data, usage=usage), "f16", (8, 8))
    y = tc.wgsl_array(device.create_buffer(size=128, usage=usage | wgpu.BufferUsage.COPY_DST),
                      "f16", (8, 8))
    doubled[(1,)](x, y, 8, 8, backend="wgsl")
    np.testing.assert_array_equal(y.numpy(), data * 2)


class _CudaTensor:
    """A CUDA tensor as PyTorch presents one, without a GPU: the interface (none while it
    requires grad, as PyTorch refuses), its dtype's name and ``detach``."""

    def __init__(self, shape, typestr, dtype, requires_grad=False):
        self.shape, self.typestr, self.dtype = shape, typestr, dtype
        self.requires_grad = requires_grad

    @property
    def __cuda_array_interface__(self):
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that "
                               "requires grad")
        return {"shape": self.shape, "typestr": self.typestr, "data": (1 << 20, False),
                "strides": None, "version": 3}

    def detach(self):
        return _CudaTensor(self.shape, self.typestr, self.dtype)


@pytest.mark.parametrize("tensor, element", [
    (_CudaTensor((32, 16), "<V2", "torch.bfloat16"), "bf16"),
    (_CudaTensor((32, 16), "<f2", "torch.float16", requires_grad=True), "f16"),
])
def test_cuda_tensors_specialize(tensor, element):
    ck = tc.compile(doubled, args=(tensor, tensor, 8, 16), backend="ptx")
    assert f"%x: !tile.ptr<{element}>" in ck.asm["tile"]


@pytest.mark.gpu
def test_strided_bfloat16_cuda_tensors_gpu():
    """A bf16 CUDA tensor that is a strided view (MoE's expert slices): its memory goes to
    the kernel as a span, still known to hold bfloat16."""
    torch = pytest.importorskip("torch")
    ok, why = availability("ptx")
    if not ok or not torch.cuda.is_available():
        pytest.skip(f"ptx: {why}")
    base = torch.randn(16, 32, device="cuda", dtype=torch.bfloat16)
    x = base[:, ::2]  # (16, 16), strides (32, 2)
    out = torch.zeros(16, 16, device="cuda", dtype=torch.bfloat16)
    doubled[(1,)](x, out, 16, 16, backend="ptx")
    torch.testing.assert_close(out, x * 2)


# -- lists of arrays ------------------------------------------------------------------------

@ct.kernel
def gathered_matmul(parts, w, out, TM: C, TN: C, TK: C):
    """AllGatherMatmul's kernel: out's row blocks come from the list's arrays in turn."""
    per_part = ct.cdiv(parts[0].shape[0], TM)
    m, n = ct.bid(0), ct.bid(1)
    part = parts[m // per_part]
    dtype = ct.tfloat32 if part.dtype == ct.float32 else part.dtype
    acc = ct.full((TM, TN), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(w, axis=0, shape=(TK, TN))):
        a = ct.load(part, index=(m % per_part, k), shape=(TM, TK),
                    padding_mode=ct.PaddingMode.ZERO).astype(dtype)
        b = ct.load(w, index=(k, n), shape=(TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b.astype(dtype), acc)
    ct.store(out, index=(m, n), tile=acc.astype(out.dtype))


def test_list_of_arrays_indexed_at_run_time(backend, rng):
    parts = [rng.standard_normal((32, 48)).astype(np.float16) for _ in range(3)]
    w = rng.standard_normal((48, 32)).astype(np.float16)
    out = np.zeros((96, 32), np.float16)
    if launch(gathered_matmul, (6, 2), parts, w, out, backend=backend, TM=16, TN=16, TK=16):
        want = np.concatenate(parts).astype(np.float32) @ w.astype(np.float32)
        np.testing.assert_allclose(out.astype(np.float32), want, rtol=1e-2, atol=5e-2)


@ct.kernel
def bump_each(parts, counts):
    """Program i adds len(parts) to block i // len(parts) of array i % len(parts)."""
    i = ct.bid(0)
    target = parts[i % len(parts)]
    t = ct.load(target, index=(i // len(parts),), shape=(8,))
    ct.store(target, index=(i // len(parts),), tile=t + len(parts))
    ct.store(counts, index=(i,), tile=target.shape[0])


def test_list_items_are_stored_to(backend):
    parts = [np.zeros(16, np.int32), np.zeros(24, np.int32)]
    counts = np.zeros(4, np.int32)
    if launch(bump_each, (4,), parts, counts, backend=backend):
        np.testing.assert_array_equal(parts[0], [2] * 16)
        np.testing.assert_array_equal(parts[1], [2] * 16 + [0] * 8)
        np.testing.assert_array_equal(counts, [16, 24, 16, 24])


def test_lists_share_one_dtype_and_rank():
    with pytest.raises(tc.LaunchError, match="argument 'parts': the arrays of a list share one "
                                             "dtype and rank: item 0 is 1-D int32, item 1 1-D "
                                             "float32"):
        bump_each[(1,)]([np.zeros(8, np.int32), np.zeros(8, np.float32)], np.zeros(1, np.int32),
                        backend="numpy")


@pytest.fixture(params=["numpy", "wgsl"])
def host_backend(request):
    if not tc.backends()[request.param][0]:
        pytest.skip(f"{request.param}: {tc.backends()[request.param][1]}")
    return request.param
