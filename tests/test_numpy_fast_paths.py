"""The NumPy backend's fast paths on tiles large enough to use them: recycled arrays
(``backends/numpy/pool.py``), outputs written with ``out=``, shared sign-extended offsets,
masked loads that never rewrite their offsets, the one-reduction bounds check. Results are
compared bit for bit with NumPy doing the same operations in the same order, on several
launches and batch sizes, so that a reused array that still held a live value would show."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from backends.numpy import kernel as interp
from backends.numpy import pool as pool_module
from backends.numpy.pool import Pool, recyclable
from compiler.errors import OutOfBoundsError

BLOCK = 4096  # a (programs, 4096) f32 value is far above pool.MIN_BYTES


@tc.kernel
def chain(x, y, out, flags, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=1.5)
    b = tl.load(y + offs, mask=mask, other=-2.0)
    c = tl.exp(a - b) * 0.5 + a / b
    tl.store(out + offs, tl.maximum(c, b), mask=mask)
    both = (a < b) & (c > 0.0) | (a == b) ^ (b < 0.0)
    tl.store(flags + offs, both.to(tl.int8), mask=mask)


def chain_reference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.exp(x - y) * np.float32(0.5) + x / y
    both = ((x < y) & (c > 0)) | ((x == y) ^ (y < 0))
    return np.maximum(c, y), both.astype(np.int8)


@pytest.mark.parametrize("batch", [1 << 22, 3 * BLOCK])  # one batch; several, with a rest
def test_chain_is_exact_on_every_launch(monkeypatch, batch):
    monkeypatch.setattr(interp, "_BATCH_ELEMENTS", batch)
    rng = np.random.default_rng(1)
    for n in (10 * BLOCK + 123, 10 * BLOCK + 123, 7 * BLOCK):  # pooled arrays reused
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        out, flags = np.full(n, np.nan, np.float32), np.full(n, 9, np.int8)
        with np.errstate(all="ignore"):
            chain[(tc.cdiv(n, BLOCK),)](x, y, out, flags, n, BLOCK=BLOCK, backend="numpy")
            want, want_flags = chain_reference(x, y)
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(flags, want_flags)


@tc.kernel
def decay(x, out, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    """Loop-carried tiles whose temporaries die every iteration."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in range(STEPS):
        acc = acc * 0.5 + tl.load(x + k * n + offs)
    tl.store(out + offs, acc)


def test_loop_carried_values_survive_recycling():
    steps, n = 5, 8 * BLOCK
    x = np.random.default_rng(2).standard_normal(steps * n, dtype=np.float32)
    out = np.empty(n, np.float32)
    decay[(n // BLOCK,)](x, out, n, STEPS=steps, BLOCK=BLOCK, backend="numpy")
    want = np.zeros(n, np.float32)
    for k in range(steps):
        want = want * np.float32(0.5) + x[k * n:(k + 1) * n]
    np.testing.assert_array_equal(out, want)


@tc.kernel
def shifted_copy(x, out, n, shift, BLOCK: tl.constexpr):
    """Lanes past n point anywhere (far past the end, or before the start): masked off."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = tl.where(offs < n, offs + shift, tl.where(offs % 2 == 0, offs * 1000, -offs))
    active = offs + shift < n
    v = tl.load(x + src, mask=active & (offs < n), other=7.0)
    tl.store(out + src, v + 1.0, mask=active & (offs < n))


def test_masked_lanes_may_point_anywhere():
    n = 5 * BLOCK + 100
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    shifted_copy[(tc.cdiv(n, BLOCK) + 1,)](x, out, n, 3, BLOCK=BLOCK, backend="numpy")
    want = np.zeros(n, np.float32)
    want[3:] = x[3:] + 1
    np.testing.assert_array_equal(out, want)


@tc.kernel
def overrun(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs + 1, mask=offs < n, other=0.0)
    tl.store(out + offs, v, mask=offs < n)


def test_active_lane_out_of_bounds_is_reported():
    n = 5 * BLOCK - 10
    x, out = np.zeros(n, np.float32), np.zeros(n, np.float32)
    # lane n - 1, active in program 4, reads x[n]: one past the end
    with pytest.raises(OutOfBoundsError, match=rf"load of x\[{n}\] .* program \(4, 0, 0\)"):
        overrun[(5,)](x, out, n, BLOCK=BLOCK, backend="numpy")


def test_unmasked_overrun_names_the_first_bad_element():
    n = 5 * BLOCK - 10  # the batch's offsets are one consecutive run, 10 past the end
    x, out = np.zeros(n, np.float32), np.zeros(5 * BLOCK, np.float32)
    with pytest.raises(OutOfBoundsError, match=rf"load of x\[{n}\] .* program \(4, 0, 0\)"):
        copy_all[(5,)](x, out, BLOCK=BLOCK, backend="numpy")


@tc.kernel
def copy_all(x, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs))


@tc.kernel
def pointer_paths(x, out, n, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    """Consecutive pointers moved in a loop, reshaped and masked."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = x + offs
    dst = out + offs
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in range(STEPS):
        acc += tl.load(src)
        src += n
    square = tl.reshape(x + offs, (BLOCK // 64, 64))
    acc += tl.reshape(tl.load(square), (BLOCK,))
    acc += tl.load(x + n + offs, mask=offs % 5 != 0, other=0.5)
    tl.store(dst, acc)


@pytest.mark.parametrize("batch", [1 << 22, BLOCK])  # all programs together; one at a time
def test_consecutive_pointers_through_every_path(monkeypatch, batch):
    monkeypatch.setattr(interp, "_BATCH_ELEMENTS", batch)
    steps, n = 3, 6 * BLOCK
    x = np.random.default_rng(3).standard_normal(steps * n, dtype=np.float32)
    out = np.empty(n, np.float32)
    pointer_paths[(n // BLOCK,)](x, out, n, STEPS=steps, BLOCK=BLOCK, backend="numpy")
    offs = np.arange(n)
    want = np.zeros(n, np.float32)
    for k in range(steps):
        want += x[k * n:(k + 1) * n]
    want += x[:n]
    want += np.where(offs % 5 != 0, x[n:2 * n], np.float32(0.5))
    np.testing.assert_array_equal(out, want)


@tc.kernel
def rows_copy(x, out, n_cols, x_stride, out_stride, start, MASK: tl.constexpr,
              BLOCK: tl.constexpr):
    """One row per program: ``out[start + row * out_stride + c] = 2 x[row * x_stride + c]
    + 1`` for the columns ``MASK`` keeps."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    src = x + row * x_stride + cols
    dst = out + start + row * out_stride + cols
    if MASK == "":
        tl.store(dst, tl.load(src) * 2.0 + 1.0)
    else:
        keep = cols < n_cols
        if MASK == "every third":
            keep = keep & (cols % 3 != 0)
        tl.store(dst, tl.load(src, mask=keep, other=-1.0) * 2.0 + 1.0, mask=keep)


def rows_reference(x, out, rows, n_cols, x_stride, out_stride, start, mask, block):
    """``rows_copy`` one program after the other, as the numpy backend's semantics say."""
    cols = np.arange(block)
    keep = cols < (block if mask == "" else n_cols)
    if mask == "every third":
        keep &= cols % 3 != 0
    cols = cols[keep]
    for r in range(rows):
        out[start + r * out_stride + cols] = x[r * x_stride + cols] * np.float32(2) + 1


ROWS = [  # (mask, n_cols, x_stride, out_stride, start): rows of 1024 over 128 programs
    ("prefix", 1000, 1003, 1000, 0),  # the softmax shape: padded rows, masked tail
    ("prefix", 1000, 1000, -1000, 127_000),  # rows written backwards
    ("prefix", 1000, 1000, 700, 0),  # rows written over each other: later programs win
    ("every third", 1000, 1000, 1000, 0),  # a mask that is no prefix of the row
    ("", 0, 1024, 1500, 24),  # unmasked, gaps between the rows
]


@pytest.mark.parametrize("batch", [1 << 22, 64 * BLOCK // 4])  # one batch; two
@pytest.mark.parametrize(("mask", "n_cols", "x_stride", "out_stride", "start"), ROWS)
def test_row_pointers_match_one_program_at_a_time(monkeypatch, batch, mask, n_cols,
                                                  x_stride, out_stride, start):
    monkeypatch.setattr(interp, "_BATCH_ELEMENTS", batch)
    rows, block = 128, BLOCK // 4
    assert block == 1024
    x = np.random.default_rng(5).standard_normal(rows * 1100, dtype=np.float32)
    out = np.zeros(rows * 1600, np.float32)
    want = out.copy()
    rows_copy[(rows,)](x, out, n_cols, x_stride, out_stride, start, MASK=mask,
                       BLOCK=block, backend="numpy")
    rows_reference(x, want, rows, n_cols, x_stride, out_stride, start, mask, block)
    np.testing.assert_array_equal(out, want)


def test_row_overrun_names_the_first_bad_element():
    rows, block = 128, BLOCK // 4
    n = (rows - 1) * 1000 + block - 1  # the last row's last element is one past the end
    x, out = np.zeros(n, np.float32), np.zeros(rows * block, np.float32)
    with pytest.raises(OutOfBoundsError, match=rf"load of x\[{n}\] .* program \(127, 0, 0\)"):
        rows_copy[(rows,)](x, out, 0, 1000, block, 0, MASK="", BLOCK=block, backend="numpy")


@tc.kernel
def row_max(x, out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tl.store(out + row, tl.max(tl.load(x + row * BLOCK + tl.arange(0, BLOCK)), axis=0))


def test_max_of_signed_zeros_is_ieee_on_big_rows():
    x = np.full((64, BLOCK), -1.0, np.float32)
    x[0, :] = -0.0  # all -0.0: -0.0
    x[1, ::2] = -0.0
    x[1, 1::2] = 0.0  # mixed zeros: +0.0
    x[2, 5] = np.nan  # NaN propagates
    x[3, :] = -0.0
    x[3, 0] = 0.0  # one +0.0 first (np.maximum.reduce answers -0.0 here)
    out = np.empty(64, np.float32)
    row_max[(64,)](x, out, BLOCK=BLOCK, backend="numpy")
    assert np.signbit(out[0]) and out[0] == 0
    assert not np.signbit(out[1]) and out[1] == 0
    assert np.isnan(out[2])
    assert not np.signbit(out[3]) and out[3] == 0
    np.testing.assert_array_equal(out[4:], np.float32(-1.0))


@tc.func
def mul(a, b):
    return a * b


@tc.func
def xor(a, b):
    return a ^ b


@tc.kernel
def int_rows(x, out, OP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    v = tl.load(x + row * BLOCK + tl.arange(0, BLOCK))
    if OP == "sum":
        r = tl.sum(v, axis=0)
    elif OP == "prod":
        r = tl.reduce(v, 0, mul)
    elif OP == "xor":
        r = tl.reduce(v, 0, xor)
    else:
        r = tl.min(v, axis=0)
    tl.store(out + row, r)


@pytest.mark.parametrize("op", ["sum", "prod", "xor", "min"])
def test_integer_reductions_wrap_like_a_sequential_loop(op):
    rows = 8
    x = np.random.default_rng(4).integers(-2**31, 2**31, (rows, BLOCK), dtype=np.int32)
    x[1] = 3  # the product wraps many times over
    out = np.empty(rows, np.int32)
    int_rows[(rows,)](x, out, OP=op, BLOCK=BLOCK, backend="numpy")
    for r in range(rows):
        acc = int(x[r, 0])
        for v in x[r, 1:].tolist():
            acc = {"sum": acc + v, "prod": acc * v, "xor": acc ^ v, "min": min(acc, v)}[op]
        assert int(out[r]) == (acc + 2**31) % 2**32 - 2**31, (op, r)


# -- the pool itself ---------------------------------------------------------------------

def big(dtype=np.float32) -> np.ndarray:
    return np.empty(pool_module.MIN_BYTES // np.dtype(dtype).itemsize, dtype)


def test_release_recycles_only_unshared_arrays():
    pool, a, b = Pool(), big(), big()
    held = b  # a second holder: b must not be handed out again
    values = [a, b]
    a_id = id(a)
    del a, b
    batch = interp.Batch([], [], np.zeros((3, 1), np.int32), (), values, pool)
    interp.release(batch, values, 0)
    interp.release(batch, values, 1)
    assert values == [None, None]
    first, second = pool.empty(held.shape, held.dtype), pool.empty(held.shape, held.dtype)
    assert id(first) == a_id and second is not held


def test_a_launch_leaves_its_arrays_to_the_next(monkeypatch):
    monkeypatch.setattr(pool_module._LOCAL, "pool", Pool())  # this test's own
    n = 8 * BLOCK
    x = np.ones(n, np.float32)
    out, flags = np.empty(n, np.float32), np.empty(n, np.int8)
    chain[(8,)](x, x, out, flags, n, BLOCK=BLOCK, backend="numpy")
    # the values (8, 4096) of f32, i32, i1: a refcount rule that never matched would
    # leave nothing here and every launch page-faulting fresh arrays again
    assert pool_module.thread_pool().held_bytes >= 3 * 8 * BLOCK * 4


def test_views_small_and_read_only_arrays_are_not_recyclable():
    base = big()
    assert recyclable(base)
    assert not recyclable(base[1:])  # a view: its memory belongs to base
    assert not recyclable(np.empty(8, np.float32))  # NumPy's own cache is cheaper
    frozen = big()
    frozen.flags.writeable = False
    assert not recyclable(frozen)


def test_pool_keeps_at_most_max_bytes(monkeypatch):
    monkeypatch.setattr(pool_module, "MAX_BYTES", 3 * pool_module.MIN_BYTES)
    pool = Pool()
    old = [big(np.float32) for _ in range(3)]
    for a in old:
        pool.give(a)
    newest = big(np.int32)
    pool.give(newest)  # over the limit: the oldest kind is dropped to make room
    assert pool.empty(newest.shape, newest.dtype) is newest
    assert all(pool.empty(old[0].shape, old[0].dtype) is not a for a in old)
    assert pool.held_bytes == 0
    same_kind = [big(np.int32) for _ in range(4)]
    for a in same_kind:
        pool.give(a)  # the fourth would pass the limit: dropped, the others kept
    assert pool.held_bytes == 3 * pool_module.MIN_BYTES
    kept = {id(pool.empty(newest.shape, newest.dtype)) for _ in range(4)}
    assert kept & {id(a) for a in same_kind[:3]} == {id(a) for a in same_kind[:3]}


@tc.kernel
def index_uses(x, out, flags, n, BLOCK: tl.constexpr):
    """``offs`` (kept as row starts by the NumPy backend: ``ramps.py``) in every use:
    pointers with a base per program, ``offs < n``, other comparisons, arithmetic."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=-3.0)
    b = tl.load(x + pid + offs, mask=mask & (offs + pid < n), other=0.25)
    tl.store(out + offs, a + b + (offs % 7).to(tl.float32), mask=mask)
    both = (offs <= n - 5).to(tl.int8) + 2 * (n - 9 > offs).to(tl.int8)
    tl.store(flags + offs, both, mask=offs < n)


@pytest.mark.parametrize("batch", [1 << 22, 3 * BLOCK])  # one batch; several, with a rest
@pytest.mark.parametrize("n", [10 * BLOCK, 10 * BLOCK - 3, 2 * BLOCK + 1])
def test_index_ramps_match_the_tiles_they_stand_for(monkeypatch, batch, n):
    monkeypatch.setattr(interp, "_BATCH_ELEMENTS", batch)
    x = np.random.default_rng(n).standard_normal(n, dtype=np.float32)
    out, flags = np.full(n, np.nan, np.float32), np.full(n, 9, np.int8)
    index_uses[(tc.cdiv(n, BLOCK),)](x, out, flags, n, BLOCK=BLOCK, backend="numpy")
    offs = np.arange(n)
    shifted = offs + offs // BLOCK
    b = np.where(shifted < n, x[np.minimum(shifted, n - 1)], np.float32(0.25))
    np.testing.assert_array_equal(out, x + b + (offs % 7).astype(np.float32))
    np.testing.assert_array_equal(flags, (offs <= n - 5) + 2 * (n - 9 > offs))


@tc.kernel
def wrapped_offsets(out, negative, first, zero, BLOCK: tl.constexpr):
    offs = first + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + at, offs)
    tl.store(negative + at, (offs < zero).to(tl.int8))


def test_index_tiles_that_wrap_keep_i32_arithmetic():
    first = (1 << 31) - 3 * BLOCK - BLOCK // 2  # 2^31 - 1 is in the middle of program 2
    out, negative = np.zeros(4 * BLOCK, np.int32), np.full(4 * BLOCK, 9, np.int8)
    wrapped_offsets[(4,)](out, negative, first, 0, BLOCK=BLOCK, backend="numpy")
    want = (first + np.arange(4 * BLOCK, dtype=np.int64)).astype(np.int32)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(negative, want < 0)
