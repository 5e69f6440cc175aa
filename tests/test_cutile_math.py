"""compiler.tile's elementwise builtins with cuTile's meaning: the function forms of the
operators, comparisons and bitwise operations, NaN-ignoring minimum/maximum and max/min
reductions, rounding modes (directed rounding against an exact float64 reference), and
their argument checks; on every backend (ptx without a GPU: compiled and assembled)."""

import warnings

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from tests.conftest import launch
from tests.test_cutile_api import kernel_of


def _rows(out, tiles, t):
    """Store each 1-D tile of ``tiles`` as a row of ``out``."""
    for i in ct.static_iter(range(len(tiles))):
        ct.store(out, (i, 0), tiles[i].reshape((1, t)))


@ct.kernel
def float_forms(x, y, out, T: ct.Constant[int]):
    a = ct.load(x, (0,), (T,))
    b = ct.load(y, (0,), (T,))
    _rows(out, (ct.add(a, b), ct.sub(a, 1.5), ct.mul(a, b), ct.truediv(a, b),
                ct.floordiv(a, b), ct.mod(a, b), ct.pow(b, 2.0), ct.negative(a),
                ct.atan2(a, b), ct.tan(a), ct.sinh(a), ct.cosh(a),
                ct.exp2(a, flush_to_zero=True),
                ct.truediv(a, b, rounding_mode=ct.RoundingMode.APPROX, flush_to_zero=True),
                ct.sqrt(ct.abs(b), rounding_mode=ct.RoundingMode.APPROX),
                ct.exp(a, rounding_mode=ct.RoundingMode.FULL) + ct.tanh(a)), T)


def test_float_function_forms(backend, rng):
    """``ct.mod`` of floats takes the divisor's sign, as Python's ``%`` (C's ``fmod``
    takes the dividend's)."""
    x = rng.uniform(-3, 3, 16).astype(np.float32)
    y = rng.choice([-1.25, 0.75, 2.5], 16).astype(np.float32)
    out = np.zeros((16, 16), np.float32)
    if launch(float_forms, (1,), x, y, out, backend=backend, T=16):
        want = [x + y, x - 1.5, x * y, x / y, np.floor(x / y), np.mod(x, y), y ** 2, -x,
                np.arctan2(x, y), np.tan(x), np.sinh(x), np.cosh(x), np.exp2(x), x / y,
                np.sqrt(np.abs(y)), np.exp(x) + np.tanh(x)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for got, w in zip(out, want, strict=True):
                np.testing.assert_allclose(got, w, rtol=2e-5, atol=2e-5, equal_nan=True)


@ct.kernel
def int_forms(x, y, out, T: ct.Constant[int]):
    a = ct.load(x, (0,), (T,))
    b = ct.load(y, (0,), (T,))
    q, r = ct.divmod(a, b)
    _rows(out, (ct.floordiv(a, b), ct.mod(a, b), q, r, ct.bitwise_and(a, b),
                ct.bitwise_or(a, b), ct.bitwise_xor(a, b), ct.bitwise_lshift(a, 2),
                ct.bitwise_rshift(a, 1), ct.bitwise_not(a),
                ct.greater(a, b).astype(ct.int32), ct.greater_equal(a, b).astype(ct.int32),
                ct.less(a, b).astype(ct.int32), ct.less_equal(a, b).astype(ct.int32),
                ct.equal(a, b).astype(ct.int32), ct.not_equal(a, 3).astype(ct.int32)), T)


def test_integer_function_forms(backend, rng):
    x = rng.integers(-50, 50, 16).astype(np.int32)
    y = rng.choice([-7, -3, 2, 5], 16).astype(np.int32)
    x[:2] = y[:2]  # some equal pairs
    out = np.zeros((16, 16), np.int32)
    if launch(int_forms, (1,), x, y, out, backend=backend, T=16):
        want = [x // y, x % y, x // y, x % y, x & y, x | y, x ^ y, x << 2, x >> 1, ~x,
                x > y, x >= y, x < y, x <= y, x == y, x != 3]
        for got, w in zip(out, want, strict=True):
            np.testing.assert_array_equal(got, w)


@ct.kernel
def nan_extremes(x, y, out, idx, T: ct.Constant[int]):
    a = ct.load(x, (0, 0), (T, T))
    b = ct.load(y, (0, 0), (T, T))
    tiles = (ct.maximum(a, b), ct.minimum(a, b), ct.maximum(a, b, propagate_nan=True),
             ct.broadcast_to(ct.max(a, axis=1, keepdims=True), (T, T)),
             ct.broadcast_to(a.min(1, keepdims=True, propagate_nan=True), (T, T)),
             tl.maximum(a, b))
    for i in ct.static_iter(range(len(tiles))):
        ct.store(out, (i, 0, 0), tiles[i].reshape((1, T, T)))
    _rows(idx, (ct.argmax(a, axis=1), ct.argmax(a, axis=1, propagate_nan=True),
                a.argmin(1)), T)


def _first_ignoring_nan(pick, a):
    return np.array([0 if np.isnan(r).all() else pick(r) for r in a])


def test_nan_is_ignored_unless_propagated(backend, rng):
    """cuTile's default: a NaN gives way to a number in minimum/maximum and in max/min and
    argmax/argmin reductions; ``propagate_nan=True`` makes it win. ``tl.maximum`` in a
    ``@ct.kernel`` is ``ct.maximum``."""
    n = 8
    a, b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    a[rng.random((n, n)) < 0.3] = np.nan
    b[rng.random((n, n)) < 0.3] = np.nan
    a[3] = np.nan  # a row of NaNs: NaN, and index 0
    out, idx = np.zeros((6, n, n), np.float32), np.zeros((3, n), np.int32)
    if launch(nan_extremes, (1,), a, b, out, idx, backend=backend, T=n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = [np.fmax(a, b), np.fmin(a, b), np.maximum(a, b),
                    np.broadcast_to(np.nanmax(a, 1, keepdims=True), (n, n)),
                    np.broadcast_to(np.min(a, 1, keepdims=True), (n, n)), np.fmax(a, b)]
        for got, w in zip(out, want, strict=True):
            np.testing.assert_array_equal(got, w)
        np.testing.assert_array_equal(idx[0], _first_ignoring_nan(np.nanargmax, a))
        np.testing.assert_array_equal(idx[1], np.argmax(a, 1))
        np.testing.assert_array_equal(idx[2], _first_ignoring_nan(np.nanargmin, a))


@ct.kernel
def directed(x, y, out, T: ct.Constant[int]):
    a = ct.load(x, (0,), (T,))
    b = ct.load(y, (0,), (T,))
    modes = (ct.RoundingMode.RZ, ct.RoundingMode.RM, ct.RoundingMode.RP)
    for m in ct.static_iter(range(3)):
        rm = modes[m]
        tiles = (ct.add(a, b, rounding_mode=rm), ct.sub(a, b, rounding_mode=rm),
                 ct.mul(a, b, rounding_mode=rm), ct.truediv(a, b, rounding_mode=rm),
                 ct.sqrt(ct.abs(a), rounding_mode=rm))
        for k in ct.static_iter(range(5)):
            ct.store(out, (m, k, 0), tiles[k].reshape((1, 1, T)))


def _rounded(exact: np.ndarray, mode: str) -> np.ndarray:
    """``exact`` (float64) rounded to float32 toward zero, down or up."""
    r = exact.astype(np.float32)
    r64 = r.astype(np.float64)
    step = {"RZ": np.abs(r64) > np.abs(exact), "RM": r64 > exact, "RP": r64 < exact}[mode]
    target = {"RZ": 0.0, "RM": -np.inf, "RP": np.inf}[mode]
    return np.where(step, np.nextafter(r, np.float32(target)), r)


def test_directed_rounding(backend, rng):
    """RZ/RM/RP of float32 add, sub, mul, truediv and sqrt, bit for bit against the exact
    results (float64 holds sums and products of these exactly, and quotients and roots
    closely enough to tell the side)."""
    x = (rng.standard_normal(64) * 10).astype(np.float32)
    y = (rng.standard_normal(64) * 10).astype(np.float32)
    out = np.zeros((3, 5, 64), np.float32)
    if launch(directed, (1,), x, y, out, backend=backend, T=64):
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        exact = [x64 + y64, x64 - y64, x64 * y64, x64 / y64, np.sqrt(np.abs(x64))]
        for m, mode in enumerate(("RZ", "RM", "RP")):
            for k, e in enumerate(exact):
                np.testing.assert_array_equal(out[m, k], _rounded(e, mode), f"{mode} {k}")


@ct.kernel
def narrowed(x, rn, rz, wide):
    t = ct.load(x, (0,), (16,))
    ct.store(rn, (0,), t.astype(ct.float16, rounding_mode=ct.RoundingMode.RN))
    ct.store(rz, (0,), ct.astype(t, ct.float16, rounding_mode=ct.RoundingMode.RZ))
    ct.store(wide, (0,), ct.astype(t, ct.float64, rounding_mode=ct.RoundingMode.RP))


def test_astype_rounding_mode(backend, rng):
    """RZ narrows toward zero; widening is exact whatever the mode."""
    if backend == "wgsl":
        pytest.skip("WGSL has no float64")
    x = (rng.standard_normal(16) * 100).astype(np.float32)
    rn, rz = np.zeros(16, np.float16), np.zeros(16, np.float16)
    wide = np.zeros(16, np.float64)
    if launch(narrowed, (1,), x, rn, rz, wide, backend=backend):
        np.testing.assert_array_equal(rn, x.astype(np.float16))
        np.testing.assert_array_equal(rz, _toward_zero16(x))
        np.testing.assert_array_equal(wide, x.astype(np.float64))


def _toward_zero16(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to float16 toward zero."""
    r = x.astype(np.float16)
    away = np.abs(r.astype(np.float32)) > np.abs(x)
    return np.where(away, np.nextafter(r, np.float16(0)), r)


# ---------------------------------------------------------------- argument checks

def _kernel(body: str):
    """A kernel of ``body``, after ``a = ct.load(x, ...)``."""
    return kernel_of(f"def k(x, y):\n    a = ct.load(x, (0,), (16,))\n    {body}\n")


@pytest.mark.parametrize("body, message", [
    ("ct.store(y, (0,), ct.add(a, a, rounding_mode=ct.RoundingMode.RA))",
     ("ct.add: rounding_mode must be one of ct.RoundingMode.RN, ct.RoundingMode.RZ, "
      "ct.RoundingMode.RM, ct.RoundingMode.RP, got <RoundingMode.RA: 'nearest_away'>")),
    (("ct.store(y, (0,), ct.mul(a.astype(ct.int32), 2, rounding_mode=ct.RoundingMode.RZ)"
      ".astype(ct.float32))"),
     ("ct.mul: rounding_mode applies to float16, bfloat16, float32 and float64 operands, "
      "not int32")),
    (("ct.store(y, (0,), ct.add(a.astype(ct.float16), a.astype(ct.float16), "
      "rounding_mode=ct.RoundingMode.RZ))"),
     "ct.add: rounding_mode RZ is supported on float32 and float64, not float16"),
    ("ct.store(y, (0,), ct.exp2(a.astype(ct.float16), flush_to_zero=True))",
     "ct.exp2: flush_to_zero applies to float32 operands, not float16"),
    ("ct.store(y, (0,), ct.exp(a, flush_to_zero=True))",
     "ct.exp got unexpected keyword(s) flush_to_zero (it takes rounding_mode)"),
    (("ct.store(y, (0,), ct.astype(a.astype(ct.int32), ct.float32, "
      "rounding_mode=ct.RoundingMode.RZ))"),
     "ct.astype: rounding_mode is for a float to float conversion, not int32 to float32"),
    ("ct.store(y, (0,), ct.sum(a, rounding_mode=ct.RoundingMode.RZ) + a)",
     ("ct.sum: rounding_mode must be one of ct.RoundingMode.RN, got "
      "<RoundingMode.RZ: 'zero'>")),
])
def test_rounding_and_flush_checks(body, message):
    with pytest.raises(tc.CompileError) as e:
        ct.launch(None, (1,), _kernel(body), (np.zeros(16, np.float32),
                                              np.zeros(16, np.float32)), backend="numpy")
    assert e.value.message == message
