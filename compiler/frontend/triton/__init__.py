"""The Triton-style kernel language (``import compiler.language as tl``) as a frontend
language: one module per builtin family, all registering into ``TABLE``.

- ``creation``: program ids, ``arange``, ``full``/``zeros``, ``x.dtype``/``x.shape``
- ``memory``: ``load``/``store``
- ``block_ptr``: ``make_block_ptr``/``advance``, ``make_tensor_descriptor`` and its
  ``.load``/``.store``, lowered to pointer tiles and masks
- ``elementwise``: math functions, ``where``, ``maximum``, ``cast``/``x.to``, ...
- ``shape``: ``expand_dims``, ``broadcast_to``, ``reshape``, ``trans``/``x.T``, ...
- ``reduce``: reductions and scans (``sum``, ``argmax``, ``cumsum``, ``reduce``, ...)
- ``atomic``: ``atomic_add/max/min/xchg/cas``
- ``linalg``: ``dot`` (and ``a @ b``)
- ``random``: Philox random numbers (``philox``, ``randint``, ``rand``, ``randn``, ...)
  and ``umulhi``
- ``debug``: ``static_assert``/``static_print``, ``device_print``/``device_assert``
"""

from compiler.frontend.triton import (  # noqa: F401 - imported to register their builtins
    atomic,
    block_ptr,
    creation,
    debug,
    elementwise,
    linalg,
    memory,
    random,
    reduce,
    shape,
)
from compiler.frontend.triton.table import TABLE

__all__ = ["TABLE"]
