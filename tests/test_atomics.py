"""Atomics (tl.atomic_add/max/min/xchg/cas) on every backend.

The NumPy backend is exact and sequential: its final memory and returned old values equal
a Python loop over the programs in order and the lanes in row-major order. The GPU
backends run the same kernels concurrently, so for them the tests check what any
sequential order gives: exact final memory for integers (and f32 max/min), final sums
within rounding for f32 add, and old values that form a valid history per address.
Contention is heavy on purpose (thousands of lanes on a handful of addresses), and
tiles smaller than the layout (replicated over threads) must not count twice.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from backends.numpy.ops import _maximumf, _minimumf
from tests.conftest import launch

KINDS = ["add", "max", "min", "xchg"]
DTYPES = [np.int32, np.uint32, np.float32]


@tc.kernel
def rmw(ptr, slots, vals, olds, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    p = ptr + tl.load(slots + offs, mask=m)
    v = tl.load(vals + offs, mask=m)
    if KIND == "add":
        old = tl.atomic_add(p, v, mask=m)
    elif KIND == "max":
        old = tl.atomic_max(p, v, mask=m)
    elif KIND == "min":
        old = tl.atomic_min(p, v, mask=m)
    else:
        old = tl.atomic_xchg(p, v, mask=m)
    tl.store(olds + offs, old, mask=m)


@tc.kernel
def cas(ptr, slots, cmps, vals, olds, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(slots + offs, mask=m)
    c = tl.load(cmps + offs, mask=m)
    v = tl.load(vals + offs, mask=m)
    tl.store(olds + offs, tl.atomic_cas(ptr + s, c, v, mask=m), mask=m)


@tc.kernel
def counter(c, olds, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(olds + offs, tl.atomic_add(c, 1, mask=m), mask=m)  # a scalar pointer


@tc.kernel
def per_program(c, olds):
    pid = tl.program_id(0)
    tl.store(olds + pid, tl.atomic_add(c, 1))  # scalar atomic: once per program


@tc.kernel
def hist(data, bins, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(bins + tl.load(data + offs, mask=m), 1, mask=m)  # old values unused


@tc.kernel
def masked_olds(ptr, olds, n, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    old = tl.atomic_add(ptr + offs, 5, mask=m & (offs % 3 != k))
    tl.store(olds + offs, old, mask=m)  # stored everywhere: masked-off lanes must give 0


@tc.kernel
def plain_then_atomic(buf, olds, seen, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(buf + offs, offs.to(buf.dtype) * 2, mask=m)
    tl.store(olds + offs, tl.atomic_add(buf + offs, 3, mask=m), mask=m)
    tl.store(seen + offs, tl.load(buf + offs, mask=m), mask=m)


@tc.kernel
def ticket(c, seen):
    tl.atomic_add(c, 1)
    tl.store(seen + tl.program_id(0), tl.load(c))


@tc.kernel
def rows(x, out, olds, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)
    offs = r[:, None] * N + tl.arange(0, N)[None, :]
    v = tl.load(x + offs)
    tl.atomic_add(out + r % 3, tl.sum(v, axis=1))  # a reduced tile (a slice layout)
    old = tl.atomic_add(out + 3 + offs % 5, v)  # a 2-D tile
    tl.store(olds + tl.program_id(0) * M * N + offs, old)


@tc.kernel
def compact(x, out, count, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    keep = (offs < n) & (v > 0)
    slot = tl.atomic_add(count, 1, mask=keep)  # old values as store offsets
    tl.store(out + slot, v, mask=keep)


# ---------------------------------------------------------------- references

def combine(kind, dtype):
    is_float = np.dtype(dtype).kind == "f"
    return {"add": lambda a, b: a + b, "xchg": lambda a, b: b,
            "max": _maximumf if is_float else np.maximum,
            "min": _minimumf if is_float else np.minimum}[kind]


def sequential(kind, mem, slots, vals, dtype):
    """Programs in order, lanes in order: (final memory, old values)."""
    mem, fn = mem.copy(), combine(kind, dtype)
    olds = np.zeros(len(vals), dtype)
    with np.errstate(over="ignore"):
        for i, (s, v) in enumerate(zip(slots, vals, strict=True)):
            olds[i] = mem[s]
            mem[s] = fn(np.array(mem[s], dtype), np.array(v, dtype))
    return mem, olds


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        zero = np.float32(0)
        return np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(
            np.where(np.isnan(a), zero, a).view(np.uint32),
            np.where(np.isnan(b), zero, b).view(np.uint32))
    return np.array_equal(a, b)


def check_history(kind, init, vals, olds, final, dtype):
    """``olds`` and ``final`` come from applying ``vals`` to ``init`` in some order."""
    vals, olds = np.asarray(vals, dtype), np.asarray(olds, dtype)
    if kind == "xchg":  # a chain: every value but the last is seen exactly once
        got = sorted(map(float, np.append(olds, final)))
        assert got == sorted(map(float, np.append(vals, init)))
        return
    if kind == "add":
        order = np.argsort(olds, kind="stable")  # positive values: olds increase
        chain = np.concatenate([[init], vals[order]]).astype(np.float64)
        want = np.cumsum(chain)
        got = np.append(olds[order], final).astype(np.float64)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * abs(want[-1]))
        else:
            np.testing.assert_array_equal(got, want)
        return
    best = combine(kind, dtype)
    assert same_bits(final, functools.reduce(best, [np.array(x, dtype) for x in vals], init))
    seen = {float(x) for x in np.append(vals, init)}
    assert all(float(o) in seen for o in olds if not np.isnan(o))
    assert np.sum(same_bits_each(olds, init)) >= 1  # the first update saw the initial value
    assert same_bits(best(olds, np.array(final, dtype)), np.full(len(olds), final, dtype))


def same_bits_each(a, x):
    return np.array([same_bits(v, x) for v in a])


def random_values(rng, kind, dtype, n):
    if kind == "add":  # positive, so the returned old values increase along the history
        if dtype == np.float32:
            return rng.uniform(0.5, 2.0, n).astype(dtype)
        return rng.integers(1, 1000, n).astype(dtype)
    if dtype == np.float32:
        return rng.standard_normal(n).astype(dtype)
    if dtype == np.uint32:
        return rng.integers(0, 2**32, n, dtype=np.uint64).astype(dtype)
    return rng.integers(-2**31, 2**31, n).astype(dtype)


def run_rmw(backend, rng, kind, dtype, n, nslots, block, num_warps=4):
    init = random_values(rng, kind if kind != "add" else "max", dtype, nslots)
    if kind == "add":
        init = np.zeros(nslots, dtype)
    mem = init.copy()
    slots = rng.integers(0, nslots, n).astype(np.int32)
    vals = random_values(rng, kind, dtype, n)
    olds = np.full(n, 7, dtype)
    ran = launch(rmw, (tc.cdiv(n, block),), mem, slots, vals, olds, n, backend=backend,
                 num_warps=num_warps, KIND=kind, BLOCK=block)
    return ran, init, slots, vals, olds, mem


# ---------------------------------------------------------------- every backend

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_rmw_heavy_contention(backend, rng, kind, dtype):
    n, nslots = 2053, 3
    ran, init, slots, vals, olds, mem = run_rmw(backend, rng, kind, dtype, n, nslots, 256)
    if not ran:
        return
    if backend == "numpy":
        want, want_olds = sequential(kind, init, slots, vals, dtype)
        assert same_bits(mem, want) and same_bits(olds, want_olds)
        return
    for s in range(nslots):
        at = slots == s
        check_history(kind, init[s], vals[at], olds[at], mem[s], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_rmw_many_addresses(backend, rng, kind, dtype):
    n, nslots = 999, 37
    ran, init, slots, vals, olds, mem = run_rmw(backend, rng, kind, dtype, n, nslots, 128)
    if ran:
        want, _ = sequential(kind, init, slots, vals, dtype)
        if kind == "add" and dtype == np.float32:
            np.testing.assert_allclose(mem, want, rtol=1e-5)
        elif kind != "xchg":
            assert same_bits(mem, want)
        for s in range(nslots):
            check_history(kind, init[s], vals[slots == s], olds[slots == s], mem[s], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["add", "max", "min"])
@pytest.mark.parametrize("block, num_warps", [(32, 4), (64, 4), (16, 1), (8, 2)])
def test_replicated_tiles_count_once(backend, rng, kind, dtype, block, num_warps):
    """BLOCK < 32 * num_warps: several threads hold each element; one atomic each."""
    n, nslots = 301, 5
    ran, init, slots, vals, olds, mem = run_rmw(backend, rng, kind, dtype, n, nslots, block,
                                                num_warps)
    if ran:
        want, _ = sequential(kind, init, slots, vals, dtype)
        if kind == "add" and dtype == np.float32:
            np.testing.assert_allclose(mem, want, rtol=1e-5)
        else:
            assert same_bits(mem, want)
        for s in range(nslots):  # every holder got the owner's old value
            check_history(kind, init[s], vals[slots == s], olds[slots == s], mem[s], dtype)


@pytest.mark.parametrize("block, num_warps", [(16, 4), (128, 4), (1024, 4)])
def test_histogram_unused_results(backend, rng, block, num_warps):
    n, nbins = 3001, 10
    data = rng.integers(0, nbins, n).astype(np.int32)
    bins = np.zeros(nbins, np.int32)
    if launch(hist, (tc.cdiv(n, block),), data, bins, n, backend=backend,
              num_warps=num_warps, BLOCK=block):
        np.testing.assert_array_equal(bins, np.bincount(data, minlength=nbins))


@pytest.mark.parametrize("block", [32, 256])
def test_counter_olds_are_a_permutation(backend, block):
    n = 1500
    c, olds = np.zeros(1, np.int32), np.full(n, -1, np.int32)
    if launch(counter, (tc.cdiv(n, block),), c, olds, n, backend=backend, BLOCK=block):
        assert c[0] == n
        np.testing.assert_array_equal(np.sort(olds), np.arange(n))


def test_scalar_atomic_once_per_program(backend):
    programs = 77
    c, olds = np.zeros(1, np.int32), np.full(programs, -1, np.int32)
    if launch(per_program, (programs,), c, olds, backend=backend):
        assert c[0] == programs
        np.testing.assert_array_equal(np.sort(olds), np.arange(programs))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cas_one_winner_per_address(backend, rng, dtype):
    n, nslots = 1234, 9
    mem = np.zeros(nslots, dtype)
    slots = rng.integers(0, nslots, n).astype(np.int32)
    vals = (np.arange(n) + 1).astype(dtype)
    olds = np.full(n, 77, dtype)
    if not launch(cas, (tc.cdiv(n, 128),), mem, slots, np.zeros(n, dtype), vals, olds, n,
                  backend=backend, BLOCK=128):
        return
    for s in range(nslots):
        at = np.flatnonzero(slots == s)
        winners = at[olds[at] == 0]
        assert len(winners) == 1  # the first swap wins; the others see its value
        assert mem[s] == vals[winners[0]]
        assert (olds[at[at != winners[0]]] == mem[s]).all()
        if backend == "numpy":
            assert winners[0] == at[0]


def test_cas_float_compares_bits(backend):
    mem = np.array([0.0, -0.0, np.nan, 1.5], np.float32)
    slots = np.array([0, 1, 2, 3, 0, 1], np.int32)
    cmps = np.array([-0.0, -0.0, np.nan, 1.5, 0.0, 0.0], np.float32)
    vals = np.array([9, 8, 7, 6, 5, 4], np.float32)
    olds = np.zeros(6, np.float32)
    if launch(cas, (1,), mem, slots, cmps, vals, olds, 6, backend=backend, BLOCK=8):
        # -0.0 != +0.0 bitwise, so lane 0 never swaps (lane 4 does) and lane 5 never does
        assert mem[0] == 5 and mem[1] == 8 and mem[3] == 6
        assert olds[4] == 0 and not np.signbit(olds[4]) and np.signbit(olds[1])
        # NaN matches its own bit pattern (a GPU driver may not keep NaN payloads)
        assert mem[2] == 7 or backend != "numpy" and np.isnan(mem[2])


@pytest.mark.parametrize("kind", ["max", "min"])
def test_float_max_min_nan_and_signed_zeros(backend, rng, kind):
    n = 600
    vals = rng.choice(np.array([-0.0, 0.0, -1.0, 2.5], np.float32), n)
    slots = rng.integers(0, 4, n).astype(np.int32)
    vals[slots == 3] = rng.standard_normal(np.sum(slots == 3)).astype(np.float32)
    vals[np.flatnonzero(slots == 3)[5]] = np.nan  # NaN propagates, like tl.maximum
    init = np.array([-0.0, 0.0, np.nan, 0.0], np.float32)
    mem, olds = init.copy(), np.zeros(n, np.float32)
    if launch(rmw, (tc.cdiv(n, 128),), mem, slots, vals, olds, n, backend=backend, KIND=kind,
              BLOCK=128):
        want, _ = sequential(kind, init, slots, vals, np.float32)
        assert same_bits(mem, want)


def test_masked_off_lanes_return_zero_and_keep_memory(backend, rng):
    n = 500
    mem = rng.integers(1, 100, n).astype(np.int32)
    before, olds = mem.copy(), np.full(n, -1, np.int32)
    if launch(masked_olds, (tc.cdiv(n, 64),), mem, olds, n, 1, backend=backend, BLOCK=64):
        off = np.arange(n) % 3 == 1
        np.testing.assert_array_equal(olds[off], 0)
        np.testing.assert_array_equal(olds[~off], before[~off])
        np.testing.assert_array_equal(mem, np.where(off, before, before + 5))


@pytest.mark.parametrize("dtype", DTYPES)
def test_plain_and_atomic_access_to_one_buffer(backend, dtype):
    """WGSL makes every access to an atomic buffer atomic (atomicLoad/atomicStore)."""
    n = 777
    buf, olds, seen = np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(n, dtype)
    if launch(plain_then_atomic, (tc.cdiv(n, 256),), buf, olds, seen, n, backend=backend,
              BLOCK=256):
        want = np.arange(n).astype(dtype) * 2
        np.testing.assert_array_equal(olds, want)
        np.testing.assert_array_equal(seen, want + 3)
        np.testing.assert_array_equal(buf, want + 3)


@pytest.mark.parametrize("m, n, num_warps", [(8, 16, 1), (8, 16, 4), (4, 4, 4), (32, 64, 4)])
def test_2d_and_reduced_tiles(backend, rng, m, n, num_warps):
    x = rng.integers(1, 100, m * n).astype(np.int32)
    out, olds = np.zeros(8, np.int32), np.zeros(2 * m * n, np.int32)
    if not launch(rows, (2,), x, out, olds, backend=backend, num_warps=num_warps, M=m, N=n):
        return
    slots = np.tile(np.arange(m * n) % 5, 2)
    want = np.zeros(8, np.int64)
    np.add.at(want, np.arange(m) % 3, 2 * x.reshape(m, n).sum(axis=1))
    np.add.at(want, 3 + slots, np.tile(x, 2))
    np.testing.assert_array_equal(out, want)
    if backend == "numpy":  # programs in order, the lanes of a tile in row-major order
        _, want_olds = sequential("add", np.zeros(5, np.int32), slots, np.tile(x, 2), np.int32)
        np.testing.assert_array_equal(olds, want_olds)
    for s in range(5):
        check_history("add", 0, np.tile(x, 2)[slots == s], olds[slots == s], out[3 + s],
                      np.int32)


@pytest.mark.parametrize("block", [64, 512])
def test_stream_compaction(backend, rng, block):
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    out, count = np.zeros(n, np.float32), np.zeros(1, np.int32)
    if launch(compact, (tc.cdiv(n, block),), x, out, count, n, backend=backend, BLOCK=block):
        kept = x[x > 0]
        assert count[0] == len(kept)
        got = out[:count[0]]
        np.testing.assert_array_equal(got if backend == "numpy" else np.sort(got),
                                      kept if backend == "numpy" else np.sort(kept))


def _asm(kernel, backend, sig, **constants):
    return tc.compile(kernel, signature=sig, constants=constants, backend=backend).asm


RMW_SIG = {"ptr": "*f32", "slots": "*i32", "vals": "*f32", "olds": "*f32", "n": "i32"}


def test_ptx_text():
    text = _asm(rmw, "ptx", RMW_SIG, KIND="max", BLOCK=256)["ptx"]
    cas = "atom.acq_rel.gpu.global.cas.b32"  # Triton's default sem and scope
    assert "max.NaN.f32" in text and cas in text and "_loop:" in text
    lines = text.splitlines()
    first = next(i for i, t in enumerate(lines) if cas in t)
    assert any("mov.b32" in t and t.rstrip().endswith(", 0;") for t in lines[first - 8:first])
    int_sig = {**RMW_SIG, "ptr": "*u32", "vals": "*u32", "olds": "*u32"}
    text = _asm(rmw, "ptx", int_sig, KIND="min", BLOCK=256)["ptx"]
    assert "atom.acq_rel.gpu.global.min.u32" in text and "bra" not in text


def test_wgsl_text():
    sig = {"buf": "*f32", "olds": "*f32", "seen": "*f32", "n": "i32"}
    text = _asm(plain_then_atomic, "wgsl", sig, BLOCK=256)["wgsl"]
    assert "array<atomic<u32>>" in text and "atomicCompareExchangeWeak" in text
    assert "atomicStore(&" in text and "atomicLoad(&" in text
    int_sig = {**RMW_SIG, "ptr": "*u32", "vals": "*u32", "olds": "*u32"}
    text = _asm(rmw, "wgsl", int_sig, KIND="max", BLOCK=256)["wgsl"]
    assert "array<atomic<u32>>" in text and "atomicMax(&" in text
    text = _asm(rmw, "wgsl", {**int_sig, "ptr": "*i32"}, KIND="max", BLOCK=256)["wgsl"]
    assert "array<atomic<i32>>" in text


# ---------------------------------------------------------------- numpy semantics

def test_numpy_programs_run_one_after_another():
    c, seen = np.zeros(1, np.int32), np.zeros(50, np.int32)
    ticket[(50,)](c, seen, backend="numpy")
    np.testing.assert_array_equal(seen, np.arange(1, 51))  # each load sees its own add


def test_numpy_serial_only_for_atomics():
    def kernel_of(k, sig, **constants):
        return tc.compile(k, signature=sig, constants=constants, backend="numpy").launcher._kernel

    assert kernel_of(counter, {"c": "*i32", "olds": "*i32", "n": "i32"}, BLOCK=64).serial
    from examples.vector_add import add
    sig = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}
    assert not kernel_of(add, sig, BLOCK=64).serial


def test_numpy_float_add_is_exactly_sequential(rng):
    n = 4099
    slots = rng.integers(0, 2, n).astype(np.int32)
    vals = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    mem, olds = np.zeros(2, np.float32), np.zeros(n, np.float32)
    rmw[(tc.cdiv(n, 512),)](mem, slots, vals, olds, n, KIND="add", BLOCK=512, backend="numpy")
    want, want_olds = sequential("add", np.zeros(2, np.float32), slots, vals, np.float32)
    assert same_bits(mem, want) and same_bits(olds, want_olds)


def test_numpy_atomic_out_of_bounds():
    c, olds = np.zeros(1, np.int32), np.zeros(4, np.int32)
    with pytest.raises(tc.OutOfBoundsError, match="out-of-bounds atomic of ptr"):
        rmw[(1,)](c, np.array([0, 0, 1, 0], np.int32), np.ones(4, np.int32), olds, 4,
                  KIND="add", BLOCK=4, backend="numpy")


def test_pointer_counts_as_written():
    ck = tc.compile(hist, signature={"data": "*i32", "bins": "*i32", "n": "i32"},
                    constants={"BLOCK": 64}, backend="numpy")
    assert [p.written for p in ck.metadata.params] == [False, True, False]


def test_unsigned_max_min_compare_unsigned():
    sig = {"ptr": "*u32", "slots": "*i32", "vals": "*u32", "olds": "*u32", "n": "i32"}
    ir = tc.compile(rmw, signature=sig, constants={"KIND": "max", "BLOCK": 64},
                    backend="numpy").asm["tile"]
    assert 'tile.atomic_rmw "umax"' in ir


@tc.kernel
def bad_dtype(x):
    tl.atomic_add(x, 1.0)


@tc.kernel
def half_max(x):
    tl.atomic_max(x, 1.0)  # 16-bit floats: add alone, as in Triton


@tc.kernel
def bad_pointer(x, n):
    tl.atomic_max(n, x)


@tc.kernel
def bad_shapes(x, BLOCK: tl.constexpr):
    tl.atomic_xchg(x + tl.arange(0, BLOCK), tl.zeros((2 * BLOCK,), tl.int32))


@pytest.mark.parametrize("kernel, sig, constants, message", [
    (bad_dtype, {"x": "*i8"}, {}, "int32, uint32, float32, float16 and bfloat16, got"),
    (half_max, {"x": "*f16"}, {}, "supports pointers to int32, uint32 and float32, got"),
    (bad_pointer, {"x": "*i32", "n": "i32"}, {}, "tl.atomic_max expects a pointer"),
    (bad_shapes, {"x": "*i32"}, {"BLOCK": 8}, "operand shapes"),
])
def test_frontend_errors(kernel, sig, constants, message):
    with pytest.raises(tc.CompileError, match=message):
        tc.compile(kernel, signature=sig, constants=constants, backend="numpy")


@tc.kernel
def channel_sums(x, out, n, C: tl.constexpr, BLOCK: tl.constexpr):
    """A normalization's weight gradient: each program adds its elements' f32 values into
    per-channel 16-bit sums (the value is cast to the pointer's type, as in Triton)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out + offs % C, v.to(tl.float32), mask=offs < n)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_float_add(backend, dtype):
    """Small integers keep every partial sum exact in either type, so any order of the
    adds gives the same sums (on WGSL, whose atomics are 32-bit, each add is a
    compare-exchange of the word holding two elements: both halves are summed here)."""
    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    x = np.random.default_rng(5).integers(-1, 2, 1000).astype(np_dtype)
    out = np.zeros(8, np_dtype)
    if launch(channel_sums, (8,), x, out, len(x), backend=backend, C=8, BLOCK=128):
        want = x.astype(np.float32).reshape(-1, 8).sum(axis=0)
        np.testing.assert_array_equal(out.astype(np.float32), want)



@tc.kernel
def add_and_move(x, out, olds, BLOCK: tl.constexpr):
    """Old values of 16-bit adds, and plain loads and stores in the array they add to, all
    starting at odd elements (the second half of a word)."""
    o = 1 + tl.arange(0, BLOCK)
    tl.store(olds + o, tl.atomic_add(out + o, tl.load(x + o)))
    tl.store(out + BLOCK + o, tl.load(out + 2 * BLOCK + o) * 2.0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_float_add_returns_old_values(backend, dtype):
    np_dtype = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    x = np.arange(9).astype(np_dtype)
    out = (np.arange(25) * 0.5 - 3).astype(np_dtype)
    want = out.copy()
    olds = np.zeros(9, np_dtype)
    if launch(add_and_move, (1,), x, out, olds, backend=backend, BLOCK=8):
        np.testing.assert_array_equal(olds[1:], want[1:9])
        sums = (want[1:9].astype(np.float32) + x[1:].astype(np.float32)).astype(np_dtype)
        np.testing.assert_array_equal(out[1:9], sums)
        np.testing.assert_array_equal(out[9:17], (want[17:].astype(np.float32) * 2).astype(np_dtype))
        np.testing.assert_array_equal(out[[0, *range(17, 25)]], want[[0, *range(17, 25)]])
