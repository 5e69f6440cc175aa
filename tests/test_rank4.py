"""4-D tiles end to end: loads and stores, broadcasting, reductions and scans along every
axis, the shape builtins, on every backend against NumPy (ptx without a GPU: compiled and
assembled), and the same kernels in SIMT IR run for every thread by the simulator, over
warps and access widths that spread the tile across different dimensions."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler import triton
from compiler.triton import language as ttl
from tests.conftest import launch
from tests.test_shapes import simulate


@triton.jit
def swap_pairs(x, y, A: ttl.constexpr, B: ttl.constexpr, C: ttl.constexpr):
    """flash-attn's interleaved rotary: split the last dimension into pairs through a 4-D
    reshape, and join them back swapped."""
    o = ttl.arange(0, A)[:, None, None] * B * C + ttl.arange(0, B)[None, :, None] * C \
        + ttl.arange(0, C)[None, None, :]
    v = ttl.load(x + o)
    even, odd = ttl.split(ttl.reshape(v, [A, B, C // 2, 2]))
    ttl.store(y + o, ttl.reshape(ttl.join(odd, even), [A, B, C]))


def test_pairs_split_through_a_4d_reshape(backend):
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, np.float32)
    if launch(swap_pairs, (1,), x, y, backend=backend, A=2, B=2, C=8):
        np.testing.assert_array_equal(y, x.reshape(-1, 2)[:, ::-1].reshape(-1))


@tc.func
def _times(a, b):
    return a * b


@tc.kernel
def four_d(x, y, out, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr,
           OP: tl.constexpr):
    """One (A, B, C, D) tile of x (its last column masked off to -1) and of y, combined as
    ``OP`` says into out."""
    ia = tl.arange(0, A)[:, None, None, None]
    ib = tl.arange(0, B)[None, :, None, None]
    ic = tl.arange(0, C)[None, None, :, None]
    id_ = tl.arange(0, D)[None, None, None, :]
    o = ((ia * B + ib) * C + ic) * D + id_
    v = tl.load(x + o, mask=id_ < D - 1, other=-1.0)
    w = tl.load(y + o)
    if OP == "broadcast":
        tl.store(out + o, v * 2 + w + ia * 1000 + ib * 100 + ic * 10 + id_)
    elif OP == "masked_store":
        tl.store(out + o, tl.where(v > w, v, w), mask=ib < B - 1)
    elif OP == "sum0":
        tl.store(out + (ib * C + ic) * D + id_, tl.sum(v, 0, keep_dims=True))
    elif OP == "max1":
        tl.store(out + (ia * C + ic) * D + id_, tl.max(v, 1, keep_dims=True))
    elif OP == "sum2":
        tl.store(out + (ia * B + ib) * D + id_, tl.sum(v, 2, keep_dims=True))
    elif OP == "min3":
        tl.store(out + (ia * B + ib) * C + ic, tl.min(v, 3, keep_dims=True))
    elif OP == "argmax1":
        tl.store(out + (ia * C + ic) * D + id_, tl.argmax(v, 1, keep_dims=True).to(tl.float32))
    elif OP == "product1":
        tl.store(out + (ia * C + ic) * D + id_, tl.reduce(v, 1, _times, keep_dims=True))
    elif OP == "sum_all":
        tl.store(out, tl.sum(v))
    elif OP == "cumsum1":
        tl.store(out + o, tl.cumsum(v, 1))
    elif OP == "cumsum3":
        tl.store(out + o, tl.cumsum(v, 3))
    elif OP == "permute":  # values and pointers permuted alike
        tl.store(tl.permute(out + o, 2, 0, 3, 1), tl.permute(v, 2, 0, 3, 1))
    elif OP == "reverse_axes":  # stored through offsets of the transposed array
        t = tl.trans(v, 3, 2, 1, 0)
        tl.store(out + ((tl.trans(id_, 3, 2, 1, 0) * C + tl.trans(ic, 3, 2, 1, 0)) * B
                        + tl.trans(ib, 3, 2, 1, 0)) * A + tl.trans(ia, 3, 2, 1, 0), t)
    elif OP == "reshape":
        r = tl.reshape(tl.reshape(v, (A * B, C * D)), (A, B * C, D // 2, 2))
        tl.store(out + tl.reshape(o, (A, B * C, D // 2, 2)), r + 1)
    elif OP == "join":
        j = tl.join(tl.reshape(v, (A * B, C, D)), tl.reshape(w, (A * B, C, D)))
        tl.store(out + tl.reshape(o, (A * B, C, D))[:, :, :, None] * 2
                 + tl.arange(0, 2)[None, None, None, :], j)
    elif OP == "expand_dims":
        tl.store(out + o, tl.broadcast_to(tl.expand_dims(tl.sum(v, 1), 1), (A, B, C, D)) + w)
    elif OP == "full":
        tl.store(out + o, v + tl.zeros((A, B, C, D), tl.float32)
                 + tl.full((A, 1, C, 1), 2.5, tl.float32))
    elif OP == "flip":
        tl.store(out + o, tl.flip(v, 2))
    elif OP == "interleave":
        tl.store(out + ((ia * B + ib) * C + ic) * 2 * D + tl.arange(0, 2 * D)[None, None, None, :],
                 tl.interleave(v, w))
    elif OP == "cat":
        tl.store(out + tl.arange(0, 2 * A)[:, None, None, None] * B * C * D
                 + (ib * C + ic) * D + id_, tl.cat(v, w, can_reorder=True))
    elif OP == "topk3":  # of a 3-D tile: the 4-D tile of its halving in between
        r = tl.arange(0, A * B)[:, None, None] * C + tl.arange(0, C)[None, :, None]
        tl.store(out + r * (D // 2) + tl.arange(0, D // 2)[None, None, :],
                 tl.topk(tl.reshape(v, (A * B, C, D)), D // 2))
    else:
        tl.static_assert(False, "unknown OP")


def _reference(op: str, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """What ``four_d`` computes, from the masked x (``v``) and y."""
    a, b, c, d = np.indices(v.shape)
    if op == "broadcast":
        return v * 2 + w + a * 1000 + b * 100 + c * 10 + d
    if op == "masked_store":
        return np.where(b < v.shape[1] - 1, np.maximum(v, w), 0)
    if op.startswith(("sum", "max", "min", "argmax", "product")) and op[-1].isdigit():
        fn = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax,
              "product": np.prod}[op[:-1]]
        return fn(v, axis=int(op[-1]))
    if op == "sum_all":
        return v.sum().reshape(1)
    if op.startswith("cumsum"):
        return np.cumsum(v, axis=int(op[-1]))
    if op == "reverse_axes":
        return v.transpose(3, 2, 1, 0)
    if op == "reshape":
        return v + 1
    if op == "join":
        return np.stack([v, w], -1)
    if op == "expand_dims":
        return v.sum(1, keepdims=True) + w
    if op == "full":
        return v + 2.5
    if op == "flip":
        return v[:, :, ::-1]
    if op == "interleave":
        return np.stack([v, w], -1).reshape(*v.shape[:-1], -1)
    if op == "cat":
        return np.concatenate([v, w])
    if op == "topk3":
        return -np.sort(-v.reshape(-1, *v.shape[2:]))[..., :v.shape[-1] // 2]
    return v  # permute


OPS = ["broadcast", "masked_store", "sum0", "max1", "sum2", "min3", "argmax1", "product1",
       "sum_all", "cumsum1", "cumsum3", "permute", "reverse_axes", "reshape", "join",
       "expand_dims", "full", "flip", "interleave", "cat", "topk3"]


def _case(rng, op, shape):
    """Inputs, an output of the right size, and the expected output."""
    x, y = (rng.integers(-8, 8, shape).astype(np.float32) / 4 for _ in range(2))
    v = np.where(np.arange(shape[-1]) < shape[-1] - 1, x, -1).astype(np.float32)
    want = _reference(op, v, y).astype(np.float32)
    return x, y, np.zeros(max(want.size, x.size), np.float32), want


def _check(out, want):
    np.testing.assert_allclose(out[:want.size].reshape(want.shape), want, rtol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_4d_tiles(backend, rng, op):
    shape = (2, 4, 4, 8)
    x, y, out, want = _case(rng, op, shape)
    if launch(four_d, (1,), x, y, out, backend=backend, OP=op,
              **dict(zip("ABCD", shape, strict=True))):
        _check(out, want)


@pytest.mark.parametrize("vector_bits", [32, 128])
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("shape", [(2, 4, 8, 32), (4, 2, 2, 4)])
@pytest.mark.parametrize("op", OPS)
def test_4d_tiles_simulated(rng, op, shape, num_warps, vector_bits):
    """Every layout assign-layouts picks for these shapes, run thread by thread: warps and
    lanes along different dimensions, replicated where the tile is small."""
    x, y, out, want = _case(rng, op, shape)
    simulate(four_d, (1,), (x, y, out), {"OP": op, **dict(zip("ABCD", shape, strict=True))},
             num_warps, vector_bits)
    _check(out, want)


@tc.kernel
def product_4d(x, out, N: tl.constexpr):
    r = tl.arange(0, N)
    t = tl.load(x + r[:, None, None, None] + r[None, :, None, None] + r[None, None, :, None]
                + r[None, None, None, :])
    tl.store(out + r[:, None], tl.dot(t, t))


def test_dot_of_4d_tiles_is_refused():
    with pytest.raises(tc.CompileError, match="tl.dot first operand must be a 2-D tile, got"):
        tc.compile(product_4d, signature={"x": "*fp32", "out": "*fp32"}, constants={"N": 16},
                   backend="numpy")
