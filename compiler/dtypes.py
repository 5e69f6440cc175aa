"""The scalar element types of the tile language (``tl.float32``, ``tl.float8e4nv``, ...),
their spellings in signatures and their NumPy dtypes. ``compiler.language`` re-exports them.

NumPy has no bfloat16 or fp8: those are ``ml_dtypes``' (``bfloat16``, ``float8_e4m3fn``,
``float8_e5m2``), which tilec needs only where it holds such values in NumPy arrays (the
numpy backend, and arrays given to a launch). Imports nothing heavy (no xDSL), so the
launch path can use the dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.compile_time import constexpr_function


@dataclass(frozen=True)
class _CompileTimeAnswer:
    """``dtype.is_fp16`` and the like: called, the answer."""

    answer: bool
    __tilec_constexpr_function__ = True

    def __call__(self) -> bool:
        return self.answer


@dataclass(frozen=True)
class dtype:
    """A scalar element type: ``name`` as in Triton, ``short`` as in signatures."""

    name: str
    short: str
    bits: int
    kind: str  # "f" float, "i" signed int, "u" unsigned int, "b" bool

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "i"

    # Triton's questions, methods as there (kernels call them at compile time)
    @constexpr_function
    def is_fp8(self) -> bool:
        return self.kind == "f" and self.bits == 8

    @constexpr_function
    def is_int(self) -> bool:
        return self.kind in "iub"

    @constexpr_function
    def is_floating(self) -> bool:
        return self.is_float

    @property
    def primitive_bitwidth(self) -> int:
        return self.bits

    @property
    def scalar(self) -> dtype:
        return self

    @property
    def value(self) -> dtype:
        """Itself: a dtype reaches a Triton helper as a constexpr, whose ``.value`` is it."""
        return self

    def __getattr__(self, name: str):
        """Triton's other questions: ``is_fp16()``, ``is_bf16()``, ``is_int8()``, ...
        (whether this is the dtype of that name), ``is_int_signed()``, ``is_int_unsigned()``,
        ``is_bool()`` (of its kind), and ``is_ptr()``, ``is_block()`` (never: a scalar)."""
        if name.startswith("is_") and name[3:] in _BY_SHORT:
            return _CompileTimeAnswer(self is _BY_SHORT[name[3:]])
        if name in _KIND_QUESTIONS:
            return _CompileTimeAnswer(self.kind == _KIND_QUESTIONS[name])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def numpy(self) -> np.dtype | None:
        """The NumPy dtype, or None (bfloat16 and fp8 without ml_dtypes)."""
        return _numpy_dtype(self)

    @property
    def element_ty(self) -> dtype:
        """Itself: a pointer's ``.dtype`` here is already its element type, so Triton's
        ``ptr.dtype.element_ty`` names the same dtype."""
        return self

    def __repr__(self) -> str:
        return f"tl.{self.name}"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class pointer_type:
    """The type of a pointer to ``element_ty`` elements, as Triton names it: the target of
    ``addr.to(tl.pointer_type(tl.float16))``, which makes a pointer of a 64-bit integer
    address. Kernels call it at compile time (it is a compile-time value, like a dtype)."""

    element_ty: dtype
    address_space: int = 1  # global memory, Triton's default

    __tilec_constexpr_function__ = True  # the frontend calls it as Python would

    def __post_init__(self) -> None:
        if not isinstance(self.element_ty, dtype):
            raise TypeError(f"tl.pointer_type takes a dtype such as tl.float16, got "
                            f"{self.element_ty!r}")
        if self.address_space != 1:
            raise ValueError(f"tl.pointer_type: only address space 1 (global memory) is "
                             f"supported, got {self.address_space}")

    @property
    def name(self) -> str:
        return f"pointer<{self.element_ty.name}>"

    def __repr__(self) -> str:
        return f"tl.pointer_type({self.element_ty!r})"

    def __str__(self) -> str:
        return self.name


float16 = dtype("float16", "f16", 16, "f")
bfloat16 = dtype("bfloat16", "bf16", 16, "f")
float32 = dtype("float32", "f32", 32, "f")
float64 = dtype("float64", "f64", 64, "f")
int1 = dtype("int1", "i1", 1, "b")
int8 = dtype("int8", "i8", 8, "i")
int16 = dtype("int16", "i16", 16, "i")
int32 = dtype("int32", "i32", 32, "i")
int64 = dtype("int64", "i64", 64, "i")
uint8 = dtype("uint8", "u8", 8, "u")
uint16 = dtype("uint16", "u16", 16, "u")
uint32 = dtype("uint32", "u32", 32, "u")
uint64 = dtype("uint64", "u64", 64, "u")
float8e4nv = dtype("float8e4nv", "fp8e4nv", 8, "f")  # e4m3fn: no infinities, NaN 0x7F/0xFF
float8e5 = dtype("float8e5", "fp8e5", 8, "f")  # e5m2: IEEE-like, with infinities
bool_ = int1
ALL_DTYPES = (float16, bfloat16, float32, float64, int1, int8, int16, int32, int64,
              uint8, uint16, uint32, uint64, float8e4nv, float8e5)
_KIND_QUESTIONS = {"is_int_signed": "i", "is_int_unsigned": "u", "is_bool": "b",
                   "is_ptr": "pointer", "is_block": "block"}  # the last two: never a kind
# Triton's names in its per-dtype questions: is_fp16, is_bf16, is_int8, is_uint32, ...
_BY_SHORT = {"fp16": float16, "bf16": bfloat16, "fp32": float32, "fp64": float64,
             "int1": int1, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
             "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
             "fp8e4nv": float8e4nv, "fp8e5": float8e5}

ML_DTYPES = {bfloat16: "bfloat16", float8e4nv: "float8_e4m3fn", float8e5: "float8_e5m2"}
"""The dtypes NumPy lacks -> their ``ml_dtypes`` names (PyTorch's too)."""
_FROM_ML = {name: d for d, name in ML_DTYPES.items()}

# Triton's spellings too: fp16, ..., and fp8 by PyTorch's names (float8_e4m3fn)
_SPELLINGS = {d.short: d for d in ALL_DTYPES} | {d.name: d for d in ALL_DTYPES} | {
    "fp16": float16, "fp32": float32, "fp64": float64, "bool": int1,
} | _FROM_ML


def dtype_from_str(s: str) -> dtype:
    """``"f32"``, ``"fp32"`` or ``"float32"`` -> ``tl.float32``."""
    try:
        return _SPELLINGS[s]
    except KeyError:
        raise ValueError(f"unknown dtype {s!r}") from None


def _numpy_dtype(d: dtype) -> np.dtype | None:
    if d in ML_DTYPES:
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(getattr(ml_dtypes, ML_DTYPES[d]))
    return np.dtype({"i1": np.bool_}.get(d.short, d.name))


def literal_int_dtype(v: int) -> dtype:
    """A Python int argument is int32, or uint64 from 2^63 (to 2^64), or else int64
    (Triton's rule)."""
    return int32 if -2**31 <= v < 2**31 else uint64 if v >= 2**63 else int64


def dtype_from_numpy(nd: np.dtype) -> dtype | None:
    nd = np.dtype(nd)
    if nd.name in _FROM_ML:  # by name: no need to import ml_dtypes to tell
        return _FROM_ML[nd.name]
    for d in ALL_DTYPES:
        if d not in ML_DTYPES and _numpy_dtype(d) == nd:
            return d
    return None
