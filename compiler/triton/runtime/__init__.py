"""``triton.runtime``: the driver, the autotuner and the JIT, with Triton's names
(``runtime.jit`` is the module, as in Triton: ``from triton.runtime.jit import jit``)."""

from compiler.triton.runtime.autotuner import (
    Autotuner,
    Config,
    Heuristics,
    autotune,
    heuristics,
)
from compiler.triton.runtime.driver import driver
from compiler.triton.runtime.errors import OutOfResources
from compiler.triton.runtime.jit import JITFunction, KernelInterface

__all__ = ["Autotuner", "Config", "Heuristics", "JITFunction", "KernelInterface",
           "OutOfResources", "autotune", "driver", "heuristics"]
