"""Names rebound to another type after an early return: the path that returned never reads
them again, so only the path that went on gives their type (the kernel, and an inlined
@tc.func whose return values must still agree); without a return, or across a continue,
both values must still have one type.
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler import triton
from compiler.triton import language as ttl
from tests.conftest import launch


@tc.kernel
def ones_past_return(out, n, BLOCK: tl.constexpr):
    """The pointer parameter becomes a tile of pointers after programs past n return."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    out = out + pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out, 1.0, mask=pid * BLOCK + tl.arange(0, BLOCK) < n)


@tc.kernel
def scale_odd_blocks(x, out, n, scale, BLOCK: tl.constexpr):
    """An int32 tile rebound to float32 after a return nested in a branch, and read after
    that branch; a runtime int32 scalar rebound to float32 after the first return."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if pid * BLOCK >= n:
        return
    mask = offs < n
    n = n * 0.5
    v = tl.load(x + offs, mask=mask, other=0)
    if pid % 2 == 1:
        if tl.max(v, axis=0) < 0:
            return
        v = v.to(tl.float32) * scale
    else:
        v = v.to(tl.float32)
    tl.store(out + offs, v + n, mask=mask)


@tc.func
def row_times(p, s, BLOCK: tl.constexpr):
    if s == 0.0:
        return tl.full([BLOCK], -1.0, tl.float32)
    p = p + tl.arange(0, BLOCK)
    s = s.to(tl.int32)
    return tl.load(p) * s


@tc.kernel
def rows_times(x, out, BLOCK: tl.constexpr):
    """A helper that returns early, then rebinds its pointer and float parameters."""
    pid = tl.program_id(0)
    s = tl.load(x + pid * BLOCK)
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), row_times(x + pid * BLOCK, s, BLOCK))


@triton.jit
def triton_ones(OUT, n, BLOCK: ttl.constexpr):
    pid = ttl.program_id(0)
    if pid * BLOCK >= n:
        return
    OUT = OUT + pid * BLOCK + ttl.arange(0, BLOCK)
    ttl.store(OUT, 1.0, mask=pid * BLOCK + ttl.arange(0, BLOCK) < n)


def test_pointer_rebound_to_tile_after_return(backend):
    out = np.zeros(14, np.float32)
    if launch(ones_past_return, (6,), out, 14, backend=backend, BLOCK=4):
        np.testing.assert_array_equal(out, np.ones(14, np.float32))


def test_triton_kernel_rebinds_its_pointer_after_return():
    out = np.zeros(12, np.float32)
    triton_ones[(4,)](out, 12, BLOCK=4)
    np.testing.assert_array_equal(out, np.ones(12, np.float32))


def test_dtype_changes_after_return(backend):
    n, block = 20, 4
    x = np.arange(n, dtype=np.int32) - 6
    out = np.full(n, 7.0, np.float32)
    if not launch(scale_odd_blocks, (7,), x, out, n, 3.0, backend=backend, BLOCK=block):
        return
    want = np.full(n, 7.0, np.float32)
    for s in range(0, n, block):
        blk = x[s:s + block].astype(np.float32)
        if s // block % 2 == 0:
            want[s:s + block] = blk + n * 0.5
        elif blk.max() >= 0:
            want[s:s + block] = blk * 3.0 + n * 0.5
    np.testing.assert_array_equal(out, want)


def test_helper_rebinds_parameters_after_return(backend):
    block = 8
    x = np.arange(3 * block, dtype=np.float32) + 0.5
    x[block] = 0.0
    out = np.zeros_like(x)
    if launch(rows_times, (3,), x, out, backend=backend, BLOCK=block):
        rows = x.reshape(3, block)
        want = rows * np.trunc(rows[:, :1])
        want[1] = -1.0
        np.testing.assert_array_equal(out, want.ravel())


# ---------------------------------------------------------------- still errors


@tc.kernel
def rebound_in_one_branch(x, n):
    if n > 0:
        x = x + tl.arange(0, 4)
    tl.store(x, 1.0)


@tc.kernel
def rebound_after_continue(x, n):
    v = tl.load(x)
    for i in range(n):
        if i == 2:
            continue
        v = tl.zeros([4], tl.float32)
    tl.store(x + tl.arange(0, 4), v)


@tc.func
def scalar_or_tile(s):
    if s > 0.0:
        return s
    s = s + tl.zeros([4], tl.float32)
    return s


@tc.kernel
def helper_returns_differ(x):
    tl.store(x + tl.arange(0, 4), scalar_or_tile(tl.load(x)))


@pytest.mark.parametrize("kernel, message", [
    (rebound_in_one_branch, ("'x' is tile<4, pointer to float32> in the if branch but "
     "pointer to float32 in the else branch; both must agree")),
    (rebound_after_continue, ("'v' is tile<4, float32> in the if branch but float32 in "
     "the else branch; both must agree")),
    (helper_returns_differ, "return values differ"),
])
def test_types_that_differ_on_paths_that_go_on_still_fail(kernel, message):
    signature = {"x": "*f32", "n": "i32"} if kernel is not helper_returns_differ \
        else {"x": "*f32"}
    with pytest.raises(tc.CompileError) as info:
        tc.compile(kernel, signature=signature, backend="numpy")
    assert message in str(info.value)
