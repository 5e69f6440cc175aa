"""The errors a user can cause (docs/language.md, "Errors"), and the one style of launch
errors about an argument (``argument_error``). Imports nothing heavy."""

from __future__ import annotations

import os
import tempfile
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.dtypes import ALL_DTYPES, int1


@dataclass(frozen=True)
class SourceLoc:
    """A position in the user's kernel source (1-based line and column)."""

    file: str
    line: int
    col: int
    text: str = ""  # the source line itself, for the caret display

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class TilecError(Exception):
    """Base of every error a user can cause. ``loc`` points into kernel source."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(self._render())

    def _render(self) -> str:
        if self.loc is None:
            return self.message
        out = f"{self.loc}: {self.message}"
        if self.loc.text:
            stripped = self.loc.text.rstrip()
            indent = len(stripped) - len(stripped.lstrip())
            out += f"\n    {stripped.lstrip()}\n    {' ' * max(self.loc.col - 1 - indent, 0)}^"
        return out

    def __str__(self) -> str:
        return self._render()


class CompileError(TilecError):
    """Bad kernel source, an unsupported construct, or a type or shape mismatch."""


class UnsupportedError(TilecError):
    """A valid program that the chosen backend cannot run."""


class LaunchError(TilecError):
    """Bad launch arguments."""


class OutOfResources(LaunchError):
    """A kernel needs more of a per-program resource (shared memory, registers) than the
    device gives one program: smaller tiles, fewer stages or fewer warps fit. Triton's
    name, so a ported autotuner skips such a config as Triton's does."""


class ArgumentError(LaunchError):
    """An argument that cannot be taken, found where its parameter is not known (the
    launch cache's key of the values, say): the launch finds the parameter and raises
    ``argument_error`` with it, so the user never sees this one unnamed. ``fix``: as in
    ``argument_error``."""

    def __init__(self, problem: str, fix: str = ""):
        self.problem, self.fix = problem, fix
        super().__init__(problem)

    def named(self, name: str) -> LaunchError:
        return argument_error(name, self.problem, self.fix)


class BackendUnavailableError(TilecError):
    """The requested backend cannot run on this machine (no GPU, no adapter)."""


class VerificationError(TilecError):
    """``verify=True`` found a backend result that differs from the NumPy reference."""


class OutOfBoundsError(TilecError):
    """NumPy backend: an unmasked access outside its array."""


class DeviceAssertionError(TilecError):
    """A ``tl.device_assert`` failed (names the program id, the message and the line)."""


class InternalCompilerError(CompileError):
    """A bug in tilec, not in the kernel: says so, and where the failing stage's IR went."""


def argument_error(name: str, problem: str, fix: str = "") -> LaunchError:
    """The launch error about argument ``name``, in the style of every backend:
    ``argument 'x': <problem>[; pass <fix>]``. ``problem`` says what the value is
    (``describe_value``) and what would be accepted; ``fix``, a call making an acceptable
    value, with ``{}`` for the argument (``"np.ascontiguousarray({})"``)."""
    return LaunchError(f"argument {name!r}: {problem}" + (f"; pass {fix.format(name)}" if fix
                                                           else ""))


_LIBRARIES = {"numpy": "NumPy array", "torch": "PyTorch tensor", "cupy": "CuPy array",
              "jax": "JAX array", "jaxlib": "JAX array"}


def describe_value(value: Any, strides: bool = False) -> str:
    """A launch argument as messages show it: an array by library, dtype and shape (and
    ``strides``, as the library gives them), a buffer by size, anything else by type and,
    when short, value: ``a NumPy array of float32 with shape (64, 32)``, ``list``,
    ``str '4'``."""
    kind = type(value)
    if isinstance(value, np.generic):
        return f"NumPy {value.dtype} {value}"
    if kind.__module__.startswith("wgpu") and hasattr(value, "size"):
        return f"a wgpu.{kind.__name__} of {value.size} bytes"
    if kind.__name__ == "WgslArray":
        return f"a tc.wgsl_array of {value.dtype} with shape {value.shape}"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        library = _LIBRARIES.get(kind.__module__.split(".")[0], kind.__name__)
        text = f"a {library} of {str(dtype).removeprefix('torch.')} with shape {tuple(shape)}"
        if strides:
            steps = value.stride() if callable(getattr(value, "stride", None)) else \
                getattr(value, "strides", None)
            text += f" and strides {tuple(steps)}" if steps is not None else ""
        device = getattr(value, "device", None)
        return text + (f" on {device}" if library == "PyTorch tensor" else "")
    if value is None:
        return "None"
    text = repr(value)
    return kind.__name__ if len(text) > 40 else f"{kind.__name__} {text}"


def contiguous_fix(value: Any) -> str:
    """The call that makes a contiguous copy of ``value``, for ``argument_error``."""
    library = type(value).__module__.split(".")[0]
    return {"numpy": "np.ascontiguousarray({})", "torch": "{}.contiguous()",
            "cupy": "cupy.ascontiguousarray({})"}.get(library, "a contiguous copy of {}")


def negative_strides(value: Any) -> ArgumentError:
    """An array that runs backwards in memory: a kernel addresses an array from its
    first element with the strides it is given, which tilec takes as non-negative."""
    return ArgumentError(f"{describe_value(value, strides=True)} has negative strides",
                         contiguous_fix(value))


def not_contiguous(value: Any) -> ArgumentError:
    return ArgumentError(f"{describe_value(value, strides=True)} is not contiguous",
                         contiguous_fix(value))


def unsupported_dtype(value: Any, dtype: Any) -> ArgumentError:
    """An array whose elements tilec has no dtype for (fp8, complex, ...)."""
    names = ", ".join("bool" if d is int1 else d.name for d in ALL_DTYPES)
    name = str(dtype).removeprefix("torch.")
    bits = (" (tilec has no e8m0: pass its bits, x.view(np.uint8), which ct.mma_scaled "
            "reads as 2**(bits - 127))") if name == "float8_e8m0fnu" else ""
    return ArgumentError(f"{name} arrays are not supported (got {describe_value(value)}); "
                         f"use one of {names}{bits}")


REPORT = ("this is a tilec bug, not a problem with your kernel: please report it on the "
          "tilec issue tracker with the kernel source, this message and the file {path}")


def internal_error(exc: BaseException, stage: str, ir: str,
                   loc: SourceLoc | None = None) -> InternalCompilerError:
    """An ``InternalCompilerError`` for ``exc``, raised while running ``stage``: the IR
    that stage started from (and the traceback, as comments) goes to a temporary file,
    so the report can be reproduced (``tilec opt -p <stage> <file>`` for a pass)."""
    fd, path = tempfile.mkstemp(prefix=f"tilec-bug-{stage}-", suffix=".mlir")
    trace = "".join(traceback.format_exception(exc)).rstrip()
    with os.fdopen(fd, "w") as f:
        f.write("".join(f"// {line}\n" for line in trace.splitlines()) + ir + "\n")
    return InternalCompilerError(f"internal compiler error in {stage}: "
                                 f"{type(exc).__name__}: {exc}\n{REPORT.format(path=path)}",
                                 loc)


for _cls in (TilecError, CompileError, UnsupportedError, LaunchError, OutOfResources,
             BackendUnavailableError, VerificationError, OutOfBoundsError,
             DeviceAssertionError, InternalCompilerError):
    _cls.__module__ = "tilec"
