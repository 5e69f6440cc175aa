"""How a ``tile.convert_layout`` through shared memory lays out its buffer: the padding of
its rows and the lanes each thread moves per access, chosen by a model of the banks.

Element by element, a 128 x 128 bf16 tile from a warpgroup dot's accumulator (two
neighbouring columns a lane) to a coalesced layout (eight a lane) is 64 ``st.shared.b16``
and 64 ``ld.shared.b16`` a thread. With the rows padded so that both sides' runs stay
aligned, it is 32 ``st.shared.b32`` and 8 ``ld.shared.v4.b32``; the padding also decides
whether the 8 rows that a warp's accumulator lanes write fall in different banks.

Shared memory serves 32 banks of 4 bytes. A warp's access of 4 bytes or less a lane is
one request; of 8 bytes two (16 lanes each), of 16 bytes four (8 lanes each). A request
takes as many wavefronts as the most distinct words any one bank holds among its
addresses. The cost of a plan is the requests and wavefronts of both sides, for warp 0
(the warps of these layouts repeat one pattern at other rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects.builtin import TensorType

from compiler.passes.layouts import WARP_SIZE, element_ids

BANKS, BANK_BYTES, ACCESS_BYTES = 32, 4, 16
ROW_PADDINGS = (0, 1, 2, 4, 8, 16)  # elements added to each row, tried in this order


@dataclass(frozen=True)
class Plan:
    """Element weights numbering the buffer (``sum(coord[d] * weights[d])``) and the lanes
    per access of the side storing (``src``) and of the side loading (``dst``)."""

    weights: list[int]
    src_vec: int
    dst_vec: int


def row_padded(shape: Sequence[int], pad: int) -> list[int]:
    """Row-major strides of ``shape`` with ``pad`` elements after each row."""
    row = shape[-1] + pad
    return [prod(shape[d + 1:-1]) * row for d in range(len(shape) - 1)] + [1]


def plan_exchange(src: TensorType, dst: TensorType, elem_bytes: int) -> Plan:
    """The cheapest padding (the least on a tie) and its widest aligned accesses."""
    shape = src.get_shape()
    best: tuple[int, Plan] | None = None
    for pad in ROW_PADDINGS if len(shape) > 1 else (0,):
        weights = row_padded(shape, pad)
        sides = [element_ids(t.encoding, shape, weights) for t in (src, dst)]
        vecs = [widest_run(ids, ACCESS_BYTES // elem_bytes) for ids in sides]
        cost = sum(requests(ids, vec, elem_bytes) for ids, vec in zip(sides, vecs, strict=True))
        if best is None or cost < best[0]:
            best = (cost, Plan(weights, *vecs))
    assert best is not None
    return best[1]


def widest_run(ids: np.ndarray, most: int) -> int:
    """The most lanes (a power of two, at most ``most``) that every thread's accesses can
    take at once: runs of consecutive numbers starting at a multiple of the run."""
    vec = max(1, most)
    while vec > 1:
        if ids.shape[1] % vec == 0:
            runs = ids.reshape(ids.shape[0], -1, vec)
            if ((runs - runs[:, :, :1] == np.arange(vec)).all()
                    and (runs[:, :, 0] % vec == 0).all()):
                return vec
        vec //= 2
    return 1


def requests(ids: np.ndarray, vec: int, elem_bytes: int) -> int:
    """Requests plus wavefronts of warp 0's accesses of ``vec`` lanes."""
    starts = ids[:WARP_SIZE, ::vec] * elem_bytes  # (lanes of the warp, accesses)
    size = vec * elem_bytes
    per_request = WARP_SIZE if size <= BANK_BYTES else WARP_SIZE * BANK_BYTES // size
    words = max(1, size // BANK_BYTES)
    accesses = starts.shape[1]
    # (request, access, the words its lanes touch), sorted so that repeats are neighbours
    held = (starts // BANK_BYTES)[:, :, None] + np.arange(words)
    held = held.reshape(-1, per_request, accesses, words).transpose(0, 2, 1, 3)
    held = np.sort(held.reshape(held.shape[0], accesses, -1), axis=-1)
    first = np.ones(held.shape, bool)
    first[..., 1:] = held[..., 1:] != held[..., :-1]
    group = np.arange(held.shape[0] * accesses).reshape(held.shape[:2])[..., None]
    counts = np.zeros((held.shape[0] * accesses, BANKS), np.int64)
    np.add.at(counts, (np.broadcast_to(group, held.shape)[first], held[first] % BANKS), 1)
    return int(counts.shape[0] + counts.max(axis=1).sum())
