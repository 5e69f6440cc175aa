"""Kernels with mistakes, for the error tests: each error names a line of this file."""

import compiler as tc
import compiler.language as tl


@tc.kernel
def load_int(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(n + offs)  # LOAD_INT
    tl.store(x + offs, a)


@tc.kernel
def bad_arange(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, 100)  # BAD_ARANGE
    tl.store(x + offs, 1.0)


@tc.kernel
def undefined_name(x, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), nope)  # noqa: F821  # UNDEFINED


@tc.kernel
def float_shift(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(x + offs, v << 2)  # FLOAT_SHIFT


@tc.kernel
def runtime_if(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if offs < n:  # RUNTIME_IF
        tl.store(x + offs, 1.0)


@tc.kernel
def shape_mismatch(x, BLOCK: tl.constexpr):
    a = tl.arange(0, BLOCK)
    b = tl.arange(0, 2 * BLOCK)
    tl.store(x + a, a + b)  # SHAPE


@tc.kernel
def static_fail(x, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 128, "BLOCK too small")  # STATIC
    tl.store(x + tl.arange(0, BLOCK), 0.0)


@tc.kernel
def python_call(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, print(offs))  # PYCALL
