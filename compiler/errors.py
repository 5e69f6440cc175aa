"""The errors a user can cause (docs/language.md, "Errors"). Imports nothing heavy."""

from __future__ import annotations

import os
import tempfile
import traceback
from dataclasses import dataclass


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
