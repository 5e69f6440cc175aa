"""The ``tilec`` command: compile, export, run, opt, backends (docs/language.md).

Every error is one line on standard error (a kernel's compile error adds its source line
and caret), never a traceback: exit status 2 for a bad command line (a missing file, a
name that is not a kernel, a bad flag), 1 when the work fails (the file raises on import,
the kernel does not compile, the output cannot be written). ``script_parser`` and
``reported_errors`` give a script, such as each example, the same behaviour.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import runpy
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import compiler as tc
from compiler.ahead_of_time import CLI_NAMES, _signature_specs
from compiler.arguments import FAILURE, USAGE, ArgParser, usage_error
from compiler.autotune import _Wrapper
from compiler.errors import TilecError
from compiler.jit import (
    BACKEND_NAMES,
    NUM_WARPS,
    KernelFunction,
    availability,
    default_backend,
    resolve_backend,
)
from compiler.tracebacks import without_tilec_frames

BACKEND_HELP = "the backend to run on (default: $TILEC_BACKEND, else auto)"


class CliError(Exception):
    """A one-line error: of the command line (``USAGE``) or of its work (``FAILURE``)."""

    def __init__(self, message: str, status: int = FAILURE):
        super().__init__(message)
        self.status = status


def describe(e: TilecError) -> str:
    """How tilec reports an error: ``tilec.LaunchError: message``."""
    return f"{type(e).__module__}.{type(e).__name__}: {e}"


# ---------------------------------------------------------------- scripts and examples

def script_parser(doc: str | None) -> argparse.ArgumentParser:
    """A script's command line: its docstring as ``--help``, and ``--backend`` (None
    unless given, so that ``TILEC_BACKEND`` and ``tc.set_backend`` choose)."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=BACKEND_NAMES, help=BACKEND_HELP)
    return p


@contextlib.contextmanager
def reported_errors() -> Iterator[None]:
    """A ``TilecError`` ends the program with its message and exit status 1, as ``tilec``
    reports it, rather than with a traceback."""
    try:
        yield
    except TilecError as e:
        sys.exit(describe(e))


# ---------------------------------------------------------------- loading kernels

def _syntax_error(e: SyntaxError) -> CliError:
    return CliError(f"{e.filename}:{e.lineno}: SyntaxError: {e.msg}")


def _script(path: str) -> Path:
    file = Path(path)
    if not file.is_file():
        why = "is not a file" if file.exists() else "does not exist"
        raise CliError(f"{path} {why}", USAGE)
    return file


def _import_file(path: str):
    """``path`` imported as a module, its directory first on ``sys.path`` as under
    ``python path``; what goes wrong is a ``CliError`` that names the file."""
    file = _script(path)
    spec = importlib.util.spec_from_file_location(file.stem, file)
    if spec is None or spec.loader is None:
        raise CliError(f"{path} is not a Python file", USAGE)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise _syntax_error(e) from None
    except Exception as e:  # noqa: BLE001 - whatever the user's file raises is reported
        raised = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        raise CliError(f"importing {path} raised {raised}") from None
    return module


def _kernel_of(obj):
    """The ``@tc.kernel`` in ``obj``, under any ``@tc.autotune``/``@tc.heuristics``."""
    while isinstance(obj, _Wrapper):
        obj = obj.fn
    return obj if isinstance(obj, KernelFunction) else None


def load_kernel(target: str) -> KernelFunction:
    """The kernel that ``FILE.py:KERNEL`` names."""
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise CliError(f"expected FILE.py:KERNEL, got {target!r}", USAGE)
    module = _import_file(path)
    kernels = [n for n, v in vars(module).items()
               if (k := _kernel_of(v)) is not None and k.language == "triton"]
    listed = f"its kernels: {', '.join(kernels)}" if kernels else "it has no @tc.kernel"
    if not hasattr(module, name):
        raise CliError(f"{path} has no {name!r}; {listed}", USAGE)
    kernel = _kernel_of(getattr(module, name))
    if kernel is None:
        what = type(getattr(module, name)).__name__
        raise CliError(f"{path}: {name!r} is a {what}, not a @tc.kernel; {listed}", USAGE)
    if kernel.language != "triton":
        raise CliError(f"{path}: {name!r} is a compiler.tile kernel, which compiles from "
                       "example arguments (tc.compile(kernel, args=(...)) in Python), not "
                       "from -s", USAGE)
    return kernel


def _constant(text: str) -> tuple[str, object]:
    name, eq, value = text.partition("=")
    if not eq or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    for conv in (int, float):
        try:
            return name, conv(value)
        except ValueError:
            pass
    return name, {"True": True, "False": False}.get(value, value)


def _flags_checked(kernel: KernelFunction, args) -> dict:
    """``-c`` as constants, once ``-s`` and ``-c`` fit the kernel: an error names the
    flag, where ``tc.compile`` would name its keyword."""
    constants = dict(args.constant)
    _signature_specs(kernel, args.signature, constants, CLI_NAMES)
    return constants


# ---------------------------------------------------------------- output files

def _check_output(path: str) -> None:
    """Fail before compiling when ``-o`` cannot be written."""
    out = Path(path)
    if out.is_dir():
        raise CliError(f"-o {path}: is a directory; give a file name", USAGE)
    if not out.parent.is_dir():
        raise CliError(f"-o {path}: directory {out.parent} does not exist", USAGE)


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}") from None


# ---------------------------------------------------------------- commands

def cmd_compile(args) -> int:
    kernel = load_kernel(args.target)
    constants = _flags_checked(kernel, args)
    if args.output:
        _check_output(args.output)
    ck = tc.compile(kernel, signature=args.signature or "", constants=constants,
                    backend=args.backend, num_warps=args.num_warps,
                    dump_ir=True if args.print_ir_after_all else None)
    emit = args.emit or {"ptx": "ptx", "wgsl": "wgsl", "numpy": "tile"}[ck.metadata.backend]
    stages = dict(ck.stages)
    text = ck.asm.get(emit) if emit in ck.asm else stages.get(emit)
    if text is None or isinstance(text, bytes):
        known = sorted(k for k, v in ck.asm.items() if isinstance(v, str)) + list(stages)
        raise CliError(f"--emit {emit}: no such stage; choose from {', '.join(known)}", USAGE)
    text = text if text.endswith("\n") else text + "\n"
    if args.output:
        _write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_export(args) -> int:
    from backends.wgsl import web
    from compiler.export import RUNTIME_NAME
    kernel = load_kernel(args.target)
    constants = _flags_checked(kernel, args)
    if args.output:
        _check_output(args.output)
    try:
        text = tc.export(kernel, signature=args.signature, constants=constants,
                         target=args.target_runtime, num_warps=args.num_warps,
                         output=args.output)
    except OSError as e:
        raise CliError(f"cannot write {e.filename}: {e.strerror}") from None
    if not args.output:
        sys.stdout.write(text)
        print(f"tilec: note: the module imports ./{RUNTIME_NAME}, not written without -o "
              f"(-o FILE.js writes both; the runtime is {web.RUNTIME})", file=sys.stderr)
    return 0


def cmd_run(args) -> int:
    script = _script(args.script)
    if args.backend:
        tc.set_backend(args.backend)
    sys.argv = [args.script, *args.script_args]
    sys.path.insert(0, str(script.resolve().parent))
    if args.as_triton:
        from compiler.triton import install_as_triton
        install_as_triton()
    if args.as_cutile:
        from compiler.tile import install_as_cutile
        install_as_cutile()
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SyntaxError as e:
        if e.filename != args.script:
            raise
        raise _syntax_error(e) from None
    except TilecError as e:  # the script's own frames, as ``python FILE`` shows them
        _print_from(e, str(script.resolve()))
        return FAILURE
    return 0


def _print_from(error: TilecError, script: str) -> None:
    """``error``'s traceback from the script's first frame on, less tilec's frames."""
    tb = error.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, without_tilec_frames(tb) if tb else None)


def cmd_backends(_args) -> int:
    default = default_backend()  # first: a bad TILEC_BACKEND is the whole answer
    for name, (ok, why) in tc.backends().items():
        print(f"{name:6} {'yes' if ok else 'no ':3}  {why}")
    print(f"auto   -> {resolve_backend('auto')}")
    env = os.environ.get("TILEC_BACKEND")
    source = f"TILEC_BACKEND={env}" if env else "TILEC_BACKEND is not set"
    usable = default == "auto" or availability(default)[0]
    print(f"default: {default} ({source}){'' if usable else ', not available here'}")
    return 0


# ---------------------------------------------------------------- the command line

_COMPILE = """\
Compile KERNEL of FILE.py for the runtime argument types -s and the constexprs -c, and
write its code (or the --emit stage) to standard output, or to -o.

  tilec compile examples/vector_add.py:add -s "*f32,*f32,*f32,i32" -c BLOCK=1024 \\
        --backend wgsl [--emit tile|simt|ptx|wgsl] [--print-ir-after-all] [-o out.wgsl]
"""
_EXPORT = """\
Compile KERNEL of FILE.py for WebGPU as an ES module that launches it in a browser or
Deno. The module imports ./tilec-runtime.js: with -o FILE.js both are written, the runtime
beside the module; without -o the module goes to standard output and the runtime is not
written (a note on standard error says where to copy it from).

  tilec export examples/softmax.py:softmax -s "*f32,*f32,i32,i32,i32" -c BLOCK=256 \\
        -o web/softmax.js
"""
_RUN = """\
Run a Python script as `python FILE ARGS...` would, with the default backend set by
--backend (without it: $TILEC_BACKEND, else auto). The script's own arguments go after --.

  tilec run examples/softmax.py --backend numpy -- --rows 10

With --as-triton, `import triton` in the script (and every module it imports) gives
tilec's compiler.triton, so an unmodified Triton script runs on tilec:

  tilec run --as-triton 01-vector-add.py --backend wgsl

With --as-cutile, `import cuda.tile` gives tilec's compiler.tile likewise, for cuTile
scripts:

  tilec run --as-cutile VectorAddition.py --backend numpy
"""
_BACKENDS = """\
Which backends work on this machine and why, what auto picks, and the default backend of
a launch that names none ($TILEC_BACKEND, else auto).
"""


def _kernel_flags(p: argparse.ArgumentParser, signature_required: bool) -> None:
    p.add_argument("target", metavar="FILE.py:KERNEL", help="the kernel: file and name")
    p.add_argument("-s", "--signature", required=signature_required,
                   help='types of the runtime arguments, in order: "*f32,*f32,i32"')
    p.add_argument("-c", "--constant", action="append", default=[], type=_constant,
                   metavar="NAME=VALUE", help="a constexpr's value (repeat for each)")
    p.add_argument("--num-warps", type=int, default=4, choices=NUM_WARPS)


def parser() -> ArgParser:
    p = ArgParser(prog="tilec", description="tilec, the tile-kernel compiler; "
                  "tilec COMMAND --help describes each command")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    c = sub.add_parser("compile", help="compile a kernel and print its code",
                       description=_COMPILE)
    _kernel_flags(c, signature_required=False)
    c.add_argument("--backend", choices=BACKEND_NAMES,
                   help=BACKEND_HELP.replace("run on", "compile for"))
    c.add_argument("--emit", help="tile, simt, ptx, wgsl or a stage name "
                   "(default: the backend's code)")
    c.add_argument("--print-ir-after-all", action="store_true")
    c.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    c.set_defaults(func=cmd_compile)
    e = sub.add_parser("export", help="a kernel as a module for the web",
                       description=_EXPORT)
    _kernel_flags(e, signature_required=True)
    e.add_argument("--target", dest="target_runtime", default="web", choices=["web"])
    e.add_argument("-o", "--output", metavar="FILE.js",
                   help="the module (tilec-runtime.js is written beside it)")
    e.set_defaults(func=cmd_export)
    r = sub.add_parser("run", help="run a script (an example's main)", description=_RUN,
                       usage="tilec run [-h] [--backend BACKEND] [--as-triton | --as-cutile] "
                             "FILE [-- ARGS...]")
    r.add_argument("script", metavar="FILE")
    r.add_argument("--backend", choices=BACKEND_NAMES, help=BACKEND_HELP)
    r.add_argument("--as-triton", action="store_true",
                   help="run a Triton script unmodified: `import triton` gives compiler.triton")
    r.add_argument("--as-cutile", action="store_true",
                   help="run a cuTile script unmodified: `import cuda.tile` gives compiler.tile")
    r.set_defaults(func=cmd_run)
    sub.add_parser("opt", help="run passes on textual IR (tilec opt --help)", add_help=False)
    b = sub.add_parser("backends", help="which backends work here, and why",
                       description=_BACKENDS)
    b.set_defaults(func=cmd_backends)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["opt"]:  # its own parser: the pass list, its options in any order
        from compiler.opt import main as opt_main
        return opt_main(argv[1:])
    script_args: list[str] = []
    if argv[:1] == ["run"] and "--" in argv:  # the script's arguments, kept from argparse
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    args, extra = parser().parse_known_args(argv)
    if extra:
        after = " (the script's arguments go after --)" if args.cmd == "run" else ""
        usage_error(f"tilec {args.cmd}", f"unrecognized arguments: {' '.join(extra)}{after}")
    args.script_args = script_args
    try:
        return args.func(args)
    except CliError as e:
        print(f"tilec: {e}", file=sys.stderr)
        return e.status
    except TilecError as e:
        print(describe(e), file=sys.stderr)
        return FAILURE


if __name__ == "__main__":
    sys.exit(main())
