"""`tilec opt`: run a pass pipeline over textual IR, like mlir-opt and xdsl-opt.

Reads IR of any tilec level (tile, SIMT, ptx), verifies it before and after every pass, and
prints the result. ``--verify-diagnostics`` prints a parse or verify error in place of the
module (to stdout unless ``-o``) and exits 0, so a filecheck test can match the message; ``--split-input-file`` runs each part
between ``// -----`` lines on its own, so one file can hold many invalid cases.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from compiler.arguments import ArgParser
from compiler.context import make_context
from compiler.errors import TilecError
from compiler.passes.registry import get_all_passes
from compiler.universe import tilec_dialects

SPLIT_MARKER = "// -----"
_SPLIT = re.compile(r"^// -----[^\n]*$", re.MULTILINE)

# What bad input (as opposed to a bug in tilec) raises while parsing or running passes.
_DIAGNOSTICS = (ParseError, DiagnosticException, TilecError)


class OptError(Exception):
    """A usage problem reported without a traceback: bad pipeline, unreadable file."""


def _arg_parser() -> argparse.ArgumentParser:
    names = list(get_all_passes())
    passes = "\n".join(textwrap.wrap(", ".join(names), 88, initial_indent="  ",
                                      subsequent_indent="  "))
    p = ArgParser(prog="tilec opt", description=__doc__.splitlines()[0],
                  epilog=f"passes (-p):\n{passes}")
    p.add_argument("file", nargs="?", default="-", help="input IR (default, or -: stdin)")
    p.add_argument("-p", "--passes", default="",
                   help="comma-separated pipeline, e.g. 'assign-layouts{num-warps=4},cse'")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="print parse/verify errors in place of the module and exit 0")
    p.add_argument("--split-input-file", action="store_true",
                   help=f"process each part between '{SPLIT_MARKER}' lines separately")
    p.add_argument("--print-op-generic", action="store_true",
                   help="print operations in the generic format")
    return p


def make_opt_context() -> Context:
    """tilec's context plus dialects whose files may not exist yet (ptx), loaded on use."""
    ctx = make_context()
    loaded = {d.name for d in ctx.loaded_dialects}
    for name, load in tilec_dialects().items():
        if name not in loaded:
            ctx.register_dialect(name, load)
    return ctx


def _verify(_prev: object, module: ModuleOp, _next: object) -> None:
    module.verify()


def make_pipeline(spec: str) -> PassPipeline:
    """The pipeline for ``spec``; the module is verified before and after every pass."""
    try:
        return PassPipeline.parse_spec(get_all_passes(), spec, _verify)
    # ArgSpecParseError derives from BaseException, so it must be named.
    except (ValueError, ImportError, ArgSpecParseError) as e:
        raise OptError(f"bad pass pipeline {spec!r}: {e}") from e


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise OptError(f"cannot read {path}: {e.strerror}") from e


def split_input(text: str) -> list[str]:
    """The parts between marker lines, each padded with newlines so that error messages
    give line numbers of the whole file."""
    parts, line = [], 0
    for part in _SPLIT.split(text):
        parts.append("\n" * line + part)
        line += part.count("\n")
    return parts


def _message(e: BaseException) -> str:
    # A VerifyException's notes show the failing op in context.
    return "\n".join([str(e), *getattr(e, "__notes__", ())]).rstrip("\n") + "\n"


def run_one(ctx: Context, text: str, name: str, pipeline: PassPipeline,
            generic: bool = False) -> str:
    """Parse, run the pipeline (verifying throughout) and print one module."""
    module = Parser(ctx, text, name).parse_module()
    pipeline.apply(ctx, module)
    out = StringIO()
    MLIRTarget(print_generic_format=generic).emit(ctx, module, out)
    return out.getvalue()


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise OptError(f"cannot write {path}: {e.strerror}") from e


def _run(args: argparse.Namespace) -> int:
    pipeline = make_pipeline(args.passes)
    text, name = _read(args.file)
    parts = split_input(text) if args.split_input_file else [text]
    ctx = make_opt_context()
    results = []
    for part in parts:
        try:
            results.append(run_one(ctx, part, name, pipeline, args.print_op_generic))
        except _DIAGNOSTICS as e:
            if not args.verify_diagnostics:
                # A ParseError's message starts with its file:line:col already.
                where = "" if isinstance(e, ParseError) else f"{name}: error: "
                sys.stderr.write(where + _message(e))
                return 1
            results.append(_message(e))
    _write(args.output, f"{SPLIT_MARKER}\n".join(results))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``tilec opt FILE -p PASSES [-o OUT] [--verify-diagnostics] [--split-input-file]
    [--print-op-generic]``; returns the exit status."""
    args = _arg_parser().parse_args(argv)
    try:
        return _run(args)
    except OptError as e:
        sys.stderr.write(f"tilec opt: error: {e}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
