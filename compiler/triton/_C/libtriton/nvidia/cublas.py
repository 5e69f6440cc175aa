"""``triton._C.libtriton.nvidia.cublas``: ``CublasLt(workspace)`` and its ``matmul(a, b,
c)`` (``c = a @ b.T``), which Triton's persistent-matmul tutorial measures its kernels
against; ``compiler.cublas`` says what it takes."""

from compiler.cublas import CublasLt

__all__ = ["CublasLt"]
