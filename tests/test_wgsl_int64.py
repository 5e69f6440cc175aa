"""int64 on WGSL, held as pairs of 32-bit words (backends/wgsl/wide.py), against the NumPy
backend (the reference semantics) over random and edge values: arithmetic that wraps,
C division, shifts past the width, comparisons, casts to and from every narrower type and
float, int64 arrays and scalars, and the Triton idioms that bring int64 into index math."""

import re

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from backends.wgsl.emit import emit_wgsl
from compiler.context import parse_module
from compiler.jit import availability
from tests.test_wgsl_backend import apply

pytestmark = pytest.mark.skipif(not availability("wgsl")[0],
                                reason=f"wgsl: {availability('wgsl')[1]}")

I64 = np.iinfo(np.int64)
EDGES = np.array([0, 1, -1, 2, -2, 7, -7, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1,
                  2**32, 2**32 + 1, -2**32, -2**32 - 1, 2**62, 2**63 - 2**32, I64.max,
                  I64.min, I64.min + 1, 12345678901, -98765432109], np.int64)


def values(n: int, seed: int) -> np.ndarray:
    """Edge values, then a random mix of full-range, word-sized and small int64s."""
    rng = np.random.default_rng(seed)
    full = rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True)
    word = rng.integers(-2**33, 2**33, n, dtype=np.int64)
    small = rng.integers(-300, 300, n, dtype=np.int64)
    pick = rng.integers(0, 3, n)
    return np.concatenate([EDGES, np.choose(pick, [full, word, small])])


def pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, then random values."""
    a, b = np.meshgrid(EDGES, EDGES)
    return (np.concatenate([a.ravel(), values(n, seed)]),
            np.concatenate([b.ravel(), values(n, seed + 1)]))


def both(kernel, grid, outs, *args, **constexprs) -> list[np.ndarray]:
    """Run on numpy and on wgsl, each into its own copy of the outputs ``outs`` (indices
    into args); checks the wgsl results equal numpy's, and returns them."""
    results = {}
    for backend in ("numpy", "wgsl"):
        run = [a.copy() if i in outs else a for i, a in enumerate(args)]
        kernel[grid](*run, backend=backend, **constexprs)
        results[backend] = [run[i] for i in outs]
    for want, got in zip(results["numpy"], results["wgsl"], strict=True):
        np.testing.assert_array_equal(got, want, err_msg=f"{constexprs}: wgsl differs")
    return results["wgsl"]


@tc.kernel
def binary(x, y, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    if OP == "add":
        r = a + b
    elif OP == "sub":
        r = a - b
    elif OP == "mul":
        r = a * b
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
        r = a << b
    elif OP == "rshift":
        r = a >> b
    elif OP == "maximum":
        r = tl.maximum(a, b)
    elif OP == "minimum":
        r = tl.minimum(a, b)
    elif OP == "where":
        r = tl.where(a < b, b, a)
    elif OP == "wide_mul":  # 32 x 32 bits into 64
        r = a.to(tl.int32).to(tl.int64) * b.to(tl.int32).to(tl.int64)
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + offs, r, mask=m)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "floordiv", "mod", "and", "or", "xor",
                                "lshift", "rshift", "maximum", "minimum", "where",
                                "wide_mul"])
def test_binary(op):
    a, b = pairs(300, 1)
    if op in ("lshift", "rshift"):  # mostly in range, some from 64 on or negative
        b = np.where(np.arange(b.size) % 4 == 0, b, np.abs(b) % 70)
    out = np.zeros_like(a)
    both(binary, (-(-a.size // 256),), [2], a, b, out, a.size, OP=op, BLOCK=256)


@tc.kernel
def by_constant(x, q, r, n, D: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    tl.store(q + offs, a // D, mask=m)
    tl.store(r + offs, a % D, mask=m)


@pytest.mark.parametrize("d", [2, 64, 2**31, 2**32, 2**40, 2**62, 3, 7, 1000, 11008,
                               2**32 + 1, 2**63 - 1, -64, -7])
def test_division_by_a_constexpr(d):
    """``//`` and ``%`` by a constexpr, negative dividends and INT64_MIN included: shifts
    and masks by a power of two, a multiply-high by another positive divisor, so that no
    division loop is in the shader (lavapipe took minutes to compile a kernel of many)."""
    a = values(300, 5)
    q, r = np.zeros_like(a), np.zeros_like(a)
    both(by_constant, (-(-a.size // 256),), [1, 2], a, q, r, a.size, D=d, BLOCK=256)
    wgsl = tc.compile(by_constant, backend="wgsl", args=(a, q, r, a.size),
                      constants={"D": d, "BLOCK": 256}).asm["wgsl"]
    assert ("fn divsi64" in wgsl) == (d < 0)


@pytest.mark.parametrize("d", [2**40, 10, 2**63 + 5, -3])  # the last two: over 2^63
@pytest.mark.parametrize("op", ["arith.divui", "arith.remui"])
def test_unsigned_division_by_a_constant(op, d):
    a = values(200, 6)
    body = f"%d = arith.constant dense<{d}> : {{i64}}\n%r0 = {op} %x0, %d : {{i64}}"
    (out,) = apply(body, [a], ["i64"])
    b = np.full_like(a, d if d < 2**63 else d - 2**64)
    np.testing.assert_array_equal(out, UNSIGNED[op](a, b))


@tc.kernel
def compare(x, y, out, n, BLOCK: tl.constexpr):
    """Every comparison at once, one bit each."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    r = (a == b).to(tl.int32) | (a != b).to(tl.int32) << 1 | (a < b).to(tl.int32) << 2
    r = r | (a <= b).to(tl.int32) << 3 | (a > b).to(tl.int32) << 4
    r = r | (a >= b).to(tl.int32) << 5
    tl.store(out + offs, r, mask=m)


def test_comparisons():
    a, b = pairs(300, 2)
    b[::5] = a[::5]  # equal pairs, beyond the edge diagonal
    out = np.zeros(a.size, np.int32)
    (got,) = both(compare, (-(-a.size // 128),), [2], a, b, out, a.size, BLOCK=128)
    assert len(np.unique(got)) == 3  # equal, less, greater all met


@tc.kernel
def unary(x, out, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    if OP == "neg":
        r = -a
    elif OP == "invert":
        r = ~a
    elif OP == "abs":
        r = tl.abs(a)
    elif OP == "shift_constants":
        r = (a << 3) ^ (a >> 35) ^ (a >> 1) ^ (a << 40)
    elif OP == "constant_math":
        r = a * 6700417 + 2**40 - a // 1000003 + a % 10
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + offs, r, mask=m)


@pytest.mark.parametrize("op", ["neg", "invert", "abs", "shift_constants", "constant_math"])
def test_unary(op):
    a = values(500, 3)
    out = np.zeros_like(a)
    both(unary, (-(-a.size // 128),), [1], a, out, a.size, OP=op, BLOCK=128)


@tc.kernel
def cast(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m).to(out.dtype.element_ty), mask=m)


NARROWER = [np.int32, np.uint32, np.int16, np.int8, np.uint8, np.bool_, np.float32,
            np.float16]


@pytest.mark.parametrize("dtype", NARROWER)
def test_casts_from_int64(dtype):
    a = values(500, 4)
    a[-40:] = np.arange(-20, 20) + (1 << 53) + (1 << 29)  # ties and near-ties of float32
    out = np.zeros(a.size, dtype)
    both(cast, (-(-a.size // 128),), [1], a, out, a.size, BLOCK=128)


def _from(dtype) -> np.ndarray:
    if dtype == np.bool_:
        return np.arange(64) % 3 == 0
    if np.dtype(dtype).kind == "f":
        x = np.random.default_rng(5).standard_normal(300) * 10.0 ** np.arange(300) % 21
        edges = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2**31, -2**31, 2**32, 4294967295.5,
                 2**53 + 2, 2**63, -2**63, 2**64, -2**64, 1e19, -1e19, 3e38, -3e38,
                 np.inf, -np.inf, np.nan]
        with np.errstate(over="ignore"):  # float16: infinity past 65504
            return np.concatenate([edges, x]).astype(dtype)
    info = np.iinfo(dtype)
    return np.concatenate([[0, 1, info.min, info.max, info.max - 1, info.min + 1],
                           np.random.default_rng(6).integers(info.min, info.max, 300)]
                          ).astype(dtype)


@pytest.mark.parametrize("dtype", NARROWER)
def test_casts_to_int64(dtype):
    a = _from(dtype)
    out = np.zeros(a.size, np.int64)
    with np.errstate(invalid="ignore"):
        both(cast, (-(-a.size // 128),), [1], a, out, a.size, BLOCK=128)


@tc.kernel
def affine(x, out, n, scale, bias, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * scale + bias, mask=m)


@pytest.mark.parametrize("scale, bias", [(3, 2**40 + 5), (-2**33 - 1, -1), (2**62, I64.min)])
def test_int64_scalar_arguments(scale, bias):
    a = values(200, 7)
    out = np.zeros_like(a)
    (got,) = both(affine, (2,), [1], a, out, a.size, np.int64(scale), np.int64(bias),
                  BLOCK=128)
    want = (a.astype(object) * scale + bias + 2**63) % 2**64 - 2**63
    np.testing.assert_array_equal(got, want.astype(np.int64))


# ---------------------------------------------------------------- Triton's idioms


@tc.kernel
def scale_rows(x, out, stride, n_cols, BLOCK: tl.constexpr):
    """Liger-Kernel's and Unsloth's row addressing: the program id made int64 before it
    is multiplied by a stride, so offsets past 2^31 elements do not wrap."""
    pid = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + pid * stride + cols, mask=m, other=0.0)
    tl.store(out + pid * n_cols + cols, v * 2.0 + 1.0, mask=m)


def test_program_id_to_int64_times_stride():
    x = np.random.default_rng(8).standard_normal((37, 100)).astype(np.float32)
    out = np.zeros((37, 90), np.float32)
    scale_rows[(37,)](x, out, np.int64(100), 90, BLOCK=128, backend="wgsl")
    np.testing.assert_array_equal(out, x[:, :90] * 2.0 + 1.0)


@tc.kernel
def softmax_rows(out, x, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    """Triton's fused-softmax tutorial with ``row_start = row.to(tl.int64) * stride``."""
    row = tl.program_id(0)
    row_start = row.to(tl.int64) * in_stride
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    v = tl.load(x + row_start + cols, mask=m, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(out + row.to(tl.int64) * out_stride + cols, e / tl.sum(e, axis=0), mask=m)


def test_row_wise_kernel_with_int64_strides():
    x = np.random.default_rng(9).standard_normal((13, 300)).astype(np.float32)
    out = np.full((13, 256), -1.0, np.float32)
    softmax_rows[(13,)](out, x, np.int64(300), np.int64(256), 250, BLOCK=256,
                        backend="wgsl")
    e = np.exp(x[:, :250] - x[:, :250].max(axis=1, keepdims=True))
    np.testing.assert_allclose(out[:, :250], e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    assert (out[:, 250:] == -1.0).all()


@tc.kernel
def row_sums(x, out, stride, n_cols, BLOCK: tl.constexpr):
    """A loop over int64 column offsets: the induction variable is int64."""
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out + row, tl.sum(acc, axis=0))


def test_loop_over_int64_bounds():
    x = np.random.default_rng(10).integers(-50, 50, (6, 1000)).astype(np.float32)
    out = np.zeros(6, np.float32)
    row_sums[(6,)](x, out, np.int64(1000), np.int64(1000), BLOCK=128, backend="wgsl")
    np.testing.assert_array_equal(out, x.sum(axis=1))


# ---------------------------------------------------------------- across threads


@tc.kernel
def reduce_and_scan(x, sums, extremes, cums, rows, BLOCK: tl.constexpr):
    """Reductions and a scan of int64 (shuffles and shared memory), and a 2-D row sum
    after a transpose (a layout conversion through shared memory)."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(sums, tl.sum(v, axis=0))
    tl.store(extremes, tl.max(v, axis=0))
    tl.store(extremes + 1, tl.min(v, axis=0))
    tl.store(cums + offs, tl.cumsum(v, axis=0))
    grid = tl.reshape(v, (BLOCK // 32, 32))
    tl.store(rows + tl.arange(0, 32), tl.sum(tl.trans(grid), axis=1))


@pytest.mark.parametrize("num_warps", [1, 4])
def test_reductions_and_scans(num_warps):
    x = values(1024 - EDGES.size, 11)
    outs = [np.zeros(1, np.int64), np.zeros(2, np.int64), np.zeros_like(x), np.zeros(32,
                                                                                    np.int64)]
    both(reduce_and_scan, (1,), [1, 2, 3, 4], x, *outs, BLOCK=1024, num_warps=num_warps)


def test_helpers_are_functions_defined_once():
    """The int64 division is helper functions defined once, one of them holding its only
    loop, however many chunks of a thread call it: the text grows with the ops a kernel
    uses and its elements per thread, not the division's size times theirs."""
    a, b = pairs(10, 14)
    texts = []
    for block in (512, 2048):  # one chunk of four lanes per thread, and four
        bound = binary.bind((a, b, np.zeros_like(a), a.size), {"OP": "floordiv", "BLOCK": block})
        texts.append(binary.compile_for(bound, "wgsl", 4, False).asm["wgsl"])
    helpers = [re.findall(r"^fn \w+", t, re.MULTILINE) for t in texts]
    assert helpers[0] == helpers[1] and len(set(helpers[0])) == len(helpers[0])
    assert [t.count("for (var i = 0u; i < 64u; i++)") for t in texts] == [1, 1]
    assert [t.count("divsi64_v4i64(") for t in texts] == [1 + 1, 1 + 4]


# ---------------------------------------------------------------- SIMT IR: uint64 readings


def u64(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint64)


def _udiv(a, b):
    q = u64(a) // np.where(u64(b) == 0, 1, u64(b))
    return np.where(u64(b) == 0, ~np.uint64(0), q).view(np.int64)


def _urem(a, b):
    return np.where(u64(b) == 0, u64(a), u64(a) % np.where(u64(b) == 0, 1, u64(b)))


UNSIGNED = {  # ops the frontend has no uint64 to reach: checked on hand-written SIMT IR
    "arith.divui": _udiv, "arith.remui": lambda a, b: _urem(a, b).view(np.int64),
    "arith.maxui": lambda a, b: np.maximum(u64(a), u64(b)).view(np.int64),
    "arith.minui": lambda a, b: np.minimum(u64(a), u64(b)).view(np.int64),
    "arith.shrui": lambda a, b: np.where(u64(b) < 64, u64(a) >> (u64(b) & np.uint64(63)),
                                         0).astype(np.uint64).view(np.int64),
}


@pytest.mark.parametrize("k", [1, 3, 4])  # every width of chunk
@pytest.mark.parametrize("op", sorted(UNSIGNED))
def test_unsigned_ops(op, k):
    a, b = pairs(200, 12)
    if op == "arith.shrui":
        b = np.where(np.arange(b.size) % 4 == 0, b, np.abs(b) % 70)
    (out,) = apply(f"%r0 = {op} %x0, %x1 : {{i64}}", [a, b], ["i64"], k=k)
    np.testing.assert_array_equal(out, UNSIGNED[op](a, b))


def test_unsigned_comparisons_and_conversions():
    """And int64 to and from bool: a true sign-extended is -1; truncated, the low bit."""
    a, b = pairs(200, 13)
    body = "\n".join(f'%c{i} = tile.cmpi "{p}", %x0, %x1 : {{i64}} -> {{i1}}'
                      for i, p in enumerate(("ult", "ule", "ugt", "uge")))
    body += "\n%r0 = arith.uitofp %x0 : {i64} to {f32}\n%r1 = arith.fptoui %r0 : {f32} to {i64}"
    body += "".join(f"\n%r{i + 2} = arith.extsi %c{i} : {{i1}} to {{i64}}" for i in range(4))
    body += "\n%bit = arith.trunci %x0 : {i64} to {i1}\n%r6 = arith.extui %bit : {i1} to {i32}"
    f, back, *cmp, low = apply(body, [a, b], ["f32", "i64"] + ["i64"] * 4 + ["i32"])
    np.testing.assert_array_equal(low, a & 1)
    ua, ub = u64(a), u64(b)
    for got, want in zip(cmp, (ua < ub, ua <= ub, ua > ub, ua >= ub), strict=True):
        np.testing.assert_array_equal(got, -want.astype(np.int64))
    np.testing.assert_array_equal(f, ua.astype(np.float32))
    want = np.where(f >= 2.0**64, ~np.uint64(0), np.minimum(f, 2.0**64 - 2**40).astype(np.uint64))
    np.testing.assert_array_equal(u64(back), want)


def test_int64_atomics_are_refused():
    text = ("func.func @k(%p: !tile.ptr<i64>, %v: i64) {\n%i = arith.constant 0 : i32\n"
            '%o = simt.atomic_rmw "add", %p[%i], %v : !tile.ptr<i64>, i32, i64\n'
            "func.return\n}")
    with pytest.raises(tc.UnsupportedError, match="atomics on i64 arrays.*32-bit"):
        emit_wgsl(parse_module(text))
