"""What a launcher needs to know about a compiled kernel. No xDSL import: this travels in
the disk cache and must load without the compiler."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

MAX_GRID = (2**31 - 1, 65535, 65535)
"""CUDA's grid limits (x, y, z). The numpy backend keeps to them too, so a grid that runs
there runs on a GPU (wgsl folds x into y, within limits of its own)."""
GRID_LIMITS = "each size must be positive, x at most 2**31 - 1, y and z at most 65535"


@dataclass(frozen=True)
class ArgSpec:
    """How one kernel parameter is specialized for a compilation."""

    name: str
    kind: str  # "ptr", "scalar" or "constexpr"
    dtype: Any = None  # compiler.language.dtype, for ptr and scalar
    divisible16: bool = False  # ints divisible by 16; pointers 16-byte aligned
    value: Any = None  # constexpr value
    one: bool = False  # an integer launched with the value 1: compiled as the constant 1

    def __post_init__(self):
        # A NumPy (or 0-d array) constexpr is its Python value, as in Triton.
        if getattr(self.value, "shape", None) == () and hasattr(self.value, "item"):
            object.__setattr__(self, "value", self.value.item())


@dataclass(frozen=True)
class Param:
    """A non-constexpr kernel parameter, in launch order."""

    name: str
    dtype: str  # short dtype ("f32", "i32", ...): the pointee for pointers
    is_ptr: bool
    written: bool = False  # a pointer the kernel stores through (copied back to NumPy)


@dataclass
class KernelInfo:
    """Metadata of a compiled kernel (``ck.metadata``)."""

    name: str
    params: list[Param]
    backend: str
    target: str = ""
    num_warps: int = 4
    shared: int = 0  # bytes of shared (workgroup) memory
    registers: int | None = None  # per thread, where the backend reports them (ptx)
    extra: dict = field(default_factory=dict)
    num_stages: int = 2
    spills: int = 0  # bytes of spill stores (ptx)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> KernelInfo:
        d = json.loads(text)
        d["params"] = [Param(**p) for p in d["params"]]
        return cls(**d)
