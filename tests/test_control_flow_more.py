"""break, continue, early return and names bound on every path, on numpy, wgsl (lavapipe
here) and ptx (run on a GPU; compiled and assembled for sm_90 without one), against
NumPy computed directly; and the errors when a name or a return value is not the same on
every path.
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch

# ---------------------------------------------------------------- break and continue


@tc.kernel
def sum_until(x, out, used, n_rows, n_cols, limit, BLOCK: tl.constexpr):
    """Adds rows until one starts above limit: a break on a loaded value, carrying a tile
    and a count."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    count = 0
    for r in range(n_rows):
        if tl.load(x + r * n_cols) > limit:
            break
        acc += tl.load(x + r * n_cols + offs, mask=offs < n_cols)
        count += 1
    tl.store(out + offs, acc, mask=offs < n_cols)
    tl.store(used + pid, count)


def _sum_until(x, limit):
    stop = next((r for r in range(len(x)) if x[r, 0] > limit), len(x))
    return x[:stop].sum(axis=0, dtype=np.float32), stop


@tc.kernel
def skip_negative(x, out, n_rows, n_cols, BLOCK: tl.constexpr):
    """A while loop whose continue skips rows starting below zero; elif/else after it."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    r = 0
    while r < n_rows:
        r += 1
        head = tl.load(x + (r - 1) * n_cols)
        if head < 0.0:
            continue
        elif head > 1.0:
            acc += 2.0 * tl.load(x + (r - 1) * n_cols + offs, mask=offs < n_cols)
        else:
            acc += tl.load(x + (r - 1) * n_cols + offs, mask=offs < n_cols)
    tl.store(out + offs, acc, mask=offs < n_cols)


@tc.kernel
def nested_jumps(x, out, n_rows, n_cols):
    """Program p walks matrix p: the outer loop skips every third row (continue), the
    inner loop stops at a negative value (break) and skips values above 5 (continue)."""
    pid = tl.program_id(0)
    base = x + pid * n_rows * n_cols
    total = 0.0
    seen = 0
    for r in range(n_rows):
        if r % 3 == 2:
            continue
        for c in range(n_cols):
            v = tl.load(base + r * n_cols + c)
            if v < 0.0:
                break
            elif v > 5.0:
                continue
            else:
                total += v
            seen += 1
    tl.store(out + pid, total + seen * 1000.0)


def _nested_jumps(m):
    total, seen = 0.0, 0
    for r in range(m.shape[0]):
        if r % 3 == 2:
            continue
        for v in m[r]:
            if v < 0:
                break
            if v > 5:
                continue
            total, seen = total + v, seen + 1
    return total + seen * 1000.0


@tc.kernel
def last_zero_before(x, out, n):
    """A downward loop that breaks: the largest index below n holding 0, else -1."""
    pid = tl.program_id(0)
    found = -1
    for i in range(n - 1, -1, -1):
        if tl.load(x + pid * n + i) == 0:
            found = i
            break
    tl.store(out + pid, found)


@tc.kernel
def collatz_steps(out, start):
    """while True with the exit in the middle of the body."""
    x = start + tl.program_id(0)
    steps = 0
    while True:
        if x == 1:
            break
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    tl.store(out + tl.program_id(0), steps)


def _collatz(v):
    s = 0
    while v != 1:
        v, s = (v // 2 if v % 2 == 0 else 3 * v + 1), s + 1
    return s


@tc.kernel
def walk_to_zero(x, out, n):
    """A while on a loaded value, left early by a break: the test is not evaluated after
    the break (it would read past the row's end)."""
    pid = tl.program_id(0)
    i = 0
    while tl.load(x + pid * n + i) != 0:
        i += 1
        if i == n:
            break
    tl.store(out + pid, i)


# ---------------------------------------------------------------- early return


@tc.kernel
def early_exit(x, out, n, BLOCK: tl.constexpr):
    """Programs past n return at once; a block whose max is negative writes -1 and
    returns; the others write 2x."""
    pid = tl.program_id(0)
    if pid * BLOCK >= n:
        return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n, other=-1.0)
    if tl.max(v, axis=0) < 0.0:
        tl.store(out + offs, tl.full([BLOCK], -1.0, tl.float32), mask=offs < n)
        return
    tl.store(out + offs, v * 2.0, mask=offs < n)


@tc.kernel
def return_in_loop(x, out, n):
    """Returns from inside a loop at the first negative value of row pid."""
    pid = tl.program_id(0)
    for i in range(n):
        if tl.load(x + pid * n + i) < 0.0:
            tl.store(out + pid, i)
            return
    tl.store(out + pid, -1)


@tc.func
def sign_and_clamp(v, lim):
    if v > lim:
        return lim, 1
    elif v < -lim:
        return -lim, -1
    return v, 0


@tc.func
def find(p, n, target):
    for i in range(n):
        if tl.load(p + i) == target:
            return i
    return -1


@tc.func
def scaled_row(p, s, BLOCK: tl.constexpr):
    row = tl.load(p + tl.arange(0, BLOCK))
    if s == 0.0:
        return tl.zeros([BLOCK], tl.float32)
    return row * s


@tc.kernel
def func_returns(x, keys, out, where, n, BLOCK: tl.constexpr):
    """@tc.func helpers with early returns: a tuple from an if/elif, an index from
    inside a loop, a tile."""
    pid = tl.program_id(0)
    v, sign = sign_and_clamp(tl.load(x + pid), 1.0)
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK),
             scaled_row(x + pid * BLOCK, v, BLOCK) + sign)
    tl.store(where + pid, find(keys, n, pid))


# ---------------------------------------------------------------- names bound on every path


@tc.func
def safe_sqrt_twice(v):
    if v < 0.0:
        return 0.0
    else:
        r = tl.sqrt(v)
    return r * 2.0


@tc.kernel
def bound_on_every_path(x, out, n, BLOCK: tl.constexpr):
    """Names first bound in branches: in every branch of an if/elif/else; in the branch
    that goes on when the other continues; after an early return in a helper."""
    pid = tl.program_id(0)
    a = tl.load(x + pid)
    if a > 1.0:
        kind = 2
        scale = a
    elif a > 0.0:
        kind = 1
        scale = 1.0
    else:
        kind = 0
        scale = -a
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n):
        if (i + pid) % 2 == 0:
            continue
        else:
            step = tl.full([BLOCK], i * 1.0, tl.float32)
        acc += step
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), acc * scale + kind * 100.0
             + safe_sqrt_twice(a))


# ---------------------------------------------------------------- tests


def test_break_on_loaded_value_with_carried_tile(backend, rng):
    rows, cols = 9, 100
    x = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    for limit in (0.5, 2.0):
        out, used = np.zeros(cols, np.float32), np.full(2, -1, np.int32)
        if not launch(sum_until, (2,), x, out, used, rows, cols, np.float32(limit),
                      backend=backend, BLOCK=64):
            return
        want, stop = _sum_until(x, limit)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(used, [stop, stop])


def test_break_turns_the_for_into_a_while():
    ck = tc.compile(sum_until, signature={"x": "*f32", "out": "*f32", "used": "*i32",
                                          "n_rows": "i32", "n_cols": "i32", "limit": "f32"},
                    constants={"BLOCK": 64}, backend="numpy")
    assert "scf.while" in ck.asm["tile"] and "scf.for" not in ck.asm["tile"]
    # Only the inner loop has a break; the outer one (continue only) stays an scf.for.
    ck = tc.compile(nested_jumps, signature={"x": "*f32", "out": "*f32", "n_rows": "i32",
                                             "n_cols": "i32"}, backend="numpy")
    assert ck.asm["tile"].count("scf.for") == 1 and ck.asm["tile"].count("scf.while") == 1


def test_continue_in_while_with_elif(backend, rng):
    rows, cols = 8, 70
    x = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
    out = np.zeros(cols, np.float32)
    if launch(skip_negative, (2,), x, out, rows, cols, backend=backend, BLOCK=64):
        w = np.where(x[:, 0] < 0, 0, np.where(x[:, 0] > 1, 2, 1)).astype(np.float32)
        np.testing.assert_allclose(out, (x * w[:, None]).sum(axis=0), rtol=1e-5, atol=1e-5)


def test_nested_loops_break_and_continue(backend, rng):
    progs, rows, cols = 3, 7, 6
    x = rng.integers(-1, 8, (progs, rows, cols)).astype(np.float32)
    out = np.zeros(progs, np.float32)
    if launch(nested_jumps, (progs,), x, out, rows, cols, backend=backend):
        np.testing.assert_allclose(out, [_nested_jumps(m) for m in x], rtol=1e-6)


def test_downward_loop_with_break(backend, rng):
    rows, n = 5, 12
    x = rng.integers(0, 3, (rows, n)).astype(np.int32)
    x[0] = 1  # no zero: -1
    out = np.zeros(rows, np.int32)
    if launch(last_zero_before, (rows,), x, out, n, backend=backend):
        want = [max((i for i in range(n) if row[i] == 0), default=-1) for row in x]
        np.testing.assert_array_equal(out, want)


def test_while_true_with_break(backend):
    out = np.zeros(30, np.int32)
    if launch(collatz_steps, (30,), out, 1, backend=backend):
        np.testing.assert_array_equal(out, [_collatz(v) for v in range(1, 31)])


def test_while_test_is_not_evaluated_after_break(backend, rng):
    rows, n = 4, 10
    x = rng.integers(1, 5, (rows, n)).astype(np.int32)
    x[1, 3] = 0
    x[3, 9] = 0
    out = np.zeros(rows, np.int32)
    if launch(walk_to_zero, (rows,), x, out, n, backend=backend):
        np.testing.assert_array_equal(out, [n, 3, n, 9])


def test_early_return_in_kernel(backend, rng):
    n, block = 200, 32
    x = rng.uniform(-1, 1, n).astype(np.float32)
    x[64:96] = -np.abs(x[64:96])
    out = np.full(n + 64, 7.0, np.float32)
    if launch(early_exit, (tc.cdiv(n, block) + 2,), x, out, n, backend=backend, BLOCK=block):
        want = np.full(n + 64, 7.0, np.float32)
        for s in range(0, n, block):
            blk = x[s:s + block]
            want[s:s + len(blk)] = -1.0 if blk.max() < 0 else blk * 2
        np.testing.assert_array_equal(out, want)


def test_return_inside_a_loop_ends_the_program(backend, rng):
    rows, n = 6, 9
    x = rng.uniform(0, 1, (rows, n)).astype(np.float32)
    x[1, 4] = x[1, 7] = x[4, 0] = -1.0
    out = np.zeros(rows, np.int32)
    if launch(return_in_loop, (rows,), x, out, n, backend=backend):
        np.testing.assert_array_equal(out, [-1, 4, -1, -1, 0, -1])


def test_func_early_returns(backend, rng):
    progs, block = 6, 16
    x = rng.uniform(-3, 3, progs * block).astype(np.float32)
    x[2] = 0.0
    keys = np.array([5, 3, 0, 3, 1, 9], np.int32)
    out, where = np.zeros(progs * block, np.float32), np.zeros(progs, np.int32)
    if not launch(func_returns, (progs,), x, keys, out, where, 6, backend=backend,
                  BLOCK=block):
        return
    v = np.clip(x[:progs], -1, 1)
    sign = np.where(x[:progs] > 1, 1, np.where(x[:progs] < -1, -1, 0))
    want = x.reshape(progs, block) * v[:, None] + sign[:, None]
    np.testing.assert_allclose(out, want.ravel(), rtol=1e-6)
    np.testing.assert_array_equal(where, [list(keys).index(p) if p in keys else -1
                                          for p in range(progs)])


def test_names_bound_on_every_path(backend, rng):
    progs, block, n = 5, 8, 7
    x = np.array([2.5, 0.5, -1.5, 0.0, 4.0], np.float32)
    out = np.zeros(progs * block, np.float32)
    if launch(bound_on_every_path, (progs,), x, out, n, backend=backend, BLOCK=block):
        want = []
        for p, a in enumerate(x):
            kind, scale = (2, a) if a > 1 else (1, 1.0) if a > 0 else (0, -a)
            acc = sum(i for i in range(n) if (i + p) % 2 == 1)
            want.append(np.full(block, acc * scale + kind * 100 + 2 * np.sqrt(max(a, 0))))
        np.testing.assert_allclose(out, np.concatenate(want), rtol=1e-6)


# ---------------------------------------------------------------- errors


@tc.func
def tile_or_scalar(v, BLOCK: tl.constexpr):
    if v > 0.0:
        return tl.zeros([BLOCK], tl.float32)
    return v


@tc.func
def returns_on_some_paths(v):
    if v > 0.0:
        return v


@tc.func
def tuple_then_one(v):
    if v > 0.0:
        return v, v
    return v


@tc.kernel
def calls(x, which: tl.constexpr, BLOCK: tl.constexpr):
    v = tl.load(x)
    if which == 0:
        r = tile_or_scalar(v, BLOCK)
    elif which == 1:
        r = returns_on_some_paths(v)
    else:
        r = tuple_then_one(v)
    tl.store(x + tl.arange(0, BLOCK), r)


@tc.kernel
def one_branch_only(x, n):
    if n > 0:
        y = 1.0
    tl.store(x, y)


@tc.kernel
def first_bound_in_loop(x, n):
    for i in range(n):
        y = tl.load(x + i)
    tl.store(x, y)


@tc.kernel
def break_in_static_range(x, n):
    for i in tl.static_range(4):
        if n > i:
            break
    tl.store(x, 1.0)


@tc.kernel
def kernel_returns_value(x, n):
    if n > 0:
        return n
    tl.store(x, 1.0)


@tc.kernel
def after_break(x, n):
    for i in range(n):
        break
        tl.store(x + i, 1.0)


@tc.kernel
def endless(x, n):
    while True:
        n += 1


def _error(kernel, signature, constants=None) -> str:
    with pytest.raises(tc.CompileError) as info:
        tc.compile(kernel, signature=signature, constants=constants or {}, backend="numpy")
    return str(info.value)


SIG = {"x": "*f32", "n": "i32"}


@pytest.mark.parametrize("kernel, constants, message, line", [
    (calls, {"which": 0}, ("return values differ: float32 on one path, tile<16, float32> on "
     "another; every return must give the same types"), "return v"),
    (calls, {"which": 1}, ("returns_on_some_paths returns one value on some paths and nothing "
     "on others"), "def returns_on_some_paths(v):"),
    (calls, {"which": 2}, "this return gives one value but an earlier one gives 2 values",
     "return v"),
    (one_branch_only, {}, ("name 'y' is not bound on every path to here: it is bound in only "
     "one branch of the if at line"), "tl.store(x, y)"),
    (first_bound_in_loop, {}, ("name 'y' is not bound on every path to here: it is first "
     "bound inside the loop at line"), "tl.store(x, y)"),
    (break_in_static_range, {}, "break inside tl.static_range is not supported", "break"),
    (kernel_returns_value, {}, "kernels cannot return a value", "return n"),
    (after_break, {}, "unreachable code after break", "tl.store(x + i, 1.0)"),
    (endless, {}, "while on a constant true condition never ends without a break or return",
     "while True:"),
])
def test_errors_name_the_variable_and_line(kernel, constants, message, line):
    text = _error(kernel, SIG if kernel is not calls else {"x": "*f32"},
                  {"BLOCK": 16, **constants} if kernel is calls else constants)
    assert message in text
    assert "test_control_flow_more.py:" in text
    assert text.splitlines()[1].strip() == line


def test_error_line_numbers_are_the_binding_sites():
    text = _error(one_branch_only, SIG)
    line = int(text.split("of the if at line ")[1].split()[0])
    assert one_branch_only.fn.__code__.co_firstlineno + 2 == line


# ---------------------------------------------------------------- loops that surely run


@tc.kernel
def do_while(x, out, n):
    """Names first bound inside loops that surely run, read after them: a while True
    left by break, and a constant range."""
    pid = tl.program_id(0)
    i = 0
    while True:
        v = tl.load(x + pid * n + i)
        i += 1
        if v > 0.5 or i == n:
            break
    for j in range(3):
        w = v * (j + 1)
    tl.store(out + pid, w + i * 100.0)


@tc.kernel
def break_before_binding(x, n):
    i = 0
    while True:
        i += 1
        if i > n:
            break
        y = tl.load(x + i)
    tl.store(x, y)


def test_names_first_bound_in_loops_that_surely_run(backend, rng):
    rows, n = 4, 8
    x = rng.uniform(0, 0.6, (rows, n)).astype(np.float32)
    x[3] = 0.1  # no value above 0.5: the loop ends at i == n
    out = np.zeros(rows, np.float32)
    if launch(do_while, (rows,), x, out, n, backend=backend):
        want = []
        for row in x:
            i = next((k + 1 for k in range(n) if row[k] > 0.5), n)
            want.append(row[i - 1] * 3 + i * 100)
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_name_not_bound_on_every_path_through_a_loop():
    text = _error(break_before_binding, SIG)
    assert "name 'y' is not bound on every path to here: it is not bound on every path " \
           "through the loop at line" in text
    assert text.splitlines()[1].strip() == "tl.store(x, y)"


# ---------------------------------------------------------------- PTX


PTX_CASES = [
    (sum_until, {"x": "*f32", "out": "*f32", "used": "*i32", "n_rows": "i32",
                 "n_cols": "i32", "limit": "f32"}, {"BLOCK": 64}),
    (skip_negative, {"x": "*f32", "out": "*f32", "n_rows": "i32", "n_cols": "i32"},
     {"BLOCK": 64}),
    (nested_jumps, {"x": "*f32", "out": "*f32", "n_rows": "i32", "n_cols": "i32"}, {}),
    (last_zero_before, {"x": "*i32", "out": "*i32", "n": "i32"}, {}),
    (collatz_steps, {"out": "*i32", "start": "i32"}, {}),
    (walk_to_zero, {"x": "*i32", "out": "*i32", "n": "i32"}, {}),
    (early_exit, {"x": "*f32", "out": "*f32", "n": "i32"}, {"BLOCK": 32}),
    (return_in_loop, {"x": "*f32", "out": "*i32", "n": "i32"}, {}),
    (func_returns, {"x": "*f32", "keys": "*i32", "out": "*f32", "where": "*i32",
                    "n": "i32"}, {"BLOCK": 16}),
    (bound_on_every_path, {"x": "*f32", "out": "*f32", "n": "i32"}, {"BLOCK": 8}),
    (do_while, {"x": "*f32", "out": "*f32", "n": "i32"}, {}),
]


@pytest.mark.parametrize("kernel, signature, constants", PTX_CASES,
                         ids=[c[0].fn.__name__ for c in PTX_CASES])
def test_compiles_and_assembles_for_ptx(kernel, signature, constants):
    ck = tc.compile(kernel, signature=signature, constants=constants, backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
