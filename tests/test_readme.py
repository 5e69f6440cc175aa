"""Every code block of README.md, CONTRIBUTING.md and docs/*.md runs as written.

- ```python blocks run on the numpy and on the wgsl backend (``TILEC_BACKEND``), each
  block a script of its own (nothing carries over from the block above), all the blocks
  of a document in one process per backend;
- ```bash, ```sh and ```console blocks run in bash (a console block: its ``$ `` lines),
  with ``tilec`` and ``python`` the ones of this checkout, each in a new directory that
  mirrors the repository root, so files they write land there, not in the checkout;
- ```text blocks are pictures (the pipeline's diagram) and are not run.

Any other block says why it is not run in an HTML comment on the line above its fence:
``<!-- output -->`` for what a command prints, ``<!-- not run: why -->`` otherwise
(installs packages, needs a GPU and PyTorch, runs in a browser). Tracebacks name the
document's own line numbers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from compiler.jit import availability
from tests.conftest import ROOT, repo_pythonpath

DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON = {"python"}
SHELL = {"bash", "sh", "console"}
PICTURES = {"text"}
NOT_RUN = re.compile(r"not run: \S.{8,}")  # a reason of a few words
_FENCE = re.compile(r"^(\s*)```\s*([\w-]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    """One fenced code block: its document, first code line (1-based), language, text and
    the marker comment above it (None: no marker)."""

    doc: Path
    line: int
    lang: str
    code: str
    marker: str | None

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, dedented to their fence."""
    found, lines, i = [], doc.read_text().splitlines(), 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        indent, lang = len(fence.group(1)), fence.group(2)
        above = next((line for line in reversed(lines[:i]) if line.strip()), "")
        marker = _MARKER.match(above)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        code = "\n".join(line[indent:] for line in lines[i + 1:end]) + "\n"
        found.append(Block(doc, i + 2, lang, code, marker.group(1) if marker else None))
        i = end + 1
    return found


def _all(langs: set[str], docs: list[Path] = DOCS) -> list[Block]:
    return [b for d in docs for b in blocks(d) if b.lang in langs and b.marker is None]


def _by_doc(langs: set[str]) -> list:
    docs = sorted({b.doc for b in _all(langs)})
    return [pytest.param(d, id=str(d.relative_to(ROOT))) for d in docs]


# ---------------------------------------------------------------- running blocks

@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    """Where the blocks run: ``tilec`` and ``python`` for shell blocks (``.bin``), a kernel
    cache of their own (``.cache``), and the directories ``workdir`` makes."""
    root = tmp_path_factory.mktemp("docs")
    bin_dir = root / ".bin"
    bin_dir.mkdir()
    for name, args in (("tilec", "-m compiler.cli"), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {args} "$@"\n')
        shim.chmod(0o755)
    return root


def workdir(sandbox: Path) -> Path:
    """A new directory that looks like the repository root (its entries linked), so that
    a block reads the checkout's files and nothing an earlier block wrote."""
    work = Path(tempfile.mkdtemp(dir=sandbox, prefix="run-"))
    for entry in ROOT.iterdir():
        if entry.name not in (".git", ".venv"):
            (work / entry.name).symlink_to(entry)
    return work


def _env(sandbox: Path, backend: str | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(),
           "PATH": f"{sandbox / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "TILEC_CACHE_DIR": str(sandbox / ".cache"),
           "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    env.pop("TILEC_BACKEND", None)
    if backend is not None:
        env["TILEC_BACKEND"] = backend
    return env


# Runs each script given, in its own namespace, going on after a failure; exits 1 if any
# failed. The default backend is set again before each (a block may call tc.set_backend).
_RUNNER = """
import runpy, sys, traceback
import compiler as tc
failed = []
for path in sys.argv[1:]:
    tc.set_backend(None)
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException:
        failed.append(path)
        traceback.print_exc()
sys.exit(f"failed: {', '.join(failed)}" if failed else 0)
"""


def run_python(python_blocks: list[Block], sandbox: Path, backend: str
               ) -> subprocess.CompletedProcess:
    """Run the blocks, each written to a file padded so that its lines have the
    document's numbers (line 42 of ``README.md`` is line 42 of ``README.md.<first line>.py``)."""
    work, scripts = workdir(sandbox), []
    for b in python_blocks:
        path = work / ".blocks" / f"{b.doc.name}.{b.line}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text("\n" * (b.line - 1) + b.code)
        scripts.append(str(path))
    return subprocess.run([sys.executable, "-c", _RUNNER, *scripts], cwd=work,
                          env=_env(sandbox, backend), capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


def shell_script(b: Block) -> str:
    """What runs of a shell block: a console block's ``$`` lines, else all of it."""
    if b.lang == "console":
        return "\n".join(line[2:] for line in b.code.splitlines() if line.startswith("$ "))
    return b.code


def run_shell(b: Block, sandbox: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", shell_script(b)],
                          cwd=workdir(sandbox), env=_env(sandbox), capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)


def _failure(what: str, done: subprocess.CompletedProcess) -> str:
    return f"{what} failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"


# ---------------------------------------------------------------- tests

def test_every_block_runs_or_says_why_not():
    found = [b for d in DOCS for b in blocks(d)]
    assert any(b.lang in PYTHON for b in found) and any(b.lang in SHELL for b in found)
    for b in found:
        if b.marker is None:
            assert b.lang in PYTHON | SHELL | PICTURES, \
                f"{b}: a ```{b.lang} block needs <!-- not run: why --> or <!-- output -->"
        else:
            assert b.marker == "output" or NOT_RUN.fullmatch(b.marker), \
                f"{b}: unknown marker {b.marker!r}: <!-- not run: why --> or <!-- output -->"


@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
@pytest.mark.parametrize("doc", _by_doc(PYTHON))
def test_python_blocks_run(doc: Path, backend: str, sandbox: Path):
    if not availability("wgsl")[0]:  # the blocks also launch on wgsl by name
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    done = run_python(_all(PYTHON, [doc]), sandbox, backend)
    assert done.returncode == 0, _failure(f"python blocks of {doc.name} on {backend}", done)


@pytest.mark.parametrize("doc", _by_doc(SHELL))
def test_shell_blocks_run(doc: Path, sandbox: Path):
    for b in _all(SHELL, [doc]):
        done = run_shell(b, sandbox)
        assert done.returncode == 0, _failure(str(b), done)


def test_a_broken_block_fails(tmp_path: Path, sandbox: Path):
    """The runners report a block that does not run, at its line in the document."""
    doc = tmp_path / "broken.md"
    doc.write_text("# broken\n\n```python\nimport numpy as np\n\nprint(x)\n```\n\n"
                   "```bash\ntilec compile no_such_file.py:add -s i32\n```\n\n"
                   "```console\n$ tilec backends\nnot a command\n```\n")
    python_block, shell_block, console_block = blocks(doc)
    done = run_python([python_block], sandbox, "numpy")
    assert done.returncode != 0
    assert "broken.md.4.py\", line 6" in done.stderr and "NameError" in done.stderr
    assert run_shell(shell_block, sandbox).returncode != 0
    assert shell_script(console_block) == "tilec backends"
    assert run_shell(console_block, sandbox).returncode == 0
