"""Triton's public host API on tilec: a Triton program ports by its imports,

    import compiler.triton as triton
    import compiler.triton.language as tl

``compiler.triton.language`` *is* ``compiler.language`` (the frontend knows builtins by
identity), under Triton's module names too: ``language.math``, ``language.extra.libdevice``,
``language.extra.cuda.libdevice`` and ``language.core``. ``install_as_triton()`` makes
``import triton`` (and every ``triton.*`` module here) give these for the rest of a
process, so an unmodified Triton script runs on tilec.

What Triton has and this leaves out: ``compile`` (tilec's is ``tc.compile``, with another
signature), ``MockTensor``/``TensorWrapper``/``reinterpret`` (a launch would need to take
them), ``knobs``, and Triton's compiler internals (``triton._C`` holds only
``libtriton.nvidia.cublas``, the cuBLAS a program compares its kernels with;
``triton.compiler`` and ``triton.backends`` only the names programs look up to see that
Triton is there).
"""

from __future__ import annotations

import sys

from compiler import __version__ as TILEC_VERSION
from compiler import cdiv, constexpr_function, language
from compiler.errors import CompileError, OutOfResources, TilecError
from compiler.triton import backends, compiler, runtime, testing, tools
from compiler.triton._language import alias_language
from compiler.triton.runtime.autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from compiler.triton.runtime.jit import JITFunction, KernelInterface, jit

TRITON_API = "3.4.0"
"""The Triton release whose host API this follows; ``__version__`` compares as that."""

__version__ = f"{TRITON_API}+tilec.{TILEC_VERSION}"

CompilationError = CompileError
"""Triton's name for an error in kernel source: tilec's ``CompileError``."""

alias_language()


@constexpr_function
def next_power_of_2(n: int) -> int:
    """The least power of two not below ``n`` (0 for ``n <= 0``, as Triton's), for block
    sizes: ``BLOCK = next_power_of_2(n_cols)``."""
    return 0 if n <= 0 else 1 << (n - 1).bit_length()


def set_allocator(allocator) -> None:
    """Triton's hook for the global memory that device-side tensor descriptors need
    (``triton.set_allocator(fn)``): accepted; tilec's descriptors need none."""
    del allocator


def _ours() -> dict[str, object]:
    """Every module of this package under its ``triton`` name."""
    from compiler.triton import profiler  # noqa: F401 - imported to be aliased too
    from compiler.triton._C.libtriton.nvidia import cublas  # noqa: F401 - aliased too
    from compiler.triton.profiler import viewer  # noqa: F401 - aliased too
    from compiler.triton.runtime import cache  # noqa: F401 - imported to be aliased too
    prefix = __name__
    return {"triton" + name[len(prefix):]: module for name, module in list(sys.modules.items())
            if name == prefix or name.startswith(prefix + ".")}


def install_as_triton() -> None:
    """Make ``import triton`` and ``import triton.<module>`` give this package's modules
    (``triton.language`` is tilec's language) for the rest of the process, or until
    ``uninstall_as_triton()``: an unmodified Triton script then runs on tilec. Importing
    a Triton module this package lacks fails as a missing module does."""
    present = sys.modules.get("triton")
    if present is not None and present is not sys.modules[__name__]:
        raise TilecError(f"triton is already imported (from {getattr(present, '__file__', '?')}"
                         "); install tilec's alias before anything imports triton")
    sys.modules.update(_ours())


def uninstall_as_triton() -> None:
    """Undo ``install_as_triton()``: ``triton`` is again whatever Python finds."""
    ours = _ours()
    for name, module in ours.items():
        if sys.modules.get(name) is module:
            del sys.modules[name]


__all__ = [
    "TRITON_API",
    "Autotuner",
    "CompilationError",
    "Config",
    "Heuristics",
    "JITFunction",
    "KernelInterface",
    "OutOfResources",
    "autotune",
    "backends",
    "cdiv",
    "compiler",
    "constexpr_function",
    "heuristics",
    "install_as_triton",
    "jit",
    "language",
    "next_power_of_2",
    "runtime",
    "set_allocator",
    "testing",
    "tools",
    "uninstall_as_triton",
]
