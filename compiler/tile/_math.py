"""The elementwise builtins of ``compiler.tile``, with cuTile's signatures: the function
forms of the operators (``ct.add(x, y)`` is ``x + y``), comparisons, bitwise operations,
``minimum``/``maximum`` and the math functions.

``rounding_mode`` takes a ``ct.RoundingMode`` (float operands only) and ``flush_to_zero``
a bool (float32 only), where cuTile takes them; the frontend documents what each does
in tilec (``compiler.frontend.cutile.math``).
"""

from __future__ import annotations

from compiler.tile._stub import _builtin

# ---------------------------------------------------------------- arithmetic


@_builtin
def add(x, y, *, rounding_mode=None, flush_to_zero=False):
    """``x + y``."""


@_builtin
def sub(x, y, *, rounding_mode=None, flush_to_zero=False):
    """``x - y``."""


@_builtin
def mul(x, y, *, rounding_mode=None, flush_to_zero=False):
    """``x * y``."""


@_builtin
def truediv(x, y, *, rounding_mode=None, flush_to_zero=False):
    """``x / y`` (a float)."""


@_builtin
def floordiv(x, y):
    """``x // y``: the floor of the quotient, as Python's."""


@_builtin
def mod(x, y):
    """``x % y``: the remainder with the divisor's sign, as Python's."""


@_builtin
def divmod(x, y):
    """``(x // y, x % y)`` of integers."""


@_builtin
def pow(x, y):
    """``x ** y``."""


@_builtin
def atan2(x1, x2):
    """The angle of the point ``(x2, x1)``, in ``[-pi, pi]``."""


@_builtin
def minimum(x, y, *, flush_to_zero=False, propagate_nan=False):
    """The smaller of ``x`` and ``y`` (a NaN is ignored unless ``propagate_nan``)."""


@_builtin
def maximum(x, y, *, flush_to_zero=False, propagate_nan=False):
    """The larger of ``x`` and ``y`` (a NaN is ignored unless ``propagate_nan``)."""


@_builtin
def negative(x):
    """``-x``."""


@_builtin
def isnan(x):
    """Where ``x`` is NaN."""


# ---------------------------------------------------------------- bitwise


@_builtin
def bitwise_and(x, y):
    """``x & y``."""


@_builtin
def bitwise_or(x, y):
    """``x | y``."""


@_builtin
def bitwise_xor(x, y):
    """``x ^ y``."""


@_builtin
def bitwise_lshift(x, y):
    """``x << y``."""


@_builtin
def bitwise_rshift(x, y):
    """``x >> y`` (arithmetic for signed integers)."""


@_builtin
def bitwise_not(x):
    """``~x`` (``not x`` for bools)."""


# ---------------------------------------------------------------- comparisons


@_builtin
def greater(x, y):
    """``x > y``."""


@_builtin
def greater_equal(x, y):
    """``x >= y``."""


@_builtin
def less(x, y):
    """``x < y``."""


@_builtin
def less_equal(x, y):
    """``x <= y``."""


@_builtin
def equal(x, y):
    """``x == y``."""


@_builtin
def not_equal(x, y):
    """``x != y``."""


# ---------------------------------------------------------------- math functions


@_builtin
def exp(x, *, rounding_mode=None):
    """``e ** x``."""


@_builtin
def exp2(x, *, flush_to_zero=False):
    """``2 ** x``."""


@_builtin
def log(x):
    """The natural logarithm."""


@_builtin
def log2(x):
    """The base-2 logarithm."""


@_builtin
def sqrt(x, *, rounding_mode=None, flush_to_zero=False):
    """The square root."""


@_builtin
def rsqrt(x, *, flush_to_zero=False):
    """``1 / sqrt(x)``."""


@_builtin
def sin(x):
    """The sine."""


@_builtin
def cos(x):
    """The cosine."""


@_builtin
def tan(x):
    """The tangent."""


@_builtin
def sinh(x):
    """The hyperbolic sine."""


@_builtin
def cosh(x):
    """The hyperbolic cosine."""


@_builtin
def tanh(x, *, rounding_mode=None):
    """The hyperbolic tangent."""


@_builtin
def floor(x):
    """The largest integer not above ``x``."""


@_builtin
def ceil(x):
    """The smallest integer not below ``x``."""


__all__ = [name for name, v in list(globals().items())
           if getattr(v, "__tilec_builtin__", None) and name != "cdiv"]
