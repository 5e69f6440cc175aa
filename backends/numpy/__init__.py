"""The NumPy backend: interprets tile IR, the reference semantics of tilec.

Its artifact is the tile IR text. Importing this package imports no xDSL; the ``Launcher``
parses the IR (and so imports xDSL) when it is constructed from the text (a kernel from
the disk cache). A kernel compiled in this process hands it the module itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from compiler.graphs import ACTIVE as _CAPTURES
from compiler.graphs import record

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from compiler.kinfo import KernelInfo


def availability() -> tuple[bool, str]:
    return True, f"NumPy {np.__version__}"


class Launcher:
    """Runs a kernel's tile IR on NumPy arrays; the kernel writes the user's arrays directly."""

    def __init__(self, artifact: str | ModuleOp, info: KernelInfo):
        from backends.numpy.interpreter import Kernel
        from compiler.context import parse_module

        module = parse_module(artifact) if isinstance(artifact, str) else artifact
        self._kernel = Kernel(module, info)

    def __call__(self, grid: Sequence[int], args: Sequence[Any]) -> None:
        if _CAPTURES and record(self, grid, args, "numpy"):  # a tc.graph takes it
            return
        self._kernel.launch(grid, args)


def run(module: ModuleOp, info: KernelInfo, grid: Sequence[int], args: Sequence[Any],
        serial: bool = False) -> None:
    """One launch of an already-parsed tile-IR module (``serial``: one program at a time)."""
    from backends.numpy.interpreter import Kernel

    Kernel(module, info).launch(grid, args, serial)


# -- arrays (``tc.empty``, ``tc.asarray``: compiler/memory.py) -------------------------------

def empty(shape: tuple[int, ...], dtype: Any, zero: bool) -> np.ndarray:
    """A NumPy array: the numpy backend's arrays are NumPy's own."""
    from compiler.device_views import host_dtype

    return (np.zeros if zero else np.empty)(shape, host_dtype(dtype))


def from_host(a: np.ndarray) -> np.ndarray:
    return a.copy()


def synchronize() -> None:
    """Nothing to wait for: a numpy launch returns when it has run."""
