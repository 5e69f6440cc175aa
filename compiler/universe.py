"""tilec's dialects and passes as an xDSL universe, so `xdsl-opt -p tile-to-simt` works.

pyproject.toml names ``TILEC_UNIVERSE`` under the ``xdsl.universe`` entry point. Only what
xDSL lacks is listed: xdsl-opt refuses a pass or dialect two universes both define.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.util import find_spec

from xdsl.ir import Dialect
from xdsl.universe import Universe

from compiler.passes.registry import get_tilec_passes

_DIALECT_FILES = ("tile", "simt", "ptx")


def _load(name: str) -> Callable[[], Dialect]:
    def load() -> Dialect:
        module = import_module(f"dialects.{name}")
        # The Dialect object's Python name varies by file (Tile, SIMT, ...); its IR name not.
        return next(v for v in vars(module).values()
                    if isinstance(v, Dialect) and v.name == name)

    return load


def tilec_dialects() -> dict[str, Callable[[], Dialect]]:
    """Lazy loaders of tilec's dialects whose files exist (ptx comes with its backend)."""
    return {name: _load(name) for name in _DIALECT_FILES if find_spec(f"dialects.{name}")}


TILEC_UNIVERSE = Universe(all_dialects=tilec_dialects(), all_passes=get_tilec_passes())
