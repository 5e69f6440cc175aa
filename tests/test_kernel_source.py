"""Where a kernel's source comes from: a file, a notebook cell (``linecache``), the text
of ``python -c``, or ``source=`` for ``exec`` of a string; code whose text Python keeps
nowhere, and definitions that are not kernels, are one-line TilecErrors at decoration."""

import linecache
import os
import subprocess
import sys

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from tests.conftest import repo_pythonpath

ADD_ONE = """
def add_one(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) + 1.0)
"""

DECORATED = """
@tc.func(source=TEXT)
def plus(v, w):
    return v + w


@tc.kernel(source=TEXT)
def add_two(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, plus(tl.load(x + offs), 2.0))


@tc.kernel(source=TEXT)
def bad(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(offs))
"""


def launched(kernel) -> np.ndarray:
    x = np.zeros(8, np.float32)
    kernel[(1,)](x, BLOCK=8, backend="numpy")
    return x


def test_exec_with_source():
    scope = {"tl": tl}
    exec(ADD_ONE, scope)  # noqa: S102 - the case under test
    np.testing.assert_array_equal(launched(tc.kernel(scope["add_one"], source=ADD_ONE)), 1.0)


def test_exec_of_decorated_code_given_its_own_text():
    scope = {"tc": tc, "tl": tl, "TEXT": DECORATED}
    exec(DECORATED, scope)  # noqa: S102 - the case under test
    np.testing.assert_array_equal(launched(scope["add_two"]), 2.0)
    with pytest.raises(tc.CompileError) as info:
        launched(scope["bad"])
    lines = str(info.value).splitlines()
    line = DECORATED.splitlines().index("    tl.store(x + offs, tl.load(offs))") + 1
    assert lines[0].startswith(f"<string>:{line}:24: tl.load expects a pointer")
    assert lines[1].strip() == "tl.store(x + offs, tl.load(offs))"
    assert lines[2].index("^") == lines[1].index("tl.load")


def test_exec_without_source_is_a_tilec_error_at_decoration():
    scope = {"tl": tl}
    exec(ADD_ONE, scope)  # noqa: S102 - the case under test
    with pytest.raises(tc.TilecError) as info:
        tc.kernel(scope["add_one"])
    assert str(info.value) == (
        "@tc.kernel 'add_one': no source text for code defined in <string> (Python "
        "keeps none for standard input, the interactive prompt or exec of a string); "
        "define it in a file, or give its text: @tc.kernel(source=text)")


def test_source_without_the_function_is_a_tilec_error():
    scope = {"tl": tl}
    exec(ADD_ONE, scope)  # noqa: S102 - the case under test
    with pytest.raises(tc.TilecError, match="source= holds 0 definitions of 'add_one'"):
        tc.kernel(scope["add_one"], source="def other():\n    pass\n")
    with pytest.raises(tc.TilecError, match="source= takes the text of the code"):
        tc.kernel(scope["add_one"], source=ADD_ONE.splitlines())


@pytest.mark.parametrize("name", ["/tmp/ipykernel_4242/2831674507.py",
                                  "<ipython-input-3-5a1b2c3d4e5f>"])
def test_a_notebook_cell(name, monkeypatch):
    """IPython compiles each cell under its own name and keeps its text in ``linecache``
    with no modification time, so ``checkcache`` keeps it."""
    cell = "import compiler as tc\nimport compiler.language as tl\n\n@tc.kernel" + ADD_ONE
    cell += "\n\n@tc.kernel\ndef bad(x, BLOCK: tl.constexpr):\n    tl.store(x, 1.0 + x.y)\n"
    scope: dict = {}
    run_cell(cell, name, scope, monkeypatch)
    linecache.checkcache()
    np.testing.assert_array_equal(launched(scope["add_one"]), 1.0)
    with pytest.raises(tc.CompileError) as info:
        launched(scope["bad"])
    lines = str(info.value).splitlines()
    assert lines[0].startswith(f"{name}:{len(cell.splitlines())}:")
    assert lines[1].strip() == "tl.store(x, 1.0 + x.y)"


def run_cell(cell: str, name: str, scope: dict, monkeypatch) -> None:
    """What IPython does with a cell: its text into ``linecache``, then run."""
    monkeypatch.setitem(linecache.cache, name, (len(cell), None, cell.splitlines(True), name))
    exec(compile(cell, name, "exec"), scope)  # noqa: S102 - the case under test


def test_a_notebook_cell_run_again(monkeypatch):
    """Running a helper's cell again (edited) changes the kernel defined in another."""
    helper = "import compiler as tc\n\n@tc.func\ndef plus(v):\n    return v + {}\n"
    kernel = ("import compiler.language as tl\n\n@tc.kernel\ndef add(x, BLOCK: tl.constexpr):"
              "\n    offs = tl.arange(0, BLOCK)\n    tl.store(x + offs, plus(tl.load(x + offs)))\n")
    scope: dict = {}
    run_cell(helper.format(1.0), "<ipython-input-1-aa>", scope, monkeypatch)
    run_cell(kernel, "<ipython-input-2-bb>", scope, monkeypatch)
    np.testing.assert_array_equal(launched(scope["add"]), 1.0)
    run_cell(helper.format(5.0), "<ipython-input-3-cc>", scope, monkeypatch)
    np.testing.assert_array_equal(launched(scope["add"]), 5.0)


PROGRAM = """
import numpy as np
import compiler as tc
import compiler.language as tl

@tc.kernel
def add_one(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs) + 1.0)

x = np.zeros(4, np.float32)
add_one[(1,)](x, BLOCK=4, backend="numpy")
print(x.sum())
"""


def python(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_CACHE": "0"}
    return subprocess.run([sys.executable, *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_python_dash_c_keeps_its_text():
    done = python(["-c", PROGRAM])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4.0"


def test_standard_input_is_one_clear_tilec_error():
    done = python(["-"], stdin=PROGRAM)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("tilec.TilecError: @tc.kernel 'add_one': no source text for "
                           "code defined in <stdin> (Python keeps none for standard input")
    assert "OSError" not in done.stderr and "compiler/source.py" not in done.stderr


class NotAKernel:
    pass


async def asynchronous(x):
    pass


def generator(x):
    yield x


def line_of(fn) -> int:
    """The line of ``fn``'s def in this file."""
    return fn.__code__.co_firstlineno


DECORATORS = [(tc.kernel, "@tc.kernel"), (tc.func, "@tc.func"), (ct.kernel, "@ct.kernel")]


@pytest.mark.parametrize("decorator,name", DECORATORS, ids=[d[1] for d in DECORATORS])
@pytest.mark.parametrize("thing,got", [(42, "int 42"), (print, "builtin 'print'"),
                                       (NotAKernel, "class 'NotAKernel'")])
def test_not_a_function(decorator, name, thing, got):
    with pytest.raises(tc.TilecError) as info:
        decorator(thing)
    assert str(info.value) == f"{name} takes a Python function (a def), got {got}"


@pytest.mark.parametrize("decorator,name", DECORATORS, ids=[d[1] for d in DECORATORS])
@pytest.mark.parametrize("fn,what", [(asynchronous, "an async def"),
                                     (generator, "a generator (it has yield)")])
def test_not_a_plain_def(decorator, name, fn, what):
    with pytest.raises(tc.CompileError) as info:
        decorator(fn)
    lines = str(info.value).splitlines()
    assert lines[0] == (f"{os.path.relpath(__file__)}:{line_of(fn)}:1: {name} takes a plain "
                        f"def; {fn.__name__!r} is {what}")
    assert lines[1].strip().startswith(("async def", "def"))


@pytest.mark.parametrize("decorator,name", DECORATORS, ids=[d[1] for d in DECORATORS])
def test_a_lambda(decorator, name):
    with pytest.raises(tc.CompileError) as info:
        decorator(lambda x: x)  # LAMBDA
    lines = str(info.value).splitlines()
    assert lines[0].endswith(f"{name} takes a def, not a lambda")
    assert lines[1].strip().endswith("# LAMBDA")
    assert lines[2].index("^") == lines[1].index("lambda")
