"""``triton._C.libtriton``: ``nvidia`` (cuBLAS). AMD's ``amd`` (hipBLAS) is not here, so
``from triton._C.libtriton import amd`` fails as a missing module does."""

from compiler.triton._C.libtriton import nvidia

__all__ = ["nvidia"]
