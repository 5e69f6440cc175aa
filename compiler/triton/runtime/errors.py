"""``triton.runtime.errors``: the error an autotuner skips a config for."""

from compiler.errors import OutOfResources

__all__ = ["OutOfResources"]
