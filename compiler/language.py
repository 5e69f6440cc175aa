"""The tile language used inside kernels (``import compiler.language as tl``).

Kernel bodies are compiled, never executed by Python: the builtins here only name
things for the frontend, which maps each one to IR. Calling one outside a kernel raises.
Imports nothing heavy (no xDSL), so the launch path can use the dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
    def is_int(self) -> bool:
        return self.kind in "iub"

    @property
    def is_signed(self) -> bool:
        return self.kind == "i"

    @property
    def numpy(self) -> np.dtype | None:
        """The NumPy dtype, or None (bfloat16 without ml_dtypes)."""
        return _numpy_dtype(self)

    def __repr__(self) -> str:
        return f"tl.{self.name}"

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
uint32 = dtype("uint32", "u32", 32, "u")
bool_ = int1
ALL_DTYPES = (float16, bfloat16, float32, float64, int1, int8, int16, int32, int64,
              uint8, uint32)

_SPELLINGS = {d.short: d for d in ALL_DTYPES} | {d.name: d for d in ALL_DTYPES} | {
    "fp16": float16, "fp32": float32, "fp64": float64, "bool": int1,
}


def dtype_from_str(s: str) -> dtype:
    """``"f32"``, ``"fp32"`` or ``"float32"`` -> ``tl.float32``."""
    try:
        return _SPELLINGS[s]
    except KeyError:
        raise ValueError(f"unknown dtype {s!r}") from None


def _numpy_dtype(d: dtype) -> np.dtype | None:
    if d is bfloat16:
        try:
            import ml_dtypes
        except ImportError:
            return None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"i1": np.bool_}.get(d.short, d.name))


def literal_int_dtype(v: int) -> dtype:
    """A Python int argument is int32, or int64 when it does not fit (Triton's rule)."""
    return int32 if -2**31 <= v < 2**31 else int64


def dtype_from_numpy(nd: np.dtype) -> dtype | None:
    nd = np.dtype(nd)
    for d in ALL_DTYPES:
        if d is not bfloat16 and _numpy_dtype(d) == nd:
            return d
    if nd.name == "bfloat16":
        return bfloat16
    return None


class constexpr:
    """Annotation for compile-time arguments; they specialize the kernel."""

    def __init__(self, value=None):
        self.value = value

    def __repr__(self) -> str:
        return f"constexpr({self.value!r})"


def _builtin(fn):
    """Mark ``fn`` as a kernel builtin: the frontend lowers it; Python may not call it."""

    def outside(*_args, **_kwargs):
        raise RuntimeError(
            f"tl.{fn.__name__} can only be used inside a @tc.kernel or @tc.func")

    outside.__name__ = fn.__name__
    outside.__doc__ = fn.__doc__
    outside.__tilec_builtin__ = fn.__name__
    return outside


@_builtin
def program_id(axis):
    """The index of this program along grid ``axis`` (0, 1 or 2)."""


@_builtin
def num_programs(axis):
    """The grid size along ``axis``."""


@_builtin
def arange(start, end):
    """The 1-D int32 tile ``[start, end)``; ``end - start`` must be a power of two."""


@_builtin
def zeros(shape, dtype):
    """A tile of zeros."""


@_builtin
def full(shape, value, dtype):
    """A tile filled with ``value``."""


@_builtin
def zeros_like(x):
    """Zeros with the shape and dtype of ``x``."""


@_builtin
def load(pointer, mask=None, other=None):
    """Read through ``pointer`` where ``mask`` holds, ``other`` elsewhere."""


@_builtin
def store(pointer, value, mask=None):
    """Write ``value`` through ``pointer`` where ``mask`` holds."""


@_builtin
def where(condition, x, y):
    """Elementwise ``condition ? x : y``."""


@_builtin
def maximum(x, y):
    """Elementwise maximum (NaN-propagating for floats)."""


@_builtin
def minimum(x, y):
    """Elementwise minimum (NaN-propagating for floats)."""


@_builtin
def clamp(x, lo, hi):
    """``minimum(maximum(x, lo), hi)``."""


@_builtin
def fma(x, y, z):
    """``x * y + z``."""


@_builtin
def cdiv(x, y):
    """Ceiling division ``(x + y - 1) // y``."""


@_builtin
def cast(x, dtype):
    """``x`` converted to ``dtype``."""


@_builtin
def exp(x):
    """e ** x"""


@_builtin
def exp2(x):
    """2 ** x"""


@_builtin
def log(x):
    """Natural logarithm."""


@_builtin
def log2(x):
    """Base-2 logarithm."""


@_builtin
def sqrt(x):
    """Square root."""


@_builtin
def rsqrt(x):
    """1 / sqrt(x)."""


@_builtin
def sin(x):
    """Sine."""


@_builtin
def cos(x):
    """Cosine."""


@_builtin
def abs(x):
    """Absolute value."""


@_builtin
def floor(x):
    """Round toward -inf."""


@_builtin
def ceil(x):
    """Round toward +inf."""


@_builtin
def sigmoid(x):
    """1 / (1 + exp(-x))."""


@_builtin
def static_assert(cond, msg=""):
    """Compile-time assertion on constexprs."""


@_builtin
def static_print(*values):
    """Print constexpr values at compile time."""
