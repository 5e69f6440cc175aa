"""tilec: Python tile kernels compiled through xDSL to PTX, WGSL and NumPy.

``import compiler as tc``. Importing this package loads no xDSL: the compiler is
imported only when a kernel must be compiled.
"""

from compiler import testing  # tc.testing.do_bench, perf_report, Benchmark
from compiler.ahead_of_time import compile
from compiler.autotune import Config, autotune, heuristics
from compiler.compile_time import constexpr_function
from compiler.errors import (
    BackendUnavailableError,
    CompileError,
    DeviceAssertionError,
    InternalCompilerError,
    LaunchError,
    OutOfBoundsError,
    TilecError,
    UnsupportedError,
    VerificationError,
)
from compiler.export import export, export_graph, export_program
from compiler.graphs import graph
from compiler.jit import (
    CompiledKernel,
    KernelFunction,
    TileFunction,
    backends,
    func,
    kernel,
    set_backend,
)
from compiler.memory import asarray, empty, synchronize, to_numpy, zeros
from compiler.tracebacks import hide_frames

__version__ = "0.1.0"

hide_frames()  # uncaught TilecErrors print without tilec's own frames


@constexpr_function
def cdiv(a: int, b: int) -> int:
    """Ceiling division, for grids: ``cdiv(n, BLOCK)``."""
    return -(-a // b)


def wgsl_device():
    """The wgpu device tilec uses by default for the wgsl backend."""
    from backends.wgsl import wgsl_device as device
    return device()


def wgsl_array(buffer, dtype, shape):
    """A ``wgpu.GPUBuffer`` with the dtype and shape it holds: launches take it as such
    (a bare buffer is taken as float32)."""
    from backends.wgsl.arrays import wgsl_array as typed
    return typed(buffer, dtype, shape)


__all__ = [
    "BackendUnavailableError", "CompileError", "CompiledKernel", "Config",
    "DeviceAssertionError", "InternalCompilerError", "KernelFunction", "LaunchError",
    "OutOfBoundsError", "TileFunction", "TilecError", "UnsupportedError",
    "VerificationError", "asarray", "autotune", "backends", "cdiv", "compile", "empty",
    "export", "export_graph", "export_program", "func", "graph", "heuristics", "kernel", "set_backend",
    "synchronize", "testing", "to_numpy", "wgsl_array", "wgsl_device", "zeros",
]
