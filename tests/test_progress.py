"""What a newcomer sees while waiting: no stray "error:" lines from the Vulkan stack, a
progress line on a terminal for slow compiles, driver compiles and autotuning, and the
driver's first-launch work in ``TILEC_TIMING``."""

import os
import pty
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from backends.wgsl import private_dir, set_runtime_dir
from compiler import progress
from compiler.jit import availability
from examples.vector_add import add
from tests.conftest import ROOT, repo_pythonpath

SIG = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}
LAUNCH = """
import numpy as np
import compiler as tc
from compiler import progress
from examples.vector_add import add
progress.DELAY = 0
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


# ------------------------------------------------------------ the progress line

@pytest.fixture
def shown_at_once(monkeypatch):
    """Steps show as soon as they open, forced on (capsys's stderr is no terminal)."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setenv("TILEC_PROGRESS", "1")


def test_slow_step_shows_then_clears(shown_at_once, capsys):
    with progress.step("compiling k for wgsl") as line:
        time.sleep(0.25)
        line.update("compiling k for wgsl, again")
        time.sleep(0.25)
    err = capsys.readouterr().err
    assert err.startswith("\rcompiling k for wgsl ... 0.")
    assert "\rcompiling k for wgsl, again ... 0." in err
    last = err.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == ""  # cleared, the cursor at the start


def test_fast_step_prints_nothing(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_PROGRESS", "1")
    with progress.step("compiling k for wgsl"):
        time.sleep(0.05)
    time.sleep(0.15)  # a redraw after the step would show here
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("flag", [None, "0"])
def test_off_when_not_forced_on_a_pipe_or_turned_off(monkeypatch, capsys, flag):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    if flag is None:
        monkeypatch.delenv("TILEC_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("TILEC_PROGRESS", flag)
    with progress.step("compiling k for wgsl"):
        time.sleep(0.25)
    assert capsys.readouterr().err == ""


def test_text_printed_during_a_step_replaces_the_line(shown_at_once, capsys):
    with progress.step("autotuning k"):
        time.sleep(0.15)
        progress.above("a table")
        time.sleep(0.15)
    err = capsys.readouterr().err
    assert re.search(r"\rautotuning k \.\.\. 0\.\d s\r +\ra table\n\rautotuning k ", err), err


@pytest.mark.parametrize("flag", [None, "0"])
def test_on_by_default_on_a_terminal(flag):
    code = ("import time; from compiler import progress; progress.DELAY = 0\n"
            "with progress.step('compiling k for wgsl'): time.sleep(0.3)")
    main, child = pty.openpty()
    try:
        done = run([sys.executable, "-c", code], stderr=child,
                   **({} if flag is None else {"TILEC_PROGRESS": flag}))
    finally:
        os.close(child)
    seen = b""
    try:
        while chunk := os.read(main, 4096):
            seen += chunk
    except OSError:  # EIO: the child's end is closed and all was read
        pass
    os.close(main)
    assert done.returncode == 0
    assert (b"compiling k for wgsl ... 0." in seen) == (flag is None), seen


def test_first_wgsl_launch_shows_compile_and_driver(wgsl):
    done = run([sys.executable, "-c", LAUNCH], TILEC_PROGRESS="1")
    assert done.returncode == 0, done.stderr
    assert "\rcompiling add for wgsl ... " in done.stderr
    assert "\rwgsl: driver compiling add (" in done.stderr
    assert done.stderr.endswith("\r") and done.stderr.rsplit("\r", 2)[-2].strip() == ""


def test_autotuning_counts_its_configs(shown_at_once, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))  # tune, not a choice on disk

    @tc.kernel
    def fill(out, BLOCK: tl.constexpr):
        tl.store(out + tl.arange(0, BLOCK), tl.full((BLOCK,), 1.0, tl.float32))

    def slow_bench(fn):
        fn()
        time.sleep(0.25)
        return 1.0

    tuned = tc.autotune([tc.Config({"BLOCK": 16}), tc.Config({"BLOCK": 32})], key=[],
                        do_bench=slow_bench)(fill)
    tuned[(1,)](np.zeros(32, np.float32), backend="numpy")
    err = capsys.readouterr().err
    assert "\rautotuning fill: 1/2 configs ... " in err
    assert "\rautotuning fill: 2/2 configs ... " in err


# ------------------------------------------------------------ TILEC_TIMING

def test_timing_has_the_first_launch_rows(wgsl, monkeypatch, capsys):
    monkeypatch.setenv("TILEC_TIMING", "1")
    monkeypatch.setenv("TILEC_CACHE", "0")
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 128}, backend="wgsl")
    x = np.ones(100, np.float32)
    capsys.readouterr()
    ck[(1,)](x, x, x, 100)
    ck[(1,)](x, x, x, 100)
    err = capsys.readouterr().err
    assert err.count("===-- tilec timing: add's first launch on wgsl (") == 1
    rows = {line.split("%  ", 1)[1]: float(line.split()[0]) for line in err.splitlines()
            if "%  " in line and "wall ms" not in line}
    assert set(rows) == {"driver: create pipeline", "driver: first dispatch, to completion",
                         "other", "total"}
    assert rows["driver: first dispatch, to completion"] > 0
