"""Reductions and scans on numpy, wgsl (lavapipe here) and ptx (run on a GPU; compiled and
assembled for sm_90 without one), against sequential NumPy references: integers exactly,
floats within the rounding a different summation order allows."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

# -- kernels --------------------------------------------------------------------------


@tc.func
def add_pair(a, na, b, nb):
    return a + b, na + nb


@tc.func
def recurrence(a1, b1, a2, b2):
    """h -> a * h + b composed: first (a1, b1), then (a2, b2); associative, not commutative."""
    return a1 * a2, a2 * b1 + b2


@tc.func
def max_abs(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))


@tc.func
def add_with_constant(a, b):
    return a + b * 2.0 - b  # the kernel has a 2.0 too: CSE must keep this one inside


@tc.kernel
def reduce_blocks(x, out, n, OP: tl.constexpr, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=OTHER)
    if OP == "sum":
        r = tl.sum(v)
    elif OP == "max":
        r = tl.max(v)
    elif OP == "min":
        r = tl.min(v, 0)
    elif OP == "argmax":
        r = tl.argmax(v, 0) + pid * BLOCK
    elif OP == "argmin":
        r = tl.argmin(v, axis=0) + pid * BLOCK
    elif OP == "method_sum":
        r = v.sum()
    elif OP == "method_max":
        r = v.max(0)
    elif OP == "method_argmax":
        r = v.argmax(0) + pid * BLOCK
    elif OP == "builtin_combine":
        r = tl.reduce(v, 0, tl.maximum)
    elif OP == "max_abs":
        r = tl.reduce(v, 0, max_abs)
    elif OP == "keep_dims":
        r = tl.sum(tl.sum(v, axis=None, keep_dims=True))
    elif OP == "constant_combine":
        r = tl.reduce(v * 2.0, 0, add_with_constant) / 2.0
    else:
        tl.static_assert(False, "unknown OP")
    tl.store(out + pid, r)


@tc.kernel
def mean_kernel(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    total, count = tl.reduce((tl.load(x + offs, mask=m, other=0.0), m.to(tl.int32)), 0,
                             add_pair)
    tl.store(out, total / count)


@tc.kernel
def max_with_index(x, values, indices, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v, i = tl.max(tl.load(x + offs, mask=offs < n, other=-float("inf")), 0,
                  return_indices=True)
    tl.store(values, v)
    tl.store(indices, i)


@tc.kernel
def scan_blocks(x, out, n, OP: tl.constexpr, OTHER: tl.constexpr, REVERSE: tl.constexpr,
                BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=OTHER)
    if OP == "cumsum":
        r = tl.cumsum(v, 0, reverse=REVERSE)
    elif OP == "cumprod":
        r = tl.cumprod(v, reverse=REVERSE)
    elif OP == "method_cumsum":
        r = v.cumsum(0, REVERSE)
    else:
        r = tl.associative_scan(v, 0, max_abs, reverse=REVERSE)
    tl.store(out + offs, r, mask=offs < n)


@tc.kernel
def recurrence_scan(a, b, out, n, REVERSE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    _, h = tl.associative_scan((tl.load(a + offs, mask=m, other=1),
                                tl.load(b + offs, mask=m, other=0)), 0, recurrence,
                               reverse=REVERSE)
    tl.store(out + offs, h, mask=m)


# -- references -----------------------------------------------------------------------

IDENTITY = {"sum": 0, "max": "lowest", "min": "highest", "argmax": "lowest",
            "argmin": "highest", "method_sum": 0, "method_max": "lowest",
            "method_argmax": "lowest", "builtin_combine": "lowest", "max_abs": 0,
            "keep_dims": 0, "constant_combine": 0}


def identity(op: str, dtype) -> int | float:
    kind = IDENTITY[op]
    if kind == 0:
        return 0
    if np.dtype(dtype).kind == "f":
        return float("-inf") if kind == "lowest" else float("inf")
    info = np.iinfo(dtype)
    return int(info.min if kind == "lowest" else info.max)


def blocks(x: np.ndarray, block: int, fill) -> np.ndarray:
    n = len(x)
    padded = np.full(-(-n // block) * block, fill, x.dtype)
    padded[:n] = x
    return padded.reshape(-1, block)


def first_extreme(rows: np.ndarray, op: str) -> np.ndarray:
    """NumPy's argmax/argmin: the first index of the extreme value, NaN counting as it."""
    return (np.argmax if op.endswith("argmax") else np.argmin)(rows, axis=1)


def reference(op: str, x: np.ndarray, block: int) -> np.ndarray:
    rows = blocks(x, block, identity(op, x.dtype))
    if op in ("sum", "method_sum", "keep_dims", "constant_combine"):
        acc = np.int64 if x.dtype.kind in "iub" else np.float64
        return rows.astype(acc).sum(axis=1)
    if op in ("max", "method_max", "builtin_combine"):
        return rows.max(axis=1)
    if op == "min":
        return rows.min(axis=1)
    if op == "max_abs":
        return np.abs(rows).max(axis=1)
    return first_extreme(rows, op) + np.arange(len(rows)) * block


def out_dtype(op: str, dtype) -> np.dtype:
    d = np.dtype(dtype)
    if "arg" in op:
        return np.dtype(np.int32)
    if op in ("sum", "method_sum", "keep_dims") and d.kind in "iub" and d.itemsize < 4:
        return np.dtype(np.uint32 if d.kind == "u" else np.int32)
    return d


def random(rng, n: int, dtype) -> np.ndarray:
    d = np.dtype(dtype)
    if d.kind == "f":
        return rng.standard_normal(n).astype(d)
    if d.kind == "b":
        return rng.integers(0, 2, n).astype(d)
    info = np.iinfo(d)
    return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(d)


def check(out: np.ndarray, want: np.ndarray, x: np.ndarray, block: int) -> None:
    if out.dtype.kind != "f":
        np.testing.assert_array_equal(out, want.astype(out.dtype))
        return
    finite = np.isfinite(want)
    np.testing.assert_array_equal(out[~finite], want[~finite])  # NaN and inf exactly
    # another summation order: within block * eps of the sum of magnitudes
    scale = blocks(np.abs(x.astype(np.float64)), block, 0).sum(axis=1)[finite]
    err = np.abs(out[finite] - want[finite])
    assert np.all(err <= np.finfo(out.dtype).eps * block * scale), (out, want)


def run_reduce(backend, rng, op, dtype, block, n, num_warps, x=None):
    x = random(rng, n, dtype) if x is None else x
    out = np.zeros(-(-n // block), out_dtype(op, dtype))
    if not launch(reduce_blocks, (len(out),), x, out, n, backend=backend, num_warps=num_warps,
                  OP=op, OTHER=identity(op, dtype), BLOCK=block):
        return
    check(out, reference(op, x, block), x, block)


# -- reductions -----------------------------------------------------------------------

REDUCE_OPS = ["sum", "max", "min", "argmax", "argmin"]
SHAPES = [(1, 1, 1), (2, 4, 3), (16, 1, 13), (128, 4, 300), (256, 8, 255), (1024, 4, 2500),
          (2048, 8, 2049), (4096, 4, 4095)]  # (BLOCK, num_warps, n)


@pytest.mark.parametrize("block,num_warps,n", SHAPES)
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce_sizes(backend, rng, op, block, num_warps, n):
    run_reduce(backend, rng, op, np.float32, block, n, num_warps)


@pytest.mark.parametrize("op,dtype", [
    (op, dtype) for op in REDUCE_OPS
    for dtype in (np.int32, np.uint32, np.int8, np.int16, np.float16, np.bool_)
    if dtype != np.bool_ or op == "sum"])  # only sum is a sensible reduction of bools
def test_reduce_dtypes(backend, rng, op, dtype):
    run_reduce(backend, rng, op, dtype, 256, 700, 4)


@pytest.mark.parametrize("op", ["method_sum", "method_max", "method_argmax",
                                "builtin_combine", "max_abs", "keep_dims",
                                "constant_combine"])
@pytest.mark.parametrize("block,num_warps", [(64, 1), (512, 8)])
def test_reduce_forms(backend, rng, op, block, num_warps):
    run_reduce(backend, rng, op, np.float32, block, 3 * block - 5, num_warps)


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_nan_and_inf(backend, rng, op, num_warps):
    block, n = 256, 1900
    x = rng.standard_normal(n).astype(np.float32)
    x[rng.integers(0, n, 40)] = np.inf
    x[rng.integers(0, n, 40)] = -np.inf
    x[[5, 700, 701, 1500]] = np.nan  # blocks 0, 2 and 5 hold NaN; the others do not
    x[1024:1280] = -np.inf  # a block of one repeated (infinite) extreme
    run_reduce(backend, rng, op, np.float32, block, n, num_warps, x)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("block,num_warps", [(32, 1), (1024, 4), (4096, 8)])
def test_arg_ties(backend, rng, op, block, num_warps):
    x = rng.integers(-3, 3, 2 * block + 17).astype(np.int32)  # every extreme repeats
    run_reduce(backend, rng, op, np.int32, block, len(x), num_warps, x)


def test_reduce_pairs(backend, rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    if launch(mean_kernel, (1,), x, out, n, backend=backend, BLOCK=1024):
        np.testing.assert_allclose(out[0], x.mean(), rtol=1e-4, atol=1e-5)


def test_max_return_indices(backend, rng):
    x = rng.standard_normal(777).astype(np.float32)
    x[[100, 600]] = 9.0  # a tie: the first wins
    values, indices = np.zeros(1, np.float32), np.zeros(1, np.int32)
    if launch(max_with_index, (1,), x, values, indices, 777, backend=backend, BLOCK=1024):
        assert values[0] == 9.0 and indices[0] == 100


# -- scans ----------------------------------------------------------------------------

def scan_reference(op: str, x: np.ndarray, block: int, reverse: bool) -> np.ndarray:
    fill = 1 if op == "cumprod" else 0
    rows = blocks(x, block, fill)
    rows = rows[:, ::-1] if reverse else rows
    if op in ("cumsum", "method_cumsum"):
        acc = np.int64 if x.dtype.kind in "iub" else np.float64
        out = np.cumsum(rows.astype(acc), axis=1)
    elif op == "cumprod":
        out = np.cumprod(rows.astype(np.float64), axis=1)
    else:  # a scan leaves its first element as it is: only later ones are combined
        out = np.maximum.accumulate(np.abs(rows), axis=1)
        out[:, 0] = rows[:, 0]
    out = out[:, ::-1] if reverse else out
    return out.reshape(-1)[:len(x)]


SCAN_SHAPES = [(1, 1, 1), (4, 4, 3), (32, 1, 31), (128, 4, 300), (512, 8, 1000),
               (1024, 4, 1025), (4096, 4, 4000), (4096, 8, 8191)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block,num_warps,n", SCAN_SHAPES)
def test_cumsum_int(backend, rng, block, num_warps, n, reverse):
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    if launch(scan_blocks, (-(-n // block),), x, out, n, backend=backend,
              num_warps=num_warps, OP="cumsum", OTHER=0, REVERSE=reverse, BLOCK=block):
        np.testing.assert_array_equal(out, scan_reference("cumsum", x, block, reverse))


@pytest.mark.parametrize("op", ["cumsum", "method_cumsum", "cumprod", "max_abs"])
@pytest.mark.parametrize("block,num_warps,reverse", [(64, 1, False), (1024, 4, True),
                                                     (2048, 8, False)])
def test_float_scans(backend, rng, op, block, num_warps, reverse):
    n = 2 * block + 3
    x = rng.standard_normal(n).astype(np.float32)
    if op == "cumprod":
        x = (1 + 0.01 * x).astype(np.float32)  # products stay near 1
    out = np.zeros(n, np.float32)
    if launch(scan_blocks, (-(-n // block),), x, out, n, backend=backend,
              num_warps=num_warps, OP=op, OTHER=1.0 if op == "cumprod" else 0.0,
              REVERSE=reverse, BLOCK=block):
        want = scan_reference(op, x, block, reverse)
        if op == "max_abs":
            np.testing.assert_array_equal(out, want.astype(np.float32))
        else:
            scale = np.abs(scan_reference("cumsum", np.abs(x), block, reverse)) + 1
            assert np.all(np.abs(out - want) <= 4 * block * 6e-8 * scale)


@pytest.mark.parametrize("dtype", [np.int8, np.uint32])
def test_cumsum_accumulates_wide(backend, rng, dtype):
    x = random(rng, 500, dtype)
    if dtype == np.int8:
        x = np.full(500, 100, np.int8)  # the running sum leaves int8's range at once
    out = np.zeros(500, np.int32 if dtype == np.int8 else np.uint32)
    args = (scan_blocks, (1,), x, out, 500)
    kwargs = {"backend": backend, "OP": "cumsum", "OTHER": 0, "REVERSE": False, "BLOCK": 512}
    if launch(*args, **kwargs):
        np.testing.assert_array_equal(out, scan_reference("cumsum", x, 512, False)
                                      .astype(out.dtype))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("block,num_warps", [(8, 1), (256, 4), (4096, 8), (2048, 1)])
def test_noncommutative_scan(backend, rng, block, num_warps, reverse):
    """h[i] = a[i] * h[i-1] + b[i]: any reordering of the combiner's operands shows."""
    n = block + block // 2 + 1
    a = rng.integers(-3, 4, n).astype(np.int32)
    b = rng.integers(-50, 50, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    if not launch(recurrence_scan, (-(-n // block),), a, b, out, n, backend=backend,
                  num_warps=num_warps, REVERSE=reverse, BLOCK=block):
        return
    want = np.zeros(n, np.int64)
    for start in range(0, n, block):
        idx = range(start, min(start + block, n))
        h = 0
        for i in (reversed(idx) if reverse else idx):
            h = (int(a[i]) * h + int(b[i])) % 2**32  # int32 arithmetic wraps
            want[i] = h
    np.testing.assert_array_equal(out, want.astype(np.uint32).view(np.int32))


# -- errors ---------------------------------------------------------------------------

@tc.kernel
def bad_reduce(x, out, WHAT: tl.constexpr):
    v = tl.load(x + tl.arange(0, 16))
    if WHAT == "scalar":
        r = tl.sum(tl.load(x))
    elif WHAT == "axis":
        r = tl.sum(v, axis=1)
    else:
        r = tl.reduce(v, 0, len)
    tl.store(out, r)


@pytest.mark.parametrize("what,message", [("scalar", "tl.sum expects a tile"),
                                          ("axis", "axis must be a constexpr integer"),
                                          ("combine", "combine_fn must be a @tc.func")])
def test_errors(what, message):
    x = np.zeros(16, np.float32)
    with pytest.raises(tc.CompileError, match=message):
        bad_reduce[(1,)](x, x, WHAT=what, backend="numpy")


# -- 2-D tiles ------------------------------------------------------------------------

@tc.kernel
def reduce_2d(x, out, M, N, OP: tl.constexpr, AXIS: tl.constexpr, OTHER: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    v = tl.load(x + rows * N + cols, mask=(rows < M) & (cols < N), other=OTHER)
    if OP == "sum":
        r = tl.sum(v, AXIS)
    elif OP == "max":
        r = tl.max(v, AXIS)
    elif OP == "min":
        r = tl.min(v, AXIS)
    elif OP == "argmax":
        r = tl.argmax(v, AXIS)
    else:
        r = tl.argmin(v, AXIS)
    if AXIS == 0:
        tl.store(out + tl.arange(0, BN), r)
    elif AXIS == 1:
        tl.store(out + tl.arange(0, BM), r)
    else:
        tl.store(out, r)


@tc.kernel
def scan_2d(a, b, out, M, N, AXIS: tl.constexpr, REVERSE: tl.constexpr, BM: tl.constexpr,
            BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    m = (rows < M) & (cols < N)
    offs = rows * N + cols
    _, h = tl.associative_scan((tl.load(a + offs, mask=m, other=1),
                                tl.load(b + offs, mask=m, other=0)), AXIS, recurrence,
                               reverse=REVERSE)
    tl.store(out + offs, h + tl.cumsum(tl.load(b + offs, mask=m, other=0), AXIS), mask=m)


SHAPES_2D = [(16, 64, 4), (64, 16, 8), (2, 256, 4), (128, 2, 1)]  # (BM, BN, num_warps)


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("bm,bn,num_warps", SHAPES_2D[:3])
def test_reduce_2d(backend, rng, op, axis, bm, bn, num_warps):
    m, n = bm - 1, max(1, bn - 3)
    x = rng.integers(-20, 20, (m, n)).astype(np.float32)  # ties, and exact float sums
    fill = identity(op, np.float32)
    padded = np.full((bm, bn), fill, np.float32)
    padded[:m, :n] = x
    size = {0: bn, 1: bm, None: 1}[axis]
    out = np.zeros(size, np.int32 if "arg" in op else np.float32)
    if not launch(reduce_2d, (1,), x, out, m, n, backend=backend, num_warps=num_warps,
                  OP=op, AXIS=axis, OTHER=fill, BM=bm, BN=bn):
        return
    fn = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax,
          "argmin": np.argmin}[op]
    np.testing.assert_array_equal(out, np.reshape(fn(padded, axis=axis), size))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("bm,bn,num_warps", SHAPES_2D)
def test_scan_2d(backend, rng, axis, reverse, bm, bn, num_warps):
    m, n = bm - 1 if bm > 2 else bm, max(1, bn - 1)
    a = rng.integers(-3, 4, (m, n)).astype(np.int32)
    b = rng.integers(-50, 50, (m, n)).astype(np.int32)
    out = np.zeros((m, n), np.int32)
    if not launch(scan_2d, (1,), a, b, out, m, n, backend=backend, num_warps=num_warps,
                  AXIS=axis, REVERSE=reverse, BM=bm, BN=bn):
        return
    h = np.zeros((m, n), np.int64)
    steps = range(a.shape[axis])
    for i in (reversed(steps) if reverse else steps):
        prev = np.take(h, i + (1 if reverse else -1), axis) if i != steps[
            -1 if reverse else 0] else 0
        idx = (slice(None), i) if axis else (i, slice(None))
        h[idx] = (np.take(a, i, axis).astype(np.int64) * prev + np.take(b, i, axis)) % 2**32
    want = h + np.cumsum(b.astype(np.int64), axis)
    np.testing.assert_array_equal(out, want.astype(np.uint32).view(np.int32))


# -- the SIMT lowering, simulated thread by thread (tests/simt_sim.py) ------------------

def simulate(kernel, grid, args, constexprs, num_warps, vector_bits) -> None:
    """Lower to SIMT IR and run it on the simulator, which also checks that shared memory
    is written and read with barriers between, and that replicas store equal values."""
    from compiler import frontend
    from compiler.context import make_context
    from compiler.pipeline import _make_pass
    from tests.simt_sim import run_grid

    specs = kernel.specialize(kernel.bind(args, constexprs))
    module, _ = frontend.generate(frontend.KernelSource.of(kernel.fn), specs)
    ctx = make_context()
    for name in ("canonicalize", "cse", f"assign-layouts{{vector-bits={vector_bits}}}",
                 "tile-to-simt", "canonicalize", "cse"):
        _make_pass(name, num_warps).apply(ctx, module)
        module.verify()
    names = [n for n in kernel.arg_names if n not in constexprs]
    arrays = {n: a.reshape(-1) for n, a in zip(names, args) if isinstance(a, np.ndarray)}
    scalars = {n: a for n, a in zip(names, args) if not isinstance(a, np.ndarray)}
    run_grid(module, arrays, scalars, grid)


@pytest.mark.parametrize("vector_bits", [32, 128])
@pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
@pytest.mark.parametrize("block", [1, 8, 64, 1024])
def test_simulated_1d(rng, block, num_warps, vector_bits):
    n = 2 * block - 1
    grid = (-(-n // block),)
    x = rng.integers(-9, 9, n).astype(np.int32)
    for op in ("sum", "argmax"):
        out = np.zeros(grid[0], np.int32)
        simulate(reduce_blocks, grid, (x, out, n), {"OP": op, "OTHER": identity(op, np.int32),
                                                    "BLOCK": block}, num_warps, vector_bits)
        np.testing.assert_array_equal(out, reference(op, x, block))
    for reverse in (False, True):
        a, out = rng.integers(-3, 4, n).astype(np.int32), np.zeros(n, np.int32)
        simulate(recurrence_scan, grid, (a, x, out, n), {"REVERSE": reverse, "BLOCK": block},
                 num_warps, vector_bits)
        want = np.zeros(n, np.int64)
        for start in range(0, n, block):
            h, idx = 0, range(start, min(start + block, n))
            for i in reversed(idx) if reverse else idx:
                h = (int(a[i]) * h + int(x[i])) % 2**32
                want[i] = h
        np.testing.assert_array_equal(out, want.astype(np.uint32).view(np.int32))


@pytest.mark.parametrize("vector_bits", [32, 128])
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("bm,bn", [(16, 64), (64, 16), (4, 128), (32, 2)])
def test_simulated_2d(rng, bm, bn, num_warps, vector_bits):
    m, n = bm - 1, max(1, bn - 1)
    x = rng.integers(-9, 9, (m, n)).astype(np.float32)
    for axis in (0, 1):
        out = np.zeros(bn if axis == 0 else bm, np.int32)
        simulate(reduce_2d, (1,), (x, out, m, n), {"OP": "argmin", "AXIS": axis,
                                                   "OTHER": float("inf"), "BM": bm, "BN": bn},
                 num_warps, vector_bits)
        padded = np.full((bm, bn), np.inf, np.float32)
        padded[:m, :n] = x
        np.testing.assert_array_equal(out, np.argmin(padded, axis=axis))


# -- in loops, and the WGSL subgroup variant -------------------------------------------

@tc.kernel
def row_stats(x, out, n_cols, BLOCK: tl.constexpr):
    """Per row, a sum and a max over column blocks: each iteration reuses the reductions'
    shared memory, so the loop needs a barrier before writing it again."""
    row = tl.program_id(0)
    total = 0.0
    best = -float("inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        total += tl.sum(tl.where(cols < n_cols, v, 0.0))
        best = tl.maximum(best, tl.max(v))
    tl.store(out + 2 * row, total)
    tl.store(out + 2 * row + 1, best)


@pytest.mark.parametrize("num_warps", [1, 4])
def test_reduce_in_loop(backend, rng, num_warps):
    x = rng.standard_normal((6, 1500)).astype(np.float32)
    out = np.zeros(12, np.float32)
    if launch(row_stats, (6,), x, out, 1500, backend=backend, num_warps=num_warps,
              BLOCK=256):
        np.testing.assert_allclose(out[0::2], x.sum(axis=1), rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(out[1::2], x.max(axis=1))


def test_wgsl_subgroup_variant_builds():
    """Where subgroups are warps of 32 (NVIDIA) the runtime swaps every shuffle through
    workgroup memory for subgroupShuffle; where they are fewer consecutive invocations
    (lavapipe's 8) the xor shuffles of masks below that size; both variants build."""
    from compiler.jit import availability
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    from backends.wgsl import runtime, subgroups, unpack_artifact
    from backends.wgsl.aliasing import Aliasing
    device = runtime.wgsl_device()
    if "subgroup" not in device.features:
        pytest.skip("the adapter has no subgroup feature")
    x = np.zeros(16, np.float32)
    bound = reduce_blocks.bind((x, x, 16), {"OP": "argmax", "OTHER": 0.0, "BLOCK": 1024})
    source, facts = unpack_artifact(reduce_blocks.compile_for(bound, "wgsl", 4)._artifact)
    assert facts["subgroup"] and facts["subgroup_xor"] and facts["shared"] > 0
    assert {m for m, _ in facts["subgroup_xor"].values()} == {1, 2, 4, 8, 16}
    size = subgroups.subgroup_size(device)
    swapped = subgroups.with_subgroups(device, source, facts)
    assert ("subgroupShuffleXor" in swapped) == (size is not None)
    assert ("subgroupShuffle(" in swapped) == (size == 32)
    for emulated, native in facts["subgroup"].items():
        source = source.replace(emulated, native)
    assert "subgroupShuffle" in source and "workgroupBarrier" in source
    runtime.build_pipeline(device, source, facts, Aliasing())
    runtime.build_pipeline(device, swapped, facts, Aliasing())


def test_wgsl_subgroup_size_is_probed():
    """The probe finds lavapipe's subgroups of 8 consecutive invocations (any adapter's,
    if it has them, is one of SUBGROUP_SIZES or None), and reductions whose last butterfly
    steps are subgroup shuffles then give NumPy's results."""
    from compiler.jit import availability
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    from backends.wgsl import runtime, subgroups
    device = runtime.wgsl_device()
    size = subgroups.subgroup_size(device)
    assert size in (None, *subgroups.SUBGROUP_SIZES)
    if runtime.driver_name(device) == "llvmpipe" and "subgroup" in device.features:
        assert size == 8
    x = np.random.default_rng(5).standard_normal(3000).astype(np.float32)
    blocks = [x[i:i + 1024] for i in range(0, 3000, 1024)]
    for op, want in (("sum", [b.sum() for b in blocks]), ("max", [b.max() for b in blocks]),
                     ("argmax", [i * 1024 + b.argmax() for i, b in enumerate(blocks)])):
        out = np.zeros(3, np.float32)
        launch(reduce_blocks, (3,), x, out, 3000, backend="wgsl", num_warps=4, OP=op,
               OTHER=-np.inf if op != "sum" else 0.0, BLOCK=1024)
        np.testing.assert_allclose(out, want, rtol=1e-5)


def test_wgsl_shuffles_of_many_lanes_go_in_groups():
    """An 8192-element scan at one warp shuffles 64 lanes a thread (64 runs of four): one
    helper call (two barriers) for all 16 chunks, not one per chunk; its subgroup version
    builds too."""
    from backends.wgsl import unpack_artifact
    a = np.zeros(16, np.int32)
    bound = recurrence_scan.bind((a, a, a, 16), {"REVERSE": False, "BLOCK": 8192})
    source, facts = unpack_artifact(recurrence_scan.compile_for(bound, "wgsl", 1)._artifact)
    assert "fn shfl_16xvec4i32(v: array<vec4<i32>, 16>" in source
    assert "shfl_vec4i32(" not in source and source.count("workgroupBarrier") == 3
    for emulated, native in facts["subgroup"].items():
        source = source.replace(emulated, native)
    assert "subgroupShuffle(v[i], src & 31u)" in source
    from compiler.jit import availability
    if availability("wgsl")[0]:
        from backends.wgsl import runtime
        from backends.wgsl.aliasing import Aliasing
        device = runtime.wgsl_device()
        if "subgroup" in device.features:
            runtime.build_pipeline(device, source, facts, Aliasing())
