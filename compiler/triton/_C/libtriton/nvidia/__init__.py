"""``triton._C.libtriton.nvidia``: ``cublas``."""

from compiler.triton._C.libtriton.nvidia import cublas

__all__ = ["cublas"]
