"""The NumPy backend's interpreter: runs a tile-IR kernel on the user's NumPy arrays, in place.

``Kernel`` (``kernel.py``) compiles and runs a kernel through tables of op meanings; this
module imports the feature modules that fill them: ``ops`` (elementwise, memory, program
ids), ``addresses`` (casts between integer addresses and pointers), ``libm`` (the libdevice functions), ``atomics``, ``combine`` (reduce, scan), ``dot``, ``async_copy`` (shared-memory
stages), ``shapes``, ``hints``, ``ramps`` (index tiles kept as row starts), ``tile_index`` (cuTile's tile-index check) and
``control`` (``scf``, print, assert). Use ``Kernel`` from here, so that every op is registered.
"""

from backends.numpy import (  # noqa: F401 - register ops
    addresses,
    async_copy,
    atomics,
    combine,
    control,
    dot,
    hints,
    libm,
    ops,
    ramps,
    shapes,
    tile_index,
)
from backends.numpy.kernel import Kernel

__all__ = ["Kernel"]
