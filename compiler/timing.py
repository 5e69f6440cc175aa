"""``TILEC_TIMING=1``: the wall time of every phase of a compilation, like MLIR's
``-mlir-timing``, printed as a table on stderr when the compilation ends.

A compilation opens ``compilation(title)``; its steps (frontend, each pass, code
generation) each time themselves with ``phase(name)``, which costs nothing when no timed
compilation is open. Work done after every step (verifying, printing IR) is one
``phase(name, summed=True)`` row, listed after the steps. A kernel's first launch gets a
table of its own, whose rows are the driver's work: loading the module on PTX; on WGSL
creating the pipeline and running the first dispatch, where drivers compile the shader
(seconds to minutes on lavapipe for a big kernel). Stdlib only: the pipeline and the
backends' ``target`` modules share it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from compiler import progress

# The phases of this thread's open timed compilation (None: none is open), in order, and
# the list ``collect`` gathers this thread's tables into (None: they are printed).
_open = threading.local()


@dataclass(frozen=True)
class Table:
    """One timed compilation (or first launch): seconds per phase, in order, and in all."""

    title: str
    rows: dict[str, float]
    total: float


def enabled() -> bool:
    return os.environ.get("TILEC_TIMING", "") not in ("", "0")


@contextmanager
def collect() -> Iterator[list[Table]]:
    """Time the compilations (and first launches) this thread makes in the block, as
    ``TILEC_TIMING=1`` does, into the list it yields instead of printing them: for
    programs that measure the compiler (``benchmarks/compile_time.py``)."""
    outer, _open.tables = getattr(_open, "tables", None), []
    try:
        yield _open.tables
    finally:
        _open.tables = outer


@contextmanager
def compilation(title: str) -> Iterator[None]:
    """Time one compilation and print its table (or keep it for ``collect``); nested
    ones join the outer table."""
    tables = getattr(_open, "tables", None)
    if getattr(_open, "rows", None) is not None or not (enabled() or tables is not None):
        yield
        return
    _open.rows, start = {}, time.perf_counter()
    try:
        yield
        done = Table(title, _open.rows, time.perf_counter() - start)
        if tables is not None:
            tables.append(done)
        else:
            progress.above(table(done.title, done.rows, done.total))
    finally:
        _open.rows = None


@contextmanager
def phase(name: str, summed: bool = False) -> Iterator[None]:
    """Add the wall time of the block to row ``name`` of the open timed compilation
    (``summed``: a row that adds up work done after many steps)."""
    rows = getattr(_open, "rows", None)
    if rows is None:
        yield
        return
    name = f"  {name} (summed)" if summed else name
    start = time.perf_counter()
    try:
        yield
    finally:
        rows[name] = rows.get(name, 0.0) + time.perf_counter() - start


def table(title: str, rows: dict[str, float], total: float) -> str:
    """The report: one line per phase with milliseconds and share of the total, the
    steps in order, then the summed rows; what no phase covered shows as "other"
    (imports on a first compilation, building passes, glue)."""
    lines = [f"===-- tilec timing: {title} --===",
             f"{'wall ms':>9}  {'%':>6}  phase"]
    other = total - sum(rows.values())
    ordered = sorted(rows.items(), key=lambda row: row[0].startswith(" "))
    for name, seconds in [*ordered, ("other", other)]:
        lines.append(f"{seconds * 1e3:9.2f}  {100 * seconds / total:5.1f}%  {name}")
    lines.append(f"{total * 1e3:9.2f}  100.0%  total")
    return "\n".join(lines)
