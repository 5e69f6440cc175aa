"""The ``tilec`` command: compile, export, run, opt, backends (docs/language.md)."""

from __future__ import annotations

import argparse
import importlib.util
import runpy
import sys
from pathlib import Path

from compiler.errors import TilecError


def _load_kernel(target: str):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"tilec: expected FILE.py:KERNEL, got {target!r}")
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"tilec: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(path).resolve().parent))
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(f"tilec: {path} has no kernel {name!r}")
    return getattr(module, name)


def _constant(text: str):
    name, _, value = text.partition("=")
    for conv in (int, float):
        try:
            return name, conv(value)
        except ValueError:
            pass
    return name, {"True": True, "False": False}.get(value, value)


def cmd_compile(args) -> int:
    import compiler as tc
    fn = _load_kernel(args.target)
    ck = tc.compile(fn, signature=args.signature or "", constants=dict(map(_constant,
                    args.constant)), backend=args.backend, num_warps=args.num_warps,
                    dump_ir=True if args.print_ir_after_all else None)
    emit = args.emit or {"ptx": "ptx", "wgsl": "wgsl", "numpy": "tile"}[ck.metadata.backend]
    stages = dict(ck.stages)
    text = ck.asm.get(emit) if emit in ck.asm else stages.get(emit)
    if text is None or isinstance(text, bytes):
        known = sorted(k for k, v in ck.asm.items() if isinstance(v, str)) + list(stages)
        raise SystemExit(f"tilec: nothing to emit for {emit!r}; choose from {known}")
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_export(args) -> int:
    import compiler as tc
    fn = _load_kernel(args.target)
    text = tc.export(fn, signature=args.signature, constants=dict(map(_constant, args.constant)),
                     target=args.target_runtime, num_warps=args.num_warps, output=args.output)
    if not args.output:
        sys.stdout.write(text)
    return 0


def cmd_run(args) -> int:
    import compiler as tc
    if args.backend:
        tc.set_backend(args.backend)
    sys.argv = [args.script] + (["--backend", args.backend] if args.backend else [])
    runpy.run_path(args.script, run_name="__main__")
    return 0


def cmd_opt(args) -> int:
    from compiler.opt import main as opt_main
    return opt_main(args.rest)


def cmd_backends(_args) -> int:
    import compiler as tc
    from compiler.jit import resolve_backend
    for name, (ok, why) in tc.backends().items():
        print(f"{name:6} {'yes' if ok else 'no ':3}  {why}")
    print(f"auto   -> {resolve_backend('auto')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tilec", description="the tilec tile compiler")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="compile a kernel and print its code")
    c.add_argument("target", help="FILE.py:KERNEL")
    c.add_argument("-s", "--signature", help='types of the runtime arguments, "*f32,i32"')
    c.add_argument("-c", "--constant", action="append", default=[], help="NAME=VALUE")
    c.add_argument("--backend", default=None, choices=["ptx", "wgsl", "numpy", "auto"])
    c.add_argument("--num-warps", type=int, default=4)
    c.add_argument("--emit", help="tile, simt, ptx, wgsl or a stage name")
    c.add_argument("--print-ir-after-all", action="store_true")
    c.add_argument("-o", "--output")
    c.set_defaults(func=cmd_compile)
    e = sub.add_parser("export", help="a kernel as a module for another runtime (the web)")
    e.add_argument("target", help="FILE.py:KERNEL")
    e.add_argument("-s", "--signature", required=True,
                   help='types of the runtime arguments, "*f32,i32"')
    e.add_argument("-c", "--constant", action="append", default=[], help="NAME=VALUE")
    e.add_argument("--target", dest="target_runtime", default="web", choices=["web"])
    e.add_argument("--num-warps", type=int, default=4)
    e.add_argument("-o", "--output", help="the .js file (tilec-runtime.js is written "
                   "beside it); standard output without")
    e.set_defaults(func=cmd_export)
    r = sub.add_parser("run", help="run an example's main()")
    r.add_argument("script")
    r.add_argument("--backend", choices=["ptx", "wgsl", "numpy", "auto"])
    r.set_defaults(func=cmd_run)
    o = sub.add_parser("opt", help="run passes on textual IR", add_help=False)
    o.add_argument("rest", nargs=argparse.REMAINDER)
    o.set_defaults(func=cmd_opt)
    b = sub.add_parser("backends", help="which backends work here, and why")
    b.set_defaults(func=cmd_backends)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except TilecError as e:
        print(f"{type(e).__module__}.{type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
