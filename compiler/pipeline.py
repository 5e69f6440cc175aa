"""The ordered, named stages of each backend, and code generation after them.

``--emit``, ``dump_ir``, ``ck.stages`` and ``tilec opt -p`` all see these same names. The
stages up to SIMT IR are shared; a backend adds its own passes and code generation through
its ``backends/<name>/target.py`` (``compiler.target``), the only part of it seen here.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from compiler import target as targets
from compiler.context import make_context
from compiler.passes.registry import get_all_passes
from compiler.passes.strip_debug import debug_records
from dialects import tile

# Pass names (with options), after the frontend: every backend runs the tile passes; a
# SIMT target also drops debugging ops (unless debug=True), turns pointers in scf values
# into offsets, prefetches the loads feeding dots in loops, picks layouts (for its access
# width and tensor cores, if it has them) and lowers to per-thread code, then runs its own
# passes.
_TILE = ["canonicalize", "cse"]
_TO_SIMT = ["strip-debug", "lower-control", "pipeline-loads",
            "assign-layouts{{vector-bits={bits} mma={mma}}}", "tile-to-simt", "canonicalize",
            "cse"]
DEFAULT_ARCH = "sm_90"


def passes(backend: str) -> list[str]:
    """The pass names (with options) a backend's pipeline runs after the frontend."""
    target = targets.load(backend)
    if target.INPUT == "tile":
        return list(_TILE)
    mma = getattr(target, "MMA", 0)  # only a target with tensor cores names them
    simt = [spec.format(bits=target.VECTOR_BITS, mma=mma) for spec in _TO_SIMT]
    return _TILE + simt + list(target.PASSES)


@dataclass
class Compiled:
    """What a compilation produced: every stage's IR, the final code, the artifact a
    launcher needs, and launcher facts (all text or bytes: it goes to the disk cache)."""

    stages: list[tuple[str, str]]
    asm: dict[str, str | bytes]
    artifact: str | bytes
    extra: dict = field(default_factory=dict)


def _make_pass(spec: str, num_warps: int, debug: bool = False, num_stages: int = 2
               ) -> ModulePass:
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
    if "num_stages" in cls.__dataclass_fields__:
        kwargs["num_stages"] = num_stages
    return cls(**kwargs)


def run(module: ModuleOp, backend: str, num_warps: int, *, verify: bool = True,
        dump: bool | str | None = None, arch: str = DEFAULT_ARCH,
        debug: bool = False, num_stages: int = 2) -> Compiled:
    """Lower a frontend module for ``backend``; return all stages and the final code."""
    ctx = make_context()
    target = targets.load(backend)
    stages = [("frontend", str(module))]
    # SIMT targets turn debugging ops into records; the NumPy interpreter runs them itself.
    records = debug_records(module) if debug and target.INPUT == "simt" else []
    dot_tol = dot_tolerance(module)
    for spec in passes(backend):
        p = _make_pass(spec, num_warps, debug, num_stages)
        p.apply(ctx, module)
        if verify:
            module.verify()
        stages.append((p.name, str(module)))
    asm: dict[str, str | bytes] = {"tile": stages[0][1]}
    for name, text in stages:
        if name == "tile-to-simt":
            asm["simt"] = text
    generated = target.generate(module, arch)
    asm.update(generated.asm)
    extra = dict(generated.extra)
    if records:
        extra["debug"] = records
    if dot_tol:
        extra["dot_tolerance"] = dot_tol
    compiled = Compiled(stages, asm, generated.artifact, extra)
    _dump(compiled, dump)
    return compiled


# Relative rounding of a dot's inputs on the GPU (tf32 keeps 10 mantissa bits, tf32x3
# about 21); the NumPy reference rounds the same way, so what remains is the order of
# the sums, which grows like sqrt(K).
_DOT_ROUNDING = {"f16": 2.0**-10, "bf16": 2.0**-7, "i8": 0.0}
_F32_ROUNDING = {"ieee": 2.0**-20, "tf32": 2.0**-10, "tf32x3": 2.0**-18}


def dot_tolerance(module: ModuleOp) -> float:
    """The largest ``sqrt(K) * rounding`` of the kernel's dots: ``verify=True`` allows
    that much error relative to the largest value written."""
    worst = 0.0
    for op in module.walk():
        if isinstance(op, tile.DotOp):
            k = op.a.type.get_shape()[1]
            elem = str(op.a.type.element_type)
            rounding = (_F32_ROUNDING[op.input_precision.data] if elem == "f32"
                        else _DOT_ROUNDING.get(elem, 2.0**-7))
            worst = max(worst, math.sqrt(k) * rounding)
    return worst


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
