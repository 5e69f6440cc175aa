"""The cuTile-style kernel language (``import compiler.tile as ct``) as a frontend
language: arrays with tile-indexed loads and stores, over the same code generator and
much of the Triton-style language's builtins (``table``).

- ``arrays``: array parameters (``ArrayCodeGenerator``), ``load``/``store``/``num_tiles``
- ``tiles``: ``bid``/``num_blocks``, creation, ``astype``, shape ops
- ``products``: ``mma``/``matmul``/``@`` (batched, vectors) and ``mma_scaled``
- ``reductions``: reductions and scans (``sum`` ... ``reduce``, ``cumsum`` ... ``scan``)
- ``math``: elementwise builtins with cuTile's rounding, flush and NaN keywords
- ``subtiles``: ``extract``, ``insert``, ``cat``, ``astile``, ``bitcast``, ``x.item()``
- ``indexed``: ``gather``/``scatter`` and atomics by element index
- ``lists``: lists of arrays indexed at run time
- ``views``: tiled views and advanced indexing
- ``meta``: compile-time helpers, assertions, and the names not supported yet
- ``dtypes``: dtype arguments (tilec's, PyTorch's, NumPy's)
"""

from compiler.frontend.cutile import (  # noqa: F401 - imported to register their builtins
    indexed,
    lists,
    math,
    meta,
    products,
    reductions,
    subtiles,
    tiles,
    views,
)
from compiler.frontend.cutile.arrays import ArrayCodeGenerator
from compiler.frontend.cutile.table import TABLE

__all__ = ["TABLE", "ArrayCodeGenerator"]
