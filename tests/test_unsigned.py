"""``tl.uint16`` and ``tl.uint64`` (Triton's, beside uint8 and uint32), in Triton's idioms:
a 64-bit random word joined from ``randint4x``'s halves, keys packed above 2^63 and
compared, divided and shifted as unsigned, conversions that sign- or zero-extend as C
does, 16-bit words that wrap, and unsigned scalar arguments; every backend against NumPy's
own unsigned arithmetic."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

N = 256


@tc.kernel
def joined_words(seed, out, BLOCK: tl.constexpr):
    """``randint4x``'s first two words joined into one uint64, as projects draw 64 bits."""
    offs = tl.arange(0, BLOCK)
    lo, hi, _, _ = tl.randint4x(seed, offs)
    lo = lo.to(tl.uint32, bitcast=True).to(tl.uint64)
    hi = hi.to(tl.uint32, bitcast=True).to(tl.uint64)
    tl.store(out + offs, (hi << 32) | lo)


@tc.kernel
def words(x, signed, out, q, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    s = tl.load(signed + offs)
    key = s.to(tl.uint64)  # int32 -> uint64: sign-extended, as C converts
    tl.store(out + offs, tl.where(a > key, a // 3, a % 1000003) + (a >> 61))
    tl.store(q + offs, a.to(tl.float32))


@tc.kernel
def halves(x, out, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load(x + offs)
    wrapped = h * scale + 7  # wraps at 2^16
    tl.store(out + offs, tl.where(wrapped > 40000, wrapped >> 3, wrapped))


@tc.kernel
def scalars(out, big, small):
    tl.store(out, big + small.to(tl.uint64))
    tl.store(out + 1, big >> 1)


@tc.kernel
def python_ints(out, v):
    """``v``: a Python int, int32, int64 or (from 2^63) uint64, as Triton types it; the
    literal from 2^63 is uint64 too."""
    tl.store(out, v >> 1)
    tl.store(out + 1, (v & 0xFFFFFFFFFFFFFFF0) + 7)


def _philox_words(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The numpy backend's randint4x words (its own Philox, checked against Random123's
    answers elsewhere), as uint32."""
    out = np.zeros(n, np.uint64)
    joined_words[(1,)](seed, out, BLOCK=n, backend="numpy")
    return (out & 0xFFFFFFFF).astype(np.uint32), (out >> np.uint64(32)).astype(np.uint32)


def test_a_64_bit_word_from_two_random_halves(backend):
    lo, hi = _philox_words(1234, N)
    out = np.zeros(N, np.uint64)
    if launch(joined_words, (1,), 1234, out, backend=backend, BLOCK=N):
        np.testing.assert_array_equal(out, (hi.astype(np.uint64) << np.uint64(32)) | lo)
        assert (out >= np.uint64(2**63)).any()  # the high bit is a value bit, not a sign


def test_unsigned_64_bit_compare_divide_shift_convert(backend, rng):
    x = rng.integers(0, 2**64, N, dtype=np.uint64)
    x[:5] = [0, 1, 2**63 - 1, 2**63, 2**64 - 1]
    signed = rng.integers(-2**31, 2**31, N, dtype=np.int32)
    signed[:3] = [-1, 0, -2**31]
    out, q = np.zeros(N, np.uint64), np.zeros(N, np.float32)
    if launch(words, (1,), x, signed, out, q, backend=backend, BLOCK=N):
        key = signed.astype(np.int64).astype(np.uint64)
        want = np.where(x > key, x // np.uint64(3), x % np.uint64(1000003)) + (x >> np.uint64(61))
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(q, x.astype(np.float32))  # rounded to nearest even


def test_16_bit_words_wrap(backend, rng):
    x = rng.integers(0, 2**16, N, dtype=np.uint16)
    out = np.zeros(N, np.uint16)
    if launch(halves, (1,), x, out, np.uint16(2**15 + 3), backend=backend, BLOCK=N):
        wrapped = (x.astype(np.uint32) * (2**15 + 3) + 7) % 2**16
        np.testing.assert_array_equal(out, np.where(wrapped > 40000, wrapped >> 3,
                                                    wrapped).astype(np.uint16))


def test_unsigned_scalar_arguments(backend):
    out = np.zeros(2, np.uint64)
    big = np.uint64(2**64 - 10)
    if launch(scalars, (1,), out, big, np.uint16(65535), backend=backend):
        assert out.tolist() == [(2**64 - 10 + 65535) % 2**64, (2**64 - 10) >> 1]


@pytest.mark.parametrize("v", [12345, 2**40 + 1, 2**64 - 3])
def test_python_ints_from_2_63_are_uint64(backend, v):
    """One kernel, three specializations: int32, int64 and uint64 (``>>`` on each, then
    ``&`` with a uint64 literal)."""
    out = np.zeros(2, np.uint64)
    if launch(python_ints, (1,), out, v, backend=backend):
        assert out.tolist() == [v >> 1, (v & 0xFFFFFFFFFFFFFFF0) + 7]
