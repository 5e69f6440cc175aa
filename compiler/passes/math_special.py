"""Part of expand-math: the error function family and the gamma functions."""

from __future__ import annotations

from compiler.passes.math_values import (
    F,
    copysign,
    exp2_native,
    expands,
    fabs,
    fma,
    minimum,
    poly,
    select,
)

# erf in f32: for |x| < 1, x + x P(x^2); above, 1 - 2^Q(|x|) with Q fitted to log2(erfc)
# on [1, 3.92] (from 3.92 on erf rounds to 1 in f32); fitted in float64 for least relative
# (erf) or absolute (log2(erfc)) error with Lawson's reweighting, rounded to f32.
ERF_SMALL = (7.964892574818805e-05, -0.0008037715451791883, 0.005190611816942692,
             -0.02685445547103882, 0.1128358319401741, -0.376126229763031,
             0.12837916612625122)
ERF_LOG2_ERFC = (2.3544673695141682e-06, -6.624581874348223e-05, 0.0008588372147642076,
                 -0.006854241248220205, 0.038075972348451614, -0.15872721374034882,
                 -0.9116346836090088, -1.6305149793624878, 0.00044350820826366544)
ERF_ONE = 3.92  # erf(x) rounds to 1.0 in f32 from here on


@expands("erf", f64=False)
def erf(x: F) -> F:
    a = fabs(x)
    small = fma(x, poly(ERF_SMALL, x * x), x)
    erfc = exp2_native(poly(ERF_LOG2_ERFC, minimum(a, ERF_ONE)))
    return select(a < 1.0, small, copysign(1.0 - erfc, x))
