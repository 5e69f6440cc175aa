"""Loads and stores through pointer tiles made of rows of consecutive elements, for the
NumPy backend's interpreter (``kernel.Batch.load``/``store``).

``x + row * stride + tl.arange(0, BLOCK)`` and the 2-D tiles of a matrix address rows:
along the last axis the offsets rise by one from a start per row. ``Ptr.rows`` keeps
those starts (``row_starts`` finds them from ``addptr``'s operands in O(rows + row)), and
an access then moves whole rows through a sliding-window view of the array, a copy per
row instead of a gather per element.

A row access applies when the mask, if any, keeps a prefix of every row (the same columns
in every row: ``cols < n``), and, for a store, the rows ascend without overlapping (so no
later program has to win). It returns None otherwise, and when an active element falls
outside the array: the element-wise path then runs, and raises its precise error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

_MIN_ROW = 8  # shorter rows gain nothing over an element-wise gather
_MIN_SIZE = 1 << 16  # smaller tiles: the window view costs more (~20 us) than the gather


def row_starts(base: np.ndarray, off: np.ndarray, tile: tuple[int, ...]) -> np.ndarray | None:
    """Row starts (int64, of shape ``tile[:-1]``) of the offsets ``base + off`` of shape
    ``tile``, when ``base`` is the same along the last axis and ``off`` is one row rising
    by one, the same at every other position; else None."""
    width = tile[-1] if len(tile) > 1 else 0
    if width < _MIN_ROW or math.prod(tile) < _MIN_SIZE or len(tile) != base.ndim \
            or len(tile) != off.ndim or off.shape[-1] != width or not _uniform_but_last(off) \
            or (base.shape[-1] != 1 and base.strides[-1] != 0):
        return None
    row = off[(0,) * (off.ndim - 1)]
    first = int(row[0])
    if not np.array_equal(row, np.arange(first, first + width)):
        return None
    starts = np.broadcast_to(base[..., 0], tile[:-1])
    return np.add(starts, first, dtype=np.int64)


def load(batch: Any, ptr: Any, mem: np.ndarray, mask: np.ndarray | None,
         other: np.ndarray) -> np.ndarray | None:
    """The rows of ``ptr``, ``other`` in the masked-off columns; None: not a row access."""
    width = _kept_width(ptr.shape, mask)
    if width is None or not _inside(ptr.rows, width, mem.size):
        return None
    partial = width < ptr.shape[-1]
    if partial and (other.dtype != mem.dtype
                    or np.broadcast_shapes(ptr.shape, other.shape) != ptr.shape):
        return None
    # indexing, not np.take: take copies the whole window view first
    kept = sliding_window_view(mem, width)[ptr.rows] if width else None
    if not partial:
        return kept
    values = batch.pool.empty(ptr.shape, mem.dtype)
    if kept is not None:
        np.copyto(values[..., :width], kept)
        batch.pool.give(kept)  # a copy only this function holds
    np.copyto(values[..., width:], other[..., width:] if other.ndim else other)
    return values


def store(ptr: Any, mem: np.ndarray, value: np.ndarray, mask: np.ndarray | None) -> bool:
    """Write ``value``'s kept columns to the rows of ``ptr``; False: not a row access."""
    width = _kept_width(ptr.shape, mask)
    if width is None or np.broadcast_shapes(ptr.shape, value.shape) != ptr.shape:
        return False
    if not width:
        return True  # every element masked off
    starts = ptr.rows.reshape(-1)
    if not _inside(starts, width, mem.size) or (np.diff(starts) < width).any():
        return False  # rows that overlap or descend: the element-wise order decides
    sliding_window_view(mem, width, writeable=True)[ptr.rows] = value[..., :width]
    return True


def _uniform_but_last(a: np.ndarray) -> bool:
    """Whether ``a`` is the same at every position but along its last axis."""
    return all(n == 1 or s == 0 for n, s in zip(a.shape[:-1], a.strides[:-1], strict=True))


def _kept_width(shape: tuple[int, ...], mask: np.ndarray | None) -> int | None:
    """How many leading columns of every row ``mask`` keeps; None when it keeps anything
    else (or has programs the pointers do not)."""
    if mask is None:
        return shape[-1]
    if mask.ndim != len(shape) or not _uniform_but_last(mask) \
            or np.broadcast_shapes(shape, mask.shape) != shape:
        return None
    row = mask[(0,) * (mask.ndim - 1)]
    width = row.size if row.all() else int(row.argmin())
    return None if row[width:].any() else width


def _inside(starts: np.ndarray, width: int, size: int) -> bool:
    """Whether every row of ``width`` elements from ``starts`` lies in ``size`` elements."""
    return not width or (starts.size > 0 and int(starts.min()) >= 0
                         and int(starts.max()) + width <= size)
