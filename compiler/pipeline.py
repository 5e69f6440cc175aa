"""The ordered, named stages of each backend, and code generation after them.

``--emit``, ``dump_ir``, ``ck.stages`` and ``tilec opt -p`` all see these same names. The
stages up to SIMT IR are shared; a backend adds its own passes and code generation through
its ``backends/<name>/target.py`` (``compiler.target``), the only part of it seen here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from compiler import progress, timing
from compiler import target as targets
from compiler.context import make_context, source_loc
from compiler.errors import CompileError, TilecError, UnsupportedError, internal_error
from compiler.passes.check_bounds import extent_params
from compiler.passes.lower_control import wide_offset_params
from compiler.passes.registry import get_all_passes
from compiler.passes.strip_debug import debug_records
from dialects import tile

# Pass names (with options), after the frontend: every backend runs the tile passes; a
# SIMT target also drops debugging ops (unless debug=True), turns pointers in scf values
# into offsets, holds fp8 values as bytes (converting them with its own instructions where
# it has them), expands the math functions it has no instruction for, reads dot operands
# that run down their columns along rows (transposed back), prefetches the loads
# feeding dots in loops (into shared memory where the target copies asynchronously), loops
# over chunks of elementwise tiles (transposes too) too large for the threads, picks layouts
# (for its access width and tensor cores, if it has them), lowers to per-thread code and
# computes again after each loop the index vectors used after it (``rematerialize``), then
# runs its own passes.
_TILE = ["canonicalize", "cse"]
_TO_SIMT = ["strip-debug", "lower-control", "lower-fp8{{native={fp8}}}",
            "expand-math{{fused-fma={fused}}}", "transpose-loads", "carry-sums",
            "pipeline-loads{{cp-async={mma}}}",
            "strip-mine", "assign-layouts{{vector-bits={bits} mma={mma} exchange-bytes={trip}}}",
            "tile-to-simt{{shared-trip-bytes={trip} narrow-shared={narrow}}}", "canonicalize",
            "cse", "rematerialize"]
# debug=True: bounds checks go in front of the accesses once lower-control has made every
# pointer traceable to its argument; strip-debug then lowers them with print/assert.
_DEBUG_START = ["lower-control", "check-bounds", "strip-debug"]
DEFAULT_ARCH = "sm_90"
TMA_SM = 90  # Hopper: array-view loads feeding dots may be copied by TMA


def passes(backend: str, views: bool = False, arch: str = DEFAULT_ARCH,
           debug: bool = False) -> list[str]:
    """The pass names (with options) a backend's pipeline runs after the frontend, for
    GPU ``arch``; ``views``: the module has array views (``compiler.tile`` kernels),
    lowered first; ``debug``: with bounds checks."""
    target = targets.load(backend)
    tile_passes = ["lower-array-views", *_TILE] if views else list(_TILE)
    if target.INPUT == "tile":
        return tile_passes + ([f"expand-math{{fused-fma={EXPAND_MATH_FUSED}}}"]
                              if EXPAND_MATH else [])
    # only a target with tensor cores says which instructions ``arch`` has
    mma = target.tensor_cores(arch) if hasattr(target, "tensor_cores") else 0
    fp8 = target.converts_fp8(arch) if hasattr(target, "converts_fp8") else 0
    fused = int(getattr(target, "FUSED_FMA", False))
    trip = target.shared_trip_bytes(arch) if hasattr(target, "shared_trip_bytes") \
        else target.SHARED_TRIP_BYTES
    to_simt = _DEBUG_START + _TO_SIMT[2:] if debug else _TO_SIMT
    narrow = int(getattr(target, "NARROW_SHARED", False))
    simt = [spec.format(bits=target.VECTOR_BITS, mma=mma, trip=trip, narrow=narrow,
                        fp8=fp8, fused=fused) for spec in to_simt]
    if views and mma >= TMA_SM and not debug:  # dot operands and stores may go by TMA
        tile_passes[0] = "lower-array-views{tma=1}"
        at = next(i for i, s in enumerate(simt) if s.startswith("pipeline-loads")) + 1
        simt[at:at] = ["tma-stores", "lower-array-views"]
    return tile_passes + simt + list(target.PASSES)


VERIFY_EACH = os.environ.get("TILEC_VERIFY_EACH", "") not in ("", "0")
# ``TILEC_EXPAND_MATH=1``: the NumPy backend runs the GPU targets' math sequences
# (``expand-math``) instead of its reference functions, to measure them on a CPU; ``fused``:
# as PTX gets them (exact products from ``fma``: the same bits, by other instructions)
EXPAND_MATH = os.environ.get("TILEC_EXPAND_MATH", "") not in ("", "0")
EXPAND_MATH_FUSED = int(os.environ.get("TILEC_EXPAND_MATH", "") == "fused")


class Stages(Sequence):
    """The IR after each stage, as ``(name, text)`` pairs, printed when first read.

    Printing the module after every pass was a quarter to a third of a cold compile, yet
    only ``ck.stages``, ``dump_ir`` and ``--emit`` read the texts. So a stage nobody needs
    now is kept as a clone of its module (about a third of the cost of printing it) and
    printed on first read: the same text as an eager print. ``keep=False`` records
    nothing: a launch's compilation (``ck.stages`` compiles again to show them)."""

    def __init__(self, eager: bool, keep: bool = True):
        self.eager, self.keep = eager, keep
        self._items: list[tuple[str, str | ModuleOp]] = []

    def add(self, name: str, module: ModuleOp | str) -> None:
        """Record ``module`` as it is now (or its text), as the IR after stage ``name``."""
        if not self.keep:
            return
        if isinstance(module, str) or self.eager:
            self._items.append((name, module if isinstance(module, str) else _print(module)))
        else:
            with timing.phase("snapshot IR (clone)", summed=True):
                self._items.append((name, module.clone()))

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        name, ir = self._items[i]
        if not isinstance(ir, str):
            ir = _print(ir)
            self._items[i] = (name, ir)
        return name, ir


def _print(module: ModuleOp) -> str:
    with timing.phase("print IR", summed=True):
        return str(module)


@dataclass
class Compiled:
    """What a compilation produced: every stage's IR, the final code, the artifact a
    launcher needs, and launcher facts (all text or bytes: it goes to the disk cache)."""

    stages: Stages
    asm: dict[str, str | bytes]
    artifact: str | bytes
    extra: dict = field(default_factory=dict)
    live: object = None  # ``Generated.live``


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


def describe(p: ModulePass) -> str:
    """A pass with every option it runs with (defaults too): ``cse``,
    ``assign-layouts{num-warps=4 vector-bits=128 mma=80}``."""
    opts = " ".join(f"{k.replace('_', '-')}={getattr(p, k)}"
                    for k in p.__dataclass_fields__ if k != "name")
    return f"{p.name}{{{opts}}}" if opts else p.name


def run(module: ModuleOp, backend: str, num_warps: int, *, verify: bool = True,
        dump: bool | str | None = None, arch: str = DEFAULT_ARCH,
        debug: bool = False, num_stages: int = 2, eager_stages: bool = False,
        keep_stages: bool = True) -> Compiled:
    """Lower a frontend module for ``backend``; return the stages and the final code.
    ``eager_stages`` prints every stage now; ``keep_stages=False`` keeps none (``asm``
    still has the tile and SIMT IR)."""
    with timing.compilation(f"{backend} pipeline ({num_warps} warps)"):
        ctx = make_context()
        target = targets.load(backend)
        dump = _dump_request(dump)
        stages = Stages(eager_stages or bool(dump), keep_stages or bool(dump))
        asm: dict[str, str | bytes] = {"tile": _print(module)}  # the frontend's IR
        stages.add("frontend", asm["tile"])
        _check_frontend(module)
        _check_addresses(module, backend, target)
        origin = _Replay(module, ctx, num_warps, debug, num_stages)  # for bug reports
        records, bounds = [], []  # debug=True on SIMT targets: see strip-debug, check-bounds
        dot_tol = dot_tolerance(module)
        wide = wide_offset_params(module)  # before lower-control narrows the offsets
        addresses = any(isinstance(o, tile.IntToPtrOp) for o in module.walk())
        views = any(isinstance(o, tile.MakeViewOp) for o in module.walk())
        for spec in passes(backend, views, arch, debug):
            p = _make_pass(spec, num_warps, debug, num_stages)
            if debug and p.name == "strip-debug":  # the records of what it lowers
                records, bounds = debug_records(module), extent_params(module)
            with timing.phase(f"{len(origin.done) + 1:02d}-{describe(p)}"), \
                    _reported(p.name, origin, module):
                p.apply(ctx, module)
                if verify and VERIFY_EACH:
                    with timing.phase("verify IR", summed=True):
                        module.verify()
            origin.done.append(spec)
            if p.name == "tile-to-simt":
                asm["simt"] = _print(module)
                stages.add(p.name, asm["simt"])
            else:
                stages.add(p.name, module)
        if verify:
            _verify(module, origin)
        with _reported(f"{backend}-codegen", origin, module):
            generated = target.generate(module, arch)
    asm.update(generated.asm)
    extra = dict(generated.extra)
    if records:
        extra["debug"] = records
    if bounds:
        extra["bounds"] = bounds
    if dot_tol:
        extra["dot_tolerance"] = dot_tol
    if wide and backend != "numpy":  # NumPy indexes with the offsets' own 64 bits
        extra["wide_offsets"] = wide
    if addresses:  # pointers made of addresses: ``verify=True`` cannot follow them
        extra["addresses"] = True
    compiled = Compiled(stages, asm, generated.artifact, extra, generated.live)
    _dump(compiled, dump)
    return compiled


class _Replay:
    """The frontend module (one clone), and the passes run since: a bug report's IR,
    the input of the stage that failed, is made again from them only when one fails."""

    def __init__(self, module: ModuleOp, ctx, num_warps: int, debug: bool, num_stages: int):
        self.module, self.ctx, self.done = module.clone(), ctx, []
        self.options = (num_warps, debug, num_stages)

    def ir(self) -> str:
        module = self.module.clone()
        for spec in self.done:
            _make_pass(spec, *self.options).apply(self.ctx, module)
        return _print(module)

    def first_invalid(self) -> tuple[str, str]:
        """The first pass whose output does not verify, and the IR it started from."""
        module = self.module.clone()
        for spec in self.done:
            before = _print(module)
            _make_pass(spec, *self.options).apply(self.ctx, module)
            try:
                module.verify()
            except VerifyException:
                return spec.partition("{")[0], before
        return "verify", _print(module)


def _verify(module: ModuleOp, origin: _Replay) -> None:
    """Verify the lowered module once. A pass that broke the IR is found again only then,
    by running the passes once more, each verified: verifying after every pass was 40%
    of a compilation (``TILEC_VERIFY_EACH=1`` still does it)."""
    with timing.phase("verify IR", summed=True):
        try:
            module.verify()
        except VerifyException as e:
            stage, ir = origin.first_invalid()
            kernel = module.ops.first
            raise internal_error(e, stage, ir, source_loc(kernel) if kernel else None) \
                from None


def _check_frontend(module: ModuleOp) -> None:
    """An op the frontend built that does not verify came from operands the user got
    wrong where no rule of the frontend caught it (a pointer given to ``tl.exp``, say):
    a ``CompileError`` at that op's line, not a failure inside some later pass."""
    try:
        module.verify()
    except VerifyException:
        for op in module.walk():
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as e:
                why = " ".join(str(e).split())
                raise CompileError(f"invalid operands for {op.name}: {why}",
                                   source_loc(op)) from None
        raise


def _check_addresses(module: ModuleOp, backend: str, target) -> None:
    """A target whose pointers are no addresses (``NO_ADDRESSES`` says why) refuses the
    casts between integers and pointers at the first one, before any pass."""
    why = getattr(target, "NO_ADDRESSES", None)
    if why is None:
        return
    for op in module.walk():
        if isinstance(op, tile.IntToPtrOp | tile.PtrToIntOp):
            raise UnsupportedError(
                f"casts between integers and pointers (tl.pointer_type, ptr.to(tl.int64)) "
                f"are not supported by the {backend} backend: {why}; the ptx backend runs "
                "them", source_loc(op))


@contextmanager
def _reported(stage: str, origin: _Replay, module: ModuleOp):
    """Turn an exception that is not a ``TilecError`` into a bug report naming the
    kernel's line: the IR the stage started from (made again by ``origin``) goes to a file."""
    try:
        yield
    except TilecError:
        raise
    except Exception as e:  # noqa: BLE001 - anything else is a tilec bug
        kernel = module.ops.first
        loc = source_loc(kernel) if kernel is not None else None
        raise internal_error(e, stage, origin.ir(), loc) from None


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


def _dump_request(dump: bool | str | None) -> bool | str | None:
    """What to dump: ``dump_ir``'s value, else ``TILEC_DUMP_IR``'s (None: nothing)."""
    env = os.environ.get("TILEC_DUMP_IR", "")
    if dump is None or dump is False:
        dump = env if env not in ("", "0") else None
    return dump or None


def _dump(compiled: Compiled, dump: bool | str | None) -> None:
    if not dump:
        return
    if dump is True or dump == "1":
        for i, (name, text) in enumerate(compiled.stages):
            progress.above(f"// -----// IR after {i:02d}-{name} //----- //\n{text}")
        return
    out = Path(dump)
    out.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(compiled.stages):
        (out / f"{i:02d}-{name}.mlir").write_text(text + "\n")
    for key in ("ptx", "wgsl"):
        if key in compiled.asm:
            (out / f"{len(compiled.stages):02d}-{key}.{key}").write_text(compiled.asm[key])
