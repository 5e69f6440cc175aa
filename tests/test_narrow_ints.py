"""8- and 16-bit integers and bool arrays on every backend, against NumPy: arithmetic that
wraps, unsigned readings, saturating conversions from floats, and arrays that WGSL packs
four (or two) to a 32-bit word, written by neighbouring programs at once."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

INT_DTYPES = [np.int8, np.uint8, np.int16]


@tc.kernel
def mix(a, b, out_sum, out_prod, out_div, out_shr, out_lt, out_f, n, BLOCK: tl.constexpr):
    """Elementwise ops on two narrow arrays; each result is stored at their dtype except
    the comparison (bools) and the conversion (float32)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m)
    y = tl.load(b + offs, mask=m)
    tl.store(out_sum + offs, x + y, mask=m)
    tl.store(out_prod + offs, x * y, mask=m)
    tl.store(out_div + offs, x // tl.where(y == 0, 1, y).to(y.dtype), mask=m)
    tl.store(out_shr + offs, x >> 3, mask=m)
    tl.store(out_lt + offs, x < y, mask=m)
    tl.store(out_f + offs, x.to(tl.float32) * 0.5, mask=m)


@pytest.mark.parametrize("n", [999, 1024])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_arithmetic_wraps_as_numpy(backend, dtype, n):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    a, b = (rng.integers(info.min, info.max, n, endpoint=True).astype(dtype) for _ in range(2))
    outs = [np.zeros(n, dtype) for _ in range(4)] + [np.zeros(n, np.bool_),
                                                     np.zeros(n, np.float32)]
    if not launch(mix, (tc.cdiv(n, 512),), a, b, *outs, n, backend=backend, BLOCK=512):
        return
    safe = np.where(b == 0, 1, b).astype(dtype)
    with np.errstate(over="ignore"):
        want = [a + b, a * b, _floordiv(a, safe), a >> 3, a < b, a.astype(np.float32) * 0.5]
    for got, exp in zip(outs, want, strict=True):
        np.testing.assert_array_equal(got, exp)


def _floordiv(a, b):
    """Triton's ``//`` on integers: truncating, C-style (NumPy's floors)."""
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * q).astype(a.dtype)


@tc.kernel
def convert(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m).to(out.dtype.element_ty), mask=m)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_float_to_narrow_saturates(backend, dtype):
    info = np.iinfo(dtype)
    x = np.array([0.0, 1.7, -1.7, 126.5, 1e6, -1e6, np.nan, info.max + 0.5, info.min - 0.5,
                  255.9, -0.9], np.float32)
    out = np.zeros(x.size, dtype)
    if launch(convert, (1,), x, out, x.size, backend=backend, BLOCK=16):
        want = np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), info.min,
                                                 info.max)).astype(dtype)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("src, dst", [(np.int8, np.int32), (np.uint8, np.int32),
                                      (np.int32, np.int8), (np.int16, np.int8),
                                      (np.int8, np.int16), (np.uint8, np.float32)])
def test_integer_conversions(backend, src, dst):
    info = np.iinfo(src)
    x = np.random.default_rng(7).integers(info.min, info.max, 300, endpoint=True).astype(src)
    out = np.zeros(x.size, dst)
    if launch(convert, (tc.cdiv(x.size, 64),), x, out, x.size, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(out, x.astype(dst))


@tc.kernel
def scatter_small(src, out, n, BLOCK: tl.constexpr):
    """Programs of 2 elements: neighbours write the bytes of one 32-bit word at once."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(src + offs, mask=m) * 3, mask=m)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8])
def test_neighbouring_programs_share_words(backend, dtype):
    n = 1001
    src = (np.arange(n) % 50).astype(dtype)
    out = np.full(n, 9, dtype)
    if launch(scatter_small, (tc.cdiv(n, 2),), src, out, n - 1, backend=backend, BLOCK=2):
        want = (src * 3).astype(dtype)
        want[-1] = 9  # masked off: untouched
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8])
def test_whole_word_stores(backend, dtype):
    """Only narrow accesses, aligned, n a multiple of 16: each thread stores whole words
    (WGSL: plain u32 stores, no atomics)."""
    n = 4096
    src = (np.arange(n) % 97 - 40).astype(dtype)
    out = np.zeros(n, dtype)
    if launch(scatter_small, (n // 1024,), src, out, n, backend=backend, BLOCK=1024):
        np.testing.assert_array_equal(out, (src * 3).astype(dtype))


@tc.kernel
def bool_gate(x, keep, out, flags, n, BLOCK: tl.constexpr):
    """A bool array read as a mask and another written from a comparison."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    k = tl.load(keep + offs, mask=m, other=False)
    tl.store(out + offs, tl.where(k, v, -1.0), mask=m)
    tl.store(flags + offs, v > 0.0, mask=m)


def test_bool_arrays(backend):
    n = 517
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32)
    keep = rng.random(n) < 0.5
    out, flags = np.zeros(n, np.float32), np.zeros(n, np.bool_)
    if launch(bool_gate, (tc.cdiv(n, 64),), x, keep, out, flags, n, backend=backend,
              BLOCK=64):
        np.testing.assert_array_equal(out, np.where(keep, x, -1.0))
        np.testing.assert_array_equal(flags, x > 0)


def test_wgsl_packs_narrow_arrays():
    """The WGSL binds 8-bit arrays as u32 words; stores of parts of words go through
    atomicAnd/atomicOr, stores of aligned whole words (n a multiple of 16) are plain."""
    ck = tc.compile(scatter_small, signature="*i8,*i8,i32", constants={"BLOCK": 256},
                    backend="wgsl")
    text = ck.asm["wgsl"]
    assert "array<u32>" in text and "array<atomic<u32>>" in text
    assert "atomicAnd(" in text and "atomicOr(" in text and " >> 24u)" in text
    ck = tc.compile(scatter_small, signature="*i8,*i8,i32:16", constants={"BLOCK": 1024},
                    backend="wgsl")
    text = ck.asm["wgsl"]
    assert "atomic" not in text and "<< 24u" in text and "read_write> out" in text


@tc.kernel
def bits_of_half(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs).to(tl.int16, bitcast=True))


@tc.kernel
def narrow_bits_round_trip(x, bits, back, BLOCK: tl.constexpr):
    """f16 -> its bits -> f16, with no memory between (WGSL holds int16 in 32 bits)."""
    offs = tl.arange(0, BLOCK)
    b = tl.load(x + offs).to(tl.int16, bitcast=True)
    tl.store(bits + offs, b)
    tl.store(back + offs, (b + 0).to(tl.float16, bitcast=True) * 2.0)


@tc.kernel
def byte_bits(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs).to(tl.uint8, bitcast=True) >> 1)


_HALVES = np.array([1.0, -2.5, 65504.0, 0.0, -0.0, np.inf, -np.inf, 6e-8, -6e-8, 0.1, -1e4,
                    2**-14, 1.5, -1.5, 3.0, -0.25], np.float16)


def test_half_bitcast(backend):
    x = np.array([1.0, -2.5, 65504.0, 0.0], np.float16)
    out = np.zeros(4, np.int16)
    if launch(bits_of_half, (1,), x, out, backend=backend, BLOCK=4):
        np.testing.assert_array_equal(out, x.view(np.int16))


def test_half_bitcasts_both_ways(backend):
    """Sign bits set and clear, infinities, subnormals: every bit survives both ways."""
    bits, back = np.zeros(16, np.int16), np.zeros(16, np.float16)
    if launch(narrow_bits_round_trip, (1,), _HALVES, bits, back, backend=backend, BLOCK=16):
        np.testing.assert_array_equal(bits, _HALVES.view(np.int16))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(back, _HALVES * np.float16(2))


def test_byte_bitcast(backend):
    x = np.array([-128, -1, 0, 1, 127, -77, 5, -2], np.int8)
    out = np.zeros(8, np.uint8)
    if launch(byte_bits, (1,), x, out, backend=backend, BLOCK=8):
        np.testing.assert_array_equal(out, x.view(np.uint8) >> 1)


@tc.kernel
def float_bits(x, out, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    if WIDTH == "same":
        tl.store(out + offs, v.to(tl.int32, bitcast=True) ^ 1)
    else:
        tl.store(out + offs, tl.cast(v, tl.int16, bitcast=True).to(tl.int32))


def test_bitcast(backend):
    """Triton's ``x.to(dtype, bitcast=True)``: the bits read as another type of the same
    width, on every backend; of another width, a CompileError at the line."""
    x = np.array([1.0, -2.5, np.inf, 0.0], np.float32)
    out = np.zeros(4, np.int32)
    if launch(float_bits, (1,), x, out, backend=backend, WIDTH="same", BLOCK=4):
        np.testing.assert_array_equal(out, x.view(np.int32) ^ 1)
    with pytest.raises(tc.CompileError, match="same width"):
        launch(float_bits, (1,), x, out, backend=backend, WIDTH="other", BLOCK=4)
