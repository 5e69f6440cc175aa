"""Array tiles, cuTile style: ``import compiler.tile as ct`` in place of
``import cuda.tile as ct`` (docs/language.md, "Array tiles, cuTile style").

Kernels take arrays (NumPy, CuPy, PyTorch, wgpu buffers; any strides) and move whole
tiles by tile-granular index: ``ct.load(a, index=(i, j), shape=(tm, tn))``. Like
``compiler.language`` this module only names things for the frontend and imports no
xDSL; ``ct.kernel``, ``ct.launch`` and ``ct.cdiv`` also work on the host.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import compiler.language as tl
from compiler.arrays import TileKernel
from compiler.errors import LaunchError, describe_value
from compiler.jit import _public
from compiler.language import (  # noqa: F401 - cuTile's names for the shared builtins
    abs,
    bfloat16,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    float16,
    float32,
    float64,
    floor,
    fma,
    int8,
    int16,
    int32,
    int64,
    log,
    log2,
    maximum,
    minimum,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    static_assert,
    static_print,
    tanh,
    uint8,
    uint32,
    where,
)

bool_ = tl.int1
tfloat32 = tl.dtype("tfloat32", "tf32", 32, "f")
"""TF32 (f32 with a 10-bit mantissa): ``x.astype(ct.tfloat32)`` makes ``ct.mma`` and ``@``
of such operands multiply on tensor cores in TF32; elsewhere the tile is f32."""


class _ConstantType:
    """``ct.Constant[int]``: a parameter that is a compile-time constant (it specializes
    the kernel, like ``tl.constexpr``)."""

    def __getitem__(self, item: Any) -> tl.constexpr:
        return tl.constexpr(item)


Constant = _ConstantType()
ConstantInt = Constant[int]
ConstantBool = Constant[bool]


class PaddingMode(enum.Enum):
    """What ``ct.load`` reads outside the array (``UNDETERMINED``: any value; tilec
    reads zero)."""

    UNDETERMINED = "undetermined"
    ZERO = "zero"
    NEG_INF = "neg_inf"
    POS_INF = "pos_inf"
    NAN = "nan"


@_public
def kernel(fn: Callable | None = None, *, source: str | None = None, **_options: Any):
    """Decorator: ``@ct.kernel`` makes a kernel over arrays and tiles. ``source=``: its
    text, for a kernel Python keeps none of (defined by ``exec`` of a string)."""
    if fn is None:
        return _public(lambda f: TileKernel(f, source))
    return TileKernel(fn, source)


def launch(stream: Any, grid: Any, kernel: TileKernel, kernel_args: Sequence[Any],
           **options: Any) -> None:
    """cuTile's launch: ``kernel[grid](*kernel_args, **options)``. The PTX backend runs on
    the current CuPy/PyTorch stream: pass that one as ``stream``.
    ``kernel_args`` is a tuple, as cuTile requires: an array passed bare would otherwise
    be taken as its rows."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out
    del stream
    if not isinstance(kernel_args, tuple):
        name = getattr(kernel, "__name__", "the kernel")
        params = ", ".join(getattr(kernel, "arg_names", ()))
        raise LaunchError(f"ct.launch(stream, grid, kernel, args): args must be a tuple of "
                          f"{name}'s arguments ({params}), got {describe_value(kernel_args)}")
    kernel[grid](*kernel_args, **options)


def cdiv(a: int, b: int) -> int:
    """Ceiling division, on the host and inside kernels."""
    return -(-a // b)


cdiv.__tilec_builtin__ = "cdiv"  # type: ignore[attr-defined]


def _builtin(fn: Callable) -> Callable:
    """Mark ``fn`` as a ``ct`` builtin: the frontend lowers it; Python may not call it."""
    def outside(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(f"ct.{fn.__name__} can only be used inside a @ct.kernel")
    outside.__name__ = fn.__name__
    outside.__doc__ = fn.__doc__
    outside.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    outside.__tilec_builtin__ = fn.__name__  # type: ignore[attr-defined]
    return outside


@_builtin
def bid(axis):
    """The index of this block along a grid axis."""


@_builtin
def num_blocks(axis):
    """The number of blocks along a grid axis."""


@_builtin
def num_tiles(array, axis, shape):
    """How many tiles of ``shape`` cover ``array`` along ``axis``."""


@_builtin
def load(array, index, shape, *, order="C", padding_mode=PaddingMode.UNDETERMINED,
         latency=None, allow_tma=None):
    """The tile of ``shape`` at tile index ``index``; outside the array: ``padding_mode``."""


@_builtin
def store(array, index, tile, *, order="C", latency=None, allow_tma=None):
    """Write ``tile`` at tile index ``index``; parts outside the array are dropped."""


@_builtin
def gather(array, indices, *, padding_value=0, check_bounds=True, latency=None, mask=None):
    """``array[indices]`` element by element; out-of-range elements read ``padding_value``."""


@_builtin
def scatter(array, indices, value, *, check_bounds=True, latency=None, mask=None):
    """``array[indices] = value`` element by element; out-of-range elements are dropped."""


@_builtin
def atomic_add(array, indices, update, *, check_bounds=True, memory_order=None,
               memory_scope=None):
    """Atomically add ``update`` at ``indices``; returns the old values."""


@_builtin
def atomic_max(array, indices, update, *, check_bounds=True, memory_order=None,
               memory_scope=None):
    """Atomic maximum at ``indices``; returns the old values."""


@_builtin
def atomic_min(array, indices, update, *, check_bounds=True, memory_order=None,
               memory_scope=None):
    """Atomic minimum at ``indices``; returns the old values."""


@_builtin
def atomic_xchg(array, indices, update, *, check_bounds=True, memory_order=None,
                memory_scope=None):
    """Atomically exchange with ``update`` at ``indices``; returns the old values."""


@_builtin
def atomic_cas(array, indices, expected, desired, *, check_bounds=True, memory_order=None,
               memory_scope=None):
    """Where the element equals ``expected``, write ``desired``; returns the old values."""


@_builtin
def arange(size, *, dtype=None):
    """The 1-D tile ``0, 1, ..., size - 1``."""


@_builtin
def full(shape, fill_value, dtype):
    """A tile of ``shape`` filled with ``fill_value``."""


@_builtin
def zeros(shape, dtype):
    """A tile of zeros."""


@_builtin
def ones(shape, dtype):
    """A tile of ones."""


@_builtin
def astype(x, dtype):
    """``x`` converted to ``dtype`` (also ``x.astype(dtype)``)."""


@_builtin
def sum(x, axis=None, *, keepdims=False):
    """Sum over ``axis`` (all axes: None)."""


@_builtin
def max(x, axis=None, *, keepdims=False):
    """Maximum over ``axis``."""


@_builtin
def min(x, axis=None, *, keepdims=False):
    """Minimum over ``axis``."""


@_builtin
def argmax(x, axis=None, *, keepdims=False):
    """Index of the maximum over ``axis`` (the first one on ties)."""


@_builtin
def argmin(x, axis=None, *, keepdims=False):
    """Index of the minimum over ``axis`` (the first one on ties)."""


@_builtin
def cumsum(x, axis=0, *, reverse=False):
    """Inclusive prefix sums along ``axis``."""


@_builtin
def cumprod(x, axis=0, *, reverse=False):
    """Inclusive prefix products along ``axis``."""


@_builtin
def mma(x, y, acc):
    """``x @ y + acc`` in ``acc``'s dtype."""


@_builtin
def matmul(x, y):
    """``x @ y``."""


@_builtin
def transpose(x, axis0=None, axis1=None):
    """``x`` with two axes swapped (the last two of a 2-D tile by default)."""


@_builtin
def permute(x, axes):
    """``x`` with its axes reordered."""


@_builtin
def reshape(x, shape):
    """``x`` in a new shape (row-major order kept)."""


@_builtin
def expand_dims(x, axis):
    """``x`` with a dimension of size 1 inserted at ``axis``."""


@_builtin
def broadcast_to(x, shape):
    """``x`` stretched to ``shape``."""
