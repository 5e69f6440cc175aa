"""bfloat16 arrays on every backend, bit for bit against ml_dtypes. WGSL has no bfloat16:
it binds such arrays as u32 words, widens a load to f32, rounds each bf16 result to
nearest even in f32 and stores 16-bit halves of words that neighbouring threads and
programs share (``backends/wgsl/memory.py``)."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16
SENTINEL = BF16(-77.0)


def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).view(np.uint16)


@tc.kernel
def arithmetic(a, b, out_fma, out_div, out_max, out_wide, out_back, n, BLOCK: tl.constexpr):
    """bf16 arithmetic (each result rounded), a reduction, and conversions both ways."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m, other=1.0)
    y = tl.load(b + offs, mask=m, other=1.0)
    tl.store(out_fma + offs, x * y + x, mask=m)
    tl.store(out_div + offs, x / y, mask=m)
    tl.store(out_max + tl.program_id(0), tl.max(tl.where(m, x * y, -1e30), axis=0))
    wide = x.to(tl.float32) * 1.001
    tl.store(out_wide + offs, wide, mask=m)
    tl.store(out_back + offs, wide.to(tl.bfloat16), mask=m)


def test_arithmetic_rounds_as_ml_dtypes(backend):
    """n odd and the last element masked off: the stores write halves of words, and the
    element past ``n`` keeps its value."""
    size, block = 1001, 128
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(size) * 3).astype(BF16)
    b = (rng.standard_normal(size) + 4).astype(BF16)
    outs = [np.full(size, SENTINEL) for _ in range(2)]
    out_max = np.zeros(tc.cdiv(size, block), BF16)
    wide, back = np.zeros(size, np.float32), np.full(size, SENTINEL)
    if not launch(arithmetic, (tc.cdiv(size, block),), a, b, *outs, out_max, wide, back,
                  size - 1, backend=backend, BLOCK=block):
        return
    n = size - 1
    want_wide = a[:n].astype(np.float32) * np.float32(1.001)
    np.testing.assert_array_equal(bits(outs[0][:n]), bits(a[:n] * b[:n] + a[:n]))
    np.testing.assert_array_equal(bits(outs[1][:n]), bits(a[:n] / b[:n]))
    np.testing.assert_array_equal(wide[:n], want_wide)
    np.testing.assert_array_equal(bits(back[:n]), bits(want_wide.astype(BF16)))
    products = np.concatenate([a[:n] * b[:n], np.full(1 + (-size) % block, BF16(-1e30))])
    np.testing.assert_array_equal(bits(out_max), bits(products.reshape(-1, block).max(1)))
    for out in (*outs, back):
        assert bits(out[n]) == bits(SENTINEL)


@tc.kernel
def convert(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m).to(out.dtype.element_ty), mask=m)


_EDGE_BITS = [0x3F808000, 0x3F818000, 0x3F808001, 0x3F817FFF, 0x7F7FFFFF, 0x7F7F7FFF,
              0x7F7F8000, 0x00000001, 0x00008000, 0x00018000, 0x807FFFFF, 0x7F800000,
              0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC12345, 0x80000000, 0x00000000]
"""f32 bit patterns around bf16's roundings: ties to even both ways, just off a tie, the
overflow to infinity, subnormals, infinities, NaNs with payloads and signs, zeros."""


def _assert_bits(got: np.ndarray, want: np.ndarray, backend: str) -> None:
    """Bit for bit, but a NaN only as a NaN on ptx: PTX's conversions and arithmetic give
    the canonical 0x7FFF, NumPy's and WGSL's ml_dtypes a NaN keeping the sign."""
    if backend == "ptx":
        nan = np.isnan(want.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
        got, want = got[~nan], want[~nan]
    np.testing.assert_array_equal(bits(got), bits(want))


def test_float32_rounds_to_nearest_even(backend):
    x = np.concatenate([np.array(_EDGE_BITS, np.uint32).view(np.float32),
                        np.random.default_rng(2).standard_normal(46).astype(np.float32)])
    out = np.full(x.size, SENTINEL)
    if launch(convert, (1,), x, out, x.size, backend=backend, BLOCK=64):
        with np.errstate(invalid="ignore"):
            _assert_bits(out, x.astype(BF16), backend)


@pytest.mark.parametrize("dst", [np.float32, np.float16, np.int32, np.uint8])
def test_bfloat16_converts_as_ml_dtypes(backend, dst):
    x = np.concatenate([np.array(_EDGE_BITS, np.uint32).view(np.float32)[:-6],
                        np.linspace(-300, 300, 37, dtype=np.float32)]).astype(BF16)
    x = x[~np.isnan(x.astype(np.float32))] if np.dtype(dst).kind != "f" else x
    out = np.zeros(x.size, dst)
    if launch(convert, (1,), x, out, x.size, backend=backend, BLOCK=64):
        if np.dtype(dst).kind == "f":
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal(out.view(f"u{out.itemsize}"),
                                              x.astype(dst).view(f"u{out.itemsize}"))
        else:  # saturating, as every float -> int conversion in tilec
            info = np.iinfo(dst)
            want = np.clip(np.trunc(x.astype(np.float64)), info.min, info.max).astype(dst)
            np.testing.assert_array_equal(out, want)


def test_float16_rounds_to_bfloat16(backend):
    x = np.array([1 + 2**-9, 1 + 3 * 2**-9, 65504, -6e-8, 2**-14, np.inf, 0.1], np.float16)
    out = np.full(x.size, SENTINEL)
    if launch(convert, (1,), x, out, x.size, backend=backend, BLOCK=8):
        np.testing.assert_array_equal(bits(out), bits(x.astype(np.float32).astype(BF16)))


@tc.kernel
def scale_each(src, out, n, BLOCK: tl.constexpr):
    """Programs of ``BLOCK`` elements: with one or two, neighbours write the halves of one
    word at once."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(src + offs, mask=m) * 3, mask=m)


@pytest.mark.parametrize("block", [1, 2])
def test_neighbouring_programs_share_words(backend, block):
    n = 301
    src = np.linspace(-5, 5, n).astype(BF16)
    out = np.full(n, SENTINEL)
    if launch(scale_each, (tc.cdiv(n, block),), src, out, n - 1, backend=backend,
              BLOCK=block):
        want = (src * BF16(3)).astype(BF16)
        want[-1] = SENTINEL  # masked off: untouched
        np.testing.assert_array_equal(bits(out), bits(want))


def test_whole_word_stores(backend):
    """Aligned accesses, n a multiple of 16: on WGSL plain u32 stores, no atomics."""
    n = 2048
    src = (np.arange(n) % 97 - 40.25).astype(BF16)
    out = np.zeros(n, BF16)
    if launch(scale_each, (n // 1024,), src, out, n, backend=backend, BLOCK=1024):
        np.testing.assert_array_equal(bits(out), bits(src * BF16(3)))


def test_wgsl_packs_bfloat16_arrays():
    """The WGSL binds bf16 arrays as u32 words; a partial-word store is atomicAnd/atomicOr
    of the f32's high half, aligned whole words are plain stores; a bf16 scalar argument,
    which travels as an f32, is rounded to bf16 in the kernel."""
    ck = tc.compile(scale_each, signature="*bf16,*bf16,i32", constants={"BLOCK": 256},
                    backend="wgsl")
    text = ck.asm["wgsl"]
    assert "read> src_0: array<u32>" in text and "out_1: array<atomic<u32>>" in text
    assert "atomicOr(" in text and ">> 16u)" in text and "roundbf16_" in text
    ck = tc.compile(scale_each, signature="*bf16,*bf16,i32:16", constants={"BLOCK": 1024},
                    backend="wgsl")
    assert "atomic" not in ck.asm["wgsl"]
    ck = tc.compile(scaled, signature="*bf16,bf16,*bf16", constants={"BLOCK": 8},
                    backend="wgsl")
    assert "let s_1 = roundbf16_f32(args.s_1);" in ck.asm["wgsl"]


@tc.kernel
def scaled(x, s, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * s)


@tc.kernel
def bits_round_trip(x, as_bits, back, BLOCK: tl.constexpr):
    """bf16 -> its bits -> bf16, with no memory between (WGSL holds both in 32 bits)."""
    offs = tl.arange(0, BLOCK)
    b = tl.load(x + offs).to(tl.int16, bitcast=True)
    tl.store(as_bits + offs, b)
    tl.store(back + offs, (b ^ 0).to(tl.bfloat16, bitcast=True) * 2.0)


def test_bitcasts_both_ways(backend):
    with np.errstate(invalid="ignore"):
        x = np.array(_EDGE_BITS[:16], np.uint32).view(np.float32).astype(BF16)
    as_bits, back = np.zeros(16, np.int16), np.zeros(16, BF16)
    if launch(bits_round_trip, (1,), x, as_bits, back, backend=backend, BLOCK=16):
        np.testing.assert_array_equal(as_bits, x.view(np.int16))
        with np.errstate(over="ignore", invalid="ignore"):
            _assert_bits(back, x * BF16(2), backend)
