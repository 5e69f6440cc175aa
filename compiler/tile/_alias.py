"""``cuda.tile`` as a name for ``compiler.tile``: ``tilec run --as-cutile script.py`` runs an
unmodified cuTile script on tilec, as ``--as-triton`` does for Triton's.

The alias registers this package and each of its modules under the ``cuda.tile`` names in
``sys.modules``, and hangs the package on ``cuda`` as its ``tile`` attribute. A ``cuda``
package that is installed (cuda-python's namespace package) is kept, so
``cuda.bindings`` and ``cuda.core`` still import beside the alias; without one a bare
``cuda`` package is made.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types

from compiler.errors import TilecError

_ALIAS, _REAL = "cuda.tile", "compiler.tile"


def _ours() -> dict[str, types.ModuleType]:
    """Every module of compiler.tile, imported, under its ``cuda.tile`` name."""
    package = importlib.import_module(_REAL)
    for info in pkgutil.walk_packages(package.__path__, _REAL + "."):
        importlib.import_module(info.name)
    return {_ALIAS + name[len(_REAL):]: module for name, module in list(sys.modules.items())
            if name == _REAL or name.startswith(_REAL + ".")}


def _cuda_package() -> types.ModuleType:
    try:
        return importlib.import_module("cuda")
    except ImportError:
        bare = types.ModuleType("cuda")
        bare.__path__ = []
        sys.modules["cuda"] = bare
        return bare


def install_as_cutile() -> None:
    """Make ``import cuda.tile`` and ``import cuda.tile.<module>`` give tilec's modules for
    the rest of the process, or until ``uninstall_as_cutile()``."""
    present = sys.modules.get(_ALIAS)
    if present is not None and present is not sys.modules.get(_REAL):
        raise TilecError(f"cuda.tile is already imported (from "
                         f"{getattr(present, '__file__', '?')}); install tilec's alias "
                         "before anything imports cuda.tile")
    ours = _ours()
    sys.modules.update(ours)
    _cuda_package().tile = ours[_ALIAS]


def uninstall_as_cutile() -> None:
    """Undo ``install_as_cutile()``: ``cuda.tile`` is again whatever Python finds."""
    for name, module in _ours().items():
        if sys.modules.get(name) is module:
            del sys.modules[name]
    cuda = sys.modules.get("cuda")
    if cuda is not None and getattr(cuda, "tile", None) is sys.modules.get(_REAL):
        del cuda.tile
