"""The cuTile-style kernel language (``import compiler.tile as ct``) as a frontend
language: arrays with tile-indexed loads and stores, over the same code generator and
much of the Triton-style language's builtins (``table``).

- ``arrays``: array parameters (``ArrayCodeGenerator``), ``load``/``store``/``num_tiles``
- ``tiles``: ``bid``/``num_blocks``, creation, reductions with ``keepdims``, ``cumsum``,
  ``astype``, ``mma``/``matmul``/``@``, shape ops
- ``indexed``: ``gather``/``scatter`` and atomics by element index
- ``lists``: lists of arrays indexed at run time
"""

from compiler.frontend.cutile import indexed, lists, tiles  # noqa: F401 - imported to register their builtins
from compiler.frontend.cutile.arrays import ArrayCodeGenerator
from compiler.frontend.cutile.table import TABLE

__all__ = ["TABLE", "ArrayCodeGenerator"]
