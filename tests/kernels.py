"""Kernels shared by the numeric tests: one kernel per family, the operation chosen by a
constexpr so every backend compiles exactly the same source."""

import compiler as tc
import compiler.language as tl


@tc.kernel
def binary(x, y, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1)
    b = tl.load(y + offs, mask=m, other=1)
    if OP == "add":
        r = a + b
    elif OP == "sub":
        r = a - b
    elif OP == "mul":
        r = a * b
    elif OP == "truediv":
        r = a / b
    elif OP == "floordiv":
        r = a // b
    elif OP == "mod":
        r = a % b
    elif OP == "and":
        r = a & b
    elif OP == "or":
        r = a | b
    elif OP == "xor":
        r = a ^ b
    elif OP == "lshift":
        r = a << (b & 15)
    elif OP == "rshift":
        r = a >> (b & 15)
    elif OP == "maximum":
        r = tl.maximum(a, b)
    elif OP == "minimum":
        r = tl.minimum(a, b)
    elif OP == "pow":
        r = a ** 3
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + offs, r, mask=m)


@tc.kernel
def compare(x, y, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    if OP == "eq":
        c = a == b
    elif OP == "ne":
        c = a != b
    elif OP == "lt":
        c = a < b
    elif OP == "le":
        c = a <= b
    elif OP == "gt":
        c = a > b
    else:
        c = a >= b
    tl.store(out + offs, tl.where(c, 1, 0), mask=m)


@tc.kernel
def unary(x, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=1)
    if OP == "neg":
        r = -a
    elif OP == "invert":
        r = ~a
    elif OP == "not":
        r = tl.where(not (a > 0), 1, 0)
    elif OP == "abs":
        r = tl.abs(a)
    elif OP == "exp":
        r = tl.exp(a)
    elif OP == "exp2":
        r = tl.exp2(a)
    elif OP == "log":
        r = tl.log(a)
    elif OP == "log2":
        r = tl.log2(a)
    elif OP == "sqrt":
        r = tl.sqrt(a)
    elif OP == "rsqrt":
        r = tl.rsqrt(a)
    elif OP == "sin":
        r = tl.sin(a)
    elif OP == "cos":
        r = tl.cos(a)
    elif OP == "floor":
        r = tl.floor(a)
    elif OP == "ceil":
        r = tl.ceil(a)
    elif OP == "sigmoid":
        r = tl.sigmoid(a)
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + offs, r, mask=m)


@tc.kernel
def ternary(x, y, z, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    c = tl.load(z + offs, mask=m)
    if OP == "where":
        r = tl.where(a > b, b, c)
    elif OP == "fma":
        r = tl.fma(a, b, c)
    elif OP == "clamp":
        r = tl.clamp(a, tl.minimum(b, c), tl.maximum(b, c))
    else:
        r = tl.where((a > 0) and (b > 0) or (c > 0), a, c)
    tl.store(out + offs, r, mask=m)


@tc.kernel
def cast(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m).to(out.dtype), mask=m)


@tc.kernel
def scalar_args(x, out, n, alpha, k, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m)
    tl.store(out + offs, v * alpha + k + tl.cdiv(n, 7), mask=m)


@tc.kernel
def grid_2d(out, W, BLOCK: tl.constexpr):
    row = tl.program_id(1)
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    val = row * 1000 + cols + tl.num_programs(0) * 0 + tl.num_programs(1) * 0
    tl.store(out + row * W + cols, val, mask=cols < W)


@tc.kernel
def creation(out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    z = tl.zeros((BLOCK,), tl.float32) + tl.full((BLOCK,), 2.5, tl.float32)
    tl.store(out + offs, z + tl.zeros_like(z) + offs.to(tl.float32), mask=offs < n)


@tc.kernel
def scalar_load(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    first = tl.load(x)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) - first, mask=offs < n)
