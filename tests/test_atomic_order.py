"""Triton's memory ordering on atomics (``sem=``, ``scope=``), ``tl.atomic_and/or/xor``,
and the spin lock they make possible, on every backend.

What ordering means cannot be observed by one run, so the tests check what can: every
value is accepted and reaches the target (PTX qualifiers, assembled; WGSL barriers),
results are unchanged, bad values are errors at the user's line, and a lock taken with
``atomic_cas(sem="acquire")`` and given back with ``atomic_xchg(sem="release")`` excludes
(a counter kept with plain loads and stores under it counts every program once). Spin
locks run in a subprocess with a time limit: a lock that is never given back fails the
test instead of hanging it.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import BACKENDS, ROOT, launch, repo_pythonpath

ORDERS = [("relaxed", "cta"), ("acquire", "gpu"), ("release", "sys"), ("acq_rel", None),
          (None, None)]
LOCK_TIMEOUT_S = 240  # the spin-lock runs take a few seconds on lavapipe


@tc.kernel
def ordered_add(ptr, olds, n, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    old = tl.atomic_add(ptr + offs % 4, 1, mask=m, sem=SEM, scope=SCOPE)
    tl.store(olds + offs, old, mask=m)


@pytest.mark.parametrize("sem, scope", ORDERS)
def test_ordering_keeps_results(backend, sem, scope):
    n = 1000
    mem, olds = np.zeros(4, np.int32), np.full(n, -1, np.int32)
    ran = launch(ordered_add, (tc.cdiv(n, 128),), mem, olds, n, backend=backend, SEM=sem,
                 SCOPE=scope, BLOCK=128)
    if not ran:
        return
    np.testing.assert_array_equal(mem, np.bincount(np.arange(n) % 4))
    for s in range(4):  # each slot's old values are 0, 1, 2, ... in some order
        np.testing.assert_array_equal(np.sort(olds[s::4]), np.arange(len(olds[s::4])))


@tc.kernel
def bitwise(ptr, slots, vals, olds, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    p = ptr + tl.load(slots + offs, mask=m)
    v = tl.load(vals + offs, mask=m)
    if KIND == "and":
        old = tl.atomic_and(p, v, mask=m, sem="relaxed")
    elif KIND == "or":
        old = tl.atomic_or(p, v, mask=m, scope="cta")
    else:
        old = tl.atomic_xor(p, v, mask=m)
    tl.store(olds + offs, old, mask=m)


def _bits_as_set(kind, words):
    """and-updates clear bits where or/xor set them: compare the cleared bits."""
    return ~words if kind == "and" else words


@pytest.mark.parametrize("kind", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_bitwise_atomics(backend, rng, kind, dtype):
    """Each of 4 words gets its 32 single-bit updates from lanes spread over programs, so
    any order's history is a chain: each old value holds the bits of the updates before."""
    slots = np.repeat(np.arange(4, dtype=np.int32), 32)
    bits = np.tile(np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32)), 4)
    order = rng.permutation(128)
    slots, bits = slots[order], bits[order]
    vals = (~bits if kind == "and" else bits).view(dtype)
    init = np.full(4, 0xFFFFFFFF if kind == "and" else 0, np.uint32).view(dtype)
    mem, olds = init.copy(), np.zeros(128, dtype)
    if not launch(bitwise, (4,), mem, slots, vals, olds, 128, backend=backend, KIND=kind,
                  BLOCK=32):
        return
    np.testing.assert_array_equal(mem.view(np.uint32),
                                  np.full(4, 0 if kind == "and" else 0xFFFFFFFF, np.uint32))
    seen = _bits_as_set(kind, olds.view(np.uint32))
    assert not (seen & bits).any(), "an update saw its own bit"
    for s in range(4):
        history = sorted(map(int, seen[slots == s]), key=int.bit_count)
        assert [w.bit_count() for w in history] == list(range(32))
        assert all(a & ~b == 0 for a, b in itertools.pairwise(history))
    if backend == "numpy":  # exactly sequential: lane i sees the updates of lanes before it
        for s in range(4):
            lanes = np.flatnonzero(slots == s)
            np.testing.assert_array_equal(seen[lanes], np.cumsum(np.append(0, bits[lanes])
                                                                 )[:-1].astype(np.uint32))


@tc.kernel
def locked_counter(lock, counter, log, zeros, WORK: tl.constexpr):
    """Each program takes the lock, reads the counter with a plain load, logs its id at that
    position and, after a while (a loop adding zeros the compiler cannot see), stores
    counter + 1: only mutual exclusion gives a permutation. Without the lock, lavapipe
    loses counts in most runs of 48 programs."""
    while tl.atomic_cas(lock, 0, 1, sem="acquire") == 1:
        pass
    c = tl.load(counter)
    for i in range(WORK):
        c += tl.load(zeros + i)
    tl.store(log + c, tl.program_id(0))
    tl.store(counter, c + 1)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0, sem="release")


def run_locked_counter(backend: str, programs: int = 48, work: int = 1024) -> None:
    for _ in range(1 if backend == "numpy" else 3):  # NumPy runs programs in order anyway
        lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
        log = np.full(programs, -1, np.int32)
        locked_counter[(programs,)](lock, counter, log, np.zeros(work, np.int32), WORK=work,
                                    backend=backend)
        assert lock[0] == 0 and counter[0] == programs, (lock, counter)
        np.testing.assert_array_equal(np.sort(log), np.arange(programs))


def _run(args: list[str]) -> subprocess.CompletedProcess:
    """``python args...`` from the repository root, killed after ``LOCK_TIMEOUT_S``."""
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=LOCK_TIMEOUT_S,
                          env={**os.environ, "PYTHONPATH": repo_pythonpath()})


@pytest.mark.parametrize("backend", BACKENDS)
def test_spin_lock_excludes(backend):
    if not tc.backends()[backend][0]:
        pytest.skip(tc.backends()[backend][1])
    code = f"from tests.test_atomic_order import run_locked_counter; run_locked_counter({backend!r})"
    r = _run(["-c", f"{code}; print('OK')"])
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_layernorm_backward_example(backend):
    if not tc.backends()[backend][0]:
        pytest.skip(tc.backends()[backend][1])
    r = _run(["examples/layernorm_backward.py", "--backend", backend])
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


def test_layernorm_backward_ptx_assembles():
    from examples.layernorm_backward import layernorm_dx, sum_partials
    x, row = np.zeros((4, 200), np.float32), np.zeros(200, np.float32)
    ck = tc.compile(layernorm_dx, args=(x, x, x, row, row[:4].copy(), row[:4].copy(),
                                        np.zeros(16, np.int32), x, x, 200, 8, 256),
                    backend="ptx")
    text = ck.asm["ptx"]
    assert "atom.acquire.gpu.global.cas.b32" in text
    assert "atom.release.gpu.global.exch.b32" in text
    assert "atom.relaxed.gpu.global.exch.b32" in text
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    ck = tc.compile(sum_partials, args=(x, x, row, row, 4, 200, 4, 32), backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF"


# ---------------------------------------------------------------- what each target gets

ADD_SIG = {"ptr": "*i32", "olds": "*i32", "n": "i32"}


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel", None])
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys", None])
def test_ptx_qualifiers_assemble(sem, scope):
    ck = tc.compile(ordered_add, signature=ADD_SIG, backend="ptx",
                    constants={"SEM": sem, "SCOPE": scope, "BLOCK": 128})
    want = f"atom.{sem or 'acq_rel'}.{scope or 'gpu'}.global.add.u32"
    assert want in ck.asm["ptx"]
    assert ck.asm["cubin"][:4] == b"\x7fELF"


@tc.kernel
def unread_add(ptr, n, SEM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(ptr + offs % 4, 1.0, mask=offs < n, sem=SEM)


@pytest.mark.parametrize("sem, op", [("relaxed", "red"), ("release", "red"),
                                     ("acq_rel", "atom"), ("acquire", "atom")])
def test_ptx_unread_atomic_is_a_red(sem, op):
    """An atomic whose old values nothing reads is PTX's ``red`` where ``red`` takes its
    order (relaxed, release), else an ``atom``; ``ordered_add`` reads them: ``atom``."""
    ck = tc.compile(unread_add, signature={"ptr": "*f32", "n": "i32"}, backend="ptx",
                    constants={"SEM": sem, "BLOCK": 128})
    text = ck.asm["ptx"]
    assert f"{op}.{sem}.gpu.global.add.f32" in text
    assert ("atom." in text) == (op == "atom") and ck.asm["cubin"][:4] == b"\x7fELF"
    text = tc.compile(ordered_add, signature=ADD_SIG, backend="ptx",
                      constants={"SEM": sem, "SCOPE": None, "BLOCK": 128}).asm["ptx"]
    assert "red." not in text


def test_ptx_float_max_loop_takes_the_order():
    @tc.kernel
    def fmax(ptr, v):
        tl.atomic_max(ptr, tl.load(v), sem="release", scope="cta")

    text = tc.compile(fmax, signature={"ptr": "*f32", "v": "*f32"}, backend="ptx").asm["ptx"]
    assert "atom.release.cta.global.cas.b32" in text and "max.NaN.f32" in text


def _wgsl_around_atomic(sem):
    text = tc.compile(ordered_add, signature=ADD_SIG, backend="wgsl",
                      constants={"SEM": sem, "SCOPE": None, "BLOCK": 128}).asm["wgsl"]
    body = [t.strip() for t in text[text.index("fn main"):].splitlines()]
    first = next(i for i, t in enumerate(body) if "atomic_add_" in t)
    last = max(i for i, t in enumerate(body) if "atomic_add_" in t)
    return body[first - 2:first], body[last + 1]


@pytest.mark.parametrize("sem, before, after", [
    ("relaxed", False, False), ("acquire", False, True), ("release", True, False),
    ("acq_rel", True, True), (None, True, True)])
def test_wgsl_storage_barriers(sem, before, after):
    lines_before, line_after = _wgsl_around_atomic(sem)
    assert ("storageBarrier();" in lines_before) == before
    assert (line_after == "storageBarrier();") == after


# ---------------------------------------------------------------- errors

@tc.kernel
def bad_order(x, SEM: tl.constexpr, SCOPE: tl.constexpr):
    tl.atomic_add(x, 1, sem=SEM, scope=SCOPE)


@tc.kernel
def float_xor(x):
    tl.atomic_xor(x, 1.0)


@pytest.mark.parametrize("sem, scope, message", [
    ("seq_cst", None, ("tl.atomic_add: sem must be one of 'relaxed', 'acquire', 'release', "
                       "'acq_rel', got 'seq_cst'")),
    (None, "warp", "tl.atomic_add: scope must be one of 'gpu', 'cta', 'sys', got 'warp'"),
    (1, None, "sem must be one of"),
])
def test_bad_order_is_a_compile_error_at_the_line(sem, scope, message):
    with pytest.raises(tc.CompileError) as e:
        tc.compile(bad_order, signature={"x": "*i32"}, constants={"SEM": sem, "SCOPE": scope},
                   backend="numpy")
    assert message in str(e.value)
    assert "test_atomic_order.py:" in str(e.value)
    assert "tl.atomic_add(x, 1, sem=SEM, scope=SCOPE)" in str(e.value)


def test_bitwise_atomic_needs_integers():
    with pytest.raises(tc.CompileError, match="tl.atomic_xor needs a pointer to integers"):
        tc.compile(float_xor, signature={"x": "*f32"}, backend="numpy")


def test_order_is_in_the_tile_ir():
    sig = {"lock": "*i32", "counter": "*i32", "log": "*i32", "zeros": "*i32"}
    ir = tc.compile(locked_counter, signature=sig, constants={"WORK": 4},
                    backend="numpy").asm["tile"]
    assert 'sem "acquire"' in ir and 'tile.atomic_rmw "xchg"' in ir and 'sem "release"' in ir
