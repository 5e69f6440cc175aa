"""Control flow in kernels (for/while/if, tl.static_range) and the debugging builtins
(tl.device_print/device_assert), on numpy, wgsl (lavapipe here) and ptx (run on a GPU;
compiled and assembled for sm_90 without one), against NumPy computed directly.

The NumPy backend runs a kernel's programs together, splitting a batch where programs
decide apart, and one at a time only where a split's results could not be put together
(pointers chosen apart); both paths are tested (``serial`` says which one a kernel takes).
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from backends.numpy import run as numpy_run
from backends.numpy.interpreter import Kernel
from compiler.context import parse_module
from tests.conftest import launch

# ---------------------------------------------------------------- kernels


@tc.kernel
def row_sums(x, out, n_rows, n_cols, BLOCK: tl.constexpr):
    """out[j] = sum of column j over n_rows rows (a runtime trip count)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for r in range(n_rows):
        acc += tl.load(x + r * n_cols + offs, mask=mask)
    tl.store(out + offs, acc, mask=mask)


@tc.kernel
def k_blocks(x, out, n_cols, K: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK: tl.constexpr):
    """Rows in blocks of BLOCK_K (a constexpr step), each block unrolled; a carried
    pointer walks down the rows."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    p = x + offs
    for k in range(0, K, BLOCK_K):
        for kk in tl.static_range(BLOCK_K):
            acc += tl.load(p, mask=mask & (k + kk < K))
            p += n_cols
    tl.store(out + offs, acc, mask=mask)


@tc.kernel
def horner(x, out, n_rows, n_cols, BLOCK: tl.constexpr):
    """acc = ((x[last] * 2 + x[last-1]) * 2 + ...): a downward loop, order matters."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for r in range(n_rows - 1, -1, -1):
        acc = acc * 2.0 + tl.load(x + r * n_cols + offs, mask=mask)
    tl.store(out + offs, acc, mask=mask)


@tc.kernel
def triangle(out, BLOCK: tl.constexpr):
    """Program p adds 0..p-1 to a tile: a trip count that depends on the program id."""
    pid = tl.program_id(0)
    acc = tl.arange(0, BLOCK)
    total = 0
    for i in range(pid):
        acc += i
        total += 1
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), acc + total * 1000)


@tc.kernel
def nested(x, out, n_rows, n_cols, BLOCK: tl.constexpr, INNER: tl.constexpr):
    """Nested loops over a (n_rows, INNER, n_cols) array: outer runtime, inner constexpr."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n_rows):
        row = tl.zeros([BLOCK], tl.float32)
        for j in range(INNER):
            row += tl.load(x + (i * INNER + j) * n_cols + offs, mask=mask)
        acc += row * (i + 1)
    tl.store(out + offs, acc, mask=mask)


@tc.kernel
def fibonacci(out, n):
    """a, b = b, a + b on scalars: carried values swap places every iteration."""
    pid = tl.program_id(0)
    a = 0
    b = 1
    for _ in range(pid + n):
        a, b = b, a + b
    tl.store(out + pid, a)


@tc.kernel
def collatz(out, start):
    """Steps of the Collatz sequence from start + pid: a while loop per program."""
    pid = tl.program_id(0)
    x = start + pid
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    tl.store(out + pid, steps)


@tc.kernel
def halve_until(x, out, n, limit, BLOCK: tl.constexpr):
    """A while loop on a scalar counter carrying a tile; the same in every program."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    i = 0
    while i < limit:
        v = v * 0.5 + 1.0
        i += 1
    tl.store(out + offs, v, mask=mask)


@tc.kernel
def branches(x, out, n, mode, BLOCK: tl.constexpr):
    """if/elif/else on the program id's parity and a scalar argument, yielding a tile
    (rebound in some branches only) and a scalar (a Python number in some)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    s = 0
    if pid % 2 == 0:
        v = v * 2.0
        s = 1
    elif mode > 0:
        v = v + 1.0
    else:
        v = -v
        s = mode
    if mode == 3:
        s += 10
    tl.store(out + offs, v + s, mask=mask)


@tc.kernel
def unrolled(x, out, n, BLOCK: tl.constexpr, N: tl.constexpr):
    """tl.static_range: i is a Python int, so it indexes with constants."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros([BLOCK], tl.float32)
    for i in tl.static_range(N):
        acc += tl.load(x + i * n + offs, mask=mask) * (i + 1)
    for i in tl.static_range(3, 0, -1):
        acc = acc * i
    tl.store(out + offs, acc, mask=mask)


@tc.kernel
def scalar_sum(x, out, n):
    """s = 0 (a Python int) adopts the loop's float32 (its value after an iteration)."""
    s = 0
    for i in range(n):
        s += tl.load(x + i)
    tl.store(out, s)


@tc.kernel
def strided_fill(x, n, step, BLOCK: tl.constexpr):
    """A runtime step and no carried values: the loop only stores."""
    offs = tl.arange(0, BLOCK)
    for start in range(tl.program_id(0) * BLOCK, n, step):
        tl.store(x + start + offs, start + offs, mask=start + offs < n)


@tc.func
def clipped_sum(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(p + start + offs, mask=start + offs < n)
    return acc


@tc.kernel
def flagged(x, flags, out, n, BLOCK: tl.constexpr):
    """An if on a loaded value (a data-dependent decision), calling a @tc.func loop."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if tl.load(flags + pid) != 0:
        total = clipped_sum(x, n, BLOCK)
    else:
        total = tl.full([BLOCK], -1.0, tl.float32)
    tl.store(out + pid * BLOCK + offs, total)


@tc.kernel
def first_zero(x, out, n, shift):
    """A while loop walking a pointer until it reads 0 (each row has one); an if that
    yields a pointer."""
    pid = tl.program_id(0)
    p = x + pid * n
    if shift > 0:
        p += shift
    i = 0
    while tl.load(p) != 0:
        p += 1
        i += 1
    tl.store(out + pid, i)


@tc.kernel
def store_after(x, out, steps, extra, BLOCK: tl.constexpr):
    """Stores through a pointer a loop carried and an if yielded: out is written (and
    copied back from a GPU) though no store names it directly."""
    offs = tl.arange(0, BLOCK)
    p = out + offs
    for _ in range(steps):
        p += BLOCK
    if extra > 0:
        p += extra
    tl.store(p, tl.load(x + offs))


# ---------------------------------------------------------------- helpers

def _serial(kernel, signature, constants) -> bool:
    """Whether the NumPy backend runs this kernel one program at a time."""
    ck = tc.compile(kernel, signature=signature, constants=constants, backend="numpy")
    return Kernel(parse_module(ck.stages[-1][1]), ck.metadata).serial


def _both_numpy_paths(kernel, signature, constants, grid, make_args):
    """Results of the batched and the one-program-at-a-time NumPy runs."""
    ck = tc.compile(kernel, signature=signature, constants=constants, backend="numpy")
    module = parse_module(ck.stages[-1][1])
    results = []
    for serial in (False, True):
        args = make_args()
        numpy_run(module, ck.metadata, grid, args, serial=serial)
        results.append(args)
    return results


# ---------------------------------------------------------------- loops

@pytest.mark.parametrize("n_rows", [0, 1, 7])
def test_loop_with_runtime_bound(backend, rng, n_rows):
    x = rng.standard_normal((n_rows, 1000)).astype(np.float32)
    out = np.full(1000, -1.0, np.float32)
    if launch(row_sums, (tc.cdiv(1000, 128),), x, out, n_rows, 1000, backend=backend,
              BLOCK=128):
        np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("k", [1, 5, 8])
def test_loop_over_k_blocks_with_carried_pointer(backend, rng, k):
    x = rng.standard_normal((k, 300)).astype(np.float32)
    out = np.zeros(300, np.float32)
    if launch(k_blocks, (tc.cdiv(300, 64),), x, out, 300, backend=backend, K=k, BLOCK_K=4,
              BLOCK=64):
        np.testing.assert_allclose(out, x.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_downward_loop_keeps_order(backend, rng):
    x = rng.integers(-3, 4, (6, 200)).astype(np.float32)
    out = np.zeros(200, np.float32)
    if launch(horner, (tc.cdiv(200, 64),), x, out, 6, 200, backend=backend, BLOCK=64):
        want = np.zeros(200, np.float32)
        for r in range(5, -1, -1):
            want = want * 2 + x[r]
        np.testing.assert_array_equal(out, want)


def test_trip_count_from_program_id(backend):
    grid, block = 9, 32
    out = np.zeros(grid * block, np.int32)
    if launch(triangle, (grid,), out, backend=backend, BLOCK=block):
        want = np.concatenate([np.arange(block) + p * (p - 1) // 2 + 1000 * p
                               for p in range(grid)])
        np.testing.assert_array_equal(out, want)


def test_nested_loops(backend, rng):
    x = rng.standard_normal((5, 3, 130)).astype(np.float32)
    out = np.zeros(130, np.float32)
    if launch(nested, (tc.cdiv(130, 64),), x, out, 5, 130, backend=backend, BLOCK=64,
              INNER=3):
        want = (x.sum(axis=1) * np.arange(1, 6)[:, None]).sum(axis=0)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_swapped_carried_values(backend):
    out = np.zeros(12, np.int32)
    if launch(fibonacci, (12,), out, 3, backend=backend):
        fib = [0, 1]
        while len(fib) < 20:
            fib.append(fib[-1] + fib[-2])
        np.testing.assert_array_equal(out, fib[3:15])


def test_while_per_program(backend):
    out = np.zeros(40, np.int32)
    if launch(collatz, (40,), out, 1, backend=backend):
        def steps(v):
            s = 0
            while v != 1:
                v, s = (v // 2 if v % 2 == 0 else 3 * v + 1), s + 1
            return s
        np.testing.assert_array_equal(out, [steps(v) for v in range(1, 41)])


@pytest.mark.parametrize("shift", [0, 2])
def test_while_walking_a_pointer(backend, rng, shift):
    rows, n = 6, 50
    x = rng.integers(1, 9, (rows, n)).astype(np.int32)
    zeros = rng.integers(shift, n, rows)
    x[np.arange(rows), zeros] = 0
    out = np.full(rows, -1, np.int32)
    if launch(first_zero, (rows,), x, out, n, shift, backend=backend):
        np.testing.assert_array_equal(out, zeros - shift)


@pytest.mark.parametrize("steps, extra", [(0, 0), (3, 5)])
def test_store_through_carried_pointer(backend, rng, steps, extra):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros(32 * 4 + 8, np.float32)
    if launch(store_after, (1,), x, out, steps, extra, backend=backend, BLOCK=32):
        want = np.zeros_like(out)
        want[32 * steps + extra:][:32] = x
        np.testing.assert_array_equal(out, want)
    ck = tc.compile(store_after, signature={"x": "*f32", "out": "*f32", "steps": "i32",
                                            "extra": "i32"}, constants={"BLOCK": 32},
                    backend="numpy")
    assert [p.written for p in ck.metadata.params] == [False, True, False, False]


@pytest.mark.parametrize("limit", [0, 3])
def test_while_carrying_a_tile(backend, rng, limit):
    x = rng.standard_normal(500).astype(np.float32)
    out = np.zeros(500, np.float32)
    if launch(halve_until, (tc.cdiv(500, 128),), x, out, 500, limit, backend=backend,
              BLOCK=128):
        want = x.copy()
        for _ in range(limit):
            want = want * np.float32(0.5) + np.float32(1.0)
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_literal_start_adopts_the_loop_dtype(backend, rng):
    x = rng.standard_normal(10).astype(np.float32)
    out = np.zeros(1, np.float32)
    if launch(scalar_sum, (1,), x, out, 10, backend=backend):
        np.testing.assert_allclose(out[0], x.sum(dtype=np.float32), rtol=1e-5)


@pytest.mark.parametrize("step", [64, 192])
def test_loop_with_runtime_step(backend, step):
    x = np.full(1000, -1, np.int32)
    if launch(strided_fill, (step // 64,), x, 1000, step, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(x, np.arange(1000))


def test_numpy_rejects_a_non_positive_runtime_step():
    x = np.zeros(100, np.int32)
    with pytest.raises(tc.UnsupportedError, match="a loop step must be positive at run time"):
        strided_fill[(1,)](x, 100, 0, BLOCK=64, backend="numpy")


# ---------------------------------------------------------------- if

def test_if_on_a_loaded_value_calling_a_loop(backend, rng):
    n, block = 77, 32
    x = rng.standard_normal(n).astype(np.float32)
    flags = np.array([1, 0, 0, 1, 1], np.int32)
    out = np.zeros(5 * block, np.float32)
    if launch(flagged, (5,), x, flags, out, n, backend=backend, BLOCK=block):
        padded = np.zeros(tc.cdiv(n, block) * block, np.float32)
        padded[:n] = x
        sums = padded.reshape(-1, block).sum(axis=0)
        want = np.stack([sums if f else np.full(block, -1.0) for f in flags]).ravel()
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("mode", [-2, 1, 3])
def test_if_elif_else(backend, rng, mode):
    n, block = 333, 32
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    if launch(branches, (tc.cdiv(n, block),), x, out, n, mode, backend=backend, BLOCK=block):
        want = np.empty(n, np.float32)
        for p in range(tc.cdiv(n, block)):
            s = slice(p * block, (p + 1) * block)
            if p % 2 == 0:
                v, add = x[s] * 2, 1
            elif mode > 0:
                v, add = x[s] + 1, 0
            else:
                v, add = -x[s], mode
            want[s] = v + add + (10 if mode == 3 else 0)
        np.testing.assert_allclose(out, want, rtol=1e-6)


# ---------------------------------------------------------------- static_range

def test_static_range_unrolls(backend, rng):
    x = rng.standard_normal((4, 100)).astype(np.float32)
    out = np.zeros(100, np.float32)
    if launch(unrolled, (tc.cdiv(100, 32),), x, out, 100, backend=backend, BLOCK=32, N=4):
        want = (x * np.arange(1, 5)[:, None]).sum(axis=0) * 6
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    ck = tc.compile(unrolled, signature={"x": "*f32", "out": "*f32", "n": "i32"},
                    constants={"BLOCK": 32, "N": 4}, backend="numpy")
    assert "scf." not in ck.asm["tile"]
    assert ck.asm["tile"].count("tile.load") == 4


# ---------------------------------------------------------------- the NumPy backend's paths

SIG_ROWS = {"x": "*f32", "out": "*f32", "n_rows": "i32", "n_cols": "i32"}


@pytest.mark.parametrize("kernel, signature, constants, serial", [
    (row_sums, SIG_ROWS, {"BLOCK": 64}, False),
    (horner, SIG_ROWS, {"BLOCK": 64}, False),
    (halve_until, {"x": "*f32", "out": "*f32", "n": "i32", "limit": "i32"}, {"BLOCK": 64},
     False),
    (triangle, {"out": "*i32"}, {"BLOCK": 32}, False),
    (collatz, {"out": "*i32", "start": "i32"}, {}, False),
    (branches, {"x": "*f32", "out": "*f32", "n": "i32", "mode": "i32"}, {"BLOCK": 32}, False),
    (scalar_sum, {"x": "*f32", "out": "*f32", "n": "i32"}, {}, False),
    (flagged, {"x": "*f32", "flags": "*i32", "out": "*f32", "n": "i32"}, {"BLOCK": 32}, False),
    (strided_fill, {"x": "*i32", "n": "i32", "step": "i32"}, {"BLOCK": 32}, False),
    (first_zero, {"x": "*i32", "out": "*i32", "n": "i32", "shift": "i32"}, {}, True),
])
def test_numpy_runs_programs_one_at_a_time_only_for_pointers_chosen_apart(
        kernel, signature, constants, serial):
    assert _serial(kernel, signature, constants) is serial


@pytest.mark.parametrize("kernel, signature, constants, grid, make_args", [
    (triangle, {"out": "*i32"}, {"BLOCK": 32}, (9, 1, 1),
     lambda: [np.zeros(9 * 32, np.int32)]),
    (collatz, {"out": "*i32", "start": "i32"}, {}, (40, 1, 1),
     lambda: [np.zeros(40, np.int32), 3]),
    (branches, {"x": "*f32", "out": "*f32", "n": "i32", "mode": "i32"}, {"BLOCK": 32},
     (7, 1, 1), lambda: [np.arange(200, dtype=np.float32), np.zeros(200, np.float32), 200, 3]),
    (flagged, {"x": "*f32", "flags": "*i32", "out": "*f32", "n": "i32"}, {"BLOCK": 32},
     (6, 1, 1), lambda: [np.arange(100, dtype=np.float32), np.array([1, 0, 0, 1, 1, 0], np.int32),
                         np.zeros(6 * 32, np.float32), 100]),
    (strided_fill, {"x": "*i32", "n": "i32", "step": "i32"}, {"BLOCK": 32}, (5, 1, 1),
     lambda: [np.full(1000, -1, np.int32), 1000, 5 * 32]),
])
def test_numpy_split_batches_and_serial_agree(kernel, signature, constants, grid, make_args):
    """Programs deciding apart (trip counts, ``if``, ``while`` exits from the program id or
    from memory): a batch split into sets gives what one program at a time gives."""
    split, serial = _both_numpy_paths(kernel, signature, constants, grid, make_args)
    for a, b in zip(split, serial, strict=True):
        np.testing.assert_array_equal(a, b)
    assert any(np.abs(np.asarray(a)).sum() > 0 for a in split if isinstance(a, np.ndarray))


def test_numpy_batched_and_serial_agree(rng):
    x = rng.standard_normal((6, 1000)).astype(np.float32)

    def args():
        return [x, np.zeros(1000, np.float32), 6, 1000]

    batched, serial = _both_numpy_paths(horner, SIG_ROWS, {"BLOCK": 64}, (16, 1, 1), args)
    np.testing.assert_array_equal(batched[1], serial[1])
    assert np.abs(batched[1]).sum() > 0


# ---------------------------------------------------------------- errors

def _compile_error(src_kernel, signature, constants=None) -> str:
    with pytest.raises(tc.CompileError) as info:
        tc.compile(src_kernel, signature=signature, constants=constants or {},
                   backend="numpy")
    return str(info.value)


@tc.kernel
def scalar_becomes_tile(x, n, BLOCK: tl.constexpr):
    acc = 0.0
    for i in range(n):
        acc += tl.load(x + tl.arange(0, BLOCK))  # a tile now
    tl.store(x, acc)


@tc.kernel
def dtype_changes(x, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float16)
    for i in range(n):
        acc += tl.load(x + tl.arange(0, BLOCK))  # float16 + float32 is float32
    tl.store(x + tl.arange(0, BLOCK), acc)


@tc.kernel
def branch_types_differ(x, n, BLOCK: tl.constexpr):
    if n > 0:
        v = tl.zeros([BLOCK], tl.float32)
    else:
        v = tl.zeros([BLOCK], tl.int32)
    tl.store(x + tl.arange(0, BLOCK), v)


@tc.kernel
def tile_condition(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    while offs < 3:
        offs += 1


SIG_X = {"x": "*f32", "n": "i32"}


@pytest.mark.parametrize("kernel, signature, message, line", [
    (scalar_becomes_tile, SIG_X, ("loop-carried variable 'acc' is float32 before the loop but "
     "tile<16, float32> after an iteration"), "for i in range(n):"),
    (dtype_changes, SIG_X, ("loop-carried variable 'acc' is tile<16, float16> before the loop "
     "but tile<16, float32> after an iteration"), "for i in range(n):"),
    (branch_types_differ, SIG_X, ("'v' is tile<16, float32> in the if branch but "
     "tile<16, int32> in the else branch"), "if n > 0:"),
    (tile_condition, {"x": "*f32"}, "while needs a scalar condition, got tile<16, int1>",
     "while offs < 3:"),
])
def test_control_flow_errors_point_at_the_line(kernel, signature, message, line):
    text = _compile_error(kernel, signature, {"BLOCK": 16})
    assert message in text
    assert "test_control_flow.py:" in text
    assert text.splitlines()[1].strip() == line


def test_static_range_needs_constexpr_bounds():
    @tc.kernel
    def bad(x, n):
        for i in tl.static_range(n):
            tl.store(x + i, 1.0)

    assert "a tl.static_range bound must be a constexpr integer" in _compile_error(bad, SIG_X)


# ---------------------------------------------------------------- debugging builtins

@tc.kernel
def debug_ops(x, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    tl.device_print("v:", v, pid)
    if pid == 1:
        tl.device_print("n =", n)
    tl.device_assert(v < 100.0, "v too big")
    tl.store(x + offs, v + 1.0, mask=offs < n)


SIG_DEBUG = {"x": "*f32", "n": "i32"}


def test_device_print_numpy(capsys):
    x = np.arange(6, dtype=np.float32)
    debug_ops[(2,)](x, 6, BLOCK=4, backend="numpy")
    lines = capsys.readouterr().out.splitlines()
    assert lines[:8] == [f"pid ({p}, 0, 0) idx ({i}) v: {float(v)}, {p}" for p, i, v in
                         [(0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 3, 3), (1, 0, 4), (1, 1, 5),
                          (1, 2, 0), (1, 3, 0)]]
    assert lines[8:] == ["pid (1, 0, 0) idx () n = 6"]
    np.testing.assert_array_equal(x, np.arange(1, 7))


def test_device_assert_numpy_names_program_and_line(monkeypatch):
    # The disk cache's key holds the kernel's source but not its line in the file, so
    # an entry from before lines moved would point at the old line.
    monkeypatch.setenv("TILEC_CACHE", "0")
    x = np.arange(20, dtype=np.float32)
    x[10] = 500.0
    with pytest.raises(tc.DeviceAssertionError) as info:
        debug_ops[(3,)](x, 20, BLOCK=8, backend="numpy")
    text = str(info.value)
    assert "device assertion failed in program (1, 0, 0) at index (2,): v too big" in text
    assert 'tl.device_assert(v < 100.0, "v too big")' in text
    assert "test_control_flow.py:" in text and isinstance(info.value, tc.TilecError)


@pytest.mark.parametrize("gpu", ["wgsl", "ptx"])
def test_debug_ops_stripped_on_gpu_without_debug(gpu):
    ck = tc.compile(debug_ops, signature=SIG_DEBUG, constants={"BLOCK": 128}, backend=gpu)
    names = [name for name, _ in ck.stages]
    before, after = (ck.stages[i][1] for i in (names.index("strip-debug") - 1,
                                               names.index("strip-debug")))
    assert "tile.print" in before and "tile.assert" in before
    assert "tile.print" not in after and "tile.assert" not in after


def test_debug_ops_stripped_kernel_runs(backend):
    x = np.arange(300, dtype=np.float32) % 97
    if launch(debug_ops, (3,), x, 300, backend=backend, BLOCK=128):
        np.testing.assert_array_equal(x, np.arange(300) % 97 + 1)


def test_debug_true_prints_and_asserts_like_numpy(backend, capsys, monkeypatch):
    """With debug=True the GPU backends send device_print/device_assert records through a
    hidden buffer; the host prints them as the NumPy backend does."""
    monkeypatch.setenv("TILEC_CACHE", "0")  # assert messages name source lines
    x = np.arange(6, dtype=np.float32)
    debug_ops[(2,)](x, 6, BLOCK=4, backend="numpy")
    want = capsys.readouterr().out.splitlines()
    x = np.arange(6, dtype=np.float32)
    if not launch(debug_ops, (2,), x, 6, backend=backend, debug=True, BLOCK=4):
        return
    assert capsys.readouterr().out.splitlines() == want
    np.testing.assert_array_equal(x, np.arange(1, 7))
    x = np.arange(20, dtype=np.float32)
    x[10] = 500.0
    with pytest.raises(tc.DeviceAssertionError) as info:
        launch(debug_ops, (3,), x, 20, backend=backend, debug=True, BLOCK=8)
    text = str(info.value)
    assert "device assertion failed in program (1, 0, 0) at index (2,): v too big" in text
    assert 'tl.device_assert(v < 100.0, "v too big")' in text


# ---------------------------------------------------------------- PTX text

def test_ptx_text_has_labels_and_branches():
    ck = tc.compile(collatz, signature={"out": "*i32", "start": "i32"}, backend="ptx")
    lines = [line.strip() for line in ck.asm["ptx"].splitlines()]
    labels = [line[:-1] for line in lines if line.startswith("$L__")]
    assert labels == ["$L__while1", "$L__if2_else", "$L__if2_end", "$L__while1_end"]
    branches = [line for line in lines if " bra" in f" {line}"]
    assert any(b.startswith("@!%p") and b.endswith("bra $L__while1_end;") for b in branches)
    assert "bra.uni $L__while1;" in branches
    assert ck.asm["cubin"][:4] == b"\x7fELF"
