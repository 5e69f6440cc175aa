"""Every pass `tilec opt` (and `xdsl-opt`, through the universe) can run, by name.

Passes are imported lazily: importing a pass pulls in its lowering tables, and a pass
module that is missing or broken should only fail the pipelines that name it.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass

PassFactory = Callable[[], type[ModulePass]]

# tilec's passes: name -> (package, class). The module is the name in snake case
# (CONTRIBUTING.md); target-independent passes live in compiler.passes, a target's
# lowering beside its target.
_TILEC = {
    "assign-layouts": ("compiler.passes", "AssignLayouts"),
    "lower-array-views": ("compiler.passes", "LowerArrayViews"),
    "expand-math": ("compiler.passes", "ExpandMath"),
    "tile-to-simt": ("compiler.passes", "TileToSimt"),
    "strip-debug": ("compiler.passes", "StripDebug"),
    "check-bounds": ("compiler.passes", "CheckBounds"),
    "lower-control": ("compiler.passes", "LowerControl"),
    "lower-fp8": ("compiler.passes", "LowerFp8"),
    "transpose-loads": ("compiler.passes", "TransposeLoads"),
    "carry-sums": ("compiler.passes", "CarrySums"),
    "pipeline-loads": ("compiler.passes", "PipelineLoads"),
    "tma-stores": ("compiler.passes", "TmaStores"),
    "strip-mine": ("compiler.passes", "StripMine"),
    "rematerialize": ("compiler.passes", "Rematerialize"),
    "sink-wgmma-waits": ("compiler.passes", "SinkWgmmaWaits"),
    "simt-to-ptx": ("backends.ptx", "SimtToPtx"),
    "inline-slow-paths": ("backends.ptx", "InlineSlowPaths"),
    "schedule-wgmma": ("backends.ptx", "ScheduleWgmma"),
    "spread-copies": ("backends.ptx", "SpreadCopies"),
    "place-shared": ("backends.ptx", "PlaceShared"),
}

# The xDSL passes tilec's pipelines reuse: name -> (module, class).
_XDSL = {
    "canonicalize": ("xdsl.transforms.canonicalize", "CanonicalizePass"),
    "cse": ("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
    "dce": ("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
}


def _lazy(name: str, module: str, cls: str) -> PassFactory:
    def load() -> type[ModulePass]:
        try:
            return getattr(import_module(module), cls)
        except (ImportError, AttributeError) as e:
            # Name the pass: "No module named ..." alone does not say which pass failed.
            raise ImportError(f"pass {name!r} is unavailable: {e}") from e

    return load


def get_tilec_passes() -> dict[str, PassFactory]:
    """tilec's own passes only (what the xDSL universe lacks)."""
    return {name: _lazy(name, f"{package}.{name.replace('-', '_')}", cls)
            for name, (package, cls) in _TILEC.items()}


def get_all_passes() -> dict[str, PassFactory]:
    """tilec's passes and the xDSL passes its pipelines use."""
    return {**{name: _lazy(name, *where) for name, where in _XDSL.items()}, **get_tilec_passes()}
