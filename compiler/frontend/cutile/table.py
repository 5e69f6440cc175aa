"""The builtin table of the cuTile-style language (``ct.*``, ``compiler.tile``).

Where cuTile means what Triton means (``where``, ``fma``, ``cdiv``, the ``x.T``/
``x.dtype``/``x.shape`` of tiles, ``static_print``) the handlers of
``compiler.frontend.triton`` are shared, not copied; the family modules beside this
one register the rest (``arrays``, ``tiles``, ...) and override what differs. Where
cuTile's handler only adds keywords (``ct.exp(x, rounding_mode=...)``), Triton's
builtin of the name is ``compatible``: ``tl.exp`` in a ``@ct.kernel`` is ``ct.exp``. Plain Python
helper functions are inlined, as cuTile does, without a decorator.
"""

import compiler.language as tl
from compiler.frontend.builtins import BuiltinTable
from compiler.frontend.triton import TABLE as TRITON

TABLE = BuiltinTable("ct", "compiler.tile", "the cuTile-style language (compiler.tile, "
                     "@ct.kernel)", inline_plain=True, foreign=TRITON,
                     counterparts={"program_id": "bid", "num_programs": "num_blocks",
                                   "dot": "matmul", "trans": "transpose", "cast": "astype"},
                     compatible=frozenset((*tl.MATH_FUNCTIONS, "maximum", "minimum", "isnan",
                                           "tan", "sinh", "cosh", "atan2", "static_assert")))
builtin = TABLE.builtin
method = TABLE.method
tile_property = TABLE.property

_SHARED = ("where", "maximum", "minimum", "fma", "cdiv", "abs", "sigmoid", "static_assert",
           "static_print", "static_range", "device_print", "device_assert",
           *tl.MATH_FUNCTIONS)  # exp, exp2, log, sqrt, rsqrt, sin, cos, erf, tanh, ...
TABLE.functions.update({name: TRITON.functions[name] for name in _SHARED})
TABLE.properties.update(TRITON.properties)
