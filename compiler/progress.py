"""A progress line on stderr for work that makes a user wait: a compilation, a driver
compiling a shader at a kernel's first launch, autotuning.

``with progress.step("compiling add for wgsl") as line:`` shows ``compiling add for wgsl
... 1.4 s`` once the step has run ``DELAY`` seconds (fast work prints nothing, so nothing
flickers), rewrites it in place every ``TICK`` with the time so far and ``line.update``'s
text, and clears it when the step ends. Steps open at once (nested, or in other threads)
share the one line. It shows when stderr is a terminal; ``TILEC_PROGRESS=0`` turns it
off, and ``TILEC_PROGRESS=1`` on whether or not stderr is a terminal.

One daemon thread draws the line, started by the first step that shows; it sleeps while
no step is open. A step costs a lock and a list append: steps mark slow work only, never
a launch of a compiled kernel. Stdlib only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DELAY = 1.0  # seconds a step runs before it shows
TICK = 0.1  # seconds between redraws
_UNBOUNDED = 1 << 30

_changed = threading.Condition()  # guards _open, _shown and the drawing
_open: list[Step] = []
_shown = 0  # characters of the line on the screen; 0: no line is shown
_drawer: threading.Thread | None = None


def _forget() -> None:
    """A child of ``fork()`` starts with no steps, no line and no drawer: the parent's
    are not its own, and the lock may have been held by the parent's drawer."""
    global _changed, _open, _shown, _drawer
    _changed, _open, _shown, _drawer = threading.Condition(), [], 0, None


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork()
    os.register_at_fork(after_in_child=_forget)


def enabled() -> bool:
    flag = os.environ.get("TILEC_PROGRESS", "")
    if flag:
        return flag != "0"
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


class Step:
    """One piece of slow work on the line: its text and when it began."""

    def __init__(self, text: str):
        self.text = text
        self.start = time.monotonic()

    def update(self, text: str) -> None:
        """New text for the step (the line shows it at the next redraw)."""
        self.text = text


@contextmanager
def step(text: str) -> Iterator[Step]:
    """Show ``text`` on the progress line while the block runs, once it has run ``DELAY``
    seconds; the line is gone when the block ends."""
    current = Step(text)
    if not enabled():
        yield current
        return
    with _changed:
        _open.append(current)
        _start_drawer()
        _changed.notify()
    try:
        yield current
    finally:
        with _changed:
            _open.remove(current)
            if _shown:
                _draw()  # the rest of the steps, or a cleared line, before the caller goes on


def above(text: str) -> None:
    """Print ``text`` on stderr: where the progress line shows, in its place, and the line
    comes back below it at the next redraw."""
    global _shown
    with _changed:
        if _shown:
            _write(f"\r{' ' * _shown}\r")
            _shown = 0
        print(text, file=sys.stderr)


def _start_drawer() -> None:
    global _drawer
    if _drawer is None:
        _drawer = threading.Thread(target=_draw_while_open, name="tilec-progress",
                                   daemon=True)
        _drawer.start()


def _draw_while_open() -> None:
    with _changed:
        while True:
            if not _open:
                _changed.wait()
                continue
            wait = min(s.start for s in _open) + DELAY - time.monotonic()
            if wait > 0:
                _changed.wait(wait)
                continue
            _draw()
            _changed.wait(TICK)


def _draw() -> None:
    """Rewrite the line with every step that has run ``DELAY`` seconds (held: _changed)."""
    global _shown
    now = time.monotonic()
    line = " | ".join(f"{s.text} ... {now - s.start:.1f} s" for s in _open
                      if now - s.start >= DELAY)[:_width() - 1]
    if not line and not _shown:
        return
    blank = " " * max(_shown - len(line), 0)  # the end of a longer line drawn before
    _write(f"\r{line}{blank}" + ("" if line else "\r"))
    _shown = len(line)


def _write(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # stderr gone (interpreter exit)
        pass


def _width() -> int:
    """The terminal's width: a line as wide would wrap, and a carriage return would go
    back to the start of its last row only. Unbounded where stderr is no terminal or
    reports no width."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or _UNBOUNDED
    except (AttributeError, OSError, ValueError):
        return _UNBOUNDED
