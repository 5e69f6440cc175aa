"""Triton's libdevice integer functions, conversions, bit reinterpretations and the float
tests (``isnan``, ``signbit``, ...), on every backend against answers computed here with
Python integers and NumPy (WGSL has no 64-bit floats: float64 cases are refused there)."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

libdevice = tl.extra.libdevice
N = 64


@tc.kernel
def unary(x, out, FN: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, FN(tl.load(x + o)))


@tc.kernel
def binary(x, y, out, FN: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, FN(tl.load(x + o), tl.load(y + o)))


@tc.kernel
def ternary(x, y, z, out, FN: tl.constexpr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, FN(tl.load(x + o), tl.load(y + o), tl.load(z + o)))


def _ints(dtype, seed=0) -> np.ndarray:
    info = np.iinfo(dtype)
    v = np.random.default_rng(seed).integers(info.min, info.max, N, dtype=dtype,
                                             endpoint=True)
    v[:6] = np.array([0, -1, 1, info.min, info.max, 1 << 20], np.int64).astype(dtype)
    return v


def _run(kernel, fn, args, out_dtype, backend) -> np.ndarray | None:
    if backend == "wgsl" and np.dtype(np.float64) in (*(a.dtype for a in args), out_dtype):
        with pytest.raises(tc.UnsupportedError):
            launch(kernel, (1,), *args, np.zeros(N, out_dtype), backend=backend, FN=fn, N=N)
        return None
    out = np.zeros(N, out_dtype)
    return out if launch(kernel, (1,), *args, out, backend=backend, FN=fn, N=N) else None


def _u(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _s(v: int, bits: int) -> int:
    v = _u(v, bits)
    return v - (1 << bits) if v >> (bits - 1) else v


# name -> (the answer for one element as a Python int, the result's bits)
_COUNTS = {
    "popc": lambda v, w: _u(v, w).bit_count(),
    "clz": lambda v, w: w - _u(v, w).bit_length(),
    "ffs": lambda v, w: (_u(v, w) & -_u(v, w)).bit_length(),
    "brev": lambda v, w: _s(int(f"{_u(v, w):0{w}b}"[::-1], 2), w),
}


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", list(_COUNTS))
def test_bit_counts(backend, name, dtype):
    x = _ints(dtype)
    width = np.dtype(dtype).itemsize * 8
    out_dtype = dtype if name == "brev" else np.int32
    got = _run(unary, getattr(libdevice, name), [x], out_dtype, backend)
    if got is not None:
        assert got.tolist() == [_COUNTS[name](int(v), width) for v in x]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
def test_mulhi(backend, dtype):
    x, y = _ints(dtype, 1), _ints(dtype, 2)
    width = np.dtype(dtype).itemsize * 8
    got = _run(binary, libdevice.mulhi, [x, y], dtype, backend)
    if got is not None:
        want = [(int(a) * int(b)) >> width for a, b in zip(x, y, strict=True)]
        assert [int(v) for v in got] == [_s(w, width) if dtype != np.uint32 else _u(w, width)
                                        for w in want]


_PAIRS = {
    "mul24": lambda a, b: _s(_s(a, 24) * _s(b, 24), 32),
    "hadd": lambda a, b: (a + b) >> 1,
    "rhadd": lambda a, b: (a + b + 1) >> 1,
}


@pytest.mark.parametrize("name", list(_PAIRS))
def test_pairs(backend, name):
    x, y = _ints(np.int32, 3), _ints(np.int32, 4)
    got = _run(binary, getattr(libdevice, name), [x, y], np.int32, backend)
    if got is not None:
        assert got.tolist() == [_PAIRS[name](int(a), int(b)) for a, b in zip(x, y, strict=True)]


def test_sad_and_byte_perm(backend):
    x, y, z = _ints(np.int32, 5), _ints(np.int32, 6), _ints(np.int32, 7)
    got = _run(ternary, libdevice.sad, [x, y, z], np.int32, backend)
    if got is not None:
        assert got.tolist() == [_s(abs(int(a) - int(b)) + int(c), 32)
                                for a, b, c in zip(x, y, z, strict=True)]
    got = _run(ternary, libdevice.byte_perm, [x, y, z], np.int32, backend)
    if got is not None:
        def perm(a: int, b: int, s: int) -> int:
            data = _u(a, 32) | _u(b, 32) << 32
            return _s(sum(((data >> (8 * ((s >> 4 * i) & 7))) & 0xFF) << 8 * i
                          for i in range(4)), 32)
        assert got.tolist() == [perm(int(a), int(b), int(c))
                                for a, b, c in zip(x, y, z, strict=True)]


_FLOATS = np.array([0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.5, 3.7, -3.7, 1e9, -1e9,
                    np.inf, -np.inf, np.nan, 1e-45] * 4, np.float32)


@pytest.mark.parametrize("name, want", [
    ("isnan", np.isnan), ("isinf", np.isinf), ("finitef", np.isfinite),
    ("signbit", lambda x: np.signbit(x).astype(np.int32)),
    ("ilogb", lambda x: np.where(np.isnan(x) | (x == 0), -2**31, np.where(
        np.isinf(x), 2**31 - 1, np.frexp(np.where(np.isfinite(x), x, 1))[1] - 1))),
    ("trunc", np.trunc), ("rint", np.rint), ("nearbyint", np.rint),
    ("saturatef", lambda x: np.where(x > 0, np.minimum(x, 1), 0).astype(np.float32)),
    ("fast_expf", None), ("rcp_rn", lambda x: (1 / x).astype(np.float32)),
])
def test_float_tests_and_rounding(backend, name, want):
    if want is None:  # an alias of tl.exp
        assert getattr(libdevice, name) is not tl.exp
        want = np.exp
    got_type = {"isnan": np.bool_, "isinf": np.bool_, "finitef": np.bool_, "signbit": np.int32,
                "ilogb": np.int32}.get(name, np.float32)
    x = _FLOATS
    got = _run(unary, getattr(libdevice, name), [x], got_type, backend)
    if got is None:
        return
    with np.errstate(all="ignore"):
        expected = np.asarray(want(x))
    if got_type is np.float32 and name == "fast_expf":
        np.testing.assert_allclose(got, expected, rtol=2e-5)
    else:
        np.testing.assert_array_equal(got, expected.astype(got_type))


def test_fdim_copysign_nextafter(backend):
    x = _FLOATS
    y = np.roll(_FLOATS, 3)
    for name, want in (("fdim", lambda a, b: np.where(a > b, a - b, np.where(
            np.isnan(a) | np.isnan(b), np.nan, 0.0)).astype(np.float32)),
            ("copysign", np.copysign), ("nextafter", np.nextafter),
            ("add_rn", np.add), ("mul_rn", np.multiply)):
        got = _run(binary, getattr(libdevice, name), [x, y], np.float32, backend)
        if got is not None:
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(got, want(x, y), err_msg=name)


_IN_RANGE = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.7, -0.7, 100.25, -100.75,
                      1e6 + 0.5, -(2.0 ** 30), 123.5, 7.0] * 4, np.float32)


@pytest.mark.parametrize("rounding, fn", [("rn", np.rint), ("rz", np.trunc), ("rd", np.floor),
                                          ("ru", np.ceil)])
def test_float_to_int(backend, rounding, fn):
    got = _run(unary, getattr(libdevice, f"float2int_{rounding}"), [_IN_RANGE], np.int32,
               backend)
    if got is not None:
        np.testing.assert_array_equal(got, fn(_IN_RANGE).astype(np.int32))
    got = _run(unary, getattr(libdevice, f"float2ll_{rounding}"), [_IN_RANGE], np.int64,
               backend)
    if got is not None:
        np.testing.assert_array_equal(got, fn(_IN_RANGE).astype(np.int64))


def test_ints_to_floats_and_bits(backend):
    i = _ints(np.int32, 8)
    got = _run(unary, libdevice.int2float_rn, [i], np.float32, backend)
    if got is not None:
        np.testing.assert_array_equal(got, i.astype(np.float32))
    got = _run(unary, libdevice.uint2float_rn, [i], np.float32, backend)
    if got is not None:
        np.testing.assert_array_equal(got, i.view(np.uint32).astype(np.float32))
    got = _run(unary, libdevice.int_as_float, [i], np.float32, backend)
    if got is not None:
        np.testing.assert_array_equal(got.view(np.int32), i)
    got = _run(unary, libdevice.float_as_int, [_FLOATS], np.int32, backend)
    if got is not None:
        np.testing.assert_array_equal(got, _FLOATS.view(np.int32))


def test_double_words(backend):
    d = np.random.default_rng(9).standard_normal(N) * 1e100
    hi = _run(unary, libdevice.double2hiint, [d], np.int32, backend)
    lo = _run(unary, libdevice.double2loint, [d], np.int32, backend)
    if hi is None or lo is None:
        return
    words = d.view(np.int64)
    np.testing.assert_array_equal(hi, (words >> 32).astype(np.int32))
    np.testing.assert_array_equal(lo, words.astype(np.int32))
    back = _run(binary, libdevice.hiloint2double, [hi, lo], np.float64, backend)
    if back is not None:
        np.testing.assert_array_equal(back, d)


def test_integer_functions_need_32_or_64_bits():
    x = np.zeros(N, np.int8)
    with pytest.raises(tc.CompileError, match="libdevice.popc takes 32- or 64-bit integer"):
        unary[(1,)](x, np.zeros(N, np.int32), FN=libdevice.popc, N=N, backend="numpy")
