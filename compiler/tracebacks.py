"""Tracebacks without tilec's own frames: an uncaught ``TilecError`` names the bad argument
or the kernel's line, and the frames of the launch machinery under the user's call say
nothing more (``hide_frames``); ``grid_launch`` is ``kernel[grid]``. Imports nothing heavy."""

from __future__ import annotations

import os
import sys
import threading
import types
from typing import Any

from compiler.errors import TilecError


def grid_launch(bound: tuple[Any, Any], *args: Any, **kwargs: Any) -> None:
    """``target[grid](*args, **kwargs)``, ``bound`` being ``(target, grid)``: a kernel,
    compiled kernel or autotuner's ``__getitem__`` returns ``MethodType(grid_launch,
    (self, grid))``, which runs ``target.run(grid, args, kwargs)``.

    Why not a lambda: its frame would show in the user's traceback, and cannot say it is
    tilec's; this one sets ``__tracebackhide__``. A bound method is C-level and calls as
    fast as the lambda did (``functools.partial``, the other C-level way, measured 60 ns
    a launch slower: it copies the arguments of a call with more than five; so does a
    helper function making the method, 25 ns)."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out
    target, grid = bound
    target.run(grid, args, kwargs)


def triton_grid_launch(bound: tuple[Any, Any], *args: Any, **kwargs: Any) -> Any:
    """``grid_launch`` for an object launched as Triton's are: ``target.run(*args,
    grid=grid, warmup=False, **kwargs)``."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out
    target, grid = bound
    return target.run(*args, grid=grid, warmup=False, **kwargs)


_PACKAGES = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               name, "") for name in ("compiler", "backends", "dialects"))


def without_tilec_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` less its innermost frames that run tilec's own files (the packages
    ``compiler``, ``backends`` and ``dialects``): the frames below the user's call that
    failed. The outermost frame always stays."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    keep = len(entries)
    while keep > 1 and entries[keep - 1].tb_frame.f_code.co_filename.startswith(_PACKAGES):
        keep -= 1
    stripped = None
    for entry in reversed(entries[:keep]):  # new entries: the exception's own stay intact
        stripped = types.TracebackType(stripped, entry.tb_frame, entry.tb_lasti,
                                       entry.tb_lineno)
    return stripped


def _strip_chain(error: BaseException | None) -> None:
    """Strip the tracebacks of ``error`` and the exceptions it was raised from or during,
    where they are tilec errors."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, TilecError):
            error.__traceback__ = without_tilec_frames(error.__traceback__)
        error = error.__cause__ or error.__context__


def _excepthook(previous: Any) -> Any:
    def hook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
        if isinstance(error, TilecError):
            tb = without_tilec_frames(tb)
            error.__traceback__ = tb
        _strip_chain(error.__cause__ or error.__context__)
        previous(kind, error, tb)
    hook.tilec = True  # type: ignore[attr-defined]
    return hook


def _thread_excepthook(previous: Any) -> Any:
    def hook(args: Any) -> None:
        _strip_chain(args.exc_value)
        tb = getattr(args.exc_value, "__traceback__", args.exc_traceback)
        previous(threading.ExceptHookArgs([args.exc_type, args.exc_value, tb, args.thread]))
    hook.tilec = True  # type: ignore[attr-defined]
    return hook


def hide_frames() -> None:
    """Show the user's traceback of an uncaught ``TilecError`` without tilec's frames: the
    error names the bad argument or the kernel's line, and the frames of the launch
    machinery under the user's call say nothing more.

    How, and why so: a traceback records every frame its exception left, and no frame can
    take itself out (``raise e.with_traceback(None)`` still leaves the raising one), so
    the frames are taken out where the traceback is printed. ``sys.excepthook`` (and
    ``threading.excepthook``) print the uncaught errors of scripts and threads: ours
    strips the innermost tilec frames of ``TilecError`` tracebacks (by file, so no frame
    is missed) and hands over to the hook it replaced, which stays in charge of the
    printing. IPython and pytest print with their own machinery, which honours
    ``__tracebackhide__ = True`` in a frame's locals: the frames a launch error passes
    (``grid_launch``, the launch's ``except``) set it. Errors caught by the user keep every
    frame; ``traceback.print_exc()`` shows them all."""
    if not getattr(sys.excepthook, "tilec", False):
        sys.excepthook = _excepthook(sys.excepthook)
    if not getattr(threading.excepthook, "tilec", False):
        threading.excepthook = _thread_excepthook(threading.excepthook)
