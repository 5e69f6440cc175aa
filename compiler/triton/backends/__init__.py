"""``triton.backends``: the one backend Triton programs see on tilec. ``backends`` maps its
name to its ``compiler`` and ``driver`` classes, as Triton's registry does; programs ask it
whether Triton can run here (exactly one backend whose ``driver.is_active()``). Its name is
``"tilec"``, not a device type such as ``"cpu"``, so PyTorch's checks for a Triton CPU
backend stay false and ``torch.compile`` on CPU keeps its own code generator."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.triton.backends.compiler import BaseBackend
from compiler.triton.runtime.driver import ActiveDriver


@dataclass(frozen=True)
class Backend:
    """One entry of ``backends``: the classes Triton would instantiate for it."""

    compiler: type
    driver: type


backends = {"tilec": Backend(compiler=BaseBackend, driver=ActiveDriver)}

__all__ = ["Backend", "backends"]
