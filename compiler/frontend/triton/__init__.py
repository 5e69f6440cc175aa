"""The Triton-style kernel language (``import compiler.language as tl``) as a frontend
language: one module per builtin family, all registering into ``TABLE``.

- ``creation``: program ids, ``arange``, ``full``/``zeros``, ``x.dtype``/``x.shape``
- ``memory``: ``load``/``store``
- ``block_ptr``: ``make_block_ptr``/``advance``, ``make_tensor_descriptor`` and its
  ``.load``/``.store``, lowered to pointer tiles and masks
- ``elementwise``: math functions, ``where``, ``maximum``, ``cast``/``x.to``, ...
- ``libdevice``, ``libdevice_bits``: the rest of Triton's ``libdevice`` (float functions;
  integer functions, conversions, bit reinterpretations)
- ``shape``: ``expand_dims``, ``broadcast_to``, ``reshape``, ``trans``/``x.T``, ...
- ``more_shape``: ``join``/``split``/``interleave``/``cat``/``flip``, ``gather``, ``sort``,
  ``histogram``, ``swizzle2d``
- ``reduce``: reductions and scans (``sum``, ``argmax``, ``cumsum``, ``reduce``, ...)
- ``atomic``: ``atomic_add/max/min/xchg/cas``
- ``linalg``: ``dot`` (and ``a @ b``)
- ``random``: Philox random numbers (``philox``, ``randint``, ``rand``, ``randn``, ...)
  and ``umulhi``
- ``hints``: ``multiple_of``/``max_contiguous``/``max_constancy``, ``assume``,
  ``debug_barrier``, ``range`` (read by the code generator's ``for``)
- ``debug``: ``static_assert``/``static_print``, ``device_print``/``device_assert``
- ``inline_asm``: ``inline_asm_elementwise`` (a user's PTX for each element; ptx only)

``host_descriptors`` holds the language's code generator: host tensor descriptor
parameters bound to the descriptors their parts make.
"""

from compiler.frontend.triton import (  # noqa: F401 - imported to register their builtins
    atomic,
    block_ptr,
    creation,
    debug,
    elementwise,
    hints,
    inline_asm,
    libdevice,
    libdevice_bits,
    linalg,
    memory,
    more_shape,
    random,
    reduce,
    shape,
)
from compiler.frontend.triton.table import TABLE

__all__ = ["TABLE"]
