"""tilec: Python tile kernels compiled through xDSL to PTX, WGSL and NumPy.

``import compiler as tc``. Importing this package loads no xDSL: the compiler is
imported only when a kernel must be compiled.
"""

from compiler.errors import (
    BackendUnavailableError,
    CompileError,
    DeviceAssertionError,
    LaunchError,
    OutOfBoundsError,
    TilecError,
    UnsupportedError,
    VerificationError,
)
from compiler.jit import (
    CompiledKernel,
    KernelFunction,
    TileFunction,
    backends,
    compile,
    func,
    kernel,
    set_backend,
)

__version__ = "0.1.0"


def cdiv(a: int, b: int) -> int:
    """Ceiling division, for grids: ``cdiv(n, BLOCK)``."""
    return -(-a // b)


def wgsl_device():
    """The wgpu device tilec uses by default for the wgsl backend."""
    from backends.wgsl import wgsl_device as device
    return device()


__all__ = [
    "BackendUnavailableError", "CompileError", "CompiledKernel", "DeviceAssertionError",
    "KernelFunction", "LaunchError", "OutOfBoundsError", "TileFunction", "TilecError",
    "UnsupportedError", "VerificationError", "backends", "cdiv", "compile", "func", "kernel",
    "set_backend", "wgsl_device",
]
