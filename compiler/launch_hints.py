"""Triton's launch options that tilec accepts and checks but that change nothing it
computes: ``num_ctas`` (1: one program a block; clusters are not made), ``launch_pdl``
(programmatic dependent launch: without it each launch starts after the one before ends,
which is what ``tl.extra.cuda.gdc_wait`` waits for, so the kernel is right either way),
``maxnreg`` (a register cap: ptxas' own choice stands) and ``enable_fp_fusion`` (tilec
never contracts a multiply and an add into an fma: every float op is rounded, as with
``False``)."""

from __future__ import annotations

from typing import Any

from compiler.errors import LaunchError, UnsupportedError

NAMES = ("num_ctas", "launch_pdl", "maxnreg", "enable_fp_fusion", "extern_libs",
         "waves_per_eu", "matrix_instr_nonkdim", "kpack")
"""``extern_libs`` names bitcode libraries to link (``{"libdevice": path}``): tilec's
libdevice functions are its own, so the paths are not read. The last three are AMD's
tuning knobs, which Triton's tutorials put in the configs they try on any target that is
not CUDA: taken and ignored, as Triton's CUDA backend ignores the options it does not
know."""


def check(kwargs: dict[str, Any], params: list[str]) -> None:
    """Each hint in ``kwargs`` (that names no parameter) has a value Triton takes."""
    for name in NAMES:
        if name not in kwargs or name in params:
            continue
        value = kwargs[name]
        if name == "num_ctas":
            if not _whole(value) or value < 1:
                raise LaunchError(f"num_ctas must be a positive integer, got {value!r}")
            if value > 1:
                raise UnsupportedError(f"num_ctas={value}: tilec launches one program a "
                                       "block (thread-block clusters are not supported yet)")
        elif name == "maxnreg":
            if value is not None and (not _whole(value) or not 1 <= value <= 255):
                raise LaunchError(f"maxnreg must be None or 1 to 255, got {value!r}")
        elif name in ("launch_pdl", "enable_fp_fusion") and not isinstance(value, bool):
            raise LaunchError(f"{name} must be True or False, got {value!r}")
        elif name == "extern_libs" and not isinstance(value, dict | None):
            raise LaunchError(f"extern_libs must be a dict of library paths, got {value!r}")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
