"""``triton.tools.tensor_descriptor.TensorDescriptor``: a tensor and the block shape a
kernel reads it in, made on the host, as Triton's (Triton passes it to a kernel, which
then loads and stores blocks through it with TMA on Hopper).

The data class is checked when made, as Triton checks it, and again at each launch that
passes it (``compiler.descriptors``): its fields may have changed since (an autotuning
``pre_hook`` sets ``block_shape``). In the kernel it is the descriptor
``tl.make_tensor_descriptor(base, shape, strides, block_shape)`` would make.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler import descriptors
from compiler.errors import LaunchError


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
        why = descriptors.problem(self)
        if why is not None:
            raise LaunchError(why)

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


__all__ = ["TensorDescriptor"]
