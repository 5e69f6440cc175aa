"""Which backend a launch runs on: the backends, whether each works here (asked once),
the default (``tc.set_backend``, ``TILEC_BACKEND``, ``auto``) and its resolution. Imports
no backend until one is asked about."""

from __future__ import annotations

import importlib
import os

from compiler.errors import BackendUnavailableError, LaunchError

BACKENDS = ("ptx", "wgsl", "numpy")
_availability: dict[str, tuple[bool, str]] = {}
_default_backend: str | None = None


def backend_module(name: str):
    return importlib.import_module(f"backends.{name}")


def availability(name: str) -> tuple[bool, str]:
    if name not in _availability:
        try:
            _availability[name] = backend_module(name).availability()
        except Exception as e:  # noqa: BLE001 - a backend that cannot import is unavailable
            _availability[name] = (False, f"{type(e).__name__}: {e}")
    return _availability[name]


def backends() -> dict[str, tuple[bool, str]]:
    """Each backend: (works here, why or why not)."""
    return {name: availability(name) for name in BACKENDS}


BACKEND_NAMES = BACKENDS + ("auto",)
"""What ``backend=``, ``tc.set_backend`` and ``TILEC_BACKEND`` accept."""


def set_backend(name: str | None) -> None:
    """Set the default backend (None: back to ``TILEC_BACKEND`` or ``auto``)."""
    global _default_backend
    if name is not None and name not in BACKEND_NAMES:
        raise LaunchError(f"tc.set_backend({name!r}): unknown backend; choose from "
                          f"{', '.join(BACKEND_NAMES)} (or None)")
    _default_backend = name


def default_backend() -> str:
    """The backend a launch that names none asks for: ``tc.set_backend``'s, else
    ``TILEC_BACKEND``, else ``auto`` (not resolved: it may be unavailable here)."""
    if _default_backend is not None:
        return _default_backend
    name = os.environ.get("TILEC_BACKEND") or "auto"
    if name not in BACKEND_NAMES:
        raise LaunchError(f"the environment variable TILEC_BACKEND is {name!r}, which is not "
                          f"a backend: set it to one of {', '.join(BACKEND_NAMES)}, or unset it")
    return name


def resolve_backend(name: str | None) -> str:
    """The backend a launch with ``backend=name`` runs on (None: the default)."""
    ok = _availability.get(name)  # the per-launch fast path: a named, checked backend
    if ok is not None and ok[0]:
        return name
    name = name or default_backend()
    if name == "auto":
        for b in BACKENDS:
            if availability(b)[0]:
                return b
    if name not in BACKENDS:
        raise LaunchError(f"unknown backend {name!r}; choose from {BACKEND_NAMES}")
    ok, why = availability(name)
    if not ok:
        raise BackendUnavailableError(f"backend {name!r} is not available: {why}")
    return name
