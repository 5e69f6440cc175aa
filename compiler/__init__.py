"""tilec: Python tile kernels compiled through xDSL to PTX, WGSL and NumPy."""

from compiler.errors import (
    BackendUnavailableError,
    CompileError,
    LaunchError,
    OutOfBoundsError,
    TilecError,
    UnsupportedError,
    VerificationError,
)

__all__ = [
    "BackendUnavailableError", "CompileError", "LaunchError", "OutOfBoundsError",
    "TilecError", "UnsupportedError", "VerificationError",
]
