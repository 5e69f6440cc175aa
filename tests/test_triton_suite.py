"""tilec tried the way a Triton user would: kernels in the manner of Triton's own language
tests (elementwise ops and broadcasting, casts, reductions and scans, shape ops, memory,
atomics, grids and control flow), each on every backend against a NumPy reference.

The kernels are written here for tilec; on ``ptx`` without a GPU they are compiled and
assembled only (``launch`` returns False and the comparison is skipped)."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch, tolerance

# -- elementwise ---------------------------------------------------------------------------


@tc.kernel
def _outer_ops(x, y, out, M: tl.constexpr, N: tl.constexpr):
    """[M, 1] against [1, N]: each operator broadcasts to [M, N]; out is [4, M, N]."""
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    col = tl.load(x + rm)[:, None]
    row = tl.load(y + rn[None, :])
    plane = rm[:, None] * N + rn[None, :]
    tl.store(out + plane, col + row)
    tl.store(out + M * N + plane, col - row)
    tl.store(out + 2 * M * N + plane, col * row)
    tl.store(out + 3 * M * N + plane, tl.maximum(col, row))


def test_binary_ops_broadcast_column_against_row(backend):
    rng = np.random.default_rng(0)
    m, n = 16, 32
    x = rng.standard_normal(m).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full((4, m, n), np.nan, np.float32)
    if launch(_outer_ops, (1,), x, y, out, backend=backend, M=m, N=n):
        c, r = x[:, None], y[None, :]
        np.testing.assert_array_equal(out[0], c + r)
        np.testing.assert_array_equal(out[1], c - r)
        np.testing.assert_array_equal(out[2], c * r)
        np.testing.assert_array_equal(out[3], np.maximum(c, r))


@tc.kernel
def _where_forms(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    tl.store(out + offs, tl.where(a > 0, a, 0.0), mask=m)          # relu: tile, scalar
    tl.store(out + n + offs, tl.where(a > b, -1.5, b), mask=m)      # scalar, tile
    tl.store(out + 2 * n + offs, tl.where(b < 0, 2.0, 3.0), mask=m)  # scalar, scalar
    tl.store(out + 3 * n + offs, tl.where(a < b, a, b), mask=m)     # tile, tile


def test_where_with_scalar_and_tile_branches(backend):
    rng = np.random.default_rng(1)
    n = 300
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full((4, n), np.nan, np.float32)
    if launch(_where_forms, (tc.cdiv(n, 128),), x, y, out, n, backend=backend, BLOCK=128):
        np.testing.assert_array_equal(out[0], np.where(x > 0, x, 0))
        np.testing.assert_array_equal(out[1], np.where(x > y, np.float32(-1.5), y))
        np.testing.assert_array_equal(out[2], np.where(y < 0, 2.0, 3.0).astype(np.float32))
        np.testing.assert_array_equal(out[3], np.minimum(x, y))


@tc.kernel
def _unary(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=1.0)
    tl.store(out + offs, tl.exp(v), mask=m)
    tl.store(out + n + offs, tl.log(tl.abs(v)), mask=m)
    tl.store(out + 2 * n + offs, tl.sqrt(tl.abs(v)), mask=m)
    tl.store(out + 3 * n + offs, tl.abs(v), mask=m)
    tl.store(out + 4 * n + offs, tl.floor(v), mask=m)
    tl.store(out + 5 * n + offs, tl.ceil(v), mask=m)
    tl.store(out + 6 * n + offs, -v, mask=m)


def test_unary_math(backend):
    rng = np.random.default_rng(2)
    n = 200
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[:4] = [-2.5, 2.5, -0.0, 3.0]
    out = np.full((7, n), np.nan, np.float32)
    if launch(_unary, (1,), x, out, n, backend=backend, BLOCK=256):
        fast = {"rtol": 2e-6, "atol": 1e-6}
        np.testing.assert_allclose(out[0], np.exp(x), **fast)
        with np.errstate(divide="ignore"):  # log(|-0.0|) = -inf on both sides
            np.testing.assert_allclose(out[1], np.log(np.abs(x)), **fast)
        np.testing.assert_allclose(out[2], np.sqrt(np.abs(x)), rtol=1e-6)
        np.testing.assert_array_equal(out[3], np.abs(x))
        np.testing.assert_array_equal(out[4], np.floor(x))
        np.testing.assert_array_equal(out[5], np.ceil(x))
        np.testing.assert_array_equal(out[6], -x)


@tc.kernel
def _int_div_mod(a, b, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(a + offs)
    y = tl.load(b + offs)
    tl.store(out + offs, x // y)
    tl.store(out + BLOCK + offs, x % y)
    tl.store(out + 2 * BLOCK + offs, x // 3)
    tl.store(out + 3 * BLOCK + offs, x % -7)


def test_integer_division_truncates_like_c(backend):
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, 256).astype(np.int32)
    b = rng.integers(1, 50, 256).astype(np.int32) * rng.choice([-1, 1], 256).astype(np.int32)
    a[:4] = [-7, 7, -7, 7]
    b[:4] = [2, -2, -2, 2]
    out = np.zeros((4, 256), np.int32)
    if launch(_int_div_mod, (1,), a, b, out, backend=backend, BLOCK=256):
        np.testing.assert_array_equal(out[0], np.trunc(a / b).astype(np.int32))
        np.testing.assert_array_equal(out[1], np.fmod(a, b))
        np.testing.assert_array_equal(out[2], np.trunc(a / 3).astype(np.int32))
        np.testing.assert_array_equal(out[3], np.fmod(a, -7))
        assert out[0, 0] == -3 and out[1, 0] == -1  # not Python's -4 and 1


@tc.kernel
def _shifts(a, u, s, out_i, out_u, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(a + offs)
    y = tl.load(u + offs)
    k = tl.load(s + offs)
    tl.store(out_i + offs, x << k)
    tl.store(out_i + BLOCK + offs, x >> k)          # arithmetic on int32
    tl.store(out_i + 2 * BLOCK + offs, x >> 3)
    tl.store(out_u + offs, y >> k.to(tl.uint32))    # logical on uint32
    tl.store(out_u + BLOCK + offs, y << 5)


def test_shifts_signed_and_unsigned(backend):
    rng = np.random.default_rng(4)
    a = rng.integers(-2**31, 2**31, 128, dtype=np.int64).astype(np.int32)
    u = rng.integers(0, 2**32, 128, dtype=np.uint64).astype(np.uint32)
    s = rng.integers(0, 32, 128).astype(np.int32)
    out_i = np.zeros((3, 128), np.int32)
    out_u = np.zeros((2, 128), np.uint32)
    if launch(_shifts, (1,), a, u, s, out_i, out_u, backend=backend, BLOCK=128):
        np.testing.assert_array_equal(out_i[0], a << s)
        np.testing.assert_array_equal(out_i[1], a >> s)
        np.testing.assert_array_equal(out_i[2], a >> 3)
        np.testing.assert_array_equal(out_u[0], u >> s.astype(np.uint32))
        np.testing.assert_array_equal(out_u[1], u << np.uint32(5))


@tc.kernel
def _promotions(a8, h, u, i, out_h, out_u, out_i8, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    small = tl.load(a8 + o)
    half = tl.load(h + o)
    uu = tl.load(u + o)
    ii = tl.load(i + o)
    tl.store(out_h + o, small + half)                      # int8 + float16 -> float16
    tl.store(out_u + o, uu + ii)                           # uint32 + int32 -> uint32
    tl.store(out_u + BLOCK + o, (ii < uu).to(tl.uint32))   # compared as unsigned
    tl.store(out_u + 2 * BLOCK + o, uu // (ii.to(tl.uint32) | 1))
    tl.store(out_u + 3 * BLOCK + o, uu % (ii.to(tl.uint32) | 1))
    tl.store(out_i8 + o, small // 3)
    tl.store(out_i8 + BLOCK + o, small % 3)
    tl.store(out_i8 + 2 * BLOCK + o, small * small)        # wraps in int8


def test_mixed_dtype_promotion_and_unsigned_division(backend):
    rng = np.random.default_rng(22)
    n = 64
    a8 = rng.integers(-128, 128, n).astype(np.int8)
    h = rng.standard_normal(n).astype(np.float16)
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    i = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    i[:4] = [2, 6, -1, 1000]
    out_h = np.zeros(n, np.float16)
    out_u = np.zeros((4, n), np.uint32)
    out_i8 = np.zeros((3, n), np.int8)
    if launch(_promotions, (1,), a8, h, u, i, out_h, out_u, out_i8, backend=backend,
              BLOCK=n):
        iu = i.astype(np.uint32)
        np.testing.assert_array_equal(out_h, a8.astype(np.float16) + h)
        np.testing.assert_array_equal(out_u[0], u + iu)
        np.testing.assert_array_equal(out_u[1], (iu < u).astype(np.uint32))
        np.testing.assert_array_equal(out_u[2], u // (iu | 1))
        np.testing.assert_array_equal(out_u[3], u % (iu | 1))
        np.testing.assert_array_equal(out_i8[0], np.trunc(a8 / 3).astype(np.int8))
        np.testing.assert_array_equal(out_i8[1], np.fmod(a8, 3))
        np.testing.assert_array_equal(out_i8[2], a8 * a8)


@tc.kernel
def _band_store(x, out, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    keep = (offs < n) & (((v > lo) & (v <= hi)) | (v == 0)) & ~(offs % 5 == 0)
    tl.store(out + offs, v * 10, mask=keep)
    tl.store(out + n + offs, keep.to(tl.int32), mask=offs < n)


def test_comparisons_chained_into_masks(backend):
    rng = np.random.default_rng(5)
    n = 500
    x = rng.integers(-20, 20, n).astype(np.int32)
    out = np.full((2, n), 12345, np.int32)
    if launch(_band_store, (tc.cdiv(n, 64),), x, out, n, -5, 7, backend=backend, BLOCK=64):
        idx = np.arange(n)
        keep = (((x > -5) & (x <= 7)) | (x == 0)) & (idx % 5 != 0)
        np.testing.assert_array_equal(out[0], np.where(keep, x * 10, 12345))
        np.testing.assert_array_equal(out[1], keep.astype(np.int32))


@tc.kernel
def _casts(xf, xi, h, f, i, b, i8, f8, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(xf + offs)
    w = tl.load(xi + offs)
    tl.store(h + offs, v.to(tl.float16))
    tl.store(f + offs, v.to(tl.float16).to(tl.float32))
    tl.store(i + offs, v.to(tl.int32))                  # towards zero
    tl.store(b + offs, v.to(tl.int32, bitcast=True))    # the bits
    tl.store(f + BLOCK + offs, w.to(tl.float32, bitcast=True))
    small = w.to(tl.int8)                               # wraps
    tl.store(i8 + offs, small)
    tl.store(f8 + offs, tl.cast(small, tl.float32))


def test_casts_between_float16_float32_int32_int8(backend):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(64) * 300).astype(np.float32)
    w = rng.integers(-2**31, 2**31, 64, dtype=np.int64).astype(np.int32)
    w[:8] = np.array([1.5, -2.0, 0.1, 1e30], np.float32).view(np.int32).tolist() + [127, 128,
                                                                                   -129, 255]
    h = np.zeros(64, np.float16)
    f = np.zeros((2, 64), np.float32)
    i, b = np.zeros(64, np.int32), np.zeros(64, np.int32)
    i8, f8 = np.zeros(64, np.int8), np.zeros(64, np.float32)
    if launch(_casts, (1,), x, w, h, f, i, b, i8, f8, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(h, x.astype(np.float16))
        np.testing.assert_array_equal(f[0], x.astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(i, np.trunc(x).astype(np.int32))
        np.testing.assert_array_equal(b, x.view(np.int32))
        np.testing.assert_array_equal(f[1].view(np.int32), w)
        np.testing.assert_array_equal(i8, w.astype(np.int8))
        np.testing.assert_array_equal(f8, w.astype(np.int8).astype(np.float32))


@tc.kernel
def _half_round_trip(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs).to(tl.float16).to(tl.float32) * 2.0)


def test_float16_round_trip_rounds_to_nearest_even_without_memory_between(backend):
    half_ulp_ties = np.array([1 + 2**-11, 1 + 3 * 2**-11, 2**-24 * 2.5, 2**-24 * 1.5, 2**-25,
                              65504 + 16, 65504 + 15.99, 2**-14 * (1 - 2**-11)], np.float64)
    specials = np.array([np.inf, -np.inf, 0.0, -0.0, 1e-30, -3e-8, np.nan, -65519.0], np.float64)
    rng = np.random.default_rng(7)
    spread = rng.standard_normal(40) * np.exp2(rng.integers(-28, 17, 40))
    x = np.concatenate([half_ulp_ties, -half_ulp_ties, specials, spread]).astype(np.float32)
    out = np.zeros(64, np.float32)
    if launch(_half_round_trip, (1,), x, out, backend=backend, BLOCK=64):
        with np.errstate(over="ignore"):  # past 65504 is infinity, as on the GPU
            want = x.astype(np.float16).astype(np.float32) * 2
        np.testing.assert_array_equal(out, want)


@tc.kernel
def _narrow_toward_zero(x, out, kept, BLOCK: tl.constexpr):
    """``x`` narrowed toward zero to ``out``'s type, stored, and (in ``kept``) widened
    again in registers, with no memory between."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    t = v.to(out.dtype.element_ty, fp_downcast_rounding="rtz")
    tl.store(out + offs, t)
    tl.store(kept + offs, t.to(v.dtype) * 2.0)


def _toward_zero_reference(x: np.ndarray, dtype) -> np.ndarray:
    """Rounded to nearest by NumPy, then one step toward zero wherever that went away."""
    with np.errstate(over="ignore"):
        near = x.astype(dtype)
    away = np.abs(near.astype(np.float64)) > np.abs(x.astype(np.float64))
    return np.where(away, np.nextafter(near, np.zeros_like(near)), near)


_EDGES = [1 + 2**-11, 1 + 3 * 2**-11, 1 - 2**-12, 2**-24 * 2.5, 2**-24 * 0.9, 2**-14 * 0.999,
          65504 + 16, 65519.0, 1e6, 3.4e38, np.inf, 0.0, 1e-30, 1e-45, np.nan]


@pytest.mark.parametrize("src,dst", [(np.float32, np.float16), (np.float64, np.float32)])
def test_fp_downcast_rounding_toward_zero(backend, src, dst):
    if backend == "wgsl" and src == np.float64:
        pytest.skip("WGSL has no float64 (an UnsupportedError)")
    rng = np.random.default_rng(11)
    spread = rng.standard_normal(34) * np.exp2(rng.integers(-30, 18, 34))
    x = np.concatenate([_EDGES, np.negative(_EDGES), spread]).astype(src)
    out, kept = np.zeros(64, dst), np.zeros(64, src)
    if launch(_narrow_toward_zero, (1,), x, out, kept, backend=backend, BLOCK=64):
        want = _toward_zero_reference(x, dst)
        np.testing.assert_array_equal(out, want)
        with np.errstate(over="ignore"):  # 3.4e38 doubled: infinity on every backend
            np.testing.assert_array_equal(kept, want.astype(src) * 2)
        assert (np.abs(out.astype(np.float64)) <= np.abs(x.astype(np.float64)))[~np.isnan(x)].all()


def test_fp_downcast_rounding_toward_zero_to_bfloat16(backend):
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    x = np.concatenate([_EDGES, np.negative(_EDGES), np.linspace(-3, 3, 34)]).astype(np.float32)
    out, kept = np.zeros(64, bf16), np.zeros(64, np.float32)
    if launch(_narrow_toward_zero, (1,), x, out, kept, backend=backend, BLOCK=64):
        bits = x.view(np.uint32)  # bfloat16 is f32's top half: toward zero drops the rest
        want = np.where(np.isnan(x), np.nan, (bits & 0xFFFF0000).view(np.float32))
        np.testing.assert_array_equal(out.astype(np.float32), want)
        np.testing.assert_array_equal(kept, want * 2)


@tc.kernel
def _misrounded(p, HOW: tl.constexpr):
    x = tl.load(p)
    if HOW == "int":
        y = x.to(tl.int16, fp_downcast_rounding="rtz")
    elif HOW == "wider":
        y = x.to(tl.float64, fp_downcast_rounding="rtz")
    else:
        y = x.to(tl.int32, bitcast=True, fp_downcast_rounding="rtz")
    tl.store(p, y)


@pytest.mark.parametrize("how,match", [("int", "for a float cast to a narrower float"),
                                       ("wider", "not float32 to float64"),
                                       ("bitcast", "takes no fp_downcast_rounding")])
def test_fp_downcast_rounding_errors(how, match):
    with pytest.raises(tc.CompileError, match=match):
        tc.compile(_misrounded, signature={"p": "*f32"}, constants={"HOW": how},
                   backend="numpy")


# -- reductions and scans ------------------------------------------------------------------


@tc.kernel
def _reduce2d(x, s, mx, mn, am, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr,
              KEEP: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    v = tl.load(x + rm[:, None] * N + rn[None, :])
    if AXIS == 0:
        o = rn
    else:
        o = rm
    if KEEP:
        if AXIS == 0:
            o = o[None, :]
        else:
            o = o[:, None]
    tl.store(s + o, tl.sum(v, axis=AXIS, keep_dims=KEEP))
    tl.store(mx + o, tl.max(v, axis=AXIS, keep_dims=KEEP))
    tl.store(mn + o, v.min(AXIS, keep_dims=KEEP))
    tl.store(am + o, tl.argmax(v, axis=AXIS, keep_dims=KEEP))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("keep", [False, True])
def test_sum_max_min_argmax_along_an_axis(backend, axis, keep):
    rng = np.random.default_rng(7 + axis)
    m, n = 8, 32
    x = rng.integers(-50, 50, (m, n)).astype(np.int32)
    x[:, 3] = 50  # ties: the first index wins
    k = n if axis == 0 else m
    s, mx, mn, am = (np.zeros(k, np.int32) for _ in range(4))
    if launch(_reduce2d, (1,), x, s, mx, mn, am, backend=backend, M=m, N=n, AXIS=axis,
              KEEP=keep):
        np.testing.assert_array_equal(s, x.sum(axis))
        np.testing.assert_array_equal(mx, x.max(axis))
        np.testing.assert_array_equal(mn, x.min(axis))
        np.testing.assert_array_equal(am, x.argmax(axis))


@tc.func
def _absmax_combine(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))


@tc.func
def _max_with_index(v0, i0, v1, i1):
    take0 = (v0 > v1) | ((v0 == v1) & (i0 < i1))
    return tl.where(take0, v0, v1), tl.where(take0, i0, i1)


@tc.kernel
def _user_reduce(x, out_abs, out_v, out_i, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    v = tl.load(x + rm[:, None] * N + rn[None, :])
    tl.store(out_abs + rm, tl.reduce(v, 1, _absmax_combine))
    idx = tl.broadcast_to(rm[:, None], (M, N))
    best, where = tl.reduce((v, idx), 0, _max_with_index)
    tl.store(out_v + rn, best)
    tl.store(out_i + rn, where)


def test_reduce_with_user_combine_functions(backend):
    rng = np.random.default_rng(9)
    m, n = 16, 16
    x = rng.standard_normal((m, n)).astype(np.float32)
    x[5, 2] = x[9, 2] = 10.0  # a tie the index breaks
    out_abs = np.zeros(m, np.float32)
    out_v, out_i = np.zeros(n, np.float32), np.zeros(n, np.int32)
    if launch(_user_reduce, (1,), x, out_abs, out_v, out_i, backend=backend, M=m, N=n):
        np.testing.assert_array_equal(out_abs, np.abs(x).max(1))
        np.testing.assert_array_equal(out_v, x.max(0))
        np.testing.assert_array_equal(out_i, x.argmax(0))


@tc.kernel
def _reduce3d(x, s, am, total, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr,
              AXIS: tl.constexpr):
    v = tl.load(x + tl.arange(0, A)[:, None, None] * (B * C)
                + tl.arange(0, B)[None, :, None] * C + tl.arange(0, C)[None, None, :])
    best, where = tl.max(v, axis=AXIS, return_indices=True)
    if AXIS == 0:
        p = tl.arange(0, B)[:, None] * C + tl.arange(0, C)[None, :]
    elif AXIS == 1:
        p = tl.arange(0, A)[:, None] * C + tl.arange(0, C)[None, :]
    else:
        p = tl.arange(0, A)[:, None] * B + tl.arange(0, B)[None, :]
    tl.store(s + p, v.sum(AXIS) - best)
    tl.store(am + p, where)
    tl.store(total, tl.sum(v))
    tl.store(total + 1, tl.argmin(tl.ravel(v), 0))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_reductions_of_a_3d_tile(backend, axis):
    a, b, c = 2, 8, 16
    x = np.random.default_rng(23 + axis).integers(-99, 99, (a, b, c)).astype(np.int32)
    shape = [(b, c), (a, c), (a, b)][axis]
    s, am = np.zeros(shape, np.int32), np.zeros(shape, np.int32)
    total = np.zeros(2, np.int32)
    if launch(_reduce3d, (1,), x, s, am, total, backend=backend, A=a, B=b, C=c, AXIS=axis):
        np.testing.assert_array_equal(s, x.sum(axis) - x.max(axis))
        np.testing.assert_array_equal(am, x.argmax(axis))
        assert total[0] == x.sum() and total[1] == x.ravel().argmin()


@tc.func
def _linear_recurrence(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@tc.kernel
def _scans(x, a, cs, rec, rcs, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    ptrs = rm[:, None] * N + rn[None, :]
    v = tl.load(x + ptrs)
    w = tl.load(a + ptrs)
    tl.store(cs + ptrs, tl.cumsum(v, axis=1))
    tl.store(cs + M * N + ptrs, tl.cumsum(v, axis=0))
    _, h = tl.associative_scan((w, v), 1, _linear_recurrence)
    tl.store(rec + ptrs, h)
    tl.store(rcs + ptrs, tl.cumsum(v, axis=1, reverse=True))


def test_cumsum_and_associative_scan_with_user_combine(backend):
    rng = np.random.default_rng(10)
    m, n = 4, 32
    x = rng.integers(-9, 10, (m, n)).astype(np.int32)
    a = rng.integers(-2, 3, (m, n)).astype(np.int32)
    cs = np.zeros((2, m, n), np.int32)
    rec, rcs = np.zeros((m, n), np.int32), np.zeros((m, n), np.int32)
    if launch(_scans, (1,), x, a, cs, rec, rcs, backend=backend, M=m, N=n):
        np.testing.assert_array_equal(cs[0], np.cumsum(x, 1))
        np.testing.assert_array_equal(cs[1], np.cumsum(x, 0))
        want = np.zeros_like(x)
        h = np.zeros(m, np.int64)
        for j in range(n):  # h_j = a_j * h_{j-1} + x_j
            h = (a[:, j] * h + x[:, j]).astype(np.int32).astype(np.int64)
            want[:, j] = h
        np.testing.assert_array_equal(rec, want)
        np.testing.assert_array_equal(rcs, np.cumsum(x[:, ::-1], 1)[:, ::-1])


@tc.func
def _keep_first(a, b):
    """Associative, not commutative."""
    return a


@tc.func
def _running_argmax(v0, i0, v1, i1):
    earlier = v0 > v1
    return tl.where(earlier, v0, v1), tl.where(earlier, i0, i1)


@tc.kernel
def _tuple_scans(x, out, idx, N: tl.constexpr):
    o = tl.arange(0, N)
    v = tl.load(x + o)
    tl.store(out + o, tl.associative_scan(v, 0, _keep_first))
    tl.store(out + N + o, tl.associative_scan(v, 0, _keep_first, reverse=True))
    best, where = tl.associative_scan((v, o), 0, _running_argmax)
    tl.store(out + 2 * N + o, best)
    tl.store(idx + o, where)


def test_non_commutative_and_tuple_scans(backend):
    x = np.random.default_rng(24).integers(-50, 50, 128).astype(np.int32)
    out = np.zeros((3, 128), np.int32)
    idx = np.zeros(128, np.int32)
    if launch(_tuple_scans, (1,), x, out, idx, backend=backend, N=128):
        np.testing.assert_array_equal(out[0], np.full(128, x[0]))
        np.testing.assert_array_equal(out[1], np.full(128, x[-1]))
        np.testing.assert_array_equal(out[2], np.maximum.accumulate(x))
        want, best = np.zeros(128, np.int32), 0
        for j in range(128):
            if x[j] >= x[best]:  # ties go to the later element (strict > keeps the right)
                best = j
            want[j] = best
        np.testing.assert_array_equal(idx, want)


# -- shapes --------------------------------------------------------------------------------


@tc.kernel
def _shape_ops(x, r, t, p, e, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    flat = tl.arange(0, A * B * C)
    v = tl.load(x + flat)
    cube = tl.reshape(v, (A, B, C))
    pb = tl.arange(0, B)[:, None, None]
    pc_ = tl.arange(0, C)[None, :, None]
    pa = tl.arange(0, A)[None, None, :]
    # reshape to 2-D, then transpose: [A*B, C] -> [C, A*B]
    two = tl.trans(tl.reshape(v, (A * B, C)))
    rows = tl.arange(0, C)[:, None]
    cols = tl.arange(0, A * B)[None, :]
    tl.store(r + rows * (A * B) + cols, two)
    tl.store(t + flat, tl.ravel(tl.permute(cube, 2, 0, 1)))
    pc = tl.permute(cube, (1, 2, 0))  # [B, C, A]
    tl.store(p + pb * (C * A) + pc_ * A + pa, pc)
    # expand_dims / broadcast_to: a row repeated down B rows
    row = tl.expand_dims(tl.arange(0, C), 0)
    grid = tl.broadcast_to(row * 10, (B, C)) + tl.expand_dims(tl.arange(0, B), 1)
    tl.store(e + tl.arange(0, B)[:, None] * C + tl.arange(0, C)[None, :], grid)


def test_reshape_trans_permute_expand_dims_broadcast_to(backend):
    a, b, c = 2, 4, 8
    x = np.random.default_rng(11).integers(-1000, 1000, a * b * c).astype(np.int32)
    r = np.zeros((c, a * b), np.int32)
    t = np.zeros(a * b * c, np.int32)
    p = np.zeros((b, c, a), np.int32)
    e = np.zeros((b, c), np.int32)
    if launch(_shape_ops, (1,), x, r, t, p, e, backend=backend, A=a, B=b, C=c):
        cube = x.reshape(a, b, c)
        np.testing.assert_array_equal(r, x.reshape(a * b, c).T)
        np.testing.assert_array_equal(t, cube.transpose(2, 0, 1).ravel())
        np.testing.assert_array_equal(p, cube.transpose(1, 2, 0))
        np.testing.assert_array_equal(e, np.arange(c)[None, :] * 10 + np.arange(b)[:, None])


@tc.kernel
def _join_split_cat(x, y, j, s, il, ct, N: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(x + o)
    b = tl.load(y + o)
    pair = tl.join(a, b)                               # [N, 2]
    tl.store(j + o[:, None] * 2 + tl.arange(0, 2)[None, :], pair)
    lo, hi = tl.split(pair * 3)
    tl.store(s + o, lo - hi)
    tl.store(il + tl.arange(0, 2 * N), tl.interleave(a, b))
    tl.store(ct + tl.arange(0, 2 * N), tl.cat(b, a, can_reorder=True))


def test_join_split_interleave_cat(backend):
    rng = np.random.default_rng(12)
    n = 64
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    j = np.zeros((n, 2), np.float32)
    s = np.zeros(n, np.float32)
    il, ct = np.zeros(2 * n, np.float32), np.zeros(2 * n, np.float32)
    if launch(_join_split_cat, (1,), x, y, j, s, il, ct, backend=backend, N=n):
        np.testing.assert_array_equal(j, np.stack([x, y], axis=1))
        np.testing.assert_array_equal(s, x * 3 - y * 3)
        np.testing.assert_array_equal(il, np.stack([x, y], axis=1).ravel())
        np.testing.assert_array_equal(ct, np.concatenate([y, x]))


@tc.kernel
def _fills(f, z, h, value, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(f + o, tl.full((N,), value, tl.float32) + tl.zeros((N,), tl.float32))
    tl.store(z + o[:, None] * 4 + tl.arange(0, 4)[None, :],
             tl.zeros((N, 4), tl.int32) + tl.full((1, 4), 7, tl.int32))
    tl.store(h + o, tl.full((N,), 3, tl.int8) * tl.zeros_like(o).to(tl.int8) - 1)


def test_full_and_zeros(backend):
    f, z, h = np.zeros(32, np.float32), np.zeros((32, 4), np.int32), np.zeros(32, np.int8)
    v = float(np.random.default_rng(13).standard_normal())
    if launch(_fills, (1,), f, z, h, v, backend=backend, N=32):
        np.testing.assert_array_equal(f, np.full(32, v, np.float32))
        np.testing.assert_array_equal(z, np.full((32, 4), 7, np.int32))
        np.testing.assert_array_equal(h, np.full(32, -1, np.int8))


# -- memory --------------------------------------------------------------------------------


@tc.kernel
def _masked_other(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs, mask=offs < n, other=-1.0)
    b = tl.load(x + offs, mask=(offs < n) & (offs % 2 == 0), other=float("inf"))
    tl.store(out + offs, a)
    tl.store(out + BLOCK + offs, tl.minimum(b, 100.0))


def test_masked_load_with_other(backend):
    x = np.random.default_rng(14).standard_normal(37).astype(np.float32)
    out = np.zeros((2, 64), np.float32)
    if launch(_masked_other, (1,), x, out, 37, backend=backend, BLOCK=64):
        want = np.full(64, -1.0, np.float32)
        want[:37] = x
        np.testing.assert_array_equal(out[0], want)
        idx = np.arange(64)
        want2 = np.where((idx < 37) & (idx % 2 == 0), np.pad(x, (0, 27)), np.float32(100.0))
        np.testing.assert_array_equal(out[1], want2)


@tc.kernel
def _copy_2d(src, dst, M, N, s_m, s_n, d_m, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(src + rm[:, None] * s_m + rn[None, :] * s_n, mask=mask, other=0)
    tl.store(dst + rm[:, None] * d_m + rn[None, :], v * 2 + 1, mask=mask)


def test_2d_block_load_with_strides_and_2d_grid(backend):
    rng = np.random.default_rng(15)
    base = rng.integers(-100, 100, (50, 90)).astype(np.int32)
    view = base.T  # [90, 50], strides (1, 90) elements; passed as the base buffer
    m, n = view.shape
    dst = np.zeros((m, n), np.int32)
    grid = (tc.cdiv(m, 32), tc.cdiv(n, 16))
    if launch(_copy_2d, grid, base, dst, m, n, 1, 90, n, backend=backend, BM=32, BN=16):
        np.testing.assert_array_equal(dst, view * 2 + 1)


@tc.kernel
def _int64_offsets(x, out, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * stride + tl.arange(0, BLOCK)
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), tl.load(x + offs) + 1)


def test_int64_offsets(backend):
    x = np.arange(4 * 100, dtype=np.float32)
    out = np.zeros((4, 64), np.float32)
    if launch(_int64_offsets, (4,), x, out, 100, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(out, x.reshape(4, 100)[:, :64] + 1)


@tc.kernel
def _hinted(x, out, starts, BLOCK: tl.constexpr):
    start = tl.load(starts + tl.program_id(0))
    start = tl.multiple_of(start, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(start + tl.arange(0, BLOCK), BLOCK), BLOCK)
    tl.store(out + offs, tl.load(x + offs) * 3)


def test_multiple_of_and_max_contiguous_hints(backend):
    x = np.random.default_rng(16).standard_normal(512).astype(np.float32)
    out = np.zeros_like(x)
    starts = np.array([384, 0, 256, 128], np.int32)
    if launch(_hinted, (4,), x, out, starts, backend=backend, BLOCK=128):
        np.testing.assert_array_equal(out, x * 3)


# -- atomics -------------------------------------------------------------------------------


@tc.kernel
def _atomics(x, bins, best, old, n, NB: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    tl.atomic_add(bins + (v % NB + NB) % NB, 1, mask=m & (v != 0))
    prev = tl.atomic_max(best + tl.zeros((BLOCK,), tl.int32), v, mask=m)
    tl.store(old + offs, prev, mask=m)


def test_atomic_add_and_max_with_masks(backend):
    rng = np.random.default_rng(17)
    n, nb = 700, 8
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    x[::13] = 0
    bins = np.zeros(nb, np.int32)
    best = np.array([-10**6], np.int32)
    old = np.zeros(n, np.int32)
    if launch(_atomics, (tc.cdiv(n, 128),), x, bins, best, old, n, backend=backend, NB=nb,
              BLOCK=128):
        nz = x[x != 0]
        np.testing.assert_array_equal(bins, np.bincount(nz % nb, minlength=nb))
        assert best[0] == x.max()
        # each lane saw the running maximum at its turn: a start value or an input, never
        # above the final maximum
        assert np.isin(old, np.append(x, -10**6)).all() and (old <= x.max()).all()


@tc.kernel
def _cas_claim(slots, owner, n_slots, BLOCK: tl.constexpr):
    """Every program tries to claim every slot with CAS(0 -> pid + 1); one wins each."""
    pid = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < n_slots
    prev = tl.atomic_cas(slots + o, tl.zeros((BLOCK,), tl.int32),
                         tl.full((BLOCK,), 1, tl.int32) + pid, mask=m)
    won = m & (prev == 0)
    tl.atomic_add(owner + o, tl.where(won, 1, 0), mask=m)


def test_atomic_cas_with_mask(backend):
    n = 40
    slots = np.zeros(64, np.int32)
    owner = np.zeros(64, np.int32)
    slots[5] = 99  # already taken: nobody wins it
    if launch(_cas_claim, (6,), slots, owner, n, backend=backend, BLOCK=64):
        want_owner = np.zeros(64, np.int32)
        want_owner[:n] = 1
        want_owner[5] = 0
        np.testing.assert_array_equal(owner, want_owner)
        assert slots[5] == 99
        taken = np.delete(np.arange(n), 5)
        assert ((slots[taken] >= 1) & (slots[taken] <= 6)).all()
        assert (slots[n:] == 0).all()


# -- grids and control flow ----------------------------------------------------------------


@tc.kernel
def _grid3d(out):
    i = tl.program_id(0)
    j = tl.program_id(1)
    k = tl.program_id(2)
    ni = tl.num_programs(0)
    nj = tl.num_programs(1)
    nk = tl.num_programs(2)
    flat = (k * nj + j) * ni + i
    o = tl.arange(0, 4)
    vals = tl.where(o == 0, i, tl.where(o == 1, j, tl.where(o == 2, k, ni * 100 + nj * 10 + nk)))
    tl.store(out + flat * 4 + o, vals)


def test_program_id_and_num_programs_on_a_3d_grid(backend):
    g = (3, 2, 5)
    out = np.full((5, 2, 3, 4), -1, np.int32)
    if launch(_grid3d, g, out, backend=backend):
        k, j, i = np.meshgrid(np.arange(5), np.arange(2), np.arange(3), indexing="ij")
        np.testing.assert_array_equal(out[..., 0], i)
        np.testing.assert_array_equal(out[..., 1], j)
        np.testing.assert_array_equal(out[..., 2], k)
        assert (out[..., 3] == 325).all()


@tc.kernel
def _constexpr_branch(x, out, BLOCK: tl.constexpr, MODE: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(x + o)
    if BLOCK > 16:
        v = v * 2
    else:
        v = v - 1
    if MODE == "square":
        v = v * v
    elif MODE == "neg":
        v = -v
    tl.store(out + o, v)


@pytest.mark.parametrize("block, mode", [(8, "square"), (32, "neg"), (64, "none")])
def test_constexpr_branches(backend, block, mode):
    x = np.random.default_rng(18).integers(-100, 100, block).astype(np.int32)
    out = np.zeros_like(x)
    if launch(_constexpr_branch, (1,), x, out, backend=backend, BLOCK=block, MODE=mode):
        v = x * 2 if block > 16 else x - 1
        v = {"square": v * v, "neg": -v, "none": v}[mode]
        np.testing.assert_array_equal(out, v)


@tc.kernel
def _static_and_while(x, out, n, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    o = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in tl.static_range(STEPS):
        acc += tl.load(x + s * BLOCK + o) * (s + 1)
    tl.store(out + o, acc)
    # a runtime while: halve until below n (per program, a scalar loop)
    v = tl.load(x + o)
    count = 0
    total = tl.sum(tl.abs(v), axis=0)
    while total > n:
        total = total / 2
        count += 1
    tl.store(out + BLOCK + o, tl.zeros((BLOCK,), tl.float32) + count)
    tl.store(out + 2 * BLOCK, total)


def test_static_range_and_while_loops(backend):
    rng = np.random.default_rng(19)
    steps, block = 3, 32
    x = rng.standard_normal(steps * block).astype(np.float32)
    out = np.zeros(3 * block, np.float32)
    if launch(_static_and_while, (1,), x, out, 2, backend=backend, BLOCK=block, STEPS=steps):
        want = sum(x[s * block:(s + 1) * block] * (s + 1) for s in range(steps))
        np.testing.assert_allclose(out[:block], want, rtol=1e-6, atol=1e-6)
        total, count = np.abs(x[:block]).sum(dtype=np.float32), 0
        while total > 2:
            total, count = total / np.float32(2), count + 1
        assert (out[block:2 * block] == count).all() and count > 0
        np.testing.assert_allclose(out[2 * block], total, rtol=1e-6)


@tc.func
def _square(v):
    return v * v


@tc.func
def _poly(v, c):
    """c + v + v**2, through another helper."""
    return c + v + _square(v)


@tc.func
def _clip_poly(v, lo, hi):
    return tl.minimum(tl.maximum(_poly(v, 1.0), lo), hi)


@tc.kernel
def _helpers(x, out, BLOCK: tl.constexpr):
    row = tl.program_id(1)
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + row * 2 * BLOCK + o)
    tl.store(out + row * 2 * BLOCK + o, _clip_poly(v, 0.5, 4.0))


def test_func_helpers_calling_each_other_with_program_id_1(backend):
    x = np.random.default_rng(20).standard_normal((3, 64)).astype(np.float32)
    out = np.zeros_like(x)
    if launch(_helpers, (2, 3), x, out, backend=backend, BLOCK=32):
        # PTX contracts x * x + (1 + x) into one fma, as Triton does: one rounding fewer.
        np.testing.assert_allclose(out, np.clip(1.0 + x + x * x, 0.5, 4.0).astype(np.float32),
                                   **tolerance(np.float32))


@tc.kernel
def _asserting(x, out, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(x + o, mask=o < n, other=0)
    tl.device_assert(v >= 0, "negative input")
    tl.device_assert(n <= BLOCK)
    tl.store(out + o, v + 1, mask=o < n)


def test_device_assert_that_holds_does_not_fire(backend):
    x = np.random.default_rng(21).integers(0, 100, 50).astype(np.int32)
    out = np.zeros_like(x)
    if launch(_asserting, (1,), x, out, 50, backend=backend, debug=True, BLOCK=64):
        np.testing.assert_array_equal(out, x + 1)


@tc.kernel
def _jumps(x, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    v = tl.load(x + pid * BLOCK + o)
    if pid == 0 and n > 3:
        v = v + 100
    elif pid == 1 or n < 0:
        v = v - 100
    elif pid % 2 == 0:
        tl.store(out + pid * BLOCK + o, v * 0 - 7)
        return
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in range(n, 0, -2):
        acc += i
    for _ in tl.range(0, 10, 3):
        acc += v
    j = 0
    while j < 6:
        j += 1
        if j == 2:
            continue
        if j == 5:
            break
        acc += 1
    bonus = 3 if n > 5 else 4
    tl.store(out + pid * BLOCK + o, acc + bonus)


@pytest.mark.parametrize("n", [4, 9])
def test_if_elif_early_return_break_continue(backend, n):
    x = np.random.default_rng(25).integers(-50, 50, 4 * 16).astype(np.int32)
    out = np.zeros(64, np.int32)
    if launch(_jumps, (4,), x, out, n, backend=backend, BLOCK=16):
        v = x.reshape(4, 16).copy()
        v[0] += 100
        v[1] -= 100
        want = sum(range(n, 0, -2)) + 4 * v + 3 + (3 if n > 5 else 4)
        want[2] = -7
        np.testing.assert_array_equal(out.reshape(4, 16), want)


@tc.kernel
def _atomic_broadcasts(out, hi, BLOCK: tl.constexpr):
    """The mask and the value broadcast to the pointer's shape, and the pointer to the
    value's, as Triton does for atomics."""
    r = tl.arange(0, BLOCK)
    cols = tl.arange(0, 4)
    tl.atomic_add(out + r[:, None] * 4 + cols[None, :], 1, mask=r[:, None] < 3)
    tl.atomic_max(hi + cols[None, :], r[:, None])


def test_atomic_operands_broadcast_together(backend):
    block = 8
    out, hi = np.zeros((block, 4), np.int32), np.full(4, -1, np.int32)
    if launch(_atomic_broadcasts, (1,), out, hi, backend=backend, BLOCK=block):
        np.testing.assert_array_equal(out, (np.arange(block) < 3)[:, None] * np.ones(4))
        np.testing.assert_array_equal(hi, np.full(4, block - 1))


WIDTH = tl.constexpr(16)  # Triton's form for a global a kernel reads
SCALE = tl.constexpr(3)


@tc.kernel
def _constexpr_globals(out):
    r = tl.arange(0, WIDTH)
    tl.store(out + r, r * SCALE + WIDTH)


def test_constexpr_globals(backend):
    out = np.zeros(16, np.int32)
    if launch(_constexpr_globals, (1,), out, backend=backend):
        np.testing.assert_array_equal(out, np.arange(16) * 3 + 16)


@tc.kernel
def _python_min_max_abs(x, out, BLOCK: tl.constexpr):
    """Python's min, max and abs on tiles, as Triton reads them."""
    r = tl.arange(0, BLOCK)
    a = tl.load(x + r)
    tl.store(out + r, max(a, 0.25))
    tl.store(out + BLOCK + r, min(a, -a, 0.5))
    tl.store(out + 2 * BLOCK + r, abs(a))


def test_python_min_max_abs_on_tiles(backend):
    x = np.random.default_rng(9).standard_normal(32).astype(np.float32)
    out = np.zeros(96, np.float32)
    if launch(_python_min_max_abs, (1,), x, out, backend=backend, BLOCK=32):
        np.testing.assert_array_equal(out[:32], np.maximum(x, np.float32(0.25)))
        np.testing.assert_array_equal(out[32:64], np.minimum(np.minimum(x, -x), 0.5))
        np.testing.assert_array_equal(out[64:], np.abs(x))


@tc.kernel
def _optional_bias(x, bias, out, BLOCK: tl.constexpr):
    """An optional argument: None compiles as a constant, and ``is (not) None`` folds."""
    r = tl.arange(0, BLOCK)
    v = tl.load(x + r)
    if bias is not None:
        v += tl.load(bias + r)
    if bias is None and v is not None:
        v = v * 2.0
    tl.store(out + r, v)


def test_none_arguments_and_is_none(backend):
    x = np.arange(16, dtype=np.float32)
    bias, out = np.full(16, 0.5, np.float32), np.zeros(16, np.float32)
    if launch(_optional_bias, (1,), x, bias, out, backend=backend, BLOCK=16):
        np.testing.assert_array_equal(out, x + 0.5)
    if launch(_optional_bias, (1,), x, None, out, backend=backend, BLOCK=16):
        np.testing.assert_array_equal(out, x * 2)


@tc.kernel
def _downcast(x, out, HOW: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.store(out + r, tl.load(x + r).to(tl.float16, fp_downcast_rounding=HOW))


def test_fp_downcast_rounding(backend):
    x = np.random.default_rng(4).standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float16)
    if launch(_downcast, (1,), x, out, backend=backend, HOW="rtne", BLOCK=16):
        np.testing.assert_array_equal(out, x.astype(np.float16))
    with pytest.raises(tc.CompileError, match="must be 'rtne' .* or 'rtz'"):
        launch(_downcast, (1,), x, out, backend=backend, HOW="rd", BLOCK=16)


@tc.kernel
def _identity(x, out, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(x + r)
    b = a
    if b is a and a is not None and not (a is r):
        a = a + 1.0
    tl.store(out + r, a)


def test_is_compares_identity(backend):
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    if launch(_identity, (1,), x, out, backend=backend, BLOCK=8):
        np.testing.assert_array_equal(out, x + 1)
