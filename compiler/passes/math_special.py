"""Part of expand-math: the error function family and the gamma functions, in f32 (f16 and
bf16 computed in it; no f64 sequences: ``expand-math`` refuses those).

- ``erf``: below 1, ``x + x P(x^2)``; above, ``1 - 2^Q(|x|)`` with the target's ``exp2``.
- ``erfcx(x) = e^(x^2) erfc(x)`` for ``x >= 1/2``: a polynomial in ``x - 2`` up to 4,
  ``H(1/x^2) / (x sqrt(pi))`` above (``H`` smooths the asymptotic series); ``erfc`` is
  ``e^(-x^2) erfcx(x)`` with ``x^2`` in two parts (its rounding would cost ``2 x^2`` ulps),
  ``1 - erf(x)`` below 1/2 and ``2 - erfc(-x)`` for negative ``x``; ``normcdf(x)`` is
  ``erfc(-x / sqrt(2))/2`` with the quotient in two parts, its low part applied through the
  derivative.
- ``erfinv``/``erfcinv``/``normcdfinv``: with ``w = -log((1 - y)(1 + y))`` (``erfcinv``: of
  ``c (2 - c)``, so small ``c`` keeps its digits), ``y C(w - 5/2)`` while ``w < 5``, then
  polynomials in ``sqrt(w)`` on two ranges of the tail.
- ``lgamma``: ``t A(t) = lgamma(2 + t)`` on ``[-3/4, 1/2]``, reached by ``lgamma(x) =
  lgamma(x + 1) - log(x)`` (or ``+ 2``) below 1.25 and by ``log`` of the product
  ``(x - 1)...(x - n)`` up to 6; Stirling's series from 6; for ``x < 0`` the reflection
  ``log(pi / |x sinpi(x)|) - lgamma(-x)`` (inaccurate near the negative zeros, as libdevice).
- ``tgamma``: ``G(t) = gamma(2 + t)`` with the same shifts (products and quotients) below 6;
  from 6 ``exp`` of Stirling's series, both in two-float arithmetic; the reflection for
  ``x < 0``.

Polynomials fitted by ``scripts/fit_math.py``.
"""

from __future__ import annotations

from compiler.passes.math_exp_log import (
    clamp_exp,
    exp_kr,
    log1p_terms,
    log_of,
    log_parts,
    reduce_exp,
)
from compiler.passes.math_trig import sinpi
from compiler.passes.math_values import (
    LN2,
    PI,
    F,
    copysign,
    dec,
    dln,
    dq,
    dsqrt,
    exp2_native,
    expands,
    fabs,
    fma,
    hi_lo,
    isinf,
    isnan,
    maximum,
    minimum,
    poly,
    select,
    sqrt,
    two_prod,
    two_sum,
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
# fit_math.py ERFCX_NEAR_32 (in x - 2 on [1/2, 4]), ERFCX_FAR_32 (in 1/x^2 from 4)
ERFCX_NEAR = (-6.79692746530236e-08, 5.121127628626709e-07, -1.6641794218230643e-06,
              4.332239768700674e-06, -1.5047510714794043e-05, 5.5734883062541485e-05,
              -0.00018649098637979478, 0.0005928530008532107, -0.001830601249821484,
              0.005440473556518555, -0.015460890717804432, 0.0418027825653553,
              -0.10679645091295242, 0.25539568066596985)
ERFCX_FAR = (53.34183883666992, -22.694927215576172, 6.320108890533447,
             -1.87041437625885, 0.7499593496322632, -0.49999988079071045, 1.0)
_TWO_OVER_SQRT_PI = float(dq(2, dsqrt(PI)))
_INV_SQRT_PI = float(dq(1, dsqrt(PI)))
_INV_SQRT2 = hi_lo(dq(1, dsqrt(2)), 24)


@expands("erf", f64=False)
def erf(x: F) -> F:
    a = fabs(x)
    small = fma(x, poly(ERF_SMALL, x * x), x)
    erfc = exp2_native(poly(ERF_LOG2_ERFC, minimum(a, ERF_ONE)))
    return select(a < 1.0, small, copysign(1.0 - erfc, x))


def _erf_small(x: F) -> F:
    """``erf(x)`` for ``|x| < 1``."""
    return fma(x, poly(ERF_SMALL, x * x), x)


def _erfcx_pos(a: F) -> F:
    """``erfcx(a)`` for ``a >= 1/2``."""
    near = poly(ERFCX_NEAR, a - 2.0)
    u = 1.0 / (a * a)
    far = poly(ERFCX_FAR, u) * _INV_SQRT_PI / a
    return select(a < 4.0, near, far)


def _exp_dd(h: F, lo: F) -> F:
    """``e^(h + lo)`` for a small ``lo``."""
    k, r = reduce_exp(clamp_exp(h))
    return exp_kr(k, r + lo)


def _exp_neg_square(a: F) -> F:
    """``e^(-a^2)`` with ``a^2`` in two parts."""
    h, lo = two_prod(a, a)
    return _exp_dd(-h, -lo)


@expands("erfc", f64=False)
def erfc(x: F) -> F:
    a = minimum(fabs(x), 20.0)  # erfc(20) is 0 in f32
    tail = _exp_neg_square(a) * _erfcx_pos(a)
    r = select(x > 0.0, tail, 2.0 - tail)
    return select(a < 0.5, 1.0 - _erf_small(x), select(isnan(x), x, r))


@expands("erfcx", f64=False)
def erfcx(x: F) -> F:
    a = fabs(x)
    h, lo = two_prod(minimum(a, 10.0), minimum(a, 10.0))
    grow = _exp_dd(h, lo)  # e^(x^2), infinite from 10 on
    small = grow * (1.0 - _erf_small(x))
    r = select(x > 0.0, _erfcx_pos(a), 2.0 * grow - _erfcx_pos(a))
    return select(a < 0.5, small, select(isnan(x), x, r))


@expands("normcdf", f64=False)
def normcdf(x: F) -> F:
    xc = maximum(minimum(x, 30.0), -30.0)  # normcdf is 0 or 1 in f32 from there on
    vh, vl = two_prod(xc, x.e.f(_INV_SQRT2[0]))  # v = x / sqrt(2) = vh + vl
    vl = fma(xc, _INV_SQRT2[1], vl)
    a = fabs(vh)
    low = select(vh < 0.0, -vl, vl)  # the low part of |v|
    # erfc(|v|) / 2 with its low part through the derivative -2/sqrt(pi) e^(-v^2)
    half_tail = 0.5 * _exp_neg_square(a) * (_erfcx_pos(a) - low * _TWO_OVER_SQRT_PI)
    mid = 0.5 + 0.5 * (_erf_small(vh) + vl * _TWO_OVER_SQRT_PI)
    r = select(vh < 0.0, half_tail, 1.0 - half_tail)
    return select(a < 0.5, mid, select(isnan(x), x, r))


# -- erfinv and friends ----------------------------------------------------------------

# fit_math.py ERFINV_C_32 (erfinv(y) / y in w - 5/2), ERFINV_T_32 / ERFINV_F_32 (erfcinv in
# sqrt(w) - 3.4 on [sqrt(5), 4.5] and sqrt(w) - 7.4 on [4.5, 10.2])
ERFINV_C = (6.344212377662473e-10, 3.5069926962449927e-09, -1.8897919673577235e-08,
            -3.161648720606536e-08, 5.230675128586881e-07, -3.162320581395761e-06,
            -5.096686891192803e-06, 0.00021767236466985196, -0.001252626534551382,
            -0.004176859278231859, 0.24664026498794556, 1.5014092922210693)
ERFINV_T = (3.7163019896979677e-06, -7.4171348387608305e-06, 4.2150832086917944e-06,
            3.12107804347761e-05, -0.00019450613763183355, 0.0007025636732578278,
            -0.0019802055321633816, 0.003659343346953392, 1.0067468881607056,
            3.2347683906555176)
ERFINV_F = (-3.843735607578225e-10, 1.154886142273881e-08, -4.1582467247280874e-08,
            1.159303337772144e-07, -9.661254125603591e-07, 3.8139571643114323e-06,
            1.3638558812090196e-05, -0.0005007399595342577, 1.0081899166107178,
            7.272376537322998)


def _erfinv_w(y: F, w: F) -> F:
    """``erfinv`` of ``y`` (``|y| < 1``) given ``w = -log(1 - y^2)``: the central
    polynomial or a tail's, with ``y``'s sign."""
    s = sqrt(w)
    tail = select(s < 4.5, poly(ERFINV_T, s - 3.4), poly(ERFINV_F, s - 7.4))
    return select(w < 5.0, y * poly(ERFINV_C, w - 2.5), copysign(tail, y))


def _neg_log(v: F) -> F:
    """``-log(v)`` for ``0 < v <= 1``."""
    return -log_of(*log_parts(v))


@expands("erfinv", f64=False)
def erfinv(y: F) -> F:
    a = fabs(y)
    r = _erfinv_w(y, _neg_log((1.0 - a) * (1.0 + a)))
    edge = select(a.eq(1.0), copysign(y.e.f(float("inf")), y), float("nan"))
    return select(a < 1.0, r, select(isnan(y), y, edge))


def _erfcinv(c: F) -> F:
    t = minimum(c, 2.0 - c)  # exact for c in [1, 2]
    r = _erfinv_w(1.0 - c, _neg_log(t * (2.0 - t)))
    edge = select(c.eq(0.0), float("inf"), select(c.eq(2.0), -float("inf"), float("nan")))
    return select((c > 0.0) & (c < 2.0), r, select(isnan(c), c, edge))


@expands("erfcinv", f64=False)
def erfcinv(c: F) -> F:
    return _erfcinv(c)


@expands("normcdfinv", f64=False)
def normcdfinv(p: F) -> F:
    return -1.4142135623730951 * _erfcinv(p + p)


# -- lgamma and tgamma -----------------------------------------------------------------

# fit_math.py LGAMMA_32 (lgamma(2 + t) / t, t in [-3/4, 1/2]) and TGAMMA_32 (gamma(2 + t),
# |t| <= 1/2)
LGAMMA = (-0.0007165028946474195, 0.0015365907456725836, 0.004826579242944717,
          0.0014063288690522313, -0.002611157251521945, -0.00158878811635077,
          0.0010563122341409326, -0.0008473393390886486, 0.002846409799531102,
          -0.007419802714139223, 0.020581992343068123, -0.06735111773014069,
          0.32246702909469604, 0.42278432846069336)
TGAMMA = (0.0005256617441773415, -0.001142703928053379, 0.0021142344921827316,
          -0.002784531097859144, 0.011149807833135128, -0.0002758443879429251,
          0.07424942404031754, 0.08157738298177719, 0.4118403196334839,
          0.42278432846069336, 1.0)
STIRLING = (-1 / 1680, 1 / 1260, -1 / 360, 1 / 12)  # in 1/x^2, times 1/x
_HALF_LOG_2PI = hi_lo(dq(dln(dq(PI, "0.5")), 2), 24)  # log(2 pi) / 2
_LN2_PARTS = hi_lo(LN2, 15)
_LOG_PI = hi_lo(dln(PI), 24)
_PI = float(dec(PI))


def _log_dd(x: F) -> tuple[F, F]:
    """``log(x)`` as ``hi + lo`` (a few more bits than one float), for finite ``x > 0``."""
    e, f = log_parts(x)
    hfsq, corr = log1p_terms(f)
    head, tail = two_sum(e * _LN2_PARTS[0], f)
    tail = tail + ((corr - hfsq) + e * _LN2_PARTS[1])
    return two_sum(head, tail)


def _stirling_dd(x: F) -> tuple[F, F]:
    """``lgamma(x)`` for ``x >= 6`` as ``hi + lo``: ``(x - 1/2)(log x - 1) +
    log(2 pi)/2 - 1/2 + S(1/x)``."""
    lh, ll = _log_dd(x)
    v = x - 0.5
    ph, pl = two_prod(v, lh - 1.0)  # lh - 1 is exact
    pl = fma(v, ll, pl)
    u = 1.0 / x
    series = u * poly(STIRLING, u * u)
    c = _HALF_LOG_2PI[0] - 0.5
    sh, sl = two_sum(ph, c)
    return two_sum(sh, sl + pl + series + _HALF_LOG_2PI[1])


def _shift_down(x: F) -> tuple[F, F]:
    """``z`` in [1.5, 2.5) and ``p = (x - 1)...(z)`` for ``x`` in [2.5, 6) (else ``x``, 1)."""
    z, p = x, x.e.f(1.0)
    for _ in range(4):
        big = z >= 2.5
        z = select(big, z - 1.0, z)
        p = select(big, p * z, p)
    return z, p


def _near_zero(x: F) -> tuple[F, F]:
    """``lgamma(x + 2)`` and ``gamma(x + 2)`` for ``|x| < 1/2``."""
    return x * poly(LGAMMA, x), poly(TGAMMA, x)


def _lgamma_pos(x: F) -> F:
    """``lgamma(x)`` for ``x >= 1/2``."""
    z, p = _shift_down(x)
    mid = (z - 2.0) * poly(LGAMMA, z - 2.0) + log_of(*log_parts(p))
    near_one = (x - 1.0) * poly(LGAMMA, x - 1.0) - log_of(*log_parts(x))
    below_two = (x - 2.0) * poly(LGAMMA, x - 2.0)  # from 1.25: no log to cancel against
    sh, sl = _stirling_dd(x)
    return select(x >= 6.0, sh + sl, select(x < 1.25, near_one,
                                             select(x < 1.5, below_two, mid)))


def _log_abs(v: F) -> F:
    """``log |v|`` for finite nonzero ``v``."""
    return log_of(*log_parts(fabs(v)))


@expands("lgamma", f64=False)
def lgamma(x: F) -> F:
    a = fabs(x)
    pos = _lgamma_pos(a)
    s = sinpi(x)
    refl = (_LOG_PI[0] - _log_abs(a * s)) - pos  # x <= -1/2: log(pi / |x sinpi(x)|)
    small = _near_zero(x)[0] - _log_abs(x * (x + 1.0))  # |x| < 1/2: lgamma(x + 2) ...
    r = select(a < 0.5, small, select(x > 0.0, pos, refl))
    pole = x.eq(0.0) | ((x < 0.0) & s.eq(0.0)) | isinf(x) | (a > 4.08e36)  # or overflow
    return select(pole, float("inf"), r)


def _tgamma_pos(x: F) -> F:
    """``gamma(x)`` for ``x >= 1/2``."""
    z, p = _shift_down(x)
    mid = poly(TGAMMA, z - 2.0) * p
    near_one = poly(TGAMMA, x - 1.0) / x
    sh, sl = _stirling_dd(x)
    return select(x >= 6.0, _exp_dd(sh, sl), select(x < 1.5, near_one, mid))


@expands("tgamma", f64=False)
def tgamma(x: F) -> F:
    a = fabs(x)
    s = sinpi(x)
    small = _near_zero(x)[1] / (x * (x + 1.0))  # |x| < 1/2: gamma(x + 2) / (x (x + 1))
    refl = -_PI / (x * s * _tgamma_pos(a))  # x <= -1/2
    # past -30 gamma(-x) nears overflow: e^(log(pi / |x s|) - lgamma(-x)), s's sign
    sh, sl = _stirling_dd(a)
    lh, ll = _log_dd(fabs(x * s))
    eh, el = two_sum(_LOG_PI[0], -lh)
    eh, el2 = two_sum(eh, -sh)
    far = copysign(_exp_dd(eh, (el + el2) + ((_LOG_PI[1] - ll) - sl)), s)
    r = select(a < 0.5, small, select(x > 0.0, _tgamma_pos(a),
                                      select(x > -30.0, refl, far)))
    nan = (x < 0.0) & (s.eq(0.0) | isinf(x))  # negative integers, -inf
    r = select(x > 36.0, float("inf"), r)  # overflow
    return select(nan, float("nan"), select(isinf(x) | isnan(x), x, r))
