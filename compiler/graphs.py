"""``tc.graph``: a program's launches captured once and replayed, so that a step of many
small launches (a decoding step of the GPT, about a hundred) costs the host one launch.

``with tc.graph() as g:`` captures the launches its block makes on this thread; none of
them runs. ``g.replay()`` runs them all again, in order. On ptx the CUDA driver captures
them into a CUDA graph (stream capture on a stream of tilec's own, ``backends.ptx.graphs``)
and a replay is one ``cuGraphLaunch`` on the legacy default stream, where tilec's other work
goes: it is ordered after the launches and copies before it and before those after it,
and returns before the graph has run (``tc.synchronize()`` waits). On numpy and wgsl the
launches are recorded and a replay launches them again, so one program runs on every
backend.

What a replay sees: every argument as it was at capture, scalars by value and arrays by
their memory (the graph keeps those arrays alive). A program keeps its arrays and puts what
changes between replays into them, by copies (``a[...] = value``) before a replay or by
kernels in the graph that write them: a decoding step's position and token.

Inside a capture only launches are captured. What would happen once, now, where the program
means it to happen on each replay is a ``LaunchError``: copying into or out of an array
(``a[...] = value``, ``tc.to_numpy``), ``tc.synchronize``, autotuning, launches with
``verify=True``, a launch on another backend, and on ptx and wgsl launches with
``debug=True`` (a buffer read back) or NumPy arrays (copied in and out around it); so are a
capture inside another and a replay inside one. (numpy's arrays are NumPy's own, so copies
into them are not seen; its debug launches check as they run, at each replay.) Allocating
(``tc.empty``, ``tc.zeros``, ``tc.asarray``) happens at capture, and the arrays stay.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from compiler.backend_choice import backend_module, resolve_backend
from compiler.errors import LaunchError

ACTIVE: dict[int, Graph] = {}
"""Thread id -> the graph capturing that thread's launches. Launchers test it on every
launch (an empty dict: one test) and only then look their thread up. Mutated, never
rebound: the backends hold it by name."""


def capturing() -> Graph | None:
    """The graph this thread captures into, or None."""
    return ACTIVE.get(threading.get_ident()) if ACTIVE else None


def refuse(what: str) -> None:
    """A ``LaunchError`` if this thread captures: ``what`` would happen once, at capture."""
    if capturing() is not None:
        raise LaunchError(f"{what} inside a tc.graph capture would happen once, now, and not "
                          "on each replay: do it before the capture or between replays")


def record(launcher: Any, grid: tuple[int, int, int], args: Sequence[Any],
           backend: str) -> bool:
    """Take a numpy or wgsl launch into this thread's capture: True when there is one
    (the launch is recorded, not run), False when the launch should run."""
    graph = ACTIVE.get(threading.get_ident())
    if graph is None:
        return False
    if backend == graph.backend != "numpy" and any(isinstance(a, np.ndarray) for a in args):
        raise LaunchError(f"a {backend} launch inside a tc.graph capture cannot take NumPy "
                          "arrays (they are copied in and out around each launch): pass "
                          "arrays of tc.asarray or tc.empty")
    graph.take(launcher, grid, args, backend)
    return True


class Graph:
    """The launches of one ``with`` block on ``backend`` (``tc.graph``): captured once,
    replayed with ``replay()``."""

    def __init__(self, backend: str | None = None):
        self.backend = resolve_backend(backend)
        self.launches: list[tuple[Any, tuple[int, int, int], list]] = []
        """(launcher, grid, arguments) of each launch captured, in order: what a numpy or
        wgsl replay runs; on ptx, what keeps the graph's modules and arrays alive."""
        self._cuda: Any = None  # ptx: ``backends.ptx.graphs.CudaGraph``
        self._state = "new"  # then "capturing", then "ready" or "failed"

    def __enter__(self) -> Self:
        outer = capturing()
        if outer is not None:
            raise LaunchError("tc.graph captures do not nest: end the outer capture first "
                              "(a graph's launches may be captured once)")
        if self._state != "new":
            raise LaunchError("this tc.graph has been captured already; capture again into "
                              "a new tc.graph()")
        if self.backend == "ptx":  # the backend's own capture (a CUDA graph)
            self._cuda = backend_module("ptx").new_graph()
        self._state = "capturing"
        ACTIVE[threading.get_ident()] = self
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        del ACTIVE[threading.get_ident()]
        self._state = "failed"
        if self._cuda is not None:
            self._cuda.end(keep=exc_type is None)
        if exc_type is None:
            self._state = "ready"

    def take(self, launcher: Any, grid: tuple[int, int, int], args: Sequence[Any],
             backend: str) -> None:
        """Keep one launch made inside the capture (refusing one on another backend)."""
        if backend != self.backend:
            raise LaunchError(f"a {backend} launch inside a tc.graph capture on "
                              f"{self.backend}: a graph's launches run on its backend")
        self.launches.append((launcher, grid, list(args)))

    def replay(self) -> None:
        """Run the captured launches again (on ptx, queue the graph: ``tc.synchronize()``
        waits for it)."""
        if self._state != "ready":
            raise LaunchError({"new": "tc.graph: nothing captured yet; capture with "
                                      "'with graph:' before replaying",
                               "capturing": "a tc.graph cannot replay inside its own capture",
                               "failed": "this tc.graph's capture failed (an exception left "
                                         "its with block); capture into a new tc.graph()"
                               }[self._state])
        if capturing() is not None:
            raise LaunchError("a tc.graph cannot replay inside another's capture: replay it "
                              "before or after")
        if self._cuda is not None:
            self._cuda.launch()
            return
        for launcher, grid, args in self.launches:
            launcher(grid, args)


def graph(backend: str | None = None) -> Graph:
    """A graph to capture launches on ``backend`` (None: the default) into:
    ``with tc.graph() as g: ...`` then ``g.replay()`` (the module docstring)."""
    return Graph(backend)


__all__ = ["Graph", "capturing", "graph", "record", "refuse"]
