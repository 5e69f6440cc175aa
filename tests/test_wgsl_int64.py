"""int64 on WGSL, held as pairs of 32-bit words (backends/wgsl/wide.py), against the NumPy
backend (the reference semantics) over random and edge values: arithmetic that wraps,
C division, shifts past the width, comparisons, casts to and from every narrower type and
float, int64 arrays and scalars, and the Triton idioms that bring int64 into index math."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability

pytestmark = pytest.mark.skipif(not availability("wgsl")[0],
                                reason=f"wgsl: {availability('wgsl')[1]}")

I64 = np.iinfo(np.int64)
EDGES = np.array([0, 1, -1, 2, -2, 7, -7, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1,
                  2**32, 2**32 + 1, -2**32, -2**32 - 1, 2**62, 2**63 - 2**32, I64.max,
                  I64.min, I64.min + 1, 12345678901, -98765432109], np.int64)


def values(n: int, seed: int) -> np.ndarray:
    """Edge values, then a random mix of full-range, word-sized and small int64s."""
    rng = np.random.default_rng(seed)
    full = rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True)
    word = rng.integers(-2**33, 2**33, n, dtype=np.int64)
    small = rng.integers(-300, 300, n, dtype=np.int64)
    pick = rng.integers(0, 3, n)
    return np.concatenate([EDGES, np.choose(pick, [full, word, small])])


def pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, then random values."""
    a, b = np.meshgrid(EDGES, EDGES)
    return (np.concatenate([a.ravel(), values(n, seed)]),
            np.concatenate([b.ravel(), values(n, seed + 1)]))


def both(kernel, grid, outs, *args, **constexprs) -> list[np.ndarray]:
    """Run on numpy and on wgsl, each into its own copy of the outputs ``outs`` (indices
    into args); checks the wgsl results equal numpy's, and returns them."""
    results = {}
    for backend in ("numpy", "wgsl"):
        run = [a.copy() if i in outs else a for i, a in enumerate(args)]
        kernel[grid](*run, backend=backend, **constexprs)
        results[backend] = [run[i] for i in outs]
    for want, got in zip(results["numpy"], results["wgsl"], strict=True):
        np.testing.assert_array_equal(got, want, err_msg=f"{constexprs}: wgsl differs")
    return results["wgsl"]


@tc.kernel
def binary(x, y, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    if OP == "add":
        r = a + b
    elif OP == "sub":
        r = a - b
    elif OP == "mul":
        r = a * b
    elif OP == "floordiv":
        r = a // b
    elif OP == "mod":
        r = a % b
    elif OP == "and":
        r = a & b
    elif OP == "or":
        r = a | b
    elif OP == "xor":
        r = a ^ b
    elif OP == "lshift":
        r = a << b
    elif OP == "rshift":
        r = a >> b
    elif OP == "maximum":
        r = tl.maximum(a, b)
    elif OP == "minimum":
        r = tl.minimum(a, b)
    elif OP == "where":
        r = tl.where(a < b, b, a)
    elif OP == "wide_mul":  # 32 x 32 bits into 64
        r = a.to(tl.int32).to(tl.int64) * b.to(tl.int32).to(tl.int64)
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + offs, r, mask=m)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "floordiv", "mod", "and", "or", "xor",
                                "lshift", "rshift", "maximum", "minimum", "where",
                                "wide_mul"])
def test_binary(op):
    a, b = pairs(300, 1)
    if op in ("lshift", "rshift"):  # mostly in range, some from 64 on or negative
        b = np.where(np.arange(b.size) % 4 == 0, b, np.abs(b) % 70)
    out = np.zeros_like(a)
    both(binary, (-(-a.size // 256),), [2], a, b, out, a.size, OP=op, BLOCK=256)


@tc.kernel
def compare(x, y, out, n, BLOCK: tl.constexpr):
    """Every comparison at once, one bit each."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    r = (a == b).to(tl.int32) | (a != b).to(tl.int32) << 1 | (a < b).to(tl.int32) << 2
    r = r | (a <= b).to(tl.int32) << 3 | (a > b).to(tl.int32) << 4
    r = r | (a >= b).to(tl.int32) << 5
    tl.store(out + offs, r, mask=m)


def test_comparisons():
    a, b = pairs(300, 2)
    b[::5] = a[::5]  # equal pairs, beyond the edge diagonal
    out = np.zeros(a.size, np.int32)
    (got,) = both(compare, (-(-a.size // 128),), [2], a, b, out, a.size, BLOCK=128)
    assert len(np.unique(got)) == 3  # equal, less, greater all met


@tc.kernel
def unary(x, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    if OP == "neg":
        r = -a
    elif OP == "invert":
        r = ~a
    elif OP == "abs":
        r = tl.abs(a)
    elif OP == "shift_constants":
        r = (a << 3) ^ (a >> 35) ^ (a >> 1) ^ (a << 40)
    elif OP == "constant_math":
        r = a * 6700417 + 2**40 - a // 1000003 + a % 10
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + offs, r, mask=m)


@pytest.mark.parametrize("op", ["neg", "invert", "abs", "shift_constants", "constant_math"])
def test_unary(op):
    a = values(500, 3)
    out = np.zeros_like(a)
    both(unary, (-(-a.size // 128),), [1], a, out, a.size, OP=op, BLOCK=128)


@tc.kernel
def cast(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m).to(out.dtype.element_ty), mask=m)


NARROWER = [np.int32, np.uint32, np.int16, np.int8, np.uint8, np.bool_, np.float32,
            np.float16]


@pytest.mark.parametrize("dtype", NARROWER)
def test_casts_from_int64(dtype):
    a = values(500, 4)
    a[-40:] = np.arange(-20, 20) + (1 << 53) + (1 << 29)  # ties and near-ties of float32
    out = np.zeros(a.size, dtype)
    both(cast, (-(-a.size // 128),), [1], a, out, a.size, BLOCK=128)


def _from(dtype) -> np.ndarray:
    if dtype == np.bool_:
        return np.arange(64) % 3 == 0
    if np.dtype(dtype).kind == "f":
        x = np.random.default_rng(5).standard_normal(300) * 10.0 ** np.arange(300) % 21
        edges = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2**31, -2**31, 2**32, 4294967295.5,
                 2**53 + 2, 2**63, -2**63, 2**64, -2**64, 1e19, -1e19, 3e38, -3e38,
                 np.inf, -np.inf, np.nan]
        return np.concatenate([edges, x]).astype(dtype)
    info = np.iinfo(dtype)
    return np.concatenate([[0, 1, info.min, info.max, info.max - 1, info.min + 1],
                           np.random.default_rng(6).integers(info.min, info.max, 300)]
                          ).astype(dtype)


@pytest.mark.parametrize("dtype", NARROWER)
def test_casts_to_int64(dtype):
    a = _from(dtype)
    out = np.zeros(a.size, np.int64)
    with np.errstate(invalid="ignore"):
        both(cast, (-(-a.size // 128),), [1], a, out, a.size, BLOCK=128)
