"""A lit test format that runs ``%opt`` and ``filecheck`` inside the lit worker process.

Every ``%opt`` is a fresh Python that spends 0.6 s importing xDSL's dialect definitions
before it reads a line, so the 132 RUN lines took 90 s of a CI run as processes. This
format runs RUN lines made only of pipelines of ``[not] %opt ... [2>&1]`` and
``filecheck ...`` by calling ``compiler.opt.main`` and filecheck's matcher in the worker,
with the shell's meaning: stdin and stdout chained, ``2>&1`` merging, ``not`` inverting,
and a pipeline failing when any command fails (lit's pipefail). A test with any other RUN
line runs as lit's ShTest does, in processes.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
import traceback

import lit.formats
import lit.Test
import lit.TestRunner

OPT = [sys.executable, "-m", "compiler.opt"]
_DEBUG_PREFIX = re.compile(r"^%dbg\(([^)]*)\)\s*")


def _call(main, argv: list[str], stdin: str) -> tuple[int, str, str]:
    """``main(argv)``'s exit status, standard output and standard error, given ``stdin``."""
    out, err, saved = io.StringIO(), io.StringIO(), sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception:  # noqa: BLE001 - a crash is a failing command, as in a process
        status = 1
        err.write(traceback.format_exc())
    finally:
        sys.stdin = saved
    return status or 0, out.getvalue(), err.getvalue()


def _filecheck(argv: list[str]) -> int:
    from filecheck.matcher import Matcher
    from filecheck.options import parse_argv_options

    return Matcher.from_opts(parse_argv_options(argv)).run()


def _opt(argv: list[str]) -> int:
    from compiler.opt import main

    return main(argv)


def _commands(pipeline: list[str]):
    """(inverted, merge stderr, main, argv) per command of a pipeline, or None when one
    is not ``[not] %opt ...`` or ``filecheck ...``."""
    commands = []
    while pipeline:
        bar = pipeline.index("|") if "|" in pipeline else len(pipeline)
        words, pipeline = pipeline[:bar], pipeline[bar + 1:]
        inverted = words[:1] == ["not"]
        words = words[inverted:]
        merge = "2>&1" in words
        words = [w for w in words if w != "2>&1"]
        if any(w in ("&&", "||", ";", ">", "<", "2>") for w in words):
            return None
        if words[:3] == OPT:
            commands.append((inverted, merge, _opt, words[3:]))
        elif words[:1] == ["filecheck"]:
            commands.append((inverted, merge, _filecheck, words))
        else:
            return None
    return commands


def _run(commands) -> tuple[bool, str]:
    data, log, ok = "", [], True
    for inverted, merge, main, argv in commands:
        status, out, err = _call(main, argv, data)
        shown = " ".join(["tilec opt" if main is _opt else "", *argv]).strip()
        log.append(f"$ {'not ' * inverted}{shown}\n# exit {status}\n{err}")
        ok &= (status != 0) == inverted
        data = out + err if merge else out
    return ok, "\n".join(log) + data


class InProcessShTest(lit.formats.ShTest):
    """ShTest, with the RUN lines it can run in process run there."""

    def execute(self, test, lit_config):
        parsed = lit.TestRunner.parseIntegratedTestScript(test)
        if isinstance(parsed, lit.Test.Result):
            return parsed
        tmp_dir, tmp_base = lit.TestRunner.getTempPaths(test)
        script = lit.TestRunner.applySubstitutions(
            parsed, lit.TestRunner.getDefaultSubstitutions(test, tmp_dir, tmp_base))
        lines = [shlex.split(_DEBUG_PREFIX.sub("", line)) for line in script]
        pipelines = [_commands(words) for words in lines]
        if any(p is None for p in pipelines):
            return super().execute(test, lit_config)
        for line, commands in zip(script, pipelines, strict=True):
            ok, output = _run(commands)
            if not ok:
                return lit.Test.Result(lit.Test.FAIL, f"{line}\n{output}")
        return lit.Test.Result(lit.Test.PASS)
