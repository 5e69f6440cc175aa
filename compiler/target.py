"""What the pipeline asks of a backend's compile side (``backends/<name>/target.py``).

A target module names the level it starts from (``INPUT``: ``"tile"`` or ``"simt"``), for
SIMT targets the widest global access one thread makes (``VECTOR_BITS``), optionally the
tensor cores dots may use on an arch (``tensor_cores(arch)``: the SM version, 80 for
``mma.sync``, 90 for Hopper's ``wgmma``) and its own
passes after the shared SIMT stages (``PASSES``, names in the pass registry), optionally
why its pointers are no addresses (``NO_ADDRESSES``: the pipeline then refuses casts
between integers and pointers), and turns the lowered module into code with
``generate(module, arch) -> Generated``. Nothing here imports
xDSL or a backend: the pipeline loads ``backends.<name>.target`` by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from types import ModuleType


@dataclass
class Generated:
    """A target's output: the artifact a launcher loads, the texts ``ck.asm`` shows (and
    the disk cache keeps), and launcher facts (shared memory bytes, arch, ...)."""

    artifact: str | bytes
    asm: dict[str, str | bytes] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    # What a launcher in this process may take instead of the artifact (the NumPy
    # backend's module, which it would otherwise parse from the text); never cached.
    live: object = None


def load(backend: str) -> ModuleType:
    """The compile side of ``backend`` (imports xDSL and the backend's lowering)."""
    return import_module(f"backends.{backend}.target")
