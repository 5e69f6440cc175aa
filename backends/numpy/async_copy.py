"""The NumPy meaning of shared-memory stages and asynchronous copies (registered into
``kernel.BUILDERS``): what ``pipeline-loads`` writes for a target with ``cp.async``.

A buffer is a list of its stages' tiles (with the program axis, as every value; the
padding of a row is not modelled). ``tile.async_copy`` loads its tile at once, as
``tile.load`` with zeros where masked off, but the stage gets it only when a
``tile.async_wait`` finishes the copy's group: a stage read before that is an error, and a
stage read after a later copy was issued but before it finished still holds the older
tile. So the interpreter checks the pass's counts of groups and waits, not just its math.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.numpy.kernel import BUILDERS, Impl, np_dtype
from dialects import tile


class Stages:
    """One buffer's stages, and the copies in flight of the programs running it."""

    def __init__(self, count: int):
        self.tiles: list[np.ndarray | None] = [None] * count


class Groups:
    """A batch's copies in flight: the open group, then the committed ones, oldest first."""

    def __init__(self):
        self.open: list[tuple[Stages, int, np.ndarray]] = []
        self.committed: list[list[tuple[Stages, int, np.ndarray]]] = []


def _groups(batch) -> Groups:
    if not hasattr(batch, "copies"):
        batch.copies = Groups()
    return batch.copies


def _stage(value: Any) -> int:
    """A stage index: the same in every program (it counts loop iterations)."""
    values = np.unique(np.asarray(value))
    assert len(values) == 1, "programs disagree on a stage"
    return int(values[0])


def _alloc(op: tile.SharedAllocOp) -> Impl:
    count = op.result.type.get_shape()[0]
    return lambda batch: (Stages(count),)


def _copy(op: tile.AsyncCopyOp) -> Impl:
    zero = np.zeros((), np_dtype(op.buffer.type.element_type))  # pyright: ignore

    def impl(batch, ptr, stages: Stages, stage: Any, mask: np.ndarray | None = None) -> tuple:
        value = batch.load(op, ptr, mask, zero)
        _groups(batch).open.append((stages, _stage(stage), value))
        return ()
    return impl


def _commit(op: tile.AsyncCommitOp) -> Impl:
    def impl(batch) -> tuple:
        groups = _groups(batch)
        groups.committed.append(groups.open)
        groups.open = []
        return ()
    return impl


def _wait(op: tile.AsyncWaitOp) -> Impl:
    pending = op.pending.value.data

    def impl(batch) -> tuple:
        groups = _groups(batch)
        done = len(groups.committed) - pending
        for group in groups.committed[:max(0, done)]:
            for stages, stage, value in group:
                stages.tiles[stage] = value
        groups.committed = groups.committed[max(0, done):]
        return ()
    return impl


def _read(op: tile.SharedReadOp) -> Impl:
    def impl(batch, stages: Stages, stage: Any) -> tuple:
        value = stages.tiles[_stage(stage)]
        if value is None:
            raise AssertionError(f"{op.name}: stage {_stage(stage)} read before its copy "
                                 "finished (a tilec bug)")
        return (value,)
    return impl


BUILDERS.update({
    "tile.shared_alloc": _alloc, "tile.async_copy": _copy, "tile.async_commit": _commit,
    "tile.async_wait": _wait, "tile.shared_read": _read,
})
