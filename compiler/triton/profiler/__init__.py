"""``triton.profiler`` (proton) on tilec: ``import compiler.triton.profiler as proton``.

``start()`` opens a session; while one is active every launch of a kernel (``kernel[grid]
(...)``, autotuning trials included) and every ``compiler.cublas`` product is timed and
recorded under its name, inside the scopes open then (``with proton.scope("step"):``
gives ``step/kernel``). A session started with ``hook="triton"`` names a launch of a
``@triton.jit(launch_metadata=fn)`` kernel as ``fn(grid, kernel, args)`` says (its
``"name"``) and records the numbers it gives (``flops16``, ``bytes``, ...) with it; a
scope's ``metrics`` are recorded with the scope each time it is entered.

``finalize()`` writes each named session to ``<name>.hatchet`` (proton's format: a JSON
list holding the root node, each node's ``frame`` name, ``metrics`` inclusive of the nodes
under it, ``time (ns)`` and ``count`` among them, and ``children``), or to ``<name>.txt``
as a table with ``output_format="text"``; an unnamed session's table is printed.
``viewer`` reads a hatchet file and prints its tree with derived metrics (``tflop16/s``);
``report()`` gives the kernels' rows.

Launches are timed by tilec's clocks as ``do_bench`` is (``compiler.testing.clock``):
CUDA events on ptx (without ``do_bench``'s L2 flush: a kernel is timed with the caches the
program left), GPU timestamps or a fenced wall clock on wgsl, the wall clock on numpy.
Each profiled launch waits for its kernel, so a program runs slower while profiled (and a
``do_bench`` inside a session times that wait too). Work tilec does not launch (PyTorch's
kernels) is not seen: a scope around only such work has its metrics and no time, and
its metrics are left out of the scopes above it (their rates are of work timed). With
no session active the launch path is as without profiling: it tests one module variable
(``compiler.jit.PROFILE``).

Proton's other options (``context``, ``data``, ``backend``) and scope ``properties`` are
accepted and not used. Launches of a compiled kernel (``tc.compile(...)[grid]``) are not
recorded.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Self

import compiler.jit
from compiler import testing
from compiler.errors import TilecError
from compiler.triton.profiler.session import DEFAULT_PROFILE_NAME, Session, numbers

OUTPUT_FORMATS = ("hatchet", "text")

_sessions: dict[int, Session] = {}
_next_id = 0
_lock = threading.RLock()  # sessions, clocks, and one timed launch at a time
_scopes = threading.local()  # per thread: the names of the open scopes
_clocks: dict[str, Any] = {}


def _open_scopes() -> list[str]:
    if not hasattr(_scopes, "names"):
        _scopes.names = []
    return _scopes.names


def _record(name: str, backend: str, launch: Callable[[], None],
            metadata: Callable[[], dict] | None) -> None:
    """``compiler.jit.PROFILE``: time one launch, record it in every active session;
    ``metadata()`` gives Triton's launch metadata, for sessions that asked for it."""
    scopes = _open_scopes()
    with _lock:
        clock = _clocks.get(backend)
        if clock is None:
            clock = _clocks[backend] = testing.clock(backend, flush=False)
        (ms,) = clock.times(launch, 1)
        info = None
        for session in _sessions.values():
            if not session.active:
                continue
            frame, metrics = name, {}
            if metadata is not None and session.hook == "triton":
                info = (metadata() or {}) if info is None else info
                frame = str(info.get("name", name))
                metrics = numbers(info, f"launch metadata of {name}")
            launched = session.root.at([*scopes, frame])
            launched.launches += 1
            launched.total_ms += ms
            launched.add(metrics)


def _enter(name: str, metrics: dict | None) -> int:
    """Open scope ``name``, adding its ``metrics`` (checked first: a refused scope is not
    left open) in the active sessions; returns its depth."""
    values = numbers(metrics or {}, f"scope {name!r}")
    names = _open_scopes()
    names.append(name)
    _add_to_scope(values)
    return len(names) - 1


def _add_to_scope(values: dict[str, float]) -> None:
    """Add ``values`` to the innermost open scope in the active sessions."""
    if not values:
        return
    with _lock:
        for session in _sessions.values():
            if session.active:
                session.root.at(_open_scopes()).add(values)


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
    """Open a session recording launches from now on; returns its id (0 for the first).
    ``hook="triton"``: name and measure launches by their kernels' launch metadata."""
    global _next_id
    with _lock:
        session, _next_id = _next_id, _next_id + 1
        _sessions[session] = Session(name, hook)
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
    """The kernels ``session`` (None: the last started) recorded so far, slowest first:
    ``name`` (scopes/kernel), ``launches``, ``total_ms``, ``mean_ms`` and ``metrics``
    (the launch metadata's numbers, summed)."""
    with _lock:
        if session is None and _sessions:
            session = max(_sessions)
        return _session(session).rows()


def finalize(session: int | None = None, output_format: str = "hatchet") -> None:
    """Close ``session`` (None: every session): write it to ``<name>.hatchet``, or to
    ``<name>.txt`` with ``output_format="text"``; print an unnamed one's table."""
    if output_format not in OUTPUT_FORMATS:
        raise TilecError(f"output_format must be one of {', '.join(OUTPUT_FORMATS)}, "
                         f"got {output_format!r}")
    with _lock:
        closing = sorted(_sessions) if session is None else [session]
        for sid in closing:
            s = _session(sid)
            del _sessions[sid]
            if s.name is None:
                print(s.table())
            else:
                s.write(output_format)
        _rehook()


def profile(func: Callable | None = None, *, name: str | None = None,
            context: str | None = "shadow", data: str | None = "tree",
            backend: str | None = None, hook: str | None = None):
    """Decorator: each call of the function records into a session of its own, which is
    deactivated when it returns (``finalize()`` reports it)."""
    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            session = start(name, hook=hook)
            try:
                return f(*args, **kwargs)
            finally:
                deactivate(session)
        return wrapper
    return decorate if func is None else decorate(func)


class scope:
    """A named region, as a context manager (``with proton.scope("attn"):``) or a
    decorator (``@proton.scope("attn")``): kernels launched inside are recorded as
    ``attn/<kernel>``, and ``metrics`` (numbers: ``{"flops16": ..., "bytes": ...}``)
    are added to the scope each time it is entered."""

    def __init__(self, name: str, metrics: dict | None = None,
                 properties: dict | None = None):
        self.name = name
        self.metrics = metrics

    def __enter__(self) -> Self:
        _enter(self.name, self.metrics)
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
    """Open a scope until ``exit_scope()``, adding ``metrics`` to it; returns its depth
    (proton returns an id)."""
    return _enter(name, metrics)


def exit_scope(triton_op: bool = False, metrics: dict | None = None) -> int:
    """Close the innermost scope ``enter_scope`` opened, adding ``metrics`` to it first;
    returns its depth."""
    names = _open_scopes()
    if not names:
        raise TilecError("exit_scope() without an open scope")
    _add_to_scope(numbers(metrics or {}, f"scope {names[-1]!r}"))
    names.pop()
    return len(names)


__all__ = ["DEFAULT_PROFILE_NAME", "OUTPUT_FORMATS", "activate", "deactivate", "enter_scope",
           "exit_scope", "finalize", "profile", "report", "scope", "start"]
