"""Triton's random numbers (``tl.philox``, ``randint``, ``randint4x``, ``rand``, ``randn``) and
``tl.umulhi`` on every backend: Random123's known answers for Philox4x32-10, and a
Philox written here in plain NumPy (independent of the compiler) for the rest."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.errors import CompileError, UnsupportedError
from tests.conftest import launch

M32 = 0xFFFFFFFF
BLOCK = 64

# Random123's kat_vectors for philox4x32_10: (counter words, key words, output words).
KNOWN_ANSWERS = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


# ---------------------------------------------------------------- the NumPy reference

def philox_ref(seed: int, counters, n_rounds: int = 10) -> list[np.ndarray]:
    """Philox4x32 in uint64 NumPy: key = the seed's 64 bits (low word first)."""
    k0, k1 = np.uint64(seed & M32), np.uint64((seed >> 32) & M32)
    c = [np.asarray(x, np.int64).astype(np.uint64) & np.uint64(M32) for x in counters]
    mask, a, b = np.uint64(M32), np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(n_rounds):
        pa, pb = a * c[0], b * c[2]  # exact: both factors < 2**32
        c = [(pb >> np.uint64(32)) ^ c[1] ^ k0, pb & mask,
             (pa >> np.uint64(32)) ^ c[3] ^ k1, pa & mask]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask, (k1 + np.uint64(0xBB67AE85)) & mask
    return [w.astype(np.uint32) for w in c]


def uniform_ref(word: np.ndarray) -> np.ndarray:
    x = word.view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def normal_ref(w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    u1 = np.maximum(uniform_ref(w1), np.float32(1e-7))
    theta = np.float32(6.283185307179586) * uniform_ref(w2)
    return np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(theta)


def test_reference_matches_known_answers():
    for counter, (k0, k1), want in KNOWN_ANSWERS:
        got = philox_ref(k0 | k1 << 32, [[w] for w in counter])
        assert [int(w[0]) for w in got] == list(want)


def test_uniform_ref_stays_below_one():
    extremes = np.array([0, 1, 0x7FFFFFFF, 0x80000000, M32], np.uint32)
    u = uniform_ref(extremes)
    assert u.min() == 0.0 and u.max() < 1.0


# ---------------------------------------------------------------- kernels

@tc.kernel
def philox_kernel(c_ptr, out_ptr, SEED: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c0 = tl.load(c_ptr + offs)
    c1 = tl.load(c_ptr + BLOCK + offs)
    c2 = tl.load(c_ptr + 2 * BLOCK + offs)
    c3 = tl.load(c_ptr + 3 * BLOCK + offs)
    r0, r1, r2, r3 = tl.philox(SEED, c0, c1, c2, c3)
    tl.store(out_ptr + offs, r0)
    tl.store(out_ptr + BLOCK + offs, r1)
    tl.store(out_ptr + 2 * BLOCK + offs, r2)
    tl.store(out_ptr + 3 * BLOCK + offs, r3)


@tc.kernel
def draw_kernel(out_ptr, seed, n, KIND: tl.constexpr, ROUNDS: tl.constexpr,
                BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if KIND == "randint":
        x = tl.randint(seed, offs, ROUNDS)
    elif KIND == "rand":
        x = tl.rand(seed, offs, ROUNDS)
    else:
        x = tl.randn(seed, offs, ROUNDS)
    tl.store(out_ptr + offs, x, mask=offs < n)


@tc.kernel
def randint4x_kernel(out_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    r0, r1, r2, r3 = tl.randint4x(seed, offs)
    tl.store(out_ptr + offs, r0)
    tl.store(out_ptr + BLOCK + offs, r1)
    tl.store(out_ptr + 2 * BLOCK + offs, r2)
    tl.store(out_ptr + 3 * BLOCK + offs, r3)


@tc.kernel
def scalar_offset_kernel(int_ptr, float_ptr, seed, offset):
    tl.store(int_ptr, tl.randint(seed, offset))
    tl.store(float_ptr, tl.rand(seed, offset))


@tc.kernel
def umulhi_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.umulhi(a, b), mask=mask)


# ---------------------------------------------------------------- tl.philox

@pytest.mark.parametrize("case", range(len(KNOWN_ANSWERS)))
def test_philox_known_answers(backend, rng, case):
    """Element 0 holds a known-answer counter, the others random counters."""
    counter, (k0, k1), want = KNOWN_ANSWERS[case]
    seed = k0 | k1 << 32
    c = rng.integers(0, 2**32, (4, BLOCK), dtype=np.uint64).astype(np.uint32)
    c[:, 0] = counter
    out = np.zeros((4, BLOCK), np.uint32)
    if launch(philox_kernel, (1,), c.view(np.int32), out, backend=backend, SEED=seed,
              BLOCK=BLOCK):
        assert [int(w) for w in out[:, 0]] == list(want)
        np.testing.assert_array_equal(out, np.stack(philox_ref(seed, c)))


# ---------------------------------------------------------------- randint, rand, randn

def _seed_arg(seed: int, width: int):
    return np.int64(seed) if width == 64 else np.int32(seed)


SEEDS = [(0, 32), (-123456, 32), (0x1234_5678_9ABC_DEF0, 64), (-(2**40) + 5, 64)]


@pytest.mark.parametrize("seed,width", SEEDS)
@pytest.mark.parametrize("rounds", [10, 7])
def test_randint(backend, seed, width, rounds):
    n = 200
    out = np.zeros(n, np.uint32)
    if launch(draw_kernel, (4,), out, _seed_arg(seed, width), n, backend=backend,
              KIND="randint", ROUNDS=rounds, BLOCK=BLOCK):
        np.testing.assert_array_equal(out, philox_ref(seed, [np.arange(n), 0, 0, 0],
                                                      rounds)[0])


def test_randint4x(backend):
    seed = -987654321
    out = np.zeros((4, BLOCK), np.uint32)
    if launch(randint4x_kernel, (1,), out, np.int32(seed), backend=backend, BLOCK=BLOCK):
        np.testing.assert_array_equal(out, np.stack(philox_ref(seed,
                                                               [np.arange(BLOCK), 0, 0, 0])))


@pytest.mark.parametrize("seed,width", SEEDS[:3])
def test_rand(backend, seed, width):
    n = 1000
    out = np.full(n, -1.0, np.float32)
    if launch(draw_kernel, (16,), out, _seed_arg(seed, width), n, backend=backend,
              KIND="rand", ROUNDS=10, BLOCK=BLOCK):
        assert 0.0 <= out.min() and out.max() < 1.0
        assert abs(out.mean() - 0.5) < 0.05
        want = uniform_ref(philox_ref(seed, [np.arange(n), 0, 0, 0])[0])
        np.testing.assert_array_equal(out, want)


def test_randn(backend):
    n, seed = 2048, 42
    out = np.zeros(n, np.float32)
    if launch(draw_kernel, (32,), out, np.int32(seed), n, backend=backend, KIND="randn",
              ROUNDS=10, BLOCK=BLOCK):
        w = philox_ref(seed, [np.arange(n), 0, 0, 0])
        # the GPU backends use approximate log and cos, as Triton does
        np.testing.assert_allclose(out, normal_ref(w[0], w[1]), rtol=1e-4, atol=1e-4)
        assert abs(out.mean()) < 0.1 and abs(out.std() - 1.0) < 0.1


def test_scalar_offset(backend):
    seed, offset = 7, 123
    ints, floats = np.zeros(1, np.uint32), np.zeros(1, np.float32)
    if launch(scalar_offset_kernel, (1,), ints, floats, np.int32(seed), np.int32(offset),
              backend=backend):
        word = philox_ref(seed, [[offset], 0, 0, 0])[0]
        assert ints[0] == word[0] and floats[0] == uniform_ref(word)[0]


# ---------------------------------------------------------------- tl.umulhi

def _umulhi_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    m = (1 << bits) - 1
    return np.array([(int(x) & m) * (int(y) & m) >> bits for x, y in zip(a, b, strict=True)],
                    dtype=np.uint64).astype(a.dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
def test_umulhi(backend, rng, dtype):
    info = np.iinfo(dtype)
    n = 300
    a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    w = info.bits
    patterns = [0, 1, 2**(w - 1) - 1, 2**(w - 1), 2**w - 1, 3 << (w - 2)]  # as unsigned
    edge = np.array(patterns, np.uint64 if w == 64 else np.uint32).view(dtype)
    a[:36], b[:36] = np.repeat(edge, 6), np.tile(edge, 6)
    out = np.zeros(n, dtype)
    if launch(umulhi_kernel, (tc.cdiv(n, BLOCK),), a, b, out, n, backend=backend,
              BLOCK=BLOCK):
        np.testing.assert_array_equal(out, _umulhi_ref(a, b))


# ---------------------------------------------------------------- refusals

@tc.kernel
def wide_counter_kernel(out_ptr, c):
    tl.store(out_ptr, tl.randint(1, c))


@tc.kernel
def float_seed_kernel(out_ptr, seed):
    tl.store(out_ptr, tl.randint(seed, 0))


@pytest.mark.parametrize("kernel,arg,message", [
    (wide_counter_kernel, np.int64(5), "64-bit Philox is not supported"),
    (float_seed_kernel, np.float32(1.0), "the seed must be an integer"),
])
def test_refusals(kernel, arg, message):
    with pytest.raises((CompileError, UnsupportedError), match=message):
        kernel[(1,)](np.zeros(1, np.uint32), arg, backend="numpy")
