"""The ordered, named stages of each backend, and code generation after them.

``--emit``, ``dump_ir``, ``ck.stages`` and ``tilec opt -p`` all see these same names.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from compiler.context import make_context
from compiler.passes.registry import get_all_passes
from compiler.passes.strip_debug import debug_records

# Pass names (with options) per backend, after the frontend.
_TILE = ["canonicalize", "cse"]
_SIMT = ["tile-to-simt", "canonicalize", "cse"]
# GPU backends: debugging ops off (unless debug=True); pointers in scf values as offsets.
_GPU = _TILE + ["strip-debug", "lower-control"]
PIPELINES: dict[str, list[str]] = {
    "numpy": _TILE,
    "ptx": _GPU + ["assign-layouts{vector-bits=128}"] + _SIMT + ["simt-to-ptx"],
    "wgsl": _GPU + ["assign-layouts{vector-bits=32}"] + _SIMT,
}
DEFAULT_ARCH = "sm_90"


@dataclass
class Compiled:
    """What a compilation produced: every stage's IR, the final code, the artifact a
    launcher needs, and launcher facts (all text or bytes: it goes to the disk cache)."""

    stages: list[tuple[str, str]]
    asm: dict[str, str | bytes]
    artifact: str | bytes
    extra: dict = field(default_factory=dict)


def _make_pass(spec: str, num_warps: int, debug: bool = False) -> ModulePass:
    name, _, opts = spec.partition("{")
    cls = get_all_passes()[name]()
    kwargs = {}
    for item in opts.rstrip("}").split():
        k, v = item.split("=")
        kwargs[k.replace("-", "_")] = int(v)
    if "num_warps" in cls.__dataclass_fields__:
        kwargs["num_warps"] = num_warps
    if "debug" in cls.__dataclass_fields__:
        kwargs["debug"] = debug
    return cls(**kwargs)


def run(module: ModuleOp, backend: str, num_warps: int, *, verify: bool = True,
        dump: bool | str | None = None, arch: str = DEFAULT_ARCH,
        debug: bool = False) -> Compiled:
    """Lower a frontend module for ``backend``; return all stages and the final code."""
    ctx = make_context()
    stages = [("frontend", str(module))]
    records = debug_records(module) if debug and backend != "numpy" else []
    for spec in PIPELINES[backend]:
        p = _make_pass(spec, num_warps, debug)
        p.apply(ctx, module)
        if verify:
            module.verify()
        stages.append((p.name, str(module)))
    asm: dict[str, str | bytes] = {"tile": stages[0][1]}
    for name, text in stages:
        if name == "tile-to-simt":
            asm["simt"] = text
    artifact, extra = _codegen(module, backend, asm, stages, arch)
    if records:
        extra["debug"] = records
    compiled = Compiled(stages, asm, artifact, extra)
    _dump(compiled, dump)
    return compiled


class _LocationPrinter(Printer):
    """xDSL 0.74 prints an op's ``loc(...)`` after it and also inside
    ``print_operation_type``, which custom formats (``scf.while``) call mid-op, where the
    parser does not take it: only the generic format keeps it there."""

    def print_operation_type(self, op: Operation) -> None:
        if self.print_generic_format or type(op).print is Operation.print:
            super().print_operation_type(op)
        else:
            self.print_function_type(op.operand_types, op.result_types)


def print_with_locations(module: ModuleOp) -> str:
    """IR text with ``loc(...)`` on every op, so the NumPy backend's errors point at the
    user's source line."""
    out = io.StringIO()
    _LocationPrinter(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue()


def _codegen(module: ModuleOp, backend: str, asm: dict, stages: list, arch: str):
    if backend == "numpy":
        return print_with_locations(module), {}
    if backend == "ptx":
        from backends.ptx.assemble import assemble
        from backends.ptx.printer import print_ptx
        ptx = print_ptx(module, arch=arch)
        asm["ptx"] = ptx
        cubin = assemble(ptx, arch)
        asm["cubin"] = cubin
        shared = sum(op.size.value.data for op in module.walk() if op.name == "ptx.shared")
        return cubin, {"arch": arch, "shared": shared}
    if backend == "wgsl":
        from backends.wgsl import make_artifact
        from backends.wgsl.emit import emit_wgsl
        text, facts = emit_wgsl(module)
        asm["wgsl"] = text
        return make_artifact(text, facts), {"shared": facts["shared"]}
    raise ValueError(backend)


def _dump(compiled: Compiled, dump: bool | str | None) -> None:
    env = os.environ.get("TILEC_DUMP_IR", "")
    if dump is None or dump is False:
        dump = env if env not in ("", "0") else None
    if not dump:
        return
    if dump is True or dump == "1":
        for i, (name, text) in enumerate(compiled.stages):
            print(f"// -----// IR after {i:02d}-{name} //----- //\n{text}", file=sys.stderr)
        return
    out = Path(dump)
    out.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(compiled.stages):
        (out / f"{i:02d}-{name}.mlir").write_text(text + "\n")
    for key in ("ptx", "wgsl"):
        if key in compiled.asm:
            (out / f"{len(compiled.stages):02d}-{key}.{key}").write_text(compiled.asm[key])
