"""The names of Triton's ``libdevice`` module (CUDA libdevice's functions without the
``__nv_`` prefix and the ``f`` suffix) that are not already ``tl`` builtins, with what
each computes. ``compiler.language`` makes a builtin stub of each for
``tl.extra.libdevice`` (``compiler.triton`` also names it ``tl.extra.cuda.libdevice``) and
``tl.math``; ``compiler.frontend.triton.libdevice`` lowers them. No xDSL import.
"""

from __future__ import annotations

FLOAT = {
    "asin": "arc sine", "acos": "arc cosine", "atan": "arc tangent",
    "atan2": "``atan2(y, x)``: the angle of the point (x, y)",
    "sinh": "hyperbolic sine", "cosh": "hyperbolic cosine",
    "asinh": "inverse hyperbolic sine", "acosh": "inverse hyperbolic cosine",
    "atanh": "inverse hyperbolic tangent", "tan": "tangent",
    "sinpi": "``sin(pi x)``", "cospi": "``cos(pi x)``",
    "exp10": "``10 ** x``", "expm1": "``e ** x - 1``", "log10": "base-10 logarithm",
    "log1p": "``log(1 + x)``", "logb": "the exponent of ``x`` as a float",
    "cbrt": "cube root", "rcbrt": "``1 / cbrt(x)``",
    "hypot": "``sqrt(x^2 + y^2)`` without overflow", "rhypot": "``1 / hypot(x, y)``",
    "norm3d": "``sqrt(a^2 + b^2 + c^2)``", "rnorm3d": "``1 / norm3d(a, b, c)``",
    "norm4d": "``sqrt(a^2 + b^2 + c^2 + d^2)``", "rnorm4d": "``1 / norm4d(a, b, c, d)``",
    "erfc": "``1 - erf(x)``", "erfcx": "``exp(x^2) erfc(x)``",
    "erfinv": "inverse of ``erf``", "erfcinv": "inverse of ``erfc``",
    "normcdf": "standard normal distribution function",
    "normcdfinv": "inverse of ``normcdf``",
    "lgamma": "``log |gamma(x)|``", "tgamma": "the gamma function",
    "trunc": "round toward zero", "round": "round to nearest, ties away from zero",
    "rint": "round to nearest, ties to even", "nearbyint": "``rint``",
    "fmod": "C's ``fmod``: ``x - n y``, ``n`` the quotient truncated (exact)",
    "remainder": "IEEE remainder: ``x - n y``, ``n`` the nearest integer (exact)",
    "copysign": "``x`` with the sign of ``y``", "nextafter": "the next float after ``x`` toward ``y``",
    "fdim": "``x - y`` if ``x > y``, else +0", "ldexp": "``x * 2 ** n``", "scalbn": "``ldexp``",
    "saturatef": "``x`` clamped to [0, 1] (NaN -> 0)",
    "isnan": "``x`` is NaN (int1)", "isinf": "``x`` is infinite (int1)",
    "finitef": "``x`` is finite (int1)", "isfinited": "``x`` is finite (int1)",
    "signbit": "1 where the sign bit of ``x`` is set, else 0 (int32)",
    "ilogb": "the exponent of ``x`` (int32)", "llrint": "``rint`` as int64",
    "llround": "``round`` as int64",
    "add_rn": "``x + y``", "sub_rn": "``x - y``", "mul_rn": "``x * y``",
    "fma_rn": "``fma``", "rcp_rn": "``1 / x``", "rsqrt_rn": "``1 / sqrt(x)``",
    "fast_dividef": "``x / y``", "fast_expf": "``exp``", "fast_logf": "``log``",
    "fast_log2f": "``log2``", "fast_log10f": "``log10``", "fast_exp10f": "``exp10``",
    "fast_sinf": "``sin``", "fast_cosf": "``cos``", "fast_tanf": "``tan``",
    "fast_powf": "``pow``",
}
"""Float functions (and their tests and conversions to integers)."""

INTEGER = {
    "clz": "leading zero bits (int32)", "popc": "set bits (int32)",
    "ffs": "position of the lowest set bit, from 1 (0 for 0; int32)",
    "brev": "bits reversed", "mulhi": "high half of the full product",
    "mul24": "product of the low 24 bits (sign-extended)",
    "hadd": "``(x + y) >> 1`` without overflow", "rhadd": "``(x + y + 1) >> 1`` without overflow",
    "sad": "``|x - y| + z``", "byte_perm": "bytes of ``(y, x)`` picked by the selector ``s``",
}

CONVERSIONS = {
    **{f"float2{t}_{r}": ("float32", t, r) for t in ("int", "uint", "ll", "ull")
       for r in ("rn", "rz", "rd", "ru")},
    **{f"double2{t}_{r}": ("float64", t, r) for t in ("int", "uint", "ll", "ull")
       for r in ("rn", "rz", "rd", "ru")},
    **{f"{t}2float_rn": (t, "float32", "rn") for t in ("int", "uint", "ll", "ull")},
    **{f"{t}2double_rn": (t, "float64", "rn") for t in ("int", "uint", "ll", "ull")},
    "double2float_rn": ("float64", "float32", "rn"), "double2float_rz": ("float64", "float32", "rz"),
}
"""``name -> (source, target, rounding)`` (``int``/``uint``/``ll``/``ull``: int32, int32
holding unsigned bits, int64, int64 holding unsigned bits); float -> integer rounds (``rn`` to nearest even,
``rz`` toward zero, ``rd`` down, ``ru`` up) then converts, saturating as tilec's casts do."""

BITS = {
    "float_as_int": ("float32", "int32"), "int_as_float": ("int32", "float32"),
    "float_as_uint": ("float32", "int32"), "uint_as_float": ("uint32", "float32"),
    "double_as_longlong": ("float64", "int64"), "longlong_as_double": ("int64", "float64"),
    "double2hiint": ("float64", "int32"), "double2loint": ("float64", "int32"),
    "hiloint2double": ("int32", "float64"),
}
"""Reinterpretations of bits (``double2hiint``: the upper word, ``hiloint2double(hi, lo)``)."""

UNSUPPORTED = (
    "j0", "j1", "jn", "y0", "y1", "yn", "cyl_bessel_i0", "cyl_bessel_i1", "rcp64h",
    *(f"{op}_{r}" for op in ("add", "sub", "mul", "fma", "div", "rcp", "sqrt")
      for r in ("rz", "rd", "ru")),
    "double2float_rd", "double2float_ru",
    *(f"{t}2{f}_{r}" for t in ("int", "uint", "ll", "ull") for f in ("float", "double")
      for r in ("rz", "rd", "ru")),
)
"""Names tilec knows but does not compute (Bessel functions, directed rounding of
arithmetic): a call is a ``CompileError`` naming the function."""

NAMES = (*FLOAT, *INTEGER, *CONVERSIONS, *BITS, *UNSUPPORTED)
