"""``triton.compiler.compiler``: ``CompiledKernel`` and ``triton_key`` under the module
name Triton gives them."""

from compiler.jit import CompiledKernel
from compiler.triton.runtime.cache import triton_key

__all__ = ["CompiledKernel", "triton_key"]
