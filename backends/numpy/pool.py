"""Recycled output arrays for the NumPy backend's interpreter: one ``Pool`` per thread,
kept from launch to launch.

A large NumPy array fresh from the allocator costs more than the pass that fills it: glibc
hands blocks of megabytes back to the OS when they are freed, so each new one is
page-faulted and zeroed again (measured on the 2-core CI machine: filling a new 4 MB array
takes 1 to 4 ms, filling a reused one 0.2 ms). The interpreter instead gives the arrays of
dead SSA values to the pool (``kernel.release``) and the hot ops write their results into
them with ``out=``. Like an allocator's cache, the pool keeps at most ``MAX_BYTES``.

An array is only recycled when nothing else can see it: it owns its memory (no view
keeps it alive through ``.base``) and the releasing frame holds the only reference, which
``sys.getrefcount`` tells exactly. Small arrays are left to NumPy's own cache.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np

MIN_BYTES = 1 << 16  # below this the allocator is cheap and the bookkeeping is not
MAX_BYTES = 64 << 20  # the most a thread's pool keeps between launches
_PER_KIND = 4  # spare arrays kept per (shape, dtype)


def _sole_refs() -> int:
    """What ``sys.getrefcount`` reports for an array held by one local variable (the
    count of the call's own reference differs between Python versions)."""
    value = np.empty(0)
    return sys.getrefcount(value)


SOLE_REFS = _sole_refs()


class Pool:
    """Spare arrays by (shape, dtype)."""

    def __init__(self) -> None:
        self._free: dict[tuple[tuple[int, ...], np.dtype], list[np.ndarray]] = {}
        self._bytes = 0

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An array to overwrite completely: a spare one when it is large enough to matter."""
        if math.prod(shape) * dtype.itemsize >= MIN_BYTES:
            spare = self._free.get((shape, dtype))
            if spare:
                self._bytes -= spare[-1].nbytes
                if len(spare) == 1:
                    del self._free[(shape, dtype)]  # no kinds piling up without arrays
                return spare.pop()
        return np.empty(shape, dtype)

    def give(self, value: np.ndarray) -> None:
        """Keep ``value`` for reuse; the caller has checked that only it holds it. Over
        ``MAX_BYTES``, the kinds given least recently are dropped first."""
        if not MIN_BYTES <= value.nbytes <= MAX_BYTES:
            return  # ``empty`` would never hand it out, or it would crowd out the rest
        key = (value.shape, value.dtype)
        spare = self._free.pop(key, [])
        self._free[key] = spare  # last in the order of dropping
        if len(spare) >= _PER_KIND:
            return
        for kind, arrays in list(self._free.items()):
            if self._bytes + value.nbytes <= MAX_BYTES or kind == key:
                break
            self._bytes -= sum(a.nbytes for a in arrays)
            del self._free[kind]
        if self._bytes + value.nbytes <= MAX_BYTES:
            spare.append(value)
            self._bytes += value.nbytes


def recyclable(value: Any) -> bool:
    """Whether an array whose only other holder is the caller's local may be reused."""
    return (type(value) is np.ndarray and value.base is None and value.nbytes >= MIN_BYTES
            and value.flags.c_contiguous and value.flags.writeable)


_LOCAL = threading.local()


def thread_pool() -> Pool:
    """This thread's pool (launches on other threads must not share arrays)."""
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = Pool()
    return pool
