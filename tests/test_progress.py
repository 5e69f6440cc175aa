"""What a newcomer sees: no stray "error:" lines from the Vulkan stack."""

import os
import subprocess
import sys

import pytest

from backends.wgsl import private_dir, set_runtime_dir
from compiler.jit import availability
from tests.conftest import ROOT, repo_pythonpath

LAUNCH = """
import numpy as np
import compiler as tc
from examples.vector_add import add
x = np.ones(100, np.float32)
out = np.zeros(100, np.float32)
add[(1,)](x, x, out, 100, BLOCK=128, backend="wgsl")
assert (out == 2).all()
"""


@pytest.fixture
def wgsl():
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")


def run(args: list[str], stderr=subprocess.PIPE, **env) -> subprocess.CompletedProcess:
    """``args`` in a fresh process: no XDG_RUNTIME_DIR, no disk cache and no Mesa shader
    cache (a first launch compiles), ``env`` on top; stderr as a string."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("XDG_RUNTIME_DIR", "TILEC_PROGRESS", "TILEC_TIMING")}
    done = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, check=False,
                          timeout=300, env={
                              **base, "PYTHONPATH": repo_pythonpath(), "TILEC_CACHE": "0",
                              "MESA_SHADER_CACHE_DISABLE": "true", **env})
    done.stderr = (done.stderr or b"").decode()  # as bytes: text mode turns \r into \n
    return done


# ------------------------------------------------------------ no stray "error:" lines

@pytest.mark.parametrize("args", [["-c", LAUNCH], ["-m", "compiler.cli", "backends"]],
                         ids=["launch", "tilec-backends"])
def test_no_error_lines_without_xdg_runtime_dir(wgsl, args):
    done = run([sys.executable, *args])
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "error:" in line] == []


def test_runtime_dir_set_only_where_missing_or_invalid(tmp_path):
    mine = str(tmp_path)
    kept = {"XDG_RUNTIME_DIR": mine}
    set_runtime_dir(kept)
    assert kept == {"XDG_RUNTIME_DIR": mine}
    for env in ({}, {"XDG_RUNTIME_DIR": "relative/dir"},
                {"XDG_RUNTIME_DIR": str(tmp_path / "missing")}):
        set_runtime_dir(env)
        made = env["XDG_RUNTIME_DIR"]
        assert os.path.isabs(made) and os.stat(made).st_mode & 0o777 == 0o700
        assert os.stat(made).st_uid == os.getuid()


def test_private_dir_refuses_one_open_to_others(monkeypatch, tmp_path):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    (tmp_path / "shared").mkdir(mode=0o755)
    os.chmod(tmp_path / "shared", 0o755)
    (tmp_path / "afile").write_text("")
    assert private_dir("fresh") == str(tmp_path / "fresh")
    assert private_dir("fresh") == str(tmp_path / "fresh")  # its own, found again
    for taken in ("shared", "afile"):
        other = private_dir(taken)
        assert other != str(tmp_path / taken) and os.stat(other).st_mode & 0o777 == 0o700
