"""Globals a kernel reads are part of what it compiled: a changed value compiles again
(in this process, and in the next one through the disk cache); kinds a kernel may not
read are a CompileError at the use."""

import os
import subprocess
import sys
import types

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from compiler import jit
from tests.conftest import repo_pythonpath

FACTOR = 2.0
FACTOR_C = tl.constexpr(2.0)
OFFSET = 1.0
TABLE = [1.0, 2.0]
WEIGHTS = np.ones(4, np.float32)
consts = types.ModuleType("tilec_test_consts")  # a module whose attribute kernels read
consts.SCALE = 3.0
consts.TABLE = [3.0]
n = 7  # a global named like a kernel parameter: never the kernel's to read


@tc.kernel
def scale(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * FACTOR, mask=offs < n)


@tc.kernel
def scale_constexpr(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * FACTOR_C)


@tc.func
def shifted(v):
    return v + OFFSET


@tc.kernel
def shift(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, shifted(tl.load(x + offs)))


@tc.kernel
def scale_by_module(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * consts.SCALE)


@tc.kernel
def reads_list(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * TABLE[0])  # LIST


@tc.kernel
def reads_array(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * WEIGHTS)


@tc.kernel
def reads_module_list(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * consts.TABLE[0])


@tc.kernel
def assigns_late(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(x + offs) * FACTOR  # noqa: F823 - the case under test
    FACTOR = 3.0  # noqa: F841 - which makes FACTOR a local throughout, as in Python
    tl.store(x + offs, y)


def run(kernel, *extra, **constexprs):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    kernel[(1,)](x, out, *extra, BLOCK=8, backend="numpy", **constexprs)
    return out / np.maximum(x, 1)


@pytest.fixture(params=["no disk cache", "disk cache"])
def caching(request, monkeypatch, tmp_path):
    if request.param == "no disk cache":
        monkeypatch.setenv("TILEC_CACHE", "0")
    else:
        monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))


def test_a_changed_global_compiles_again(caching, monkeypatch):
    assert run(scale, 8)[1] == 2.0
    monkeypatch.setitem(globals(), "FACTOR", 5.0)
    assert run(scale, 8)[1] == 5.0
    monkeypatch.setitem(globals(), "FACTOR", 2.0)
    assert run(scale, 8)[1] == 2.0


def test_a_changed_constexpr_global_compiles_again(caching, monkeypatch):
    assert run(scale_constexpr)[1] == 2.0
    monkeypatch.setitem(globals(), "FACTOR_C", tl.constexpr(5.0))
    assert run(scale_constexpr)[1] == 5.0


def test_a_helper_s_global(caching, monkeypatch):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    shift[(1,)](x, out, BLOCK=8, backend="numpy")
    np.testing.assert_array_equal(out, x + 1.0)
    monkeypatch.setitem(globals(), "OFFSET", -4.0)
    shift[(1,)](x, out, BLOCK=8, backend="numpy")
    np.testing.assert_array_equal(out, x - 4.0)


def test_a_module_attribute(caching, monkeypatch):
    assert run(scale_by_module)[1] == 3.0
    monkeypatch.setattr(consts, "SCALE", 0.5)
    assert run(scale_by_module)[1] == 0.5


def plain_shift(t):  # a plain Python helper: cuTile kernels inline it
    return t + OFFSET


@ct.kernel
def tile_shift(a, out, TILE: ct.Constant[int]):
    ct.store(out, index=(0,), tile=plain_shift(ct.load(a, index=(0,), shape=(TILE,))))


def test_a_plain_helper_s_global_in_a_tile_kernel(caching, monkeypatch):
    a, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    tile_shift[(1,)](a, out, TILE=8, backend="numpy")
    np.testing.assert_array_equal(out, a + 1.0)
    monkeypatch.setitem(globals(), "OFFSET", 10.0)
    tile_shift[(1,)](a, out, TILE=8, backend="numpy")
    np.testing.assert_array_equal(out, a + 10.0)


def make_scaler(factor):
    @tc.kernel
    def scaler(x, out, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(x + offs) * factor)

    def rescale(value):
        nonlocal factor
        factor = value
    return scaler, rescale


def test_closure_variables(caching):
    # the same source, two closures: each computes with its own value, also when the
    # second finds the first one's compilation in the disk cache
    double, _ = make_scaler(2.0)
    triple, rescale = make_scaler(3.0)
    assert run(double)[1] == 2.0
    assert run(triple)[1] == 3.0
    rescale(4.0)
    assert run(triple)[1] == 4.0


def test_an_equal_value_does_not_compile_again(monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", "0")
    compiled = []
    real = jit._compile
    monkeypatch.setattr(jit, "_compile", lambda *a, **k: compiled.append(1) or real(*a, **k))
    run(scale, 8)
    monkeypatch.setitem(globals(), "FACTOR", float("2.0"))  # a new float object, equal
    assert run(scale, 8)[1] == 2.0
    monkeypatch.setitem(globals(), "n", 99)  # not read: the kernel's own parameter
    assert run(scale, 8)[1] == 2.0
    assert len(compiled) <= 1  # the first launch may compile; nothing after it


def test_a_parameter_named_like_a_global_is_not_keyed(monkeypatch):
    before = scale.source
    monkeypatch.setitem(globals(), "n", 8)
    assert scale.source == before
    assert "'FACTOR'" in before and "'n'" not in before


@pytest.mark.parametrize("kernel,name,kind", [
    (reads_list, "TABLE", "list"), (reads_array, "WEIGHTS", "ndarray"),
    (reads_module_list, "tilec_test_consts.TABLE", "list")])
def test_a_global_of_another_kind_is_a_compile_error(kernel, name, kind):
    with pytest.raises(tc.CompileError) as info:
        kernel[(1,)](np.zeros(8, np.float32), BLOCK=8, backend="numpy")
    text = str(info.value)
    first = text.splitlines()[0]
    assert f"global {name!r} is a {kind}: a kernel may read globals that are numbers" in first
    assert first.startswith(f"{os.path.relpath(__file__)}:")
    assert "tl.store" in text and "^" in text.splitlines()[-1]


def test_a_name_assigned_later_is_not_the_global():
    with pytest.raises(tc.CompileError, match="name 'FACTOR' is used before it is assigned"):
        assigns_late[(1,)](np.zeros(8, np.float32), BLOCK=8, backend="numpy")


MODULE = """
import numpy as np
import compiler as tc
import compiler.language as tl

FACTOR = {factor}


@tc.kernel
def scale(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) * FACTOR)


x = np.ones(8, np.float32)
scale[(1,)](x, BLOCK=8, backend="numpy")
print(x[0])
"""


def test_a_global_edited_between_processes(tmp_path):
    (tmp_path / "edited.py").write_text(MODULE.format(factor=2.0))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo_pythonpath(), str(tmp_path)]),
           "TILEC_CACHE_DIR": str(tmp_path / "cache"), "TILEC_CACHE": "1",
           "PYTHONDONTWRITEBYTECODE": "1"}  # an edit within a second: no stale .pyc

    def result() -> str:
        done = subprocess.run([sys.executable, "-c", "import edited"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert result() == "2.0"
    assert any((tmp_path / "cache").rglob("*.json"))
    (tmp_path / "edited.py").write_text(MODULE.format(factor=5.0))
    assert result() == "5.0"
