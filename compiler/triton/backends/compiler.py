"""``triton.backends.compiler``: the names programs import from Triton's backend interface.
tilec compiles through ``tc.compile``, so ``BaseBackend`` only describes the target."""

from __future__ import annotations

from compiler.triton.runtime.driver import GPUTarget


class BaseBackend:
    """A backend for ``target`` (a ``GPUTarget``), as Triton's constructor takes it."""

    def __init__(self, target: GPUTarget):
        self.target = target


__all__ = ["BaseBackend", "GPUTarget"]
