"""Triton's module names for the tile language, all naming ``compiler.language`` or the
namespaces it builds (``tl.math``, ``tl.extra.libdevice``): kernels written against
Triton import them by those names, and the frontend knows a builtin by the function
object, so each name must be the very module tilec's kernels use."""

from __future__ import annotations

import sys
import types

import compiler.language as tl
from compiler.compile_time import constexpr_function

PACKAGE = "compiler.triton.language"


def alias_language() -> None:
    """Register ``compiler.triton.language`` and its submodules (and ``compiler.language.
    core`` / ``.extra.cuda``, where an ``import ... as`` looks them up) in ``sys.modules``.
    ``tl.extra.cuda.libdevice`` is Triton 3.0's spelling of ``tl.extra.libdevice``, which
    ported kernels still use, so ``tl.extra`` gains it; ``tl`` gains ``core``."""
    extra = tl.extra
    if not hasattr(extra, "cuda"):
        cuda = types.ModuleType(f"{tl.__name__}.extra.cuda",
                                "``tl.extra.cuda``: holds ``libdevice`` (Triton 3.0's place).")
        cuda.libdevice = extra.libdevice
        cuda.gdc_wait, cuda.gdc_launch_dependents = tl.gdc_wait, tl.gdc_launch_dependents
        extra.cuda = cuda
    tl.core = tl  # ``tl.core.X`` as Triton's submodule
    standard = types.ModuleType(f"{PACKAGE}.standard", "``tl.standard``: Triton's "
                                "standard functions (the language's own) and ``_log2``.")
    standard.__dict__.update({k: v for k, v in vars(tl).items() if not k.startswith("__")})
    standard._log2 = _log2
    modules = {"": tl, ".core": tl, ".standard": standard, ".math": tl.math, ".extra": extra,
               ".extra.libdevice": extra.libdevice, ".extra.cuda": extra.cuda,
               ".extra.cuda.libdevice": extra.libdevice}
    for prefix in (tl.__name__, PACKAGE):
        for suffix, module in modules.items():
            sys.modules.setdefault(prefix + suffix, module)


@constexpr_function
def _log2(n: int) -> int:
    """The base-2 logarithm of a power of two, at compile time (kernels import Triton's
    ``triton.language.standard._log2`` to size bitonic sorts)."""
    return max(int(n).bit_length() - 1, 0)

