"""``triton.profiler`` (proton) on tilec: ``import compiler.triton.profiler as proton``.

``start()`` opens a session; while one is active every launch of a kernel (``kernel[grid]
(...)``, autotuning trials included) is timed and recorded under its function's name,
inside the scopes open then (``with proton.scope("step"):`` gives ``step/kernel``).
``finalize()`` prints each session's table (kernel, launches, total and mean
milliseconds, slowest first) and writes it to ``<name>.txt`` when the session was named;
``report()`` gives the rows.

Launches are timed by tilec's clocks as ``do_bench`` is (``compiler.testing.clock``):
CUDA events on ptx (without ``do_bench``'s L2 flush: a kernel is timed with the caches the
program left), GPU timestamps or a fenced wall clock on wgsl, the wall clock on numpy.
Each profiled launch waits for its kernel, so a program runs slower while profiled (and a
``do_bench`` inside a session times that wait too). With no session active the launch
path is as without profiling: it tests one module variable (``compiler.jit.PROFILE``).

Proton's options (``context``, ``data``, ``backend``, ``hook``, ``output_format``) and
scope ``metrics``/``properties`` are accepted and not used. Launches of a compiled kernel
(``tc.compile(...)[grid]``) are not recorded.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

import compiler.jit
from compiler import testing
from compiler.errors import TilecError

DEFAULT_PROFILE_NAME = "proton"


@dataclass
class Row:
    """The launches of one kernel under one scope path."""

    name: str
    launches: int = 0
    total_ms: float = 0.0

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.launches


class Session:
    """One ``start()``: its name (None: not written to a file) and what it recorded."""

    def __init__(self, name: str | None):
        self.name = name
        self.active = True
        self.rows: dict[str, Row] = {}

    def record(self, path: str, ms: float) -> None:
        row = self.rows.setdefault(path, Row(path))
        row.launches += 1
        row.total_ms += ms

    def table(self) -> str:
        rows = sorted(self.rows.values(), key=lambda r: -r.total_ms)
        cells = [["kernel", "launches", "total ms", "mean ms"]] + [
            [r.name, str(r.launches), f"{r.total_ms:.4f}", f"{r.mean_ms:.4f}"] for r in rows]
        widths = [max(len(row[i]) for row in cells) for i in range(4)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(row, widths))) for row in cells]
        return f"profile {self.name or DEFAULT_PROFILE_NAME!r}:\n" + "\n".join(lines)


_sessions: dict[int, Session] = {}
_next_id = 0
_lock = threading.RLock()  # sessions, clocks, and one timed launch at a time
_scopes = threading.local()  # per thread: the names of the open scopes
_clocks: dict[str, Any] = {}


def _open_scopes() -> list[str]:
    if not hasattr(_scopes, "names"):
        _scopes.names = []
    return _scopes.names


def _record(kernel: str, backend: str, launch: Callable[[], None]) -> None:
    """``compiler.jit.PROFILE``: time one launch, record it in every active session."""
    path = "/".join([*_open_scopes(), kernel])
    with _lock:
        clock = _clocks.get(backend)
        if clock is None:
            clock = _clocks[backend] = testing.clock(backend, flush=False)
        (ms,) = clock.times(launch, 1)
        for session in _sessions.values():
            if session.active:
                session.record(path, ms)


def _rehook() -> None:
    """Hook the launch path while a session is active, and only then."""
    active = any(s.active for s in _sessions.values())
    compiler.jit.PROFILE = _record if active else None
    if not active:
        _clocks.clear()


def _session(session: int | None) -> Session:
    if session not in _sessions:
        raise TilecError(f"no profile session {session}; open ones: {sorted(_sessions)}")
    return _sessions[session]


def start(name: str | None = None, *, context: str | None = "shadow",
          data: str | None = "tree", backend: str | None = None,
          hook: str | None = None) -> int:
    """Open a session recording launches from now on; returns its id (0 for the first)."""
    global _next_id
    with _lock:
        session, _next_id = _next_id, _next_id + 1
        _sessions[session] = Session(name)
        _rehook()
    return session


def activate(session: int | None = 0) -> None:
    """Record into ``session`` again (None: every session)."""
    _set_active(session, True)


def deactivate(session: int | None = 0) -> None:
    """Stop recording into ``session`` (None: every session); what it holds stays."""
    _set_active(session, False)


def _set_active(session: int | None, active: bool) -> None:
    with _lock:
        for s in _sessions.values() if session is None else [_session(session)]:
            s.active = active
        _rehook()


def report(session: int | None = None) -> list[dict[str, Any]]:
    """The rows ``session`` (None: the last started) recorded so far, slowest first:
    ``name`` (scopes/kernel), ``launches``, ``total_ms``, ``mean_ms``."""
    with _lock:
        if session is None and _sessions:
            session = max(_sessions)
        rows = sorted(_session(session).rows.values(), key=lambda r: -r.total_ms)
        return [{"name": r.name, "launches": r.launches, "total_ms": r.total_ms,
                 "mean_ms": r.mean_ms} for r in rows]


def finalize(session: int | None = None, output_format: str = "hatchet") -> None:
    """Close ``session`` (None: every session): print its table, write it to
    ``<name>.txt`` when it was started with a name."""
    with _lock:
        closing = sorted(_sessions) if session is None else [session]
        for sid in closing:
            s = _session(sid)
            del _sessions[sid]
            print(s.table())
            if s.name is not None:
                with open(f"{s.name}.txt", "w", encoding="utf-8") as f:
                    f.write(s.table() + "\n")
        _rehook()


def profile(func: Callable | None = None, *, name: str | None = None,
            context: str | None = "shadow", data: str | None = "tree",
            backend: str | None = None, hook: str | None = None):
    """Decorator: each call of the function records into a session of its own, which is
    deactivated when it returns (``finalize()`` reports it)."""
    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            session = start(name)
            try:
                return f(*args, **kwargs)
            finally:
                deactivate(session)
        return wrapper
    return decorate if func is None else decorate(func)


class scope:
    """A named region, as a context manager (``with proton.scope("attn"):``) or a
    decorator (``@proton.scope("attn")``): kernels launched inside are recorded as
    ``attn/<kernel>``."""

    def __init__(self, name: str, metrics: dict | None = None,
                 properties: dict | None = None):
        self.name = name

    def __enter__(self) -> Self:
        _open_scopes().append(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        _open_scopes().pop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def enter_scope(name: str, *, triton_op: bool = False, metrics: dict | None = None,
                properties: dict | None = None) -> int:
    """Open a scope until ``exit_scope()``; returns its depth (proton returns an id)."""
    names = _open_scopes()
    names.append(name)
    return len(names) - 1


def exit_scope(triton_op: bool = False, metrics: dict | None = None) -> int:
    """Close the innermost scope ``enter_scope`` opened; returns its depth."""
    names = _open_scopes()
    if not names:
        raise TilecError("exit_scope() without an open scope")
    names.pop()
    return len(names)


__all__ = ["DEFAULT_PROFILE_NAME", "activate", "deactivate", "enter_scope", "exit_scope",
           "finalize", "profile", "report", "scope", "start"]
