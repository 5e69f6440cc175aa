"""An uncaught TilecError's traceback ends at the user's line: no frame of tilec's own
(``compiler``, ``backends``, ``dialects``) is printed, for launch errors and compile errors
alike; IPython and pytest, which print their own tracebacks, are told by
``__tracebackhide__`` which frames those are."""

import os
import re
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from examples.vector_add import add
from tests.conftest import ROOT, repo_pythonpath

PRELUDE = """\
import threading
import numpy as np
import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from examples.vector_add import add

x = np.zeros(64, np.float32)

@tc.kernel
def undefined(x, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), nope)

@ct.kernel
def double(a):
    ct.store(a, index=(0,), tile=ct.load(a, index=(0,), shape=(64,)) * 2)

tuned = tc.autotune([tc.Config({"BLOCK": 64})], key=["n"])(tc.kernel(add.fn))

def in_thread(launch):
    thread = threading.Thread(target=launch)
    thread.start()
    thread.join()
"""

CASES = {
    "launch": ("add[(1,)]([1.0] * 64, x, x, 64, BLOCK=64, backend='numpy')",
               "tilec.LaunchError: argument 'x'"),
    "compile": ("undefined[(1,)](x, BLOCK=64, backend='numpy')",
                "tilec.CompileError: "),
    "ct.launch": ("ct.launch(None, (1,), double, ([1.0] * 64,), backend='numpy')",
                  "tilec.LaunchError: argument 'a'"),
    "ct kernel": ("double[(1,)](np.zeros(64, np.complex64), backend='numpy')",
                  "tilec.LaunchError: argument 'a'"),
    "tc.compile": ("tc.compile(add, signature='*f32, *f33, *f32, i32', backend='numpy')",
                   "tilec.LaunchError: signature type of 'y'"),
    "autotune": ("tuned[(1,)](x, x, x, 'ten', backend='numpy')",
                 "tilec.LaunchError: argument 'n'"),
    "thread": ("in_thread(lambda: add[(1,)](x, x, x, 'ten', BLOCK=64))",
               "tilec.LaunchError: argument 'n'"),
}


INTERNAL = tuple(str(ROOT / p) + os.sep for p in ("compiler", "backends", "dialects"))


def frames(stderr: str) -> list[str]:
    return re.findall(r'File "([^"]+)", line \d+', stderr)


def tilec_frames(error: BaseException) -> list:
    return [frame for frame, _ in traceback.walk_tb(error.__traceback__)
            if os.path.abspath(frame.f_code.co_filename).startswith(INTERNAL)]


@pytest.mark.parametrize("case", CASES)
def test_uncaught_errors_show_only_the_users_frames(tmp_path, case):
    statement, error = CASES[case]
    script = tmp_path / "user_script.py"
    script.write_text(PRELUDE + statement + "\n")
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_CACHE_DIR": str(tmp_path),
           "TILEC_BACKEND": "numpy"}
    run = subprocess.run([sys.executable, str(script)], check=False,
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    shown = frames(run.stderr)
    internal = [f for f in shown if os.path.abspath(f).startswith(INTERNAL)]
    assert error in run.stderr, run.stderr
    assert shown and shown[-1] == str(script), run.stderr  # it ends at the user's line
    assert not internal, run.stderr


def test_a_caught_error_keeps_its_frames():
    """Only what is printed for an uncaught error is shortened: code that catches one
    (and ``traceback.print_exc``) still sees every frame, marked ``__tracebackhide__``."""
    with pytest.raises(tc.LaunchError) as e:
        add[(1,)]([1.0] * 64, np.zeros(64, np.float32), np.zeros(64, np.float32), 64,
                  BLOCK=64, backend="numpy")
    hidden = tilec_frames(e.value)
    assert hidden and all(frame.f_locals.get("__tracebackhide__") for frame in hidden), \
        [frame.f_code.co_name for frame in hidden]


@ct.kernel
def _takes_one(a):
    ct.store(a, index=(0,), tile=ct.load(a, index=(0,), shape=(4,)))


@pytest.mark.parametrize("launch", [
    lambda: ct.launch(None, (1,), _takes_one, np.zeros(4), backend="numpy"),
    lambda: tc.compile(add, signature="*f33", backend="numpy"),
])
def test_every_frame_of_an_entry_point_is_marked(launch):
    with pytest.raises(tc.LaunchError) as e:
        launch()
    hidden = tilec_frames(e.value)
    assert hidden and all(frame.f_locals.get("__tracebackhide__") for frame in hidden)


def test_the_hook_hands_over_to_the_one_it_replaced(tmp_path):
    """A hook installed before tilec still prints, and gets the shortened traceback."""
    script = tmp_path / "hooked.py"
    script.write_text(textwrap.dedent("""\
        import sys, traceback
        def hook(kind, error, tb):
            print(kind.__name__, "at", traceback.extract_tb(tb)[-1].filename)
        sys.excepthook = hook
        import numpy as np
        from examples.vector_add import add
        add[(1,)]([1.0] * 64, np.zeros(64, np.float32), np.zeros(64, np.float32), 64,
                  BLOCK=64, backend="numpy")
    """))
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, str(script)], check=False,
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.stdout == f"LaunchError at {script}\n", (run.stdout, run.stderr)
