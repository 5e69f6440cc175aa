"""``compiler.tile.compilation``, where cuTile exports kernels ahead of time (TileIR
cubins with ``export_kernel`` and the signature constraints it takes). tilec compiles
ahead of time its own way, ``tc.compile(kernel, args=...)`` (a ``compiler.tile`` kernel
with example arguments): each cuTile name is here so that ported code imports, and
using one raises an ``UnsupportedError`` saying so."""

from __future__ import annotations

from typing import Any

from compiler.errors import UnsupportedError

NAMES = ("ScalarConstraint", "ArrayConstraint", "ListConstraint", "TupleConstraint",
         "ConstantConstraint", "ParameterConstraint", "ConstantValue", "KernelSignature",
         "CallingConvention", "export_kernel", "mangle_kernel_name", "demangle_kernel_name")


def _unsupported(name: str):
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise UnsupportedError(f"ct.compilation.{name} is cuTile's ahead-of-time export, "
                               f"which tilec does not have: compile ahead of time with "
                               f"tc.compile(kernel, args=(...)) instead")
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


globals().update({name: _unsupported(name) for name in NAMES})
__all__ = list(NAMES)
