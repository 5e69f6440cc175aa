"""The ``tilec`` command line, the examples' command lines and the default backend: every
error is one line on standard error with exit status 2 (bad command line) or 1 (the work
failed), never a traceback; ``TILEC_BACKEND`` and ``tc.set_backend`` choose the backend
wherever none is named."""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import compiler as tc
from compiler.jit import resolve_backend
from examples.vector_add import add
from tests.conftest import ROOT, repo_pythonpath

SIG = "*f32,*f32,*f32,i32"
# the example scripts, and the modules of examples' packages that have a command line
EXAMPLES = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("examples/**/*.py")
                  if 'if __name__ == "__main__":' in p.read_text())


def run(cmd: list[str], stdin: str | None = None, **env) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False, text=True,
                          input=stdin, env={**os.environ, "PYTHONPATH": repo_pythonpath(),
                                            **env})


def tilec(*args: str, stdin: str | None = None, **env) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "compiler.cli", *args], stdin, **env)


def one_line_error(r: subprocess.CompletedProcess, status: int, *parts: str) -> str:
    """The error line of a run that failed with ``status``, checked to hold ``parts``."""
    assert r.returncode == status, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    for part in parts:
        assert part in r.stderr, r.stderr
    return r.stderr.strip()


@pytest.fixture
def tile_ir(tmp_path) -> Path:
    """vector_add's tile IR, without layouts."""
    path = tmp_path / "add.mlir"
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 64}, backend="numpy")
    path.write_text(ck.asm["tile"])
    return path


# ---------------------------------------------------------------- 1. one-line errors

@pytest.mark.parametrize("files,args,status,parts", [
    ({}, ["compile", "nope.py:add", "-s", SIG], 2, ["nope.py does not exist"]),
    ({"broken.py": "import compiler\nx = (\n"}, ["compile", "{tmp}/broken.py:add", "-s", SIG],
     1, ["broken.py:2: SyntaxError: "]),
    ({"raises.py": "x = 1 / 0\n"}, ["compile", "{tmp}/raises.py:add", "-s", SIG], 1,
     ["importing", "raises.py raised ZeroDivisionError: division by zero"]),
    ({}, ["compile", "examples/vector_add.py:np", "-s", SIG], 2,
     ["'np' is a module, not a @tc.kernel; its kernels: add"]),
    ({}, ["compile", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK=64", "-o",
          "/nonexistent/dir/x.wgsl"], 2, ["-o /nonexistent/dir/x.wgsl", "does not exist"]),
    ({}, ["compile", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK=64", "-o", "."], 2,
     ["-o .: is a directory"]),
    ({}, ["export", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK=64", "-o",
          "/nonexistent/d/x.js"], 2, ["-o /nonexistent/d/x.js", "does not exist"]),
    ({}, ["run", "nope.py"], 2, ["nope.py does not exist"]),
])
def test_errors_are_one_line(tmp_path, files, args, status, parts):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = tilec(*(a.format(tmp=tmp_path) for a in args))
    one_line_error(r, status, *parts)


# ---------------------------------------------------------------- 2. and 3. -c and -s

def test_unknown_constant_is_an_error():
    r = tilec("compile", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK=64",
              "-c", "ZZZ=1", "--backend", "numpy")
    one_line_error(r, 1, "no constexpr 'ZZZ'", "its constexprs are BLOCK")
    with pytest.raises(tc.LaunchError, match="add has no constexpr 'ZZZ'; its constexprs "
                                             "are BLOCK"):
        tc.compile(add, signature=SIG, constants={"BLOCK": 64, "ZZZ": 1}, backend="numpy")
    with pytest.raises(tc.LaunchError, match="'n' is a runtime parameter"):
        tc.compile(add, signature=SIG, constants={"BLOCK": 64, "n": 8}, backend="numpy")


@pytest.mark.parametrize("args,parts", [
    (["-s", SIG], ["constexpr 'BLOCK' needs a value: pass -c BLOCK=..."]),
    (["-s", "*f32", "-c", "BLOCK=64"], ["-s lists 1 types for 4 runtime parameters"]),
    (["-s", "*f32,*f32,*g32,i32", "-c", "BLOCK=64"], ["-s type of 'out'", "g32"]),
])
def test_errors_name_the_flags(args, parts):
    r = tilec("compile", "examples/vector_add.py:add", *args, "--backend", "numpy")
    line = one_line_error(r, 1, *parts)
    assert "constants=" not in line and "signature" not in line


def test_the_api_names_its_keywords():
    with pytest.raises(tc.LaunchError, match=re.escape("pass constants={'BLOCK': ...}")):
        tc.compile(add, signature=SIG, backend="numpy")


def test_bad_flag_values_are_usage_errors():
    r = tilec("compile", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK=64",
              "--num-warps", "3")
    one_line_error(r, 2, "--num-warps", "choose from 1, 2, 4, 8, 16")
    r = tilec("compile", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK")
    one_line_error(r, 2, "-c", "expected NAME=VALUE")


# ---------------------------------------------------------------- 4. help, order, stdin

@pytest.mark.parametrize("command", ["compile", "export", "run", "opt", "backends"])
def test_every_command_has_help(command):
    r = tilec(command, "--help")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith(f"usage: tilec {command}")
    if command == "opt":
        assert "assign-layouts" in r.stdout and "tile-to-simt" in r.stdout


def test_opt_takes_options_first_and_reads_stdin(tile_ir):
    pipeline = ["-p", "assign-layouts,tile-to-simt"]
    from_file = tilec("opt", *pipeline, str(tile_ir))
    assert from_file.returncode == 0, from_file.stderr
    assert "simt.thread_id" in from_file.stdout
    assert tilec("opt", *pipeline, stdin=tile_ir.read_text()).stdout == from_file.stdout
    assert tilec("opt", *pipeline, "-", stdin=tile_ir.read_text()).stdout == from_file.stdout


# ---------------------------------------------------------------- 5. xdsl-opt

def test_xdsl_opt_reports_tile_to_simt_without_layouts(tile_ir):
    xdsl_opt = shutil.which("xdsl-opt") or str(Path(sys.executable).parent / "xdsl-opt")
    if not Path(xdsl_opt).exists():
        pytest.skip("xdsl-opt is not installed")
    ours = tilec("opt", "-p", "tile-to-simt", str(tile_ir))
    message = one_line_error(ours, 1, "run assign-layouts").split(": error: ", 1)[1]
    diagnosed = run([xdsl_opt, "--verify-diagnostics", "-p", "tile-to-simt", str(tile_ir)])
    assert diagnosed.returncode == 0 and "Traceback" not in diagnosed.stderr, diagnosed.stderr
    assert diagnosed.stdout.strip() == message
    # Without --verify-diagnostics xdsl-opt re-raises every diagnostic (its verifier's too)
    plain = run([xdsl_opt, "-p", "tile-to-simt", str(tile_ir)])
    assert plain.returncode == 1 and plain.stderr.strip().endswith(message)


# ---------------------------------------------------------------- 6. tilec run

def test_run_passes_the_arguments_after_the_separator(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import sys\nprint(sys.argv[1:])\n")
    r = tilec("run", str(script), "--backend", "numpy", "--", "--rows", "10", "--", "x")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['--rows', '10', '--', 'x']"
    r = tilec("run", str(script), "--rows", "10")
    one_line_error(r, 2, "unrecognized arguments: --rows 10", "after --")


TRITON_SCRIPT = """\
import numpy as np
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


x = np.arange(300, dtype=np.float32)
out = np.empty_like(x)
scale_kernel[lambda meta: (triton.cdiv(300, meta["BLOCK_SIZE"]),)](x, out, 300, 2.5,
                                                                   BLOCK_SIZE=128)
triton.testing.assert_close(out, x * 2.5)
print(triton.__name__, tl.__name__)
"""


def test_run_as_triton_runs_an_unmodified_triton_script(tmp_path):
    script = tmp_path / "triton_script.py"
    script.write_text(TRITON_SCRIPT)
    r = tilec("run", "--as-triton", str(script), "--backend", "numpy")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["compiler.triton", "compiler.language"]


CUTILE_SCRIPT = """\
import numpy as np
import cuda.tile as ct
from cuda.tile.tune import exhaustive_search  # noqa: F401 - a cuTile module imports too


@ct.kernel
def double(x, out, TILE: ct.Constant[int]):
    i = ct.bid(0)
    ct.store(out, index=(i,), tile=ct.load(x, index=(i,), shape=(TILE,)) * 2)


x = np.arange(256, dtype=np.float32)
out = np.zeros_like(x)
ct.launch(None, (ct.cdiv(256, 64),), double, (x, out, 64))
assert np.array_equal(out, x * 2)
print(ct.__name__)
"""


def test_run_as_cutile_runs_an_unmodified_cutile_script(tmp_path):
    script = tmp_path / "cutile_script.py"
    script.write_text(CUTILE_SCRIPT)
    r = tilec("run", "--as-cutile", str(script), "--backend", "numpy")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["compiler.tile"]
    plain = tilec("run", str(script), "--backend", "numpy")
    assert plain.returncode != 0 and "ModuleNotFoundError" in plain.stderr


def test_run_shows_where_in_the_script_a_tilec_error_came_from(tmp_path):
    script = tmp_path / "backwards.py"
    script.write_text("import numpy as np\n"
                      "from examples.vector_add import add\n\n\n"
                      "def go():\n"
                      "    x = np.zeros(64, np.float32)\n"
                      "    add[(1,)](x, x[::-1], x, 64, BLOCK=64)\n\n\n"
                      "go()\n")
    r = tilec("run", str(script), "--backend", "numpy")
    assert r.returncode == 1
    assert f'File "{script}", line 10, in <module>' in r.stderr
    assert f'File "{script}", line 7, in go' in r.stderr
    assert r.stderr.strip().endswith("has negative strides; pass np.ascontiguousarray(y)")
    assert "compiler/" not in r.stderr and "runpy" not in r.stderr


# ---------------------------------------------------------------- 7. tilec export

def test_export_to_stdout_says_the_runtime_is_not_written():
    r = tilec("export", "examples/vector_add.py:add", "-s", SIG, "-c", "BLOCK=64")
    assert r.returncode == 0, r.stderr
    assert 'from "./tilec-runtime.js"' in r.stdout
    assert len(r.stderr.splitlines()) == 1
    assert "tilec-runtime.js" in r.stderr and "-o" in r.stderr


# ---------------------------------------------------------------- 8. the default backend

def test_tilec_backend_sets_the_examples_backend():
    r = run([sys.executable, "examples/vector_add.py", "--n", "100"], TILEC_BACKEND="numpy")
    assert r.returncode == 0, r.stderr
    assert "on numpy: OK" in r.stdout
    r = tilec("run", "examples/vector_add.py", "--", "--n", "100", TILEC_BACKEND="numpy")
    assert "on numpy: OK" in r.stdout, r.stderr


def test_a_bad_tilec_backend_is_one_clear_error(monkeypatch):
    r = run([sys.executable, "examples/vector_add.py", "--n", "100"], TILEC_BACKEND="bogus")
    one_line_error(r, 1, "TILEC_BACKEND", "'bogus'", "ptx, wgsl, numpy, auto")
    one_line_error(tilec("backends", TILEC_BACKEND="bogus"), 1, "TILEC_BACKEND", "'bogus'")
    monkeypatch.setenv("TILEC_BACKEND", "bogus")
    with pytest.raises(tc.LaunchError, match="TILEC_BACKEND is 'bogus'"):
        resolve_backend(None)


def test_set_backend_and_launches_raise_the_same_class():
    with pytest.raises(tc.LaunchError, match="unknown backend"):
        tc.set_backend("cuda")
    with pytest.raises(tc.LaunchError, match="unknown backend"):
        tc.compile(add, signature=SIG, constants={"BLOCK": 64}, backend="cuda")


# ---------------------------------------------------------------- 9. the examples

def _flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", text)) - {"--help", "--nproc-per-node"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> str:
    """A PYTHONPATH holding tilec's packages but not ``examples``, as after ``pip install``:
    an example runs from a clone as ``python examples/X.py``."""
    site = tmp_path_factory.mktemp("site")
    for package in ("compiler", "backends", "dialects"):
        (site / package).symlink_to(ROOT / package)
    return str(site)


def _command(example: str, doc: str) -> list[str]:
    """How the docstring says to run an example: ``python examples/X.py``, or, for a module
    of a package that imports its siblings, ``python -m examples.gpt.train`` in the clone."""
    module = example.removesuffix(".py").replace("/", ".")
    return ["-m", module] if f"python -m {module}" in doc else [example]


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_help_matches_its_docstring(example, installed):
    doc = ast.get_docstring(ast.parse((ROOT / example).read_text()), clean=False) or ""
    usage = "\n".join(line for line in doc.splitlines() if line.startswith("    "))
    command = _command(example, usage)
    r = run([sys.executable, *command, "--help"], PYTHONPATH=installed)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    options = r.stdout[r.stdout.index("options:"):]
    assert f"python {' '.join(command)}" in usage
    assert _flags(usage) == _flags(options)


def test_multi_gpu_says_what_it_needs(tmp_path, installed):
    hidden = tmp_path / "torch"  # a machine without PyTorch, even where it is installed
    hidden.mkdir()
    (hidden / "__init__.py").write_text("raise ImportError('No module named torch')\n")
    r = run([sys.executable, "examples/multi_gpu.py", "--batch", "1", "--size", "64"],
            PYTHONPATH=os.pathsep.join([str(tmp_path), installed]))
    one_line_error(r, 1, "multi_gpu.py needs PyTorch with 2 CUDA GPUs",
                   "PyTorch is not installed")


def test_torch_custom_op_says_it_needs_pytorch(tmp_path, installed):
    hidden = tmp_path / "torch"  # a machine without PyTorch, even where it is installed
    hidden.mkdir()
    (hidden / "__init__.py").write_text("raise ImportError('No module named torch')\n")
    r = run([sys.executable, "examples/torch_custom_op.py", "--backend", "numpy"],
            PYTHONPATH=os.pathsep.join([str(tmp_path), installed]))
    one_line_error(r, 1, "torch_custom_op.py needs PyTorch; PyTorch is not installed")
