"""Part of expand-math: the functions computed exactly (or nearly) from the bits and IEEE
arithmetic, in f32 and f64.

- ``round`` (ties away from zero): ``trunc(x)`` plus one with the sign of ``x`` where
  ``|x - trunc(x)| >= 1/2`` (that difference is exact); ``copysign`` from the bits.
- ``nextafter``, ``ldexp`` (the scaling split so that only the last product rounds),
  ``logb``: on the bits.
- ``fmod``/``remainder``: exact, by long division a mantissa's width at a time: each step
  takes the divisor scaled by a power of two to within ``2^p`` of the dividend, the
  truncated quotient ``q`` and the remainder ``a - q d``, which is exact (one
  subtraction of ``d`` mends a quotient rounded up; ``q d`` is formed exactly by
  Dekker's product, WGSL's ``fma`` being allowed two roundings). An ``scf.for`` of 13 (f32) or 41
  (f64) steps covers every exponent difference; ``remainder`` keeps the parity of the
  last quotient for its tie.
- ``hypot``, ``norm3d``, ``norm4d`` and their reciprocals: the operands scaled by a power
  of two near the largest, the squares summed by fused multiply-adds, one square root.
- ``cbrt``: a first guess from the bits (exponent divided by three), Halley's iteration,
  then one Newton step whose residual ``x - y^3`` is computed with the exact ``y^2``;
  ``rcbrt`` its reciprocal.
"""

from __future__ import annotations

from compiler.passes.math_values import (
    B,
    F,
    I,
    bits,
    clamp_int,
    copysign,
    expands,
    fabs,
    fence,
    fma,
    from_bits,
    iselect,
    isinf,
    isnan,
    maximum,
    pow2,
    scale,
    scale_up,
    select,
    sqrt,
    to_float,
    trunc,
    two_prod,
)


def exponent(x: F) -> I:
    """The unbiased exponent field of ``x`` (``-bias`` for zeros and subnormals)."""
    e = x.e
    return ((bits(x) >> e.mant) & (2 * e.bias + 1)) - e.bias


def true_exponent(x: F) -> I:
    """``floor(log2 |x|)`` for finite nonzero ``x``, subnormals included."""
    e = x.e
    sub = fabs(x) < float(2.0 ** (1 - e.bias))
    return iselect(sub, exponent(x * float(2 ** (e.mant + 1))) - (e.mant + 1), exponent(x))


@expands("round")
def round_(x: F) -> F:
    t = trunc(x)
    return t + copysign(select(fabs(x - t) >= 0.5, 1.0, 0.0), x)


@expands("copysign")
def copysign_(x: F, s: F) -> F:
    return copysign(x, s)


@expands("nextafter")
def nextafter(x: F, y: F) -> F:
    e = x.e
    away = ((x > 0.0) & (y > x)) | ((x < 0.0) & (y < x))
    step = from_bits(bits(x) + iselect(away, 1, -1))
    tiny = copysign(from_bits(e.i(1)), y)  # the smallest subnormal toward y
    r = select(x.eq(0.0), tiny, step)
    same = select(isnan(x), x, y)  # y where x == y, NaN where either is
    return select(x.eq(y) | isnan(x) | isnan(y), same, r)


@expands("ldexp")
def ldexp(x: F, n: I) -> F:
    e = x.e
    top = 2 * e.bias + e.mant + 2  # past this far the result is 0 or infinite anyway
    n = iselect(n > top, top, iselect(n < -top, -top, n))
    up = scale(x * pow2(iselect(n < e.bias - 1, n, e.bias - 1)),
               iselect(n < e.bias - 1, 0, n - (e.bias - 1)))
    # down: first exactly to the smallest normal exponent at most, then one rounding
    first = clamp_int(iselect(n > (1 - e.bias) - exponent(x), n, (1 - e.bias) - exponent(x)),
                      4 - 2 * e.bias, 0)  # two normal halves of the scaling
    rest = n - first
    down = scale(x, first) * pow2(iselect(rest < 1 - e.bias, 1 - e.bias, rest))
    return select(n >= 0, up, down)


@expands("logb")
def logb(x: F) -> F:
    e = x.e
    a = fabs(x)
    sub = a < float(2.0 ** (1 - e.bias))
    scaled = select(sub, a * float(2 ** (e.mant + 1)), a)
    k = to_float(exponent(scaled)) - select(sub, float(e.mant + 1), 0.0)
    edge = select(x.eq(0.0), -float("inf"), a)  # +inf for infinities, NaN for NaN
    return select(a.eq(0.0) | isinf(x) | isnan(x), edge, k)


# -- fmod and remainder -------------------------------------------------------------------

def _long_division(a: F, b: F) -> tuple[F, B]:
    """``a mod b`` exactly for finite ``a >= b > 0``, and whether the last quotient digit
    is odd (for ``remainder``'s ties)."""
    e = a.e
    eb = true_exponent(b)
    steps = 42 if e.wide else 13  # exponent differences up to 2097 and 276

    def step(r: F, odd: F) -> list[F]:
        s = exponent(r) - eb - e.mant
        d = scale_up(b, iselect(s > 0, s, 0))  # within 2^p of r: the quotient is exact
        q = fence(trunc(r / d))
        half = select(r > float(2.0 ** (e.bias - 1)), 0.5, 1.0)  # q d may round past max
        p, p_err = two_prod(q, d * half)
        r2 = ((r * half - p) - p_err) / half  # exact
        fix = r2 < 0.0
        q = select(fix, q - 1.0, q)
        last = (s <= 0) & (r >= d)
        parity = q - 2.0 * trunc(q * 0.5)
        return [select(r < d, r, select(fix, r2 + d, r2)), select(last, parity, odd)]

    r, odd = e.repeat(steps, [a, e.f(0.0)], step)
    return r, odd.eq(1.0)


def _mod_special(x: F, y: F, r: F) -> F:
    """``r`` (of ``|x|`` and ``|y|``) negated for a negative ``x``; NaN for ``y = 0``,
    infinite ``x`` or NaN; ``x`` for infinite ``y``."""
    bad = y.eq(0.0) | isinf(x) | isnan(x) | isnan(y)
    r = select(isinf(y), x, select(bits(x) < 0, -r, r))
    return select(bad, x.e.f(float("nan")), r)


@expands("fmod")
def fmod(x: F, y: F) -> F:
    a, b = fabs(x), fabs(y)
    r, _ = _long_division(a, b)
    return _mod_special(x, y, select(a < b, a, r))


@expands("remainder")
def remainder(x: F, y: F) -> F:
    a, b = fabs(x), fabs(y)
    r, odd = _long_division(a, b)
    r = select(a < b, a, r)
    odd = odd & (a >= b)
    half = b - r  # exact
    r = select((r > half) | (r.eq(half) & odd), r - b, r)
    return _mod_special(x, y, r)


# -- hypot and norms ----------------------------------------------------------------------

def _norm(*xs: F) -> tuple[F, F, F]:
    """``sqrt(sum of squares)``, ``2^k`` and the sum: the root of the operands scaled by
    ``2^-k``, ``2^k`` near the largest magnitude (so nothing overflows or is lost)."""
    e = xs[0].e
    a = [fabs(x) for x in xs]
    big = a[0]
    for v in a[1:]:
        big = maximum(big, v)
    k = exponent(big)
    k = iselect(k < 2 - e.bias, 2 - e.bias, iselect(k > e.bias - 1, e.bias - 1, k))
    down = pow2(0 - k)
    sc = [v * down for v in a]
    total = sc[-1] * sc[-1]
    for v in reversed(sc[:-1]):
        total = fma(v, v, total)
    return sqrt(total), pow2(k), total


def _norm_special(xs: tuple[F, ...], r: F, at_inf: float) -> F:
    """``at_inf`` where an operand is infinite, even beside a NaN (as CUDA's)."""
    inf = isinf(xs[0])
    for x in xs[1:]:
        inf = inf | isinf(x)
    return select(inf, at_inf, r)


@expands("hypot", "norm3d", "norm4d")
def norm(*xs: F) -> F:
    root, p, _ = _norm(*xs)
    return _norm_special(xs, root * p, float("inf"))


@expands("rhypot", "rnorm3d", "rnorm4d")
def rnorm(*xs: F) -> F:
    root, p, total = _norm(*xs)
    z = 1.0 / root
    rz, rz_err = two_prod(root, z)
    sq, sq_err = two_prod(root, root)
    d = ((total - sq) - sq_err) / (root + root)  # the square root's rounding error
    z = fma(z, ((1.0 - rz) - rz_err) - d * z, z)  # 1 / (root + d)
    return _norm_special(xs, select(root.eq(0.0), float("inf"), z / p), 0.0)


# -- cube root ------------------------------------------------------------------------------

def _cbrt_parts(a: F) -> tuple[F, F, I]:
    """``y``, ``d`` and ``k`` with ``cbrt(a) = (y + d) 2^k`` for finite ``a > 0``: ``y`` in
    [1, 2) from a guess on the bits (the exponent divided by three) and Halley's
    iteration, ``d`` one Newton step with the residual ``m - y^3`` nearly exact."""
    e = a.e
    shift = 24 if not e.wide else 54  # a multiple of 3 that normalizes a subnormal
    sub = a < float(2.0 ** (1 - e.bias))
    s = select(sub, a * float(2 ** shift), a)
    k = (exponent(s) + 1200) // 3 - 400  # floor(exponent / 3)
    m = from_bits(bits(s) - ((k * 3) << e.mant))  # s / 2^(3k), in [1, 8)
    one = 1 << e.mant
    y = from_bits((bits(m) - e.bias * one) // 3 + e.bias * one)  # within 6%
    for _ in range(3 if e.wide else 2):  # the error cubes at each step
        t = y * y * y
        y = y - y * (t - m) / (t + t + m)
    y2, y2_err = two_prod(y, y)
    y3, y3_err = two_prod(y2, y)
    resid = ((m - y3) - y3_err) - y2_err * y  # m - y^3
    return y, resid / (3.0 * y2), k - iselect(sub, shift // 3, 0)


def _times_pow2(y: F, k: I) -> F:
    """``y 2^k`` by adding ``k`` to the exponent field (the result is normal)."""
    return from_bits(bits(y) + (k << y.e.mant))


@expands("cbrt")
def cbrt(x: F) -> F:
    a = fabs(x)
    y, d, k = _cbrt_parts(a)
    edge = a.eq(0.0) | isinf(a) | isnan(a)
    return copysign(select(edge, a, _times_pow2(y + d, k)), x)


@expands("rcbrt")
def rcbrt(x: F) -> F:
    a = fabs(x)
    y, d, k = _cbrt_parts(a)
    z = 1.0 / y
    z = fma(z, fma(-y, z, 1.0) - d / y, z)  # 1 / (y + d), the division's error included
    edge = a.eq(0.0) | isinf(a) | isnan(a)
    return copysign(select(edge, 1.0 / a, _times_pow2(z, 0 - k)), x)
