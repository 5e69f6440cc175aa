"""Which pointer arguments a kernel writes (``compiler/frontend/written.py``): stores
through pointers that loops swap and branches choose count for every argument they may
point into. Backends rely on it: PTX and WGSL copy those arguments back to host arrays,
and the NumPy backend loads the others without copying, so a missed write would lose
output or change a value already loaded. Only the NumPy backend runs pointers that move
between arrays in control flow; PTX and WGSL refuse them (a register or binding holds
one array), unless specialization removes the move."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.errors import CompileError
from tests.conftest import launch

SIG = {"x": "*f32", "out": "*f32", "keep": "*f32", "flag": "i32", "n": "i32"}


@tc.kernel
def bump_through_branch(x, out, keep, flag, n, BLOCK: tl.constexpr):
    """``x`` (flag > 0) or ``out`` gets x + 1; ``keep`` gets x as it was loaded."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask)
    if flag > 0:
        p = x
    else:
        p = out
    tl.store(p + offs, a + 1.0, mask=mask)
    tl.store(keep + offs, a, mask=mask)


@tc.kernel
def swap_in_loop(x, out, keep, flag, n, BLOCK: tl.constexpr):
    """Iteration i stores i into ``out``, then ``x``, then ``out``...: ``flag`` of them."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask)
    p, q = out, x
    for i in range(flag):
        tl.store(p + offs, a * 0.0 + i, mask=mask)
        p, q = q, p
    tl.store(keep + offs, a, mask=mask)


@tc.kernel
def copy(x, out, keep, flag, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


@pytest.mark.parametrize(("kernel", "written"), [
    (bump_through_branch, {"x", "out", "keep"}), (swap_in_loop, {"x", "out", "keep"}),
    (copy, {"out"})])
def test_written_parameters(kernel, written):
    ck = tc.compile(kernel, signature=SIG, constants={"BLOCK": 64}, backend="numpy")
    assert {p.name for p in ck.metadata.params if p.written} == written


@pytest.mark.parametrize("kernel", [bump_through_branch, swap_in_loop])
@pytest.mark.parametrize("target", ["ptx", "wgsl"])
def test_gpus_refuse_pointers_that_change_arrays(kernel, target):
    with pytest.raises(CompileError, match="must stay in one array"):
        tc.compile(kernel, signature=SIG, constants={"BLOCK": 64}, backend=target)


@pytest.mark.parametrize("flag", [0, 1])
def test_store_through_a_chosen_pointer(flag):
    n, block = 5000, 1024
    x0 = np.random.default_rng(flag).standard_normal(n, dtype=np.float32)
    x, out, keep = x0.copy(), np.zeros(n, np.float32), np.zeros(n, np.float32)
    bump_through_branch[(tc.cdiv(n, block),)](x, out, keep, flag, n, backend="numpy",
                                              BLOCK=block)
    np.testing.assert_array_equal(keep, x0)  # loaded before the store changed x
    np.testing.assert_array_equal(x if flag else out, x0 + np.float32(1))
    np.testing.assert_array_equal(out if flag else x, np.zeros(n) if flag else x0)


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_store_through_pointers_a_loop_swaps(steps):
    n, block = 3000, 1024
    x0 = np.random.default_rng(steps).standard_normal(n, dtype=np.float32)
    x, out, keep = x0.copy(), np.full(n, -1, np.float32), np.zeros(n, np.float32)
    swap_in_loop[(tc.cdiv(n, block),)](x, out, keep, steps, n, backend="numpy",
                                       BLOCK=block)
    np.testing.assert_array_equal(keep, x0)
    np.testing.assert_array_equal(out, np.full(n, 2 * ((steps - 1) // 2), np.float32))
    np.testing.assert_array_equal(x, x0 if steps == 1 else np.ones(n, np.float32))


def test_overlapping_arguments_are_copied_before_a_store(backend):
    """``src`` is never written, but it is a view of ``dst``: a load of it must not see
    the store after it (the NumPy backend reads only arrays no store can reach in place)."""
    n, block = 4096, 1024
    buf = np.random.default_rng(7).standard_normal(2 * n, dtype=np.float32)
    want = buf[:n].copy()
    if not launch(zero_then_move, (n // block,), buf[:n], buf, n, backend=backend,
                  BLOCK=block):
        return
    np.testing.assert_array_equal(buf[n:], want)
    np.testing.assert_array_equal(buf[:n], np.zeros(n, np.float32))


@tc.kernel
def zero_then_move(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(src + offs)
    tl.store(dst + offs, a * 0.0)
    tl.store(dst + n + offs, a)
