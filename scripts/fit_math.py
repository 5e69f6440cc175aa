"""Fits the polynomials of ``expand-math`` (``compiler/passes/math_*.py``) and prints them.

    python scripts/fit_math.py [NAME ...]      # every fit, or the named ones

Each fit minimizes the largest weighted error ``w(x) * (p(x) - g(x))`` over ``[lo, hi]``
(Lawson's iteratively reweighted least squares on Chebyshev points, in 40-digit decimal
arithmetic), with ``g`` computed to well beyond float64 by ``decimal`` (series, ``exp``,
``ln``) or, for f32 fits, by float64 ``math`` functions. The weight turns the
polynomial's error into the relative error of the function it serves, so the printed
maximum is the sequence's error before rounding. Coefficients print highest power first,
rounded to the fit's float type, as the modules hold them.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from decimal import Decimal, getcontext

import numpy as np

getcontext().prec = 40
D = Decimal
Fn = Callable[[Decimal], Decimal]


def pw(x: Decimal, k: int) -> Decimal:
    """``x ** k`` (decimal refuses ``0 ** 0``)."""
    return x ** k if k else D(1)


def _solve(a: list[list[Decimal]], b: list[Decimal]) -> list[Decimal]:
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [D(0)] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def fit(g: Fn, lo: float, hi: float, degree: int, w: Fn = lambda x: D(1),
        powers: list[int] | None = None, iters: int = 40, n: int = 0
        ) -> tuple[list[Decimal], float]:
    """Coefficients (lowest power first, of ``powers`` or ``0..degree``) and the largest
    weighted error, minimizing ``max |w (p - g)|`` on ``[lo, hi]`` (at ``n`` points)."""
    powers = powers if powers is not None else list(range(degree + 1))
    n = n or 8 * len(powers) + 40
    xs = [D(lo) + (D(hi) - D(lo)) * (1 - D(math.cos(math.pi * (i + 0.5) / n))) / 2
          for i in range(n)]
    gs, ws = [g(x) for x in xs], [w(x) for x in xs]
    basis = [[pw(x, p) for p in powers] for x in xs]
    lam = [D(1) / n] * n
    coeffs: list[Decimal] = []
    for _ in range(iters):
        a = [[sum(lam[i] * ws[i] ** 2 * basis[i][j] * basis[i][k] for i in range(n))
              for k in range(len(powers))] for j in range(len(powers))]
        b = [sum(lam[i] * ws[i] ** 2 * basis[i][j] * gs[i] for i in range(n))
             for j in range(len(powers))]
        coeffs = _solve(a, b)
        errs = [abs(ws[i] * (sum(c * v for c, v in zip(coeffs, basis[i], strict=True)) - gs[i]))
                for i in range(n)]
        total = sum(lam[i] * errs[i] for i in range(n))
        lam = [lam[i] * errs[i] / total for i in range(n)]
    return coeffs, float(max(errs))


def fit_rounded(g: Fn, lo: float, hi: float, degree: int, w: Fn, wide: bool,
                powers: list[int] | None = None) -> tuple[list[float], float]:
    """Coefficients rounded to the float type one at a time, lowest power first, each
    rounding followed by a fit of the remaining ones to what it left (rounding them all
    at once can cost far more than the fit's error)."""
    powers = powers if powers is not None else list(range(degree + 1))
    rnd = (lambda c: float(c)) if wide else (lambda c: float(np.float32(float(c))))
    g, w = functools.lru_cache(maxsize=None)(g), functools.lru_cache(maxsize=None)(w)
    n = 8 * len(powers) + 40
    fixed: list[float] = []
    err = 0.0
    for i in range(len(powers)):
        def rest(x: Decimal, done: tuple[float, ...] = tuple(fixed)) -> Decimal:
            return g(x) - sum((D(c) * pw(x, p) for c, p in zip(done, powers, strict=False)),
                              D(0))
        coeffs, err = fit(rest, lo, hi, 0, w, powers[i:], n=n)
        fixed.append(rnd(coeffs[0]))
    return fixed, err


def check(coeffs: list[float], g: Fn, lo: float, hi: float, w: Fn,
          powers: list[int] | None = None, n: int = 4000) -> float:
    """The largest weighted error of the rounded coefficients on a denser grid."""
    powers = powers if powers is not None else list(range(len(coeffs)))
    worst = 0.0
    for i in range(n):
        x = D(lo) + (D(hi) - D(lo)) * D(i) / D(n - 1)
        p = sum(D(c) * pw(x, k) for c, k in zip(coeffs, powers, strict=True))
        worst = max(worst, float(abs(w(x) * (p - g(x)))))
    return worst


def show(name: str, coeffs: list[float], err: float, wide: bool, g: Fn, lo: float,
         hi: float, w: Fn, powers: list[int] | None = None) -> None:
    after = check(coeffs, g, lo, hi, w, powers, n=1000)
    print(f"{name}: fit {err:.3g}, checked {after:.3g}  (ulp {2.0 ** (-53 if wide else -24):.3g})")
    print("    " + ", ".join(repr(c) for c in reversed(coeffs)))


# -- reference functions in decimal ---------------------------------------------------

_TOL = D("1e-38")


def _series(terms: Callable[[int], Decimal], tol: Decimal = _TOL) -> Decimal:
    total, k = D(0), 0
    while True:
        t = terms(k)
        total += t
        if abs(t) < tol and k > 2:
            return total
        k += 1


def datan(x: Decimal) -> Decimal:
    """atan by halving the argument until the series converges fast."""
    halvings = 0
    while abs(x) > D("0.05"):
        x = x / (1 + (1 + x * x).sqrt())
        halvings += 1
    return _series(lambda k: (-1) ** k * x ** (2 * k + 1) / (2 * k + 1)) * 2 ** halvings


def dasin(x: Decimal) -> Decimal:
    return datan(x / (1 - x * x).sqrt())


PI = 4 * datan(D(1))
LN2 = D(2).ln()


def dsin(x: Decimal) -> Decimal:
    return _series(lambda k: (-1) ** k * x ** (2 * k + 1) / math.factorial(2 * k + 1))


def dsinh(x: Decimal) -> Decimal:
    return _series(lambda k: pw(x, 2 * k + 1) / math.factorial(2 * k + 1))


def dcos(x: Decimal) -> Decimal:
    return _series(lambda k: (-1) ** k * pw(x, 2 * k) / math.factorial(2 * k))


EULER_GAMMA = D("0.5772156649015328606065120900824024310422")
SQRT_PI = PI.sqrt()


def dzeta(k: int) -> Decimal:
    """zeta(k), k >= 2, by Euler-Maclaurin summation from n = 20."""
    n = 20
    head = sum(D(1) / D(i) ** k for i in range(1, n))
    tail = D(n) ** (1 - k) / (k - 1) + D(n) ** -k / 2
    bernoulli = (D(1) / 6, D(-1) / 30, D(1) / 42, D(-1) / 30, D(5) / 66, D(-691) / 2730)
    rising = D(k)
    for j, b in enumerate(bernoulli, 1):
        tail += b / math.factorial(2 * j) * rising * D(n) ** (-k - 2 * j + 1)
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return head + tail


_ZETA = {k: dzeta(k) for k in range(2, 200)}


def dlgamma2(t: Decimal) -> Decimal:
    """lgamma(2 + t) for |t| <= 3/4: (1 - gamma) t + sum (-1)^k (zeta(k) - 1) t^k / k."""
    return (1 - EULER_GAMMA) * t + sum((-1) ** k * (_ZETA[k] - 1) * pw(t, k) / k
                                       for k in range(2, 200))


def derf(x: Decimal) -> Decimal:
    return 2 / SQRT_PI * _series(lambda n: (-1) ** n * pw(x, 2 * n + 1)
                                 / (math.factorial(n) * (2 * n + 1)))


def derfcx(x: Decimal) -> Decimal:
    """exp(x^2) erfc(x), x >= 1/2: the series of erf below 2, Laplace's continued
    fraction above."""
    if x < 2:
        return (x * x).exp() * (1 - derf(x))
    frac = x
    for k in range(400, 0, -1):
        frac = x + D(k) / 2 / frac
    return 1 / (SQRT_PI * frac)


def derfcinv(c: Decimal) -> Decimal:
    """x with erfc(x) = c for 0 < c <= 1: Newton on log erfc(x) = log erfcx(x) - x^2."""
    x = (-(c * (2 - c)).ln()).sqrt()
    for _ in range(60):
        if x < D("0.5"):
            f = (1 - derf(x)).ln() - c.ln()
            slope = -2 / SQRT_PI * (-x * x).exp() / (1 - derf(x))
        else:
            ex = derfcx(x)
            f, slope = ex.ln() - x * x - c.ln(), -2 / (SQRT_PI * ex)
        x -= f / slope
    return x


def _erfinv_over_y(w: Decimal) -> Decimal:
    """erfinv(y) / y for w = -log(1 - y^2)."""
    y = (1 - (-w).exp()).sqrt()
    return derfcinv(1 - y) / y if w else SQRT_PI / 2


def _erfcinv_of_w(s: Decimal) -> Decimal:
    """erfcinv(c) for s = sqrt(-log(c (2 - c))) (c small)."""
    e = (-s * s).exp()
    return derfcinv(e / (1 + (1 - e).sqrt()))


# -- the fits -------------------------------------------------------------------------

def _expm1_q(r: Decimal) -> Decimal:
    """(e^r - 1 - r) / r^2, whose polynomial ``P`` gives ``e^r - 1 = r + r^2 P(r)``."""
    if r == 0:
        return D("0.5")
    return (r.exp() - 1 - r) / (r * r)


def _log_q(z: Decimal) -> Decimal:
    """Q of ``log1p(f) = f - s*(f - z*Q(z))``, ``s = f/(2+f)``, ``z = s^2``:
    ``Q(z) = sum 2 z^k / (2k + 3)``."""
    return _series(lambda k: 2 * pw(z, k) / (2 * k + 3))


def fits() -> dict[str, Callable[[], None]]:
    half_ln2 = float(LN2 / 2)
    out: dict[str, Callable[[], None]] = {}

    def reg(name: str, g: Fn, lo: float, hi: float, deg: int, w: Fn, wide: bool,
            powers: list[int] | None = None) -> None:
        def run() -> None:
            c, err = fit_rounded(g, lo, hi, deg, w, wide, powers)
            show(name, c, err, wide, g, lo, hi, w, powers)
        out[name] = run

    # e^r = 1 + r + r^2 P(r): relative error r^2 dP / e^r
    for wide, deg in ((False, 4), (True, 10)):
        reg(f"EXPM1_{64 if wide else 32}", _expm1_q, -half_ln2, half_ln2, deg,
            lambda r: r * r / r.exp(), wide)
    # log1p(f) = f - s (f - z Q(z)): error s z dQ relative to ~2s
    zmax = float((D(2).sqrt() - 1) / (D(2).sqrt() + 1)) ** 2
    for wide, deg in ((False, 2), (True, 6)):
        reg(f"LOG_{64 if wide else 32}", _log_q, 0.0, zmax, deg, lambda z: z / 2, wide)
    # sinh(x) = x + x^3 P(x^2) on |x| < 1: relative error x^3 dP / sinh(x)
    for wide, deg in ((False, 3), (True, 7)):
        reg(f"SINH_{64 if wide else 32}",
            lambda z: _series(lambda k: pw(z, k) / math.factorial(2 * k + 3)), 0.0, 1.0, deg,
            lambda z: z * z.sqrt() / dsinh(z.sqrt()) if z else D(0), wide)
    # odd functions f(x) = x + x z P(z), z = x^2: relative error x z dP / f(x)
    def odd(f: Fn) -> tuple[Fn, Fn]:
        def g(z: Decimal) -> Decimal:
            x = z.sqrt()
            return (f(x) - x) / (z * x)
        return g, lambda z: z * z.sqrt() / f(z.sqrt()) if z else D(0)

    tan_pi8 = float((D(2).sqrt() - 1) ** 2)
    for name, f, zmax, degs in (
            ("ATAN", datan, tan_pi8, (4, 10)), ("ASIN", dasin, 0.25, (4, 11)),
            ("TAN", lambda x: dsin(x) / dcos(x), 0.65, (6, 14))):
        g, w = odd(f)
        for wide, deg in ((False, degs[0]), (True, degs[1])):
            reg(f"{name}_{64 if wide else 32}", g, 1e-30, zmax, deg, w, wide)
    # sin(pi r) = r (pi + z Q(z)) and cos(pi r) = 1 + z C(z) on |r| <= 1/4, z = r^2
    for wide, degs in ((False, (3, 3)), (True, (7, 7))):
        reg(f"SINPI_{64 if wide else 32}",
            lambda z: (dsin(PI * z.sqrt()) / z.sqrt() - PI) / z, 1e-30, 1 / 16, degs[0],
            lambda z: z / PI, wide)
        reg(f"COSPI_{64 if wide else 32}", lambda z: (dcos(PI * z.sqrt()) - 1) / z, 1e-30,
            1 / 16, degs[1], lambda z: z / dcos(PI * z.sqrt()), wide)
    # special functions (f32 only): lgamma(2 + t) = t A(t), gamma(2 + t) = G(t)
    reg("LGAMMA_32", lambda t: dlgamma2(t) / t if t else 1 - EULER_GAMMA, -0.75, 0.5, 13,
        lambda t: t / dlgamma2(t) if t else 1 / (1 - EULER_GAMMA), False)
    reg("TGAMMA_32", lambda t: dlgamma2(t).exp(), -0.5, 0.5, 10,
        lambda t: 1 / dlgamma2(t).exp(), False)
    # erfcx(x) = E(x - 2) on [1/2, 4]; above, H(1/x^2) / (x sqrt(pi))
    reg("ERFCX_NEAR_32", lambda u: derfcx(u + 2), -1.5, 2.0, 13,
        lambda u: 1 / derfcx(u + 2), False)
    reg("ERFCX_FAR_32", lambda u: derfcx(1 / u.sqrt()) * SQRT_PI / u.sqrt() if u else D(1),
        1e-30, 1 / 16, 6, lambda u: D(1), False)
    # erfinv(y) = y C(w - 5/2), w = -log(1 - y^2) < 5; erfcinv(c) = T(sqrt(w)) above
    reg("ERFINV_C_32", lambda u: _erfinv_over_y(u + D("2.5")), -2.5, 2.5, 11,
        lambda u: 1 / _erfinv_over_y(u + D("2.5")), False)
    # (in s - 3.4 and s - 7.4: centred, so that f32 Horner does not cancel)
    reg("ERFINV_T_32", lambda u: _erfcinv_of_w(u + D("3.4")), math.sqrt(5) - 3.4, 1.1, 9,
        lambda u: 1 / _erfcinv_of_w(u + D("3.4")), False)
    reg("ERFINV_F_32", lambda u: _erfcinv_of_w(u + D("7.4")), -2.9, 2.8, 9,
        lambda u: 1 / _erfcinv_of_w(u + D("7.4")), False)
    return out


def main() -> None:
    table = fits()
    for name in sys.argv[1:] or list(table):
        table[name]()


if __name__ == "__main__":
    main()
