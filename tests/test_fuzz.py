"""Fuzzing the frontend and the launch path: whatever kernel a user writes and however
they launch it, a failure is a ``TilecError`` (never an internal compiler error or a
raw Python exception), and one caused by kernel source names the file and line."""

from __future__ import annotations

import importlib.util
import itertools
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import compiler as tc
import compiler.language as tl
from tests.fuzz_kernels import kernel_sources, launch_args

# CI runs a few seconds; TILEC_FUZZ_EXAMPLES=5000 fuzzes for real.
FUZZ = settings(max_examples=int(os.environ.get("TILEC_FUZZ_EXAMPLES", "40")), deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
_counter = itertools.count()


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", "0")


def load_kernel(source: str, directory: Path):
    """The ``fuzzed`` kernel of ``source``, written to a file so that errors can point
    into it (None when the source is not even Python, or defines no kernel)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # "1.5[0]": Python's lint, not ours
        try:
            compile(source, "<fuzz>", "exec")
        except SyntaxError:
            return None, None
        path = directory / f"fuzzed_{next(_counter)}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except tc.TilecError as e:  # no kernel at all (a generator, say): at decoration
            check_failure(e, path)
            return None, None
    return module.fuzzed, path


def check_failure(e: tc.TilecError, path: Path) -> None:
    assert not isinstance(e, tc.InternalCompilerError), str(e)
    if isinstance(e, tc.LaunchError | tc.BackendUnavailableError) and e.loc is None:
        assert "\n" not in e.message, e.message  # a launch error's one-line reason
        return
    assert e.loc is not None and e.loc.file == str(path), str(e)
    assert f"{path}:{e.loc.line}:" in str(e)
    assert 1 <= e.loc.line <= len(path.read_text().splitlines())


def launch(kernel, args, kwargs, grid, path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy overflow in random math
        try:
            kernel[grid](*args, backend="numpy", **kwargs)
        except tc.TilecError as e:
            check_failure(e, path)


@FUZZ
@given(source=kernel_sources(), launch_with=launch_args())
def test_random_kernels_fail_cleanly(source, launch_with, tmp_path):
    kernel, path = load_kernel(source, tmp_path)
    assume(kernel is not None)
    launch(kernel, *launch_with, path)


GOOD_ARGS = ((np.arange(64, dtype=np.float32), np.ones(64, np.float32),
              np.zeros(64, np.float32), 64), {"BLOCK": 64}, (1,))


@FUZZ
@given(source=kernel_sources())
def test_random_kernels_with_fitting_arguments(source, tmp_path):
    """The same kernels launched as intended, so more of them get past specialization."""
    kernel, path = load_kernel(source, tmp_path)
    assume(kernel is not None)
    args, kwargs, grid = GOOD_ARGS
    launch(kernel, [a.copy() if isinstance(a, np.ndarray) else a for a in args], kwargs,
           grid, path)


@FUZZ
@given(launch_with=launch_args())
def test_random_launches_of_a_valid_kernel(launch_with, tmp_path):
    kernel, path = load_kernel(VALID, tmp_path)
    launch(kernel, *launch_with, path)


VALID = """\
import compiler as tc
import compiler.language as tl


@tc.kernel
def fuzzed(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0)
    b = tl.load(y + offs, mask=mask, other=1)
    tl.store(out + offs, a * 2 + b, mask=mask)
"""


def _with_cse(apply, tmp_path, monkeypatch) -> tuple[str, Path, Path]:
    """Launch ``VALID`` with a cse pass that does ``apply(module)``, which must make an
    internal compiler error: its message, the kernel's file and the dumped IR's file."""
    from xdsl.passes import ModulePass

    from compiler import pipeline

    class Replaced(ModulePass):
        name = "cse"

        def apply(self, ctx, op):
            apply(op)

    real = pipeline.get_all_passes()
    monkeypatch.setattr(pipeline, "get_all_passes", lambda: {**real, "cse": lambda: Replaced})
    kernel, path = load_kernel(VALID, tmp_path)
    with pytest.raises(tc.InternalCompilerError) as info:
        kernel[(1,)](*GOOD_ARGS[0], BLOCK=64, backend="numpy")
    text = str(info.value)
    return text, path, Path(text.split("the file ")[1].split()[0])


def test_internal_errors_say_they_are_bugs_and_keep_the_ir(tmp_path, monkeypatch):
    """A failure inside the compiler itself asks for a report and writes the IR the
    failing stage started from to the file its message names."""
    def boom(module):
        raise RuntimeError("boom")

    text, path, dump = _with_cse(boom, tmp_path, monkeypatch)
    assert "internal compiler error in cse: RuntimeError: boom" in text
    assert "this is a tilec bug" in text and f"{path}:6:" in text
    ir = dump.read_text()
    assert "tile.load" in ir and "RuntimeError: boom" in ir
    dump.unlink()


def test_internal_frontend_errors_point_at_the_line(tmp_path, monkeypatch):
    from compiler.frontend.triton import TABLE

    def broken(cg, *args, **kwargs):
        raise KeyError("lost")

    monkeypatch.setitem(TABLE.functions, "load", broken)
    kernel, path = load_kernel(VALID, tmp_path)
    with pytest.raises(tc.InternalCompilerError) as info:
        kernel[(1,)](*GOOD_ARGS[0], BLOCK=64, backend="numpy")
    text = str(info.value)
    assert text.startswith(f"{path}:9:") and "in frontend: KeyError: 'lost'" in text
    dump = Path(text.split("the file ")[1].split()[0])
    assert "tile.range" in dump.read_text()  # the IR generated before the failing line
    dump.unlink()


# ---------------------------------------------------------------- what the fuzzer found


@tc.kernel
def copy(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # COPY
    tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


@tc.kernel
def containers(x, out, n, WHAT: tl.constexpr):
    offs = tl.arange(0, 16)
    if WHAT == "list":
        v = tl.load(x + offs) + [1, 2]  # CONTAINER
    elif WHAT == "dict":
        v = tl.load(x + offs) + {1: 2}  # CONTAINER
    elif WHAT == "set":
        v = tl.load(x + offs) + {1}  # CONTAINER
    elif WHAT == "exp of a pointer":
        v = tl.exp(x)  # CONTAINER
    elif WHAT == "zeros_like of a constexpr":
        v = tl.zeros_like(len(WHAT))  # CONTAINER
    elif WHAT == "str plus int":
        v = tl.load(x + offs) + (WHAT + 1)  # CONTAINER
    elif WHAT == "huge constant":
        v = tl.load(x + offs) * 1e300  # CONTAINER
    else:
        v = tl.load(x + offs) + tl  # CONTAINER
    tl.store(out + offs, v)


def line_of(tag: str, occurrence: int = 0) -> int:
    lines = Path(__file__).read_text().splitlines()
    return [i for i, text in enumerate(lines, 1) if text.endswith(f"# {tag}")][occurrence]


X, OUT = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)


@pytest.mark.parametrize("block,message", [
    ("a", "cannot use str value 'a' in a kernel expression"),
    (None, "cannot use NoneType value None"),
    (1.5, "arange end must be a constexpr integer"),
    (2**40, "arange bounds must fit in int32"),
    (1 << 22, "has more than 1048576 elements"),
])
def test_constexpr_of_the_wrong_kind_is_a_compile_error(block, message):
    with pytest.raises(tc.CompileError) as info:
        copy[(1,)](X, OUT, 64, BLOCK=block, backend="numpy")
    assert not isinstance(info.value, tc.InternalCompilerError)
    assert message in str(info.value)
    assert f"test_fuzz.py:{line_of('COPY')}:" in str(info.value)


def test_unhashable_constexpr_and_bad_grid_are_launch_errors():
    with pytest.raises(tc.LaunchError, match="constexpr 'BLOCK' must be hashable"):
        copy[(1,)](X, OUT, 64, BLOCK=[64], backend="numpy")
    for grid in ("g", (1.5,)):
        with pytest.raises(tc.LaunchError, match="grid must be a tuple of up to 3 ints"):
            copy[grid](X, OUT, 64, BLOCK=64, backend="numpy")


def test_numpy_scalar_constexpr_is_its_value():
    out = np.zeros(64, np.float32)
    copy[(1,)](X, out, 64, BLOCK=np.int64(64), backend="numpy")
    np.testing.assert_array_equal(out, X)


@pytest.mark.parametrize("what,message", [
    ("list", "cannot use list value [1, 2]"), ("dict", "unsupported Python construct"),
    ("set", "unsupported Python construct"), ("exp of a pointer", "math.exp needs numbers"),
    ("zeros_like of a constexpr", "tl.zeros_like: x must be a tile or a runtime scalar"),
    ("str plus int", "cannot evaluate this on compile-time values: TypeError"),
    ("huge constant", "1e+300 is out of range for float32"), ("module", "cannot use module"),
])
def test_python_values_inside_a_kernel_are_compile_errors(what, message):
    with pytest.raises(tc.CompileError) as info:
        containers[(1,)](X, OUT, 64, WHAT=what, backend="numpy")
    assert not isinstance(info.value, tc.InternalCompilerError)
    assert message in str(info.value)
    tags = ["list", "dict", "set", "exp of a pointer", "zeros_like of a constexpr",
            "str plus int", "huge constant", "module"]
    assert f"test_fuzz.py:{line_of('CONTAINER', tags.index(what))}:" in str(info.value)


def test_a_pass_that_breaks_the_ir_is_named_with_its_input(tmp_path, monkeypatch):
    """The lowered module is verified once; when it does not verify, the passes run
    again, each verified, and the report names the first whose output is invalid."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import i1

    from compiler.context import parse_module

    def retype(module):  # a multiply whose result is not its operands' type
        mul = next(o for o in module.walk() if isinstance(o, arith.MulfOp | arith.MuliOp))
        mul.results[0]._type = i1

    text, _, dump = _with_cse(retype, tmp_path, monkeypatch)
    assert "internal compiler error in cse: VerifyException" in text
    before = parse_module(dump.read_text())  # the input of cse: valid, with its multiply
    before.verify()
    assert any(isinstance(o, arith.MulfOp | arith.MuliOp) for o in before.walk())
    dump.unlink()
