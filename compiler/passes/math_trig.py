"""Part of expand-math: inverse trigonometric functions, ``tan``, ``sinpi`` and ``cospi``,
in f32 and f64 (odd polynomials fitted by ``scripts/fit_math.py``).

- ``atan``: ``|x|`` is brought to ``|u| <= tan(pi/8)`` by one division chosen by region
  (``u = x``, ``(x - 1) / (x + 1)`` plus ``pi/4``, or ``-1 / x`` plus ``pi/2``), then
  ``u + u z P(z)``; ``atan2`` picks the same quotient from ``|y|`` and ``|x|`` (no rounded
  ``y / x`` first) and places the angle in its quadrant by the signs.
- ``asin``: ``x + x z P(z)`` to ``|x| = 1/2``; above, ``pi/2 - 2 asin(sqrt((1 - |x|) / 2))``
  with the square root's rounding error added back; ``acos`` from the same two pieces.
- ``sinpi``/``cospi``: ``x`` reduced exactly modulo 2, then to ``|r| <= 1/4`` and a
  quadrant; ``sin(pi r) = r (pi + z Q(z))``, ``cos(pi r) = 1 + z C(z)``.
- ``tan``: ``k``, the integer nearest ``x 2/pi``, from a product kept in two parts;
  ``r = x - k pi/2`` as a sum of two floats, ``pi/2`` in parts whose products with ``k``
  are exact (f32: 12-bit parts times ``k`` in 12-bit halves, each subtraction's error
  kept; f64: three parts and fused multiply-adds); then ``r + r z T(z)``, and
  ``-1 / tan(r)`` refined by a Newton step for odd ``k``. NaN from ``|x| = 2^24`` (f32)
  and ``2^50`` (f64) on, where ``k`` no longer fits (no Payne-Hanek reduction).
"""

from __future__ import annotations

from compiler.passes.math_values import (
    PI,
    F,
    bits,
    copysign,
    dq,
    expands,
    fabs,
    fence,
    fma,
    hi_lo,
    maximum,
    parts,
    poly,
    rint,
    rsqrt,
    select,
    split,
    sqrt,
    to_int,
    trunc,
    two_prod,
    two_sum,
)

# coefficients highest power first (fit_math.py ATAN_/ASIN_/TAN_/SINPI_/COSPI_32/64)
ATAN = {
    False: (-0.06078203395009041, 0.10593806207180023, -0.14243532717227936,
            0.19998471438884735, -0.33333316445350647),
    True: (-0.017905109209824507, 0.0380622081406586, -0.05039193315886528,
           0.05847859965298949, -0.06663099306454749, 0.07692059727144523,
           -0.09090897725829784, 0.11111110782175347, -0.14285714280166925,
           0.1999999999995325, -0.333333333333332),
}
ASIN = {
    False: (0.04216625541448593, 0.024179542437195778, 0.04547037184238434,
            0.07495297491550446, 0.16666752099990845),
    True: (0.03191200143272375, -0.01622384834090462, 0.01952799824630036,
           0.006528076670341502, 0.01216918713661925, 0.01388523940155331,
           0.01735970433731975, 0.022371758081186407, 0.030381959135543594,
           0.044642856828367126, 0.07500000000336964, 0.16666666666665408),
}
TAN = {
    False: (0.004677360877394676, -0.0005202635657042265, 0.011315668933093548,
            0.021097833290696144, 0.054095398634672165, 0.133323535323143,
            0.3333335816860199),
    True: (1.1100416826523852e-05, -3.023562968565941e-05, 6.0907319761552846e-05,
           -4.06226222744176e-05, 7.930755386519579e-05, 7.67884955547194e-05,
           0.0002464519129914302, 0.0005880910473360274, 0.0014562038802406932,
           0.0035920781117011543, 0.008863240150685965, 0.021869488258551482,
           0.053968253978159846, 0.13333333333315453, 0.3333333333333345),
}
SINPI = {
    False: (0.08103041350841522, -0.5992060899734497, 2.5501627922058105),
    True: (7.88825292753276e-07, -2.1914614007293564e-05, 0.00046630275966468184,
           -0.0073704309440466255, 0.08214588661109307, -0.5992645293207917,
           2.5501640398773455),
}  # the constant term, -pi^3/6, is -5.16771278...: fused with pi below
COSPI = {
    False: (0.23136422038078308, -1.3350505828857422, 4.0587077140808105,
            -4.934802055358887),
    True: (4.26413231437456e-06, -0.00010463354416985592, 0.0019295740215736473,
           -0.02580689137945532, 0.23533063035866694, -1.3352627688545868,
           4.0587121264167685, -4.934802200544679),
}
SINPI_LAST = {False: -5.167712688446045, True: -5.16771278004997}
_W = (False, True)
_PI = {w: hi_lo(PI, 53 if w else 24) for w in _W}
_PIO2 = {w: hi_lo(dq(PI, 2), 53 if w else 24) for w in _W}
_PIO4 = {w: hi_lo(dq(PI, 4), 53 if w else 24) for w in _W}
_TWO_OVER_PI_PARTS = {w: parts(dq(2, PI), 2, w) for w in _W}
# pi/2 for tan's reduction: f64 (PTX, a fused fma) in three floats; f32 in parts of 12 bits
# (and a rest), so that k times each is exact without a fused fma for k < 2^12
_PIO2_PARTS = {True: parts(dq(PI, 2), 3, True), False: parts(dq(PI, 2), 4, False, 12)}
_TAN_PI8 = 0.41421356237309503  # tan(pi/8) and tan(3pi/8): the regions of atan
_TAN_3PI8 = 2.414213562373095


def atan_reduced(u: F) -> F:
    """``atan(u)`` for ``|u| <= tan(pi/8)``."""
    z = u * u
    return fma(u * z, poly(ATAN[u.e.wide], z), u)


def _atan_ratio(ay: F, ax: F) -> F:
    """``atan(ay / ax)`` in [0, pi/2] for ``ay, ax >= 0`` (not both 0 or both infinite),
    with one division chosen by the region of the ratio."""
    w = ay.e.wide
    low = ay < ax * _TAN_PI8
    high = ay > ax * _TAN_3PI8
    n = select(low, ay, select(high, -ax, ay - ax))
    d = select(low, ax, select(high, ay, ay + ax))
    hi = select(low, 0.0, select(high, _PIO2[w][0], _PIO4[w][0]))
    lo = select(low, 0.0, select(high, _PIO2[w][1], _PIO4[w][1]))
    return hi + (atan_reduced(n / d) + lo)


@expands("atan")
def atan(x: F) -> F:
    return copysign(_atan_ratio(fabs(x), x.e.f(1.0)), x)


@expands("atan2")
def atan2(y: F, x: F) -> F:
    w = y.e.wide
    ay, ax = fabs(y), fabs(x)
    big = maximum(ay, ax)  # both scaled into range (exactly): the region tests multiply
    k = 2.0 ** (y.e.bias // 2)
    scale = select(big > k, 1.0 / k, select(big < 1.0 / k, k, 1.0))
    ay, ax = ay * scale, ax * scale
    equal = ay.eq(ax)  # 0 and 0, inf and inf: the quotient would be NaN
    r = select(equal, select(ay.eq(0.0), 0.0, _PIO4[w][0]), _atan_ratio(ay, ax))
    left = bits(x) < 0  # x < 0 or x = -0
    r = select(left, _PI[w][0] - (r - _PI[w][1]), r)
    return copysign(r, y)


def _asin_parts(a: F) -> tuple[F, F, F, F, F]:
    """For ``0 <= a <= 1``: whether ``a <= 1/2``, ``z``, ``P(z)``, ``s`` and ``c``, where
    ``asin(a) = a + a z P(z)`` with ``z = a^2`` below 1/2 and ``asin(a) = pi/2 - 2 (s + c)``
    with ``z = t = (1 - a) / 2`` above: the square root of ``t`` and a correction holding
    its error (a Newton step, ``(t - s^2) / 2s``) and the polynomial. The one polynomial is
    evaluated at the ``z`` of the branch taken. In f32 both ``s`` and the step's halving
    come from the approximate ``1/sqrt(t)``: the step makes ``s`` good to an ulp whatever
    its own few ulps, and the step's own rounding is ulps of a term ulps small (a
    correctly rounded square root and a division cost three times the instructions of the
    rest: Triton's tutorial 07 ran at 76% of Triton's speed)."""
    small = a <= 0.5
    t = (1.0 - a) * 0.5
    z = select(small, a * a, t)
    p = poly(ASIN[a.e.wide], z)
    if t.e.wide:
        s = sqrt(t)
        half = select(t > 0.0, 0.5 / s, 0.0)
    else:
        r = rsqrt(t)  # inf at 0, NaN below (|x| > 1): NaN goes on to the result
        zero = t.eq(0.0)
        s, half = select(zero, t, t * r), select(zero, 0.0, 0.5 * r)
    if t.e.fused:
        residual = fma(-s, s, t)  # t - s^2 rounded once, as the exact product below gives
    else:
        sq, sq_err = two_prod(s, s)
        residual = (t - sq) - sq_err
    return small, z, p, s, fma(s * t, p, residual * half)


@expands("asin")
def asin(x: F) -> F:
    w = x.e.wide
    a = fabs(x)
    small, z, p, s, c = _asin_parts(a)
    large = 2.0 * (_PIO4[w][0] - (s - (_PIO4[w][1] - c)))
    return copysign(select(small, a + a * z * p, large), x)


@expands("acos")
def acos(x: F) -> F:
    w = x.e.wide
    small, z, p, s, c = _asin_parts(fabs(x))
    mid = _PIO2[w][0] - (x - (_PIO2[w][1] - x * z * p))
    right = 2.0 * (s + c)
    left = 2.0 * (_PIO2[w][0] - (s - (_PIO2[w][1] - c)))
    return select(small, mid, select(x > 0.0, right, left))


def _pi_reduce(x: F) -> tuple[F, F, F]:
    """``r`` in [-1/4, 1/4], its square and the quadrant ``n`` (a float in [-4, 4]) with
    ``x = 2m + n/2 + r`` exactly for an integer ``m``."""
    x2 = x - 2.0 * trunc(x * 0.5)  # exact, in (-2, 2)
    n = rint(x2 + x2)
    r = fma(n, -0.5, x2)
    return r, r * r, n


def _sin_pi(r: F, z: F) -> F:
    """``sin(pi r)`` for ``|r| <= 1/4``."""
    w = r.e.wide
    tail = fma(z, poly(SINPI[w], z), SINPI_LAST[w])
    p, err = two_prod(r, r.e.f(_PI[w][0]))  # the leading product exactly
    return p + fma(r, fma(z, tail, _PI[w][1]), err)


def _cos_pi(z: F) -> F:
    return fma(z, poly(COSPI[z.e.wide], z), 1.0)


@expands("sinpi")
def sinpi(x: F) -> F:
    r, z, n = _pi_reduce(x)
    q = to_int(n) & 3
    s, c = _sin_pi(r, z), _cos_pi(z)
    v = select((q & 1).eq(0), s, c)
    v = select((q & 2).eq(0), v, -v)
    return select(v.eq(0.0), copysign(x.e.f(0.0), x), v)  # +-0 at integers, as x


@expands("cospi")
def cospi(x: F) -> F:
    r, z, n = _pi_reduce(x)
    q = to_int(n) & 3
    s, c = _sin_pi(r, z), _cos_pi(z)
    v = select((q & 1).eq(0), c, -s)
    v = select((q & 2).eq(0), v, -v)
    return select(v.eq(0.0), 0.0, v)  # +0 at the half-integers


def _tan_reduce(x: F, k: F) -> tuple[F, F]:
    """``x - k pi/2`` as ``hi + lo``: each product of ``k`` and a part of pi/2 is exact,
    the rounding error of each subtraction goes to ``lo``."""
    w = x.e.wide
    *lead, last = _PIO2_PARTS[w]
    if w:
        r = x
        for part in lead:
            r = fence(fma(-k, part, r))
        return two_sum(r, -k * last)
    k_hi, k_lo = split(k)  # 12 bits each: exact products with a 12-bit part
    r, lo = x, x.e.f(0.0)
    for part in lead:
        for kk in (k_hi, k_lo):
            r, err = two_sum(r, -(kk * part))
            lo = lo + err
    return two_sum(r, lo - k * last)


def _quadrant(x: F) -> F:
    """The integer nearest ``x 2/pi``, from the product in two parts (its rounding would
    pick the wrong neighbour for large ``x``)."""
    hi, lo = _TWO_OVER_PI_PARTS[x.e.wide]
    p, err = two_prod(x, x.e.f(hi))
    k = rint(p)
    frac = (p - k) + fma(x, lo, err)
    return k + select(frac > 0.5, 1.0, select(frac < -0.5, -1.0, 0.0))


@expands("tan")
def tan(x: F) -> F:
    w = x.e.wide
    k = _quadrant(x)
    rh, rl = _tan_reduce(x, k)
    z = rh * rh
    th, tl = two_sum(rh, fma(rh * z, poly(TAN[w], z), rl))
    q = -1.0 / th
    p, p_err = two_prod(q, th)
    q = fma(q, ((1.0 + p) + p_err) + q * tl, q)  # -1 / (th + tl)
    odd = (to_int(k) & 1).eq(1)
    limit = 2.0 ** (50 if w else 24)  # past it k has too many bits: no reduction
    r = select(fabs(x) < limit, select(odd, q, th), float("nan"))
    return select(x.eq(0.0), x, r)
