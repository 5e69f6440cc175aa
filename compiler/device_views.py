"""Arrays on a device, as the backends' array kinds share them: ``DeviceView`` (a row-major
array of one dtype at a byte offset of device memory, whose contiguous views share that
memory, as NumPy's slices do) and the dtype and shape checks of ``compiler.memory``.

No backend, wgpu or CUDA import here, and none of the launch path's: the backends' array
modules and the verifier import this, and ``compiler.memory`` imports them.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import compiler.language as tl
from compiler import graphs
from compiler.errors import LaunchError
from compiler.fp8 import numpy_dtype

DTYPE_NAMES = ", ".join(d.name for d in tl.ALL_DTYPES)


def as_dtype(dtype: Any, caller: str) -> tl.dtype:
    """``dtype`` as a tilec dtype: ``tl.float16``, ``"f16"``/``"float16"``, ``np.float16``
    or ml_dtypes' ``bfloat16``."""
    if isinstance(dtype, tl.dtype):
        return dtype
    try:
        found = tl.dtype_from_str(dtype) if isinstance(dtype, str) else \
            tl.dtype_from_numpy(np.dtype(dtype))
    except (TypeError, ValueError):
        found = None
    if found is None:
        raise LaunchError(f"{caller}: unknown dtype {dtype!r}; use one of {DTYPE_NAMES}")
    return found


def as_shape(shape: Any, caller: str) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints, none negative) as a tuple."""
    dims = (shape,) if isinstance(shape, int | np.integer) else shape
    try:
        dims = tuple(operator.index(n) for n in dims)
    except TypeError:
        dims = None
    if dims is None or any(n < 0 for n in dims):
        raise LaunchError(f"{caller}: shape must be an int or a tuple of non-negative ints, "
                          f"got {shape!r}")
    return dims


def host_dtype(d: tl.dtype) -> np.dtype:
    """The NumPy dtype holding ``d`` on the host (bfloat16 and fp8: ml_dtypes')."""
    return d.numpy if d.numpy is not None else numpy_dtype(d.short)


def itemsize(d: tl.dtype) -> int:
    return max(1, d.bits // 8)  # bool elements are bytes


class DeviceView:
    """A row-major array of ``dtype`` and ``shape`` whose first element lies ``offset``
    bytes into memory of a backend's device. Subclasses give the attributes and
    ``_at(offset, shape)``, the view of the same memory at another place; indexing and
    ``reshape`` make contiguous views (no copy) the way NumPy's would."""

    __slots__ = ()
    dtype: tl.dtype
    shape: tuple[int, ...]
    offset: int

    def _at(self, offset: int, shape: tuple[int, ...]) -> Any:
        raise NotImplementedError

    def arg_spec(self) -> tuple[str, str, bool]:
        """What the array specializes a kernel by (``compiler.specialize.arg_spec``):
        pointer, dtype, and whether its address is a multiple of 16 (at hand here, cheaper
        than the array interfaces a launch would otherwise ask)."""
        return ("ptr", self.dtype.short, True)

    def numpy(self) -> np.ndarray:
        """A host copy of the contents (after the work queued before it)."""
        graphs.refuse("reading an array")
        return self._read()

    def _read(self) -> np.ndarray:
        raise NotImplementedError

    def _write(self, host: np.ndarray) -> None:
        """Copy ``host`` (contiguous, of this shape and dtype) into the array."""
        raise NotImplementedError

    def __setitem__(self, key: Any, value: Any) -> None:
        """``a[key] = value``: copy host values (an array or a number, broadcast as NumPy
        does) into the view ``a[key]``; ``a[...] = value`` fills all of ``a``."""
        graphs.refuse("copying into an array")
        view = self[key]
        host = np.asarray(value, host_dtype(self.dtype))
        try:
            host = np.broadcast_to(host, view.shape)
        except ValueError:
            raise LaunchError(f"cannot copy values of shape {host.shape} into a view of "
                              f"shape {view.shape}") from None
        view._write(np.ascontiguousarray(host))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return itemsize(self.dtype)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def reshape(self, *shape: Any) -> Any:
        """The same elements in another shape (one dimension may be -1):
        ``reshape(2, 3)`` or ``reshape((2, 3))``."""
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) \
            else shape
        free = [i for i, n in enumerate(dims) if isinstance(n, int | np.integer) and n == -1]
        fixed = list(as_shape(tuple(1 if i in free else n for i, n in enumerate(dims)),
                              "reshape"))
        if len(free) > 1:
            raise LaunchError(f"reshape: at most one dimension may be -1, got {dims}")
        known = math.prod(fixed)
        if not (known and self.size % known == 0 if free else known == self.size):
            raise LaunchError(f"cannot reshape an array of shape {self.shape} into {dims}")
        if free:
            fixed[free[0]] = self.size // known
        return self._at(self.offset, tuple(fixed))

    def __getitem__(self, key: Any) -> Any:
        """Integers and one step-1 slice, leading: ``a[i]``, ``a[2:5]``, ``a[i, :4]``
        (then only whole axes, ``a[1:3, :]``): the views whose elements stay contiguous;
        ``a[...]`` is ``a``."""
        if key is Ellipsis:
            return self
        items = key if isinstance(key, tuple) else (key,)
        if len(items) > self.ndim:
            raise LaunchError(f"too many indices ({len(items)}) for an array of shape "
                              f"{self.shape}")
        view, sliced = self, False
        for axis, item in enumerate(items):
            n = self.shape[axis]
            if sliced:
                if not isinstance(item, slice) or item.indices(n) != (0, n, 1):
                    raise LaunchError(f"index {key!r} makes a view that is not contiguous; "
                                      "index leading axes, then slice one axis with step 1")
            elif isinstance(item, slice):
                view, sliced = view._slice(item), True
            elif isinstance(item, int | np.integer) and not isinstance(item, bool):
                view = view._index(int(item))
            else:
                raise LaunchError(f"arrays take integers and slices as indices, got {item!r}")
        return view

    def _index(self, i: int) -> Any:
        n = self.shape[0]
        if not -n <= i < n:
            raise LaunchError(f"index {i} is out of bounds for axis 0 of size {n}")
        row = math.prod(self.shape[1:]) * self.itemsize
        return self._at(self.offset + (i % n) * row, self.shape[1:])

    def _slice(self, s: slice) -> Any:
        start, stop, step = s.indices(self.shape[0])
        if step != 1:
            raise LaunchError(f"slice {s} has step {step}; views are contiguous (step 1)")
        row = math.prod(self.shape[1:]) * self.itemsize
        return self._at(self.offset + start * row, (max(stop - start, 0), *self.shape[1:]))


__all__ = ["DTYPE_NAMES", "DeviceView", "as_dtype", "as_shape", "host_dtype", "itemsize"]
