"""The "more math" builtins: ``tl.erf``, ``tl.tanh``, ``tl.pow``, ``tl.div_rn``, ``tl.fdiv``,
``tl.sqrt_rn``, ``tl.xor_sum`` and the ``tl.math``/``tl.extra.libdevice`` spellings, on
every backend against NumPy (float64 for the approximated functions)."""

import math

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from benchmarks.math_accuracy import inputs, ulp_error
from tests.conftest import launch

libdevice = tl.extra.libdevice

BLOCK = 256
ERF64 = np.frompyfunc(math.erf, 1, 1)

# Max error in f32 ulps: benchmarks/math_accuracy.py measured erf/tanh at 1.31/1.48 on WGSL
# (lavapipe) and 1.21/1.17 on PTX (H200) (README table), rounded up; NumPy rounds float64
# results, so it is within half an ulp.
ULPS = {"numpy": 0.5, "wgsl": 2.0, "ptx": 2.0}


@tc.kernel
def unary_kernel(x, out, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask, other=0.0)
    if FN == "erf":
        r = tl.erf(v)
    elif FN == "tanh":
        r = tl.tanh(v)
    elif FN == "math.erf":
        r = tl.math.erf(v)
    elif FN == "libdevice.tanh":
        r = libdevice.tanh(v)
    elif FN == "sqrt_rn":
        r = tl.sqrt_rn(v)
    else:
        r = tl.extra.libdevice.sqrt_rn(v)
    tl.store(out + offs, r, mask=mask)


@tc.kernel
def binary_kernel(x, y, out, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=1.0)
    b = tl.load(y + offs, mask=mask, other=1.0)
    if FN == "pow":
        r = tl.pow(a, b)
    elif FN == "libdevice.pow":
        r = libdevice.pow(a, b)
    elif FN == "div_rn":
        r = tl.div_rn(a, b)
    else:
        r = tl.math.fdiv(a, b)
    tl.store(out + offs, r, mask=mask)


@tc.kernel
def xor_sum_kernel(x, out, AXIS: tl.constexpr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    v = tl.load(x + rows * N + cols)
    if AXIS == 0:
        tl.store(out + tl.arange(0, N), tl.xor_sum(v, 0))
    elif AXIS == 1:
        tl.store(out + tl.arange(0, M), v.xor_sum(axis=1))
    else:
        tl.store(out, tl.xor_sum(v))


def _run_unary(fn: str, x: np.ndarray, backend: str) -> np.ndarray | None:
    out = np.zeros_like(x)
    ran = launch(unary_kernel, (-(-len(x) // BLOCK),), x, out, len(x), backend=backend,
                 FN=fn, BLOCK=BLOCK)
    return out if ran else None


@pytest.mark.parametrize("fn", ["erf", "tanh", "math.erf", "libdevice.tanh"])
def test_erf_tanh_accuracy(backend, fn):
    name = fn.split(".")[-1]
    lo, hi = (-5.0, 5.0) if name == "erf" else (-12.0, 12.0)
    x = inputs(lo, hi, 4096, np.random.default_rng(1))
    out = _run_unary(fn, x, backend)
    if out is None:
        return
    ref = ERF64(x.astype(np.float64)).astype(np.float64) if name == "erf" else \
        np.tanh(x.astype(np.float64))
    assert ulp_error(out, ref).max() <= ULPS[backend]


@pytest.mark.parametrize("fn", ["erf", "tanh"])
def test_erf_tanh_special_values(backend, fn):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1.0, -1.0, 3.92, 40.0,
                  -40.0] * 4, np.float32)
    out = _run_unary(fn, x, backend)
    if out is None:
        return
    ref = (ERF64(x.astype(np.float64)).astype(np.float32) if fn == "erf" else np.tanh(x))
    np.testing.assert_array_max_ulp(out, ref, maxulp=2)  # NaN where NaN, equal infinities
    assert np.array_equal(np.signbit(out), np.signbit(ref))


@pytest.mark.parametrize("fn", ["erf", "tanh"])
def test_erf_tanh_half(backend, fn):
    x = np.linspace(-4, 4, BLOCK, dtype=np.float16)
    out = np.zeros_like(x)
    if launch(unary_kernel, (1,), x, out, BLOCK, backend=backend, FN=fn, BLOCK=BLOCK):
        wide = x.astype(np.float64)
        ref = ERF64(wide).astype(np.float64) if fn == "erf" else np.tanh(wide)
        np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("fn", ["sqrt_rn", "libdevice.sqrt_rn"])
def test_sqrt_rn(backend, fn):
    x = np.random.default_rng(2).uniform(0, 1e6, 1000).astype(np.float32)
    out = _run_unary(fn, x, backend)
    if out is not None:
        np.testing.assert_array_max_ulp(out, np.sqrt(x), maxulp=0 if backend != "wgsl" else 1)


@pytest.mark.parametrize("fn", ["pow", "libdevice.pow", "div_rn", "fdiv"])
def test_binary(backend, fn):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.1, 10, 1000).astype(np.float32)
    y = rng.uniform(-4, 4, 1000).astype(np.float32)
    out = np.zeros_like(x)
    if not launch(binary_kernel, (4,), x, y, out, 1000, backend=backend, FN=fn, BLOCK=BLOCK):
        return
    if "pow" in fn:  # 2^(y log2 x) on the GPU backends (as for **)
        np.testing.assert_allclose(out, np.power(x, y), rtol=2e-5)
    else:  # IEEE division; WGSL allows 2.5 ulps
        np.testing.assert_array_max_ulp(out, x / y, maxulp=0 if backend != "wgsl" else 3)


def test_pow_negative_base(backend):
    x = np.array([-2.0, -2.0, -8.0, 0.0, 3.0, -1.5] * 8, np.float32)
    y = np.array([3.0, 2.0, 1 / 3, 2.0, 0.0, 0.5] * 8, np.float32)
    out = np.zeros_like(x)
    if launch(binary_kernel, (1,), x, y, out, len(x), backend=backend, FN="pow", BLOCK=64):
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(out, np.power(x, y), rtol=2e-5)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_xor_sum(backend, axis, dtype):
    m, n = 8, 32
    x = np.random.default_rng(4).integers(0, 2**31, (m, n)).astype(dtype)
    want = np.bitwise_xor.reduce(x, axis=axis) if axis is not None else \
        np.bitwise_xor.reduce(x.ravel())
    out = np.zeros(np.shape(want) or (1,), dtype)
    if launch(xor_sum_kernel, (1,), x, out, backend=backend, AXIS=-1 if axis is None else axis,
              M=m, N=n):
        np.testing.assert_array_equal(out.reshape(np.shape(want)), want)


def test_xor_sum_of_floats_is_an_error():
    x = np.zeros((8, 32), np.float32)
    with pytest.raises(tc.CompileError, match="xor_sum needs integers"):
        xor_sum_kernel[(1,)](x, np.zeros(32, np.float32), AXIS=0, M=8, N=32,
                             backend="numpy")


def test_spellings_are_the_same_builtins():
    from compiler.language.extra import libdevice as imported  # as Triton users import it
    assert imported is libdevice
    assert tl.math.erf is tl.erf and libdevice.tanh is tl.tanh
    assert libdevice.fabs is tl.abs and tl.extra.libdevice is libdevice
    assert tl.math.umulhi is tl.umulhi and tl.math.div_rn is tl.div_rn


@pytest.mark.parametrize("dtype", ["*f32", "*f16", "*bf16"])
def test_erf_tanh_assemble_for_ptx(dtype):
    """No erf instruction exists in PTX, and tanh is not the coarse tanh.approx."""
    ck = tc.compile(unary_kernel, signature={"x": dtype, "out": dtype, "n": "i32"},
                    constants={"FN": "erf", "BLOCK": BLOCK}, backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF" and "ex2.approx" in ck.asm["ptx"]
    ck = tc.compile(unary_kernel, signature={"x": dtype, "out": dtype, "n": "i32"},
                    constants={"FN": "tanh", "BLOCK": BLOCK}, backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF" and "tanh.approx" not in ck.asm["ptx"]


def test_erf_f64_on_ptx_is_unsupported():
    with pytest.raises(tc.UnsupportedError, match="math.erf"):
        tc.compile(unary_kernel, signature={"x": "*f64", "out": "*f64", "n": "i32"},
                   constants={"FN": "erf", "BLOCK": BLOCK}, backend="ptx")
