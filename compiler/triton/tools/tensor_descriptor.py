"""``triton.tools.tensor_descriptor.TensorDescriptor``: a tensor and the block shape a
kernel reads it in, made on the host, as Triton's (Triton passes it to a kernel, which
then loads and stores blocks through it with TMA on Hopper).

The data class is checked here as Triton checks it. Passing one to a tilec launch is not
supported yet, and says so (``tc.UnsupportedError``): make the descriptor inside the
kernel with ``tl.make_tensor_descriptor(base, shape, strides, block_shape)`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler.errors import LaunchError

MAX_RANK = 5
PADDINGS = ("zero", "nan")


@dataclass
class TensorDescriptor:
    """Blocks of ``block_shape`` over ``base`` (a PyTorch tensor or NumPy array) seen as
    ``shape`` with element ``strides``; reads past its edges give ``padding``."""

    base: Any
    shape: list[int]
    strides: list[int]
    block_shape: list[int]
    padding: str = "zero"

    def __post_init__(self) -> None:
        rank = len(self.shape)
        if not 1 <= rank <= MAX_RANK:
            raise LaunchError(f"a tensor descriptor has 1 to {MAX_RANK} dimensions, got {rank}")
        if len(self.strides) != rank or len(self.block_shape) != rank:
            raise LaunchError(f"a tensor descriptor's shape, strides and block_shape have one "
                              f"entry per dimension, got {len(self.shape)}, "
                              f"{len(self.strides)} and {len(self.block_shape)}")
        if any(b < 1 or b & (b - 1) for b in self.block_shape):
            raise LaunchError(f"block_shape entries must be powers of two, got "
                              f"{list(self.block_shape)}")
        if self.strides[-1] != 1:
            raise LaunchError(f"a tensor descriptor's last dimension must be contiguous "
                              f"(stride 1), got strides {list(self.strides)}")
        if self.padding not in PADDINGS:
            raise LaunchError(f"padding must be 'zero' or 'nan', got {self.padding!r}")
        dtype = getattr(self.base, "dtype", None)
        if self.padding == "nan" and "float" not in str(dtype):
            raise LaunchError(f"padding='nan' needs a floating-point tensor, got {dtype}")
        self._check_alignment(getattr(dtype, "itemsize", None))

    def _check_alignment(self, itemsize: int | None) -> None:
        """16-byte alignment of the base and the outer strides, which TMA requires."""
        address = _address(self.base)
        if address is not None and address % 16:
            raise LaunchError("a tensor descriptor's base must be 16-byte aligned")
        if itemsize and any(s * itemsize % 16 for s in self.strides[:-1]):
            raise LaunchError(f"a tensor descriptor's strides (but the last) must be multiples "
                              f"of 16 bytes, got {list(self.strides)} of {itemsize}-byte elements")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list[int], padding: str = "zero"
                    ) -> TensorDescriptor:
        """The descriptor of all of ``tensor``, in blocks of ``block_shape``."""
        return TensorDescriptor(tensor, list(tensor.shape), _element_strides(tensor),
                                list(block_shape), padding)


def _element_strides(tensor: Any) -> list[int]:
    """Strides in elements: PyTorch's ``stride()``, or NumPy's (CuPy's) byte strides."""
    if callable(getattr(tensor, "stride", None)):
        return list(tensor.stride())
    return [s // tensor.dtype.itemsize for s in tensor.strides]


def _address(base: Any) -> int | None:
    if callable(getattr(base, "data_ptr", None)):
        return base.data_ptr()
    interface = getattr(base, "__cuda_array_interface__", None) or \
        getattr(base, "__array_interface__", None)
    return interface["data"][0] if interface else None


__all__ = ["TensorDescriptor"]
