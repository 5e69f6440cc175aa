"""A dtype argument of the cuTile-style language: ``ct.float16`` (a ``tl.dtype``), or, as
cuTile takes them, PyTorch's (``torch.float16``) and NumPy's (``np.float32``,
``np.dtype("float32")``) dtypes, or a dtype of cuTile that tilec lacks (refused, saying
why). PyTorch is not imported here: a torch dtype can only come from a kernel whose
module imported torch, so ``sys.modules`` has it."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

import compiler.language as tl
from compiler.frontend.codegen import CodeGenerator
from compiler.tile._datatype import MissingDType


def is_foreign(d: Any) -> bool:
    """Whether ``d`` is a PyTorch or NumPy dtype."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(d, torch.dtype) or isinstance(d, np.dtype) \
        or isinstance(d, type) and issubclass(d, np.generic)


def foreign_dtype(d: Any) -> tl.dtype | None:
    """tilec's dtype for a PyTorch or NumPy dtype (None: ``d`` is neither, or one tilec
    has no dtype for)."""
    if not is_foreign(d):
        return None
    if not isinstance(d, np.dtype | type):  # torch's: "torch.float16"; fp8 as ml_dtypes'
        try:
            return tl.dtype_from_str(str(d).removeprefix("torch."))
        except ValueError:
            return None
    return tl.dtype_from_numpy(np.dtype(d))


def dtype_arg(cg: CodeGenerator, d: Any, what: str) -> tl.dtype:
    """The dtype argument ``d`` of ``what`` (``ct.full``, ...) as tilec's dtype."""
    if isinstance(d, tl.dtype):
        return d
    if isinstance(d, MissingDType):
        cg.fail(f"{what}: {d!r}: {d.reason}")
    found = foreign_dtype(d)
    if found is not None:
        return found
    if is_foreign(d):
        cg.fail(f"{what}: tilec has no dtype for {d}")
    if isinstance(d, str):
        try:
            return tl.dtype_from_str(d)
        except ValueError:
            pass
    cg.fail(f"{what}: expected a dtype such as ct.float32 (or torch.float32, np.float32), "
            f"got {d!r}")
