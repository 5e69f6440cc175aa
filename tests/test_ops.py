"""Every builtin and operator of the slice, on numpy, wgsl (lavapipe here) and ptx (run on
a GPU; compiled and assembled for sm_90 without one), against NumPy computed directly."""

import numpy as np
import pytest

import compiler as tc
from tests import kernels as K
from tests.conftest import launch, tolerance

SIZES = [1, 1000, 4099]  # odd sizes: never a multiple of the block


def c_div(a, b):
    q = np.trunc(a.astype(np.float64) / b).astype(np.int64)
    return q


def c_mod(a, b):
    return a.astype(np.int64) - b * c_div(a, b)


INT_REF = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": c_div, "mod": c_mod, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "lshift": lambda a, b: a << (b & 15),
    "rshift": lambda a, b: a >> (b & 15), "maximum": np.maximum, "minimum": np.minimum,
    "pow": lambda a, b: a ** 3, "truediv": lambda a, b: a.astype(np.float32) / b,
}
FLOAT_REF = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
    "mod": np.fmod, "maximum": np.maximum,
    "minimum": np.minimum, "pow": lambda a, b: a * (a * a),  # x ** 3 by squaring
}


def _ints(rng, n, dtype):
    info = np.iinfo(dtype)
    lo, hi = (max(info.min, -1000), min(info.max, 1000))
    return rng.integers(lo, hi, n).astype(dtype)


@pytest.mark.parametrize("op", sorted(INT_REF))
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_integer_binary(backend, rng, op, dtype):
    if dtype == np.uint32 and op in ("sub", "rshift", "floordiv", "mod"):
        a, b = rng.integers(0, 2**31, 4099).astype(dtype), rng.integers(1, 500, 4099).astype(dtype)
    else:
        a, b = _ints(rng, 4099, dtype), _ints(rng, 4099, dtype)
        b[b == 0] = 3
    want = INT_REF[op](a, b)
    out = np.zeros(4099, dtype=np.float32 if op == "truediv" else dtype)
    if launch(K.binary, (tc.cdiv(4099, 256),), a, b, out, 4099, backend=backend, OP=op,
              BLOCK=256):
        if op == "truediv":
            np.testing.assert_allclose(out, want, rtol=1e-6)
        else:
            np.testing.assert_array_equal(out, want.astype(dtype))


@pytest.mark.parametrize("op", sorted(FLOAT_REF))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", SIZES)
def test_float_binary(backend, rng, op, dtype, n):
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    b[np.abs(b) < 0.1] = 0.5
    if op in ("maximum", "minimum") and n > 10:
        a[::7] = np.nan  # NaN propagates through tl.maximum/minimum
    out = np.full(n, -7, dtype=dtype)
    if launch(K.binary, (tc.cdiv(n, 128),), a, b, out, n, backend=backend, OP=op, BLOCK=128):
        want = FLOAT_REF[op](a, b).astype(dtype)
        tol = tolerance(dtype, op)
        if op == "mod":  # |a| - |b|*trunc(|a/b|): exact but for the rounding of |b|*trunc
            tol["atol"] = max(tol["atol"], 4 * float(np.finfo(dtype).eps) * np.abs(a).max())
        np.testing.assert_allclose(out, want, equal_nan=True, **tol)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_compare(backend, rng, op, dtype):
    n = 3001
    if dtype == np.float32:
        a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
        a[::5] = b[::5]
        a[::11] = np.nan
    else:
        a, b = rng.integers(0, 50, n).astype(dtype), rng.integers(0, 50, n).astype(dtype)
        if dtype == np.uint32:
            a[::3] = 2**32 - 5  # large unsigned values compare as unsigned
    out = np.full(n, -1, dtype=np.int32)
    if launch(K.compare, (tc.cdiv(n, 512),), a, b, out, n, backend=backend, OP=op, BLOCK=512):
        want = getattr(np, {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                            "gt": "greater", "ge": "greater_equal"}[op])(a, b)
        np.testing.assert_array_equal(out, want.astype(np.int32))


FLOAT_UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "exp2": np.exp2, "log": np.log,
    "log2": np.log2, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "sin": np.sin,
    "cos": np.cos, "floor": np.floor, "ceil": np.ceil, "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
}


@pytest.mark.parametrize("op", sorted(FLOAT_UNARY))
def test_float_unary(backend, rng, op):
    n = 2047
    a = rng.uniform(-4, 4, n).astype(np.float32)
    if op in ("log", "log2", "sqrt", "rsqrt"):
        a = np.abs(a) + 0.01
    out = np.zeros(n, dtype=np.float32)
    if launch(K.unary, (tc.cdiv(n, 256),), a, out, n, backend=backend, OP=op, BLOCK=256):
        np.testing.assert_allclose(out, FLOAT_UNARY[op](a), **tolerance(np.float32, op))


@pytest.mark.parametrize("op", ["neg", "invert", "not", "abs"])
def test_int_unary(backend, rng, op):
    n = 999
    a = rng.integers(-100, 100, n).astype(np.int32)
    out = np.zeros(n, dtype=np.int32)
    if launch(K.unary, (tc.cdiv(n, 128),), a, out, n, backend=backend, OP=op, BLOCK=128):
        want = {"neg": -a, "invert": ~a, "not": (~(a > 0)).astype(np.int32),
                "abs": np.abs(a)}[op]
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("op", ["where", "fma", "clamp", "logical"])
def test_ternary(backend, rng, op):
    n = 1500
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = np.zeros(n, dtype=np.float32)
    if launch(K.ternary, (tc.cdiv(n, 256),), a, b, c, out, n, backend=backend, OP=op,
              BLOCK=256):
        want = {"where": np.where(a > b, b, c), "fma": a * b + c,
                "clamp": np.clip(a, np.minimum(b, c), np.maximum(b, c)),
                "logical": np.where((a > 0) & (b > 0) | (c > 0), a, c)}[op]
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


CASTS = [(np.float32, np.int32), (np.int32, np.float32), (np.float32, np.float16),
         (np.float16, np.float32), (np.uint32, np.float32), (np.int32, np.uint32),
         (np.float32, np.uint32)]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(backend, rng, src, dst):
    n = 777
    if np.dtype(src).kind == "f":
        a = rng.uniform(0 if np.dtype(dst).kind == "u" else -1000, 1000, n).astype(src)
    else:
        a = rng.integers(0, 10**6, n).astype(src)
    out = np.zeros(n, dtype=dst)
    if launch(K.cast, (tc.cdiv(n, 128),), a, out, n, backend=backend, BLOCK=128):
        np.testing.assert_array_equal(out, a.astype(dst))


def test_scalar_arguments(backend, rng):
    n = 1234
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    if launch(K.scalar_args, (tc.cdiv(n, 256),), x, out, n, 1.5, 7, backend=backend,
              BLOCK=256):
        np.testing.assert_allclose(out, x * 1.5 + 7 + -(-n // 7), rtol=1e-6)


def test_two_dimensional_grid(backend):
    rows, width = 5, 300
    out = np.full(rows * width, -1, dtype=np.int32)
    if launch(K.grid_2d, (tc.cdiv(width, 128), rows), out, width, backend=backend, BLOCK=128):
        want = (np.arange(rows)[:, None] * 1000 + np.arange(width)[None, :]).reshape(-1)
        np.testing.assert_array_equal(out, want)


def test_creation_builtins(backend):
    n = 300
    out = np.zeros(n, dtype=np.float32)
    if launch(K.creation, (tc.cdiv(n, 64),), out, n, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(out, 2.5 + np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("block", [32, 256, 2048])
def test_layouts_cover_every_element(backend, rng, num_warps, block):
    """Tiles smaller than, equal to and larger than the threads of a program."""
    n = 3 * block + 5
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    if launch(K.scalar_load, (tc.cdiv(n, block),), x, out, n, backend=backend,
              num_warps=num_warps, BLOCK=block):
        np.testing.assert_array_equal(out, x - x[0])
