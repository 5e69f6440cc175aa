"""Bounds checks on the GPU backends with ``debug=True``: every load, store and atomic
checks its elements against the array's length (passed in by the host) and an
out-of-bounds one raises the NumPy backend's ``OutOfBoundsError``, word for word, at the
user's line. In-bounds and masked-off accesses pass; ``debug=False`` code is unchanged."""

import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from backends.numpy import Launcher
from compiler import pipeline
from compiler.jit import availability
from compiler.kinfo import KernelInfo, Param
from tests.conftest import ROOT, launch, repo_pythonpath


@tc.kernel
def unmasked_load(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(out + offs, v, mask=offs < n)


@tc.kernel
def shifted_store(x, out, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs - SHIFT, tl.load(x + offs))


@tc.kernel
def count(out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out + offs % 40, 1)


@tc.kernel
def window_sums(x, out, last, n, K: tl.constexpr, BLOCK: tl.constexpr):
    """Masked loads through a loop-carried pointer, all in bounds; a scalar load."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = x + offs
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(K):
        acc += tl.load(p, mask=offs + i < n, other=0.0)
        p += 1
    tl.store(out + offs, acc, mask=offs < n)
    tl.store(last, tl.load(x + n - 1))


def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _reports_like_numpy(kernel, grid, args, backend, **constexprs) -> str:
    """The GPU report of ``kernel``'s out-of-bounds access, checked against NumPy's."""
    with pytest.raises(tc.OutOfBoundsError) as want:
        kernel[grid](*[a.copy() if isinstance(a, np.ndarray) else a for a in args],
                     backend="numpy", **constexprs)
    with pytest.raises(tc.OutOfBoundsError) as got:
        if not launch(kernel, grid, *args, backend=backend, debug=True, **constexprs):
            pytest.skip("ptx: compiled and assembled only (no GPU)")
    assert str(got.value) == str(want.value)
    return str(got.value)


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", "0")  # reports name source lines of this file


def test_out_of_bounds_load(backend):
    x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    text = _reports_like_numpy(unmasked_load, (4,), (x, out, 100), backend, BLOCK=32)
    assert "out-of-bounds load of x[100] (array length 100) in program (3, 0, 0)" in text
    assert f"test_bounds_check.py:{_line_of(unmasked_load, 'tl.load(x')}:" in text
    assert "v = tl.load(x + offs)" in text


def test_out_of_bounds_store_negative_offset(backend):
    x, out = np.ones(64, np.float32), np.zeros(64, np.float32)
    text = _reports_like_numpy(shifted_store, (2,), (x, out), backend, SHIFT=3, BLOCK=32)
    assert "out-of-bounds store of out[-3] (array length 64) in program (0, 0, 0)" in text
    assert f"test_bounds_check.py:{_line_of(shifted_store, 'tl.store(out')}:" in text


def test_out_of_bounds_atomic(backend):
    out = np.zeros(32, np.int32)
    text = _reports_like_numpy(count, (1,), (out,), backend, BLOCK=64)
    assert "out-of-bounds atomic of out[32] (array length 32) in program (0, 0, 0)" in text


def test_in_bounds_and_masked_off_accesses_pass(backend):
    n, k, block = 100, 4, 32
    x = np.random.default_rng(0).random(n).astype(np.float32)
    out, last = np.zeros(n, np.float32), np.zeros(1, np.float32)
    if not launch(window_sums, (4,), x, out, last, n, backend=backend, debug=True, K=k,
                  BLOCK=block):
        return
    padded = np.concatenate([x, np.zeros(k, np.float32)])
    want = sum(padded[i:i + n] for i in range(k))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert last[0] == x[-1]


@ct.kernel
def tile_copy(x, y, TILE: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(TILE,))
    ct.store(y, index=(ct.bid(0),), tile=t * 2.0)


def test_cutile_partial_tiles_pass(backend):
    """A compiler.tile kernel's edge tiles are masked, so they pass the checks."""
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    if launch(tile_copy, (4,), x, y, backend=backend, debug=True, TILE=32):
        np.testing.assert_array_equal(y, 2 * x)


SIG = {"x": "*f32", "out": "*f32", "n": "i32"}


def test_numpy_meaning_of_check_bounds():
    """The NumPy backend runs the IR after check-bounds too: the check, not the access
    (masked to the extent), reports, so a shorter extent shows in the message."""
    ck = tc.compile(unmasked_load, signature=SIG, constants={"BLOCK": 32}, backend="wgsl",
                    debug=True)
    params = [*ck.metadata.params[:3], Param("x_extent", "i32", False),
              Param("out_extent", "i32", False)]
    run = Launcher(dict(ck.stages)["check-bounds"], KernelInfo("k", params, "numpy"))
    x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    with pytest.raises(tc.OutOfBoundsError,
                       match=r"^out-of-bounds load of x\[90\] \(array length 90\) in "
                             r"program \(2, 0, 0\)$"):
        run((4, 1, 1), [x, out, 100, 90, 100])
    run((3, 1, 1), [x, out, 90, 100, 100])  # every load inside x, stores past n masked
    np.testing.assert_array_equal(out, np.where(np.arange(100) < 90, x, 0))


@pytest.mark.parametrize("gpu", ["wgsl", "ptx"])
def test_debug_false_code_is_unchanged(gpu):
    """Without debug=True there is no check-bounds stage, no check and no extra parameter:
    the stages are the pipeline's as they were, and the same IR with checks removed."""
    plain = tc.compile(unmasked_load, signature=SIG, constants={"BLOCK": 32}, backend=gpu)
    names = [name for name, _ in plain.stages]
    assert names == ["frontend", *(s.partition("{")[0] for s in pipeline.passes(gpu))]
    assert names[3:5] == ["strip-debug", "lower-control"]
    assert not any("check_bounds" in ir or "extent" in ir for _, ir in plain.stages)
    assert [p.name for p in plain.metadata.params] == ["x", "out", "n"]
    assert "bounds" not in plain.metadata.extra and "debug" not in plain.metadata.extra
    checked = tc.compile(unmasked_load, signature=SIG, constants={"BLOCK": 32}, backend=gpu,
                         debug=True)
    assert [n for n, _ in checked.stages][3:6] == ["lower-control", "check-bounds",
                                                    "strip-debug"]
    assert checked.asm[gpu] != plain.asm[gpu]


def test_debug_ptx_takes_extents_and_assembles():
    ck = tc.compile(window_sums, signature={"x": "*f32", "out": "*f32", "last": "*f32", "n": "i32"},
                    constants={"K": 4, "BLOCK": 128}, backend="ptx", debug=True)
    assert [p.name for p in ck.metadata.params] == [
        "x", "out", "last", "n", "__tilec_extent_x", "__tilec_extent_out",
        "__tilec_extent_last", "__tilec_debug"]
    assert ck.metadata.extra["bounds"] == [0, 1, 2]
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert ck.asm["ptx"].count(".param .u32") == 4  # n and three extents


def test_extent_of_each_kind_of_array():
    from compiler.debug import extents
    x = np.zeros((3, 5), np.float32)
    assert extents([x, 7, np.zeros(2**5, np.int8)], [0, 2]) == [15, 32]
    if availability("wgsl")[0]:
        assert extents([tc.wgsl_array(_buffer(64), "f16", (10,))], [0]) == [10]


def _buffer(size: int):
    import wgpu

    return tc.wgsl_device().create_buffer(size=size, usage=wgpu.BufferUsage.STORAGE)


def test_the_environment_turns_checks_on_for_every_launch():
    """``TILEC_CHECK_BOUNDS=1``: a launch without ``debug=True`` checks its accesses (the
    variable is read when the process starts, so this runs in a fresh one)."""
    if not availability("wgsl")[0]:
        pytest.skip("wgsl: not available")
    code = ("import numpy as np, compiler as tc; from tests.test_bounds_check import "
            "unmasked_load as k; x = np.ones(100, np.float32)\n"
            "try:\n    k[(2,)](x, np.zeros(100, np.float32), 100, BLOCK=64, backend='wgsl')\n"
            "except tc.OutOfBoundsError as e:\n    print('reported:', str(e).splitlines()[0])")
    for value, reported in (("1", True), ("0", False)):
        env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_CHECK_BOUNDS": value}
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=ROOT, timeout=120, check=True)
        assert ("out-of-bounds load of x[100] (array length 100)" in r.stdout) == reported, r.stdout
