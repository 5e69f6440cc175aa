"""Layout math: which elements of a tile each thread of a program holds (no IR here).

A layout is a ``#tile.blocked`` or a ``#tile.slice`` of one (possibly of another slice);
a ``#tile.mma`` is read as the blocked layout it equals (``MmaLayoutAttr.blocked``).
A thread holds the part of a tile it owns as one vector; ``lane_map`` says, per dimension,
which coordinate each lane of that vector is for every thread. ``assign-layouts`` uses it
for access widths, ``tile-to-simt`` to build thread-id arithmetic and to decide whether a
shape op moves data between registers of a thread or through shared memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.ir import Attribute

from dialects.tile import BlockedLayoutAttr, MmaLayoutAttr, SliceLayoutAttr

WARP_SIZE = 32


@dataclass(frozen=True)
class DimMap:
    """Which coordinate along one dimension element ``k`` of thread ``t`` holds:
    ``coord = thread_part(t) + lanes[k]``.

    ``thread_part(t) = (p(t) * spt) mod size`` where ``p(t)``, the thread's position along
    the dimension, is gathered from bit fields of the thread id: ``fields`` holds
    ``(bit offset in t, width, bit offset in p)``.
    """

    fields: tuple[tuple[int, int, int], ...]
    spt: int
    size: int
    footprint: int  # spt * threads * warps along the dimension
    lanes: tuple[int, ...]

    @property
    def wraps(self) -> bool:
        """The layout is wider than the tile: threads repeat elements (replication)."""
        return self.footprint > self.size

    def thread_part(self, tid):
        """``thread_part`` of an int or a NumPy array of thread ids."""
        p = sum(((tid >> s) & ((1 << w) - 1)) << ps for s, w, ps in self.fields)
        return (p * self.spt) % self.size


@dataclass(frozen=True)
class _Dim:
    """A dimension of a layout on a shape, before the lanes are enumerated."""

    fields: tuple[tuple[int, int, int], ...]
    spt: int
    size: int
    footprint: int
    count: int  # elements per thread along the dimension


def ilog2(n: int) -> int:
    return n.bit_length() - 1


def _fields(lane: tuple[int, int, int], warp: tuple[int, int, int]):
    """The nonempty bit fields, merged when the warp bits continue the lane bits."""
    (ls, lw, lp), (ws, ww, wp) = lane, warp
    if ls + lw == ws and lp + lw == wp:
        return ((ls, lw + ww, lp),) if lw + ww else ()
    return tuple(f for f in (lane, warp) if f[1])


def _dims(layout: Attribute, shape: Sequence[int]) -> list[_Dim]:
    """Lanes of a warp and warps of a program both count the last dim fastest; a slice
    is its parent with the sliced dimension (of any size: take 1) left out."""
    if isinstance(layout, SliceLayoutAttr):
        d = layout.dim.data
        dims = _dims(layout.parent, [*shape[:d], 1, *shape[d:]])
        return dims[:d] + dims[d + 1:]
    if isinstance(layout, MmaLayoutAttr):
        layout = layout.blocked()
    if not isinstance(layout, BlockedLayoutAttr) or len(layout.spt) != len(shape):
        raise ValueError(f"layout {layout} does not fit a tile of shape {list(shape)}")
    spt, tpw, wpc = layout.spt, layout.tpw, layout.wpc
    dims = []
    for d, size in enumerate(shape):
        lane = (ilog2(prod(tpw[d + 1:])), ilog2(tpw[d]), 0)
        warp = (ilog2(WARP_SIZE * prod(wpc[d + 1:])), ilog2(wpc[d]), ilog2(tpw[d]))
        footprint = spt[d] * tpw[d] * wpc[d]
        # a dimension smaller than spt (size 1 before a broadcast) is held once per thread
        count = min(spt[d], size) * max(1, -(-size // footprint))
        dims.append(_Dim(_fields(lane, warp), spt[d], size, footprint, count))
    return dims


def root_layout(layout: Attribute) -> BlockedLayoutAttr:
    """The blocked layout a (nested) slice comes from (an mma layout's equal)."""
    while isinstance(layout, SliceLayoutAttr):
        layout = layout.parent
    if isinstance(layout, MmaLayoutAttr):
        layout = layout.blocked()
    assert isinstance(layout, BlockedLayoutAttr)
    return layout


def num_threads(layout: Attribute) -> int:
    return WARP_SIZE * prod(root_layout(layout).wpc)


def per_thread_shape(layout: Attribute, shape: Sequence[int]) -> tuple[int, ...]:
    """Elements per thread along each dim: spt (at most the dim's size) times the
    wrap-around repeats."""
    return tuple(d.count for d in _dims(layout, shape))


def elements_per_thread(layout: Attribute, shape: Sequence[int]) -> int:
    return prod(per_thread_shape(layout, shape))


def lane_map(layout: Attribute, shape: Sequence[int]) -> tuple[DimMap, ...]:
    """The thread -> element mapping of a layout, one ``DimMap`` per dimension.

    A thread's elements (its vector, row-major over dims) are ``spt`` neighbours per
    footprint, repeated every footprint; a layout wider than the tile wraps modulo its
    size. A slice holds each coordinate of the remaining dims once per thread."""
    dims = _dims(layout, shape)
    elems = list(itertools.product(*(range(d.count) for d in dims)))
    return tuple(DimMap(d.fields, d.spt, d.size, d.footprint,
                        tuple(((e[i] // d.spt) * d.footprint + e[i] % d.spt) % d.size
                              for e in elems))
                 for i, d in enumerate(dims))


def contiguous_run(layout: Attribute, shape: Sequence[int]) -> int:
    """How many consecutive lanes of a thread hold consecutive (aligned) coordinates of
    the last dimension."""
    last = _dims(layout, shape)[-1]
    return min(last.spt, last.size)


def element_ids(layout: Attribute, shape: Sequence[int],
                weights: Sequence[int]) -> np.ndarray:
    """``(threads, lanes)``: ``sum(coord[d] * weights[d])`` of every thread's lanes."""
    tid = np.arange(num_threads(layout))[:, None]
    ids = np.zeros((len(tid), elements_per_thread(layout, shape)), np.int64)
    for dm, w in zip(lane_map(layout, shape), weights, strict=True):
        ids += (dm.thread_part(tid) + np.asarray(dm.lanes)[None, :]) * w
    return ids


def padded_row(length: int, bits: int) -> int:
    """The row length a tile of ``length`` columns of ``bits``-bit elements is staged
    with for ``ldmatrix``: a row of two or more 16-byte chunks gets one chunk more, so the
    8 rows one ldmatrix matrix reads start in 8 different groups of 4 banks."""
    chunk = 128 // bits
    return length + chunk if length >= 2 * chunk else length


def owners(layout: Attribute, shape: Sequence[int]) -> tuple[int, tuple[bool, ...]] | None:
    """``(replica_bits, lanes)``: lane k of thread t owns its element (it is the first
    holder in (thread, lane) order) iff ``t & replica_bits == 0 and lanes[k]``; None if the
    owners are not such a pattern of thread-id bits."""
    strides = [prod(shape[d + 1:]) for d in range(len(shape))]
    ids = element_ids(layout, shape, strides)
    first = np.zeros(ids.size, bool)
    first[np.unique(ids.reshape(-1), return_index=True)[1]] = True
    first = first.reshape(ids.shape)
    threads, lanes = first.any(axis=1), first.any(axis=0)
    bits = sum(1 << b for b in range(ilog2(len(threads))) if not threads[1 << b])
    tids = np.arange(len(threads))
    if not (np.outer((tids & bits) == 0, lanes) == first).all():
        return None
    return bits, tuple(bool(x) for x in lanes)
