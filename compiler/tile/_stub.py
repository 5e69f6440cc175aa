"""The builtins of ``compiler.tile`` other than elementwise math (``_math``): blocks,
arrays, creation, shape, reductions and scans, matrix products, atomics and
compile-time helpers, with cuTile's signatures.

Each is a name for the frontend (``compiler.frontend.cutile`` lowers it); called on the
host it says it belongs in a kernel. Their signatures are cuTile's; where tilec takes an
argument without acting on it (a hint such as ``latency``), the frontend's docstring
says so.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from compiler.tile._enums import MemoryOrder, MemoryScope, PaddingMode


def _builtin(fn: Callable) -> Callable:
    """Mark ``fn`` as a ``ct`` builtin: the frontend lowers it; Python may not call it."""
    def outside(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(f"ct.{fn.__name__} can only be used inside a @ct.kernel")
    outside.__name__ = outside.__qualname__ = fn.__name__
    outside.__doc__ = fn.__doc__
    outside.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    outside.__tilec_builtin__ = fn.__name__  # type: ignore[attr-defined]
    return outside


def cdiv(a: int, b: int) -> int:
    """Ceiling division, on the host and inside kernels."""
    return -(-a // b)


cdiv.__tilec_builtin__ = "cdiv"  # type: ignore[attr-defined]

_ORDER, _SCOPE = MemoryOrder.ACQ_REL, MemoryScope.DEVICE

# ---------------------------------------------------------------- blocks and arrays


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
def gather(array, indices, *, mask=None, padding_value=0, check_bounds=True, latency=None):
    """``array[indices]`` element by element; out-of-range elements read ``padding_value``."""


@_builtin
def scatter(array, indices, value, *, mask=None, check_bounds=True, latency=None):
    """``array[indices] = value`` element by element; out-of-range elements are dropped."""


@_builtin
def load_advanced_indexing(array, indices, *, padding_mode=PaddingMode.UNDETERMINED,
                           latency=None, allow_tma=None):
    """The tile at ``indices``: one 1-D integer tile of element indices (one dimension)
    and a ``ct.Slice(start, length)`` for each other dimension."""


@_builtin
def store_advanced_indexing(array, indices, tile, *, latency=None, allow_tma=None):
    """Write ``tile`` at ``indices``, laid out as for ``ct.load_advanced_indexing``."""


@_builtin
def Slice(start, length):
    """``start, start + 1, ..., start + length - 1`` of one dimension (``length`` a
    constant power of two), for ``ct.load_advanced_indexing``."""


# ---------------------------------------------------------------- atomics


@_builtin
def atomic_add(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
               memory_scope=_SCOPE):
    """Atomically add ``update`` at ``indices``; returns the old values."""


@_builtin
def atomic_max(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
               memory_scope=_SCOPE):
    """Atomic maximum at ``indices``; returns the old values."""


@_builtin
def atomic_min(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
               memory_scope=_SCOPE):
    """Atomic minimum at ``indices``; returns the old values."""


@_builtin
def atomic_and(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
               memory_scope=_SCOPE):
    """Atomic bitwise and at ``indices`` (integer arrays); returns the old values."""


@_builtin
def atomic_or(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
              memory_scope=_SCOPE):
    """Atomic bitwise or at ``indices`` (integer arrays); returns the old values."""


@_builtin
def atomic_xor(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
               memory_scope=_SCOPE):
    """Atomic bitwise xor at ``indices`` (integer arrays); returns the old values."""


@_builtin
def atomic_xchg(array, indices, update, *, check_bounds=True, memory_order=_ORDER,
                memory_scope=_SCOPE):
    """Atomically exchange with ``update`` at ``indices``; returns the old values."""


@_builtin
def atomic_cas(array, indices, expected, desired, *, check_bounds=True,
               memory_order=_ORDER, memory_scope=_SCOPE):
    """Where the element equals ``expected``, write ``desired``; returns the old values
    (``expected`` where an index is outside the array)."""


# ---------------------------------------------------------------- creation and dtype


@_builtin
def arange(size, *, dtype=None, start=0, step=1):
    """The 1-D tile ``start, start + step, ..., start + (size - 1) * step``."""


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
def astile(value, *, dtype):
    """A tile of the scalars of ``value`` (a scalar, or nested tuples whose nesting is
    the shape, each a power of two long)."""


@_builtin
def astype(x, dtype, *, rounding_mode=None):
    """``x`` converted to ``dtype`` (also ``x.astype(dtype)``); ``rounding_mode`` for a
    float to float conversion."""


@_builtin
def bitcast(x, dtype):
    """``x``'s bits read as ``dtype`` (of the same width)."""


@_builtin
def pack_to_bytes(x):
    """``x``'s bytes, flattened, as a 1-D uint8 tile."""


@_builtin
def unpack_from_bytes(x, dtype):
    """A 1-D uint8 tile's bytes read as elements of ``dtype``."""


# ---------------------------------------------------------------- reductions and scans


@_builtin
def sum(x, axis=None, *, keepdims=False, rounding_mode=None, flush_to_zero=False):
    """Sum over ``axis`` (all axes: None; a tuple: those)."""


@_builtin
def prod(x, axis=None, *, keepdims=False, rounding_mode=None, flush_to_zero=False):
    """Product over ``axis``."""


@_builtin
def max(x, axis=None, *, keepdims=False, flush_to_zero=False, propagate_nan=False):
    """Maximum over ``axis`` (NaNs ignored unless ``propagate_nan``)."""


@_builtin
def min(x, axis=None, *, keepdims=False, flush_to_zero=False, propagate_nan=False):
    """Minimum over ``axis`` (NaNs ignored unless ``propagate_nan``)."""


@_builtin
def argmax(x, axis=None, *, keepdims=False, propagate_nan=False):
    """Index of the maximum over ``axis`` (the first one on ties; with ``propagate_nan``,
    of the first NaN)."""


@_builtin
def argmin(x, axis=None, *, keepdims=False, propagate_nan=False):
    """Index of the minimum over ``axis`` (the first one on ties)."""


@_builtin
def reduce(x, axis, func, identity, *, keepdims=False):
    """Reduce ``x`` (a tile or tuple of tiles) along ``axis`` with ``func(a, b)``."""


@_builtin
def cumsum(x, axis=0, *, reverse=False, rounding_mode=None, flush_to_zero=False):
    """Inclusive prefix sums along ``axis``."""


@_builtin
def cumprod(x, axis=0, *, reverse=False, rounding_mode=None, flush_to_zero=False):
    """Inclusive prefix products along ``axis``."""


@_builtin
def scan(x, axis, func, identity, *, reverse=False):
    """Inclusive scan of ``x`` (a tile or tuple of tiles) along ``axis`` with ``func``."""


# ---------------------------------------------------------------- matrix products


@_builtin
def mma(x, y, acc, *, use_fast_acc=False):
    """``x @ y + acc`` in ``acc``'s dtype."""


@_builtin
def mma_scaled(x, x_scale, y, y_scale, acc):
    """``(x * x_scale) @ (y * y_scale) + acc`` with block scales along K: ``x_scale`` is
    ``[M, K // B]``, ``y_scale`` ``[K // B, N]``, each scale covering ``B`` elements."""


@_builtin
def matmul(x, y):
    """``x @ y``."""


# ---------------------------------------------------------------- shape and selection


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


@_builtin
def cat(tiles, axis):
    """Two tiles of one shape, one after the other along ``axis``."""


@_builtin
def extract(x, index, shape):
    """The subtile of ``shape`` at subtile index ``index`` (``x`` cut into a grid of
    subtiles of ``shape``)."""


@_builtin
def insert(x, index, value):
    """``x`` with the subtile at subtile index ``index`` replaced by ``value``."""


# ---------------------------------------------------------------- utility


@_builtin
def printf(format, *args):
    """Print tiles with a C printf format (debugging)."""


@_builtin
def print(*args, sep=" ", end="\n"):
    """Print tiles and constants, as Python's ``print`` (debugging)."""


@_builtin
def assert_(cond, message=None):
    """Fail the launch unless every element of ``cond`` is true (debugging)."""


@_builtin
def assume_divisible_by(x, divisor):
    """``x``, which the caller promises is a multiple of ``divisor``."""


@_builtin
def static_assert(condition, message=None):
    """Fail compilation unless the compile-time ``condition`` is true."""


@_builtin
def static_eval(expr):
    """``expr``, a compile-time value (or a tile chosen at compile time)."""


@_builtin
def static_iter(iterable):
    """``for x in ct.static_iter(items):`` the body unrolled once per item."""


@_builtin
def static_print(*values):
    """Print values while compiling."""


@_builtin
def ensure_constant(value):
    """``value``, which must be known at compile time."""


@_builtin
def grid_dependency_control_wait():
    """Wait for the grid this launch depends on (programmatic dependent launch)."""


@_builtin
def grid_dependency_control_launch_dependents():
    """Let the next launch start (programmatic dependent launch)."""


__all__ = [name for name, v in list(globals().items())
           if getattr(v, "__tilec_builtin__", None) and name != "cdiv"]
