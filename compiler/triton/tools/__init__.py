"""``triton.tools``: of Triton's tools, the host tensor descriptor."""

from compiler.triton.tools import tensor_descriptor

__all__ = ["tensor_descriptor"]
