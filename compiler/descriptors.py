"""Host tensor descriptors (Triton's ``TensorDescriptor``) as arguments of Triton-style
kernels, on the launch side. No xDSL here.

A descriptor argument specializes the kernel (``compiler.specialize``) by its base's
element type and alignment, its ``block_shape`` and ``padding`` (compile-time facts, as
Triton makes them), and by its shape and strides as integer arguments specialize it
(divisibility by 16; ``i64`` beyond ``i32``); its last stride, 1 by contract, is the
constant 1. It is passed as
several kernel parameters: the base pointer, then one per shape entry, then one per
stride (``desc``, ``desc_shape0``, ..., ``desc_stride0``, ...). In the kernel these parts
are the descriptor ``tl.make_tensor_descriptor`` makes of them
(``compiler.frontend.triton.host_descriptors``), so its lowerings apply: TMA on Hopper,
pointers and masks elsewhere.

A descriptor's fields may change after it is made (an autotuning ``pre_hook`` sets
``block_shape`` before each trial), so every launch checks them again and keys its
compiled kernel by them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.errors import ArgumentError
from compiler.kinfo import ArgSpec

MAX_RANK = 5
PADDINGS = ("zero", "nan")


class tensor_descriptor_base:
    """What ``tl.make_tensor_descriptor`` makes, and a host ``TensorDescriptor`` argument
    is, in a kernel: there ``isinstance(x, tl.tensor_descriptor)`` is True for one, False
    for a pointer (decided when compiling). Nothing outside a kernel is one."""


class tensor_descriptor(tensor_descriptor_base):
    """Triton's name for a descriptor in a kernel (see ``tensor_descriptor_base``)."""


@dataclass(frozen=True)
class DescriptorLayout:
    """The compile-time part of a descriptor parameter: its block shape and padding, and
    the scalar parameters of its shape and strides after the base pointer."""

    block_shape: tuple[int, ...]
    padding: str
    parts: tuple[ArgSpec, ...]

    @property
    def rank(self) -> int:
        return len(self.block_shape)


def is_descriptor(v: Any) -> bool:
    """``v`` is a host tensor descriptor: ``compiler.triton.tools``' or Triton's."""
    return type(v).__name__ == "TensorDescriptor" and hasattr(v, "block_shape")


def problem(desc: Any) -> str | None:
    """What is wrong with a descriptor's fields (None: nothing), as Triton checks them:
    TMA needs a contiguous last dimension and a 16-byte aligned base and strides."""
    shape, strides, block = list(desc.shape), list(desc.strides), list(desc.block_shape)
    rank = len(shape)
    if not 1 <= rank <= MAX_RANK:
        return f"a tensor descriptor has 1 to {MAX_RANK} dimensions, got {rank}"
    if len(strides) != rank or len(block) != rank:
        return (f"a tensor descriptor's shape, strides and block_shape have one entry per "
                f"dimension, got {len(shape)}, {len(strides)} and {len(block)}")
    if not all(_is_int(n) for n in (*shape, *strides)):
        return f"a tensor descriptor's shape and strides are integers, got {shape} and {strides}"
    if not all(_is_int(b) and b >= 1 and not b & (b - 1) for b in block):
        return f"block_shape entries must be powers of two, got {block}"
    if strides[-1] != 1:
        return (f"a tensor descriptor's last dimension must be contiguous (stride 1), got "
                f"strides {strides}")
    if desc.padding not in PADDINGS:
        return f"padding must be 'zero' or 'nan', got {desc.padding!r}"
    dtype = getattr(desc.base, "dtype", None)
    if desc.padding == "nan" and "float" not in str(dtype):
        return f"padding='nan' needs a floating-point tensor, got {dtype}"
    return _misaligned(desc.base, strides, getattr(dtype, "itemsize", None))


def _is_int(n: Any) -> bool:
    return isinstance(n, int | np.integer) and not isinstance(n, bool | np.bool_)


def _misaligned(base: Any, strides: list[int], itemsize: int | None) -> str | None:
    """16-byte alignment of the base and the outer strides, which TMA requires."""
    address = _address(base)
    if address is not None and address % 16:
        return f"a tensor descriptor's base must be 16-byte aligned, got address {address:#x}"
    if itemsize and any(s * itemsize % 16 for s in strides[:-1]):
        return (f"a tensor descriptor's strides (but the last) must be multiples of 16 bytes, "
                f"got {strides} of {itemsize}-byte elements")
    return None


def _address(base: Any) -> int | None:
    if callable(getattr(base, "data_ptr", None)):
        return base.data_ptr()
    interface = getattr(base, "__cuda_array_interface__", None) or \
        getattr(base, "__array_interface__", None)
    return interface["data"][0] if interface else None


def parts(desc: Any) -> list[int]:
    """The descriptor's shape then strides, as Python ints, once its fields are checked
    (``ArgumentError``: what is wrong)."""
    why = problem(desc)
    if why is not None:
        raise ArgumentError(why)
    return [int(n) for n in (*desc.shape, *desc.strides)]


def expand(args: Sequence[Any]) -> list:
    """Runtime arguments as the compiled kernel takes them: each descriptor as its base,
    shape and strides."""
    out = []
    for v in args:
        if is_descriptor(v):
            out += [v.base, *(int(n) for n in v.shape), *(int(n) for n in v.strides)]
        else:
            out.append(v)
    return out
