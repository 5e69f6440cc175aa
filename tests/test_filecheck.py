"""The lit + filecheck IR tests (tests/filecheck) run as one pytest test, and the pieces
they rest on: the `tilec opt` driver, the pass registry and the xdsl-opt universe."""

import random
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from compiler.opt import main
from compiler.passes.registry import get_all_passes
from compiler.universe import TILEC_UNIVERSE

SUITE = Path(__file__).parent / "filecheck"


def test_filecheck_suite():
    # Run lit with this interpreter (lit.cfg.py takes %opt and filecheck from it); the lit
    # package has no __main__, so `-m lit` does not work.
    lit = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())"]
    proc = subprocess.run([*lit, "-v", str(SUITE)], capture_output=True, text=True,
                          cwd=SUITE.parent.parent, check=False)
    output = proc.stdout + proc.stderr
    passed = re.search(r"Passed\s*:\s*(\d+)", output)
    assert proc.returncode == 0, output
    assert passed and int(passed.group(1)) > 0, output


def _kernel(n: int) -> str:
    # Two identical ranges and splats: cse must merge them.
    return f"""func.func @k(%x: !tile.ptr<f32>, %s: i32) {{
  %a = tile.range 0, {n} : tensor<{n}xi32>
  %b = tile.range 0, {n} : tensor<{n}xi32>
  %c = tile.splat %s : i32 -> tensor<{n}xi32>
  %d = tile.splat %s : i32 -> tensor<{n}xi32>
  %e = arith.addi %a, %c : tensor<{n}xi32>
  %f = arith.addi %b, %d : tensor<{n}xi32>
  %p = tile.splat %x : !tile.ptr<f32> -> tensor<{n}x!tile.ptr<f32>>
  %q = tile.addptr %p, %e : tensor<{n}x!tile.ptr<f32>>, tensor<{n}xi32>
  %r = tile.addptr %p, %f : tensor<{n}x!tile.ptr<f32>>, tensor<{n}xi32>
  %v = tile.load %q : tensor<{n}x!tile.ptr<f32>> -> tensor<{n}xf32>
  tile.store %r, %v : tensor<{n}x!tile.ptr<f32>>, tensor<{n}xf32>
  func.return
}}
"""


def test_opt_pipeline_writes_output_file(tmp_path):
    n = 2 ** random.randint(0, 12)
    src, out = tmp_path / "k.mlir", tmp_path / "out.mlir"
    src.write_text(_kernel(n))
    assert main([str(src), "-p", "cse,canonicalize", "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("tile.range") == 1 and text.count("tile.addptr") == 1
    assert f"tile.store %q, %v : tensor<{n}x!tile.ptr<f32>>" in text


@pytest.mark.parametrize("args, message", [
    (["-p", "no-such-pass"], "Unrecognized passes: ['no-such-pass']"),
    (["-p", "cse{"], "Expected argument name here"),
    (["-p", "cse{max-iterations=3}"], "not found in expected arguments"),
])
def test_opt_bad_pipeline_is_a_clean_error(tmp_path, capsys, args, message):
    src = tmp_path / "k.mlir"
    src.write_text(_kernel(8))
    assert main([str(src), *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tilec opt: error: bad pass pipeline") and message in err


def test_opt_invalid_ir(tmp_path, capsys):
    src = tmp_path / "bad.mlir"
    src.write_text(_kernel(16).replace("func.return", "%z = tile.program_id 3 : i32\n  func.return"))
    message = "tile.program_id axis must be 0, 1 or 2\n"
    assert main([str(src)]) == 1
    assert f"bad.mlir: error: {message}" in capsys.readouterr().err
    assert main([str(src), "--verify-diagnostics"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(message)
    assert captured.err == ""


def test_opt_missing_input(tmp_path, capsys):
    assert main([str(tmp_path / "absent.mlir")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_registry_names_match_pass_classes():
    passes = get_all_passes()
    assert {"canonicalize", "cse", "dce", "assign-layouts", "tile-to-simt",
            "simt-to-ptx"} <= passes.keys()
    for name, load in passes.items():
        module = name.replace("-", "_")
        if name in TILEC_UNIVERSE.all_passes and not find_spec(f"compiler.passes.{module}"):
            continue  # written in parallel; the registry must not need it to exist
        assert load().name == name


def test_universe_dialects_load_by_name():
    assert {"tile", "simt"} <= TILEC_UNIVERSE.all_dialects.keys()
    for name, load in TILEC_UNIVERSE.all_dialects.items():
        assert load().name == name
