"""``triton.compiler``: ``CompiledKernel`` (what a warm-up launch returns). Triton's
compiler entry points are not here: tilec's ahead-of-time compile is ``tc.compile``."""

from compiler.jit import CompiledKernel
from compiler.triton.compiler import compiler

__all__ = ["CompiledKernel", "compiler"]
