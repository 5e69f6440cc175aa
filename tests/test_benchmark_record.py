"""Benchmarks print their tables and leave the tracked files alone unless asked: only
``--record`` appends to benchmarks/RESULTS.md or writes a plot into benchmarks/."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import common
from tests.conftest import ROOT, repo_pythonpath

SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
RUN_REPORT = """
import sys
from benchmarks.common import arguments, report
args = arguments("a benchmark").parse_args(sys.argv[1:])
report("a table", "a device", ["what", "time"], [["vector add", "1 ms"]], record=args.record)
"""


def _git_status() -> str:
    """benchmarks/' changes (only there: other tests may run beside this one)."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--",
                           "benchmarks"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def test_without_record_the_table_is_printed_and_the_tree_unchanged():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    before = _git_status()
    done = subprocess.run([sys.executable, "-c", RUN_REPORT], cwd=ROOT, capture_output=True,
                          text=True, check=True,
                          env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert "| vector add | 1 ms |" in done.stdout
    assert _git_status() == before


def test_record_appends_the_table(tmp_path, monkeypatch):
    results = tmp_path / "RESULTS.md"
    results.write_text("# results\n")
    monkeypatch.setattr(common, "RESULTS", results)
    args = common.arguments("a benchmark").parse_args(["--record"])
    common.report("a table", "a device", ["what"], [["softmax"]], record=args.record)
    common.report("a table", "a device", ["what"], [["layernorm"]],
                  record=common.arguments(None).parse_args([]).record)
    text = results.read_text()
    assert text.startswith("# results\n") and "| softmax |" in text
    assert "layernorm" not in text


def test_a_plot_goes_to_benchmarks_only_when_recording(tmp_path, capsys):
    parser = common.arguments(None, plots=True)
    assert common.plot_path(parser.parse_args([]), "p.png") is None
    assert "--record" in capsys.readouterr().out
    assert common.plot_path(parser.parse_args(["--record"]), "p.png") == ROOT / "benchmarks/p.png"
    assert common.plot_path(parser.parse_args(["--out", str(tmp_path)]), "p.png") == \
        tmp_path / "p.png"


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", None)) == name]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_script_asks_before_writing(path: Path):
    """Each ``report`` call says whether to record (from ``--record``); no script opens
    RESULTS.md or picks a plot path of its own."""
    text = path.read_text()
    tree = ast.parse(text)
    for call in _calls(tree, "report"):
        assert "record" in {k.arg for k in call.keywords}, f"{path.name}:{call.lineno}"
    if path.name != "common.py":
        assert "RESULTS.md\"" not in text and "RESULTS.open" not in text
        assert not _calls(tree, "savefig") or "plot_path" in text
