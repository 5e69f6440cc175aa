"""@tc.func helpers: inlined, nested, reused across kernels, with constexpr parameters."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.dependencies import find as find_dependencies
from tests.conftest import launch


@tc.func
def scale_shift(x, a, b: tl.constexpr = 1.0):
    return x * a + b


@tc.func
def softplus_ish(x, SIGN: tl.constexpr):
    if SIGN > 0:
        y = scale_shift(x, 2.0)
    else:
        y = scale_shift(x, -2.0, b=0.5)
    return tl.maximum(y, 0.0), y


@tc.kernel
def apply(x, out1, out2, n, SIGN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    pos, raw = softplus_ish(tl.load(x + offs, mask=m), SIGN)
    tl.store(out1 + offs, pos, mask=m)
    tl.store(out2 + offs, raw, mask=m)


@tc.kernel
def reuse(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, scale_shift(tl.load(x + offs, mask=offs < n), 3.0), mask=offs < n)


@pytest.mark.parametrize("sign", [1, -1])
def test_nested_helpers_with_constexprs(backend, rng, sign):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    o1, o2 = np.zeros(n, np.float32), np.zeros(n, np.float32)
    if launch(apply, (tc.cdiv(n, 256),), x, o1, o2, n, backend=backend, SIGN=sign, BLOCK=256):
        raw = x * 2.0 + 1.0 if sign > 0 else x * -2.0 + 0.5
        np.testing.assert_allclose(o2, raw, rtol=1e-6, atol=1e-6)  # fma contraction
        np.testing.assert_allclose(o1, np.maximum(raw, 0), rtol=1e-6)


def test_helper_reused_across_kernels(backend, rng):
    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    if launch(reuse, (tc.cdiv(n, 128),), x, out, n, backend=backend, BLOCK=128):
        np.testing.assert_allclose(out, x * 3.0 + 1.0, rtol=1e-6, atol=1e-6)  # fma contraction


def test_helper_is_inlined():
    ck = tc.compile(apply, signature="*f32,*f32,*f32,i32", constants={"SIGN": 1, "BLOCK": 64},
                    backend="numpy")
    assert "func.call" not in ck.asm["tile"] and ck.asm["tile"].count("func.func") == 1


def test_cache_key_covers_called_functions():
    sources = find_dependencies(apply.fn, apply.tile_function.text).sources
    assert any("def softplus_ish" in s for s in sources)
    assert any("def scale_shift" in s for s in sources)
    assert "def scale_shift" in apply.source


@tc.func
def bad_body(x):
    return x
    x = x + 1  # UNREACHABLE


@tc.kernel
def calls_bad(x, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), bad_body(1.0))


@tc.func
def recurse(x):
    return recurse(x)


@tc.kernel
def calls_recursive(x, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), recurse(1.0))


def test_errors_inside_helpers_point_at_the_helper():
    x = np.zeros(64, np.float32)
    with pytest.raises(tc.CompileError, match="unreachable code after return") as info:
        calls_bad[(1,)](x, BLOCK=64, backend="numpy")
    assert "test_func.py" in str(info.value) and "# UNREACHABLE" in str(info.value)
    with pytest.raises(tc.CompileError, match="nested too deeply"):
        calls_recursive[(1,)](x, BLOCK=64, backend="numpy")


@tc.func
def pick(a, b, FIRST: tl.constexpr):
    if FIRST:
        return a, b
    return b, a


@tc.kernel
def picks(x, FIRST: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    lo, hi = pick(r, r + BLOCK, FIRST)
    tl.store(x + r, lo.to(tl.float32))
    tl.store(x + BLOCK + r, hi.to(tl.float32))


@pytest.mark.parametrize("first", [True, False])
def test_code_after_a_return_under_a_constexpr_if_is_dead_only_when_it_returns(first):
    """``if FIRST: return ...`` jumps on every path when FIRST is true: what follows is
    dead for that specialization, not an error (it runs when FIRST is false)."""
    x = np.zeros(64, np.float32)
    picks[(1,)](x, FIRST=first, BLOCK=32, backend="numpy")
    want = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(x, want if first else np.roll(want, 32))


def test_helper_cannot_be_called_from_python():
    with pytest.raises(tc.TilecError, match="call it from a kernel"):
        scale_shift(1.0, 2.0)
