"""Accuracy of tilec's math functions, in ulps of the result type, against references
computed in a wider type.

    python -m benchmarks.math_accuracy [--backend ptx|wgsl|numpy] [--n 1048576]
                                       [--dtype f32|f64] [NAME ...]
    TILEC_EXPAND_MATH=1 python -m benchmarks.math_accuracy --backend numpy   # GPU sequences

Each function runs on a backend over inputs spread over its interesting range (uniform
plus log-spaced magnitudes, ``FUNCTIONS``); the error of each result is
``|got - f(x)| / ulp(f(x) rounded to the result type)``, with ``f`` from
``backends.numpy.libm.REFERENCES`` in float64 (long double for f64). With
``TILEC_EXPAND_MATH=1`` the NumPy backend runs the sequences ``expand-math`` gives the GPU
targets, in IEEE arithmetic, as PTX does. The README's accuracy table holds the maxima
measured this way.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from compiler.language.extra import libdevice

import compiler as tc
import compiler.language as tl
from backends.numpy.libm import EXACT, REFERENCES

BLOCK = 1024


@tc.kernel
def _apply(x, y, z, w, out, n, FN: tl.constexpr, ARITY: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=1.0)
    if ARITY == 1:
        r = FN(a)
    elif ARITY == 2:
        r = FN(a, tl.load(y + offs, mask=mask, other=1.0))
    elif ARITY == 3:
        r = FN(a, tl.load(y + offs, mask=mask, other=1.0), tl.load(z + offs, mask=mask, other=1.0))
    else:
        r = FN(a, tl.load(y + offs, mask=mask, other=1.0), tl.load(z + offs, mask=mask, other=1.0),
               tl.load(w + offs, mask=mask, other=1.0))
    tl.store(out + offs, r, mask=mask)


@dataclass(frozen=True)
class Case:
    """A function, its builtin, its input range per operand and its reference's name."""

    fn: Callable
    ranges: tuple[tuple[float, float], ...]
    ref: str = ""


def _c(fn: Callable, *ranges: tuple[float, float], ref: str = "") -> Case:
    return Case(fn, ranges, ref)


_WIDE = (-1e30, 1e30)
FUNCTIONS: dict[str, Case] = {
    "erf": _c(tl.erf, (-5.0, 5.0)), "tanh": _c(tl.tanh, (-12.0, 12.0)),
    "exp": _c(tl.exp, (-80.0, 80.0)), "log": _c(tl.log, (1e-30, 1e30)),
    "sin": _c(tl.sin, (-100.0, 100.0)), "sqrt": _c(tl.sqrt, (0.0, 1e30)),
    "pow": _c(tl.pow, (0.01, 10.0), (-8.0, 8.0)),
    "asin": _c(libdevice.asin, (-1.0, 1.0)), "acos": _c(libdevice.acos, (-1.0, 1.0)),
    "atan": _c(libdevice.atan, _WIDE), "atan2": _c(libdevice.atan2, _WIDE, _WIDE),
    "sinh": _c(libdevice.sinh, (-90.0, 90.0)), "cosh": _c(libdevice.cosh, (-90.0, 90.0)),
    "asinh": _c(libdevice.asinh, _WIDE), "acosh": _c(libdevice.acosh, (1.0, 1e30)),
    "atanh": _c(libdevice.atanh, (-1.0, 1.0)), "exp10": _c(libdevice.exp10, (-46.0, 39.0)),
    "expm1": _c(libdevice.expm1, (-20.0, 89.0)), "log10": _c(libdevice.log10, (1e-38, 1e38)),
    "log1p": _c(libdevice.log1p, (-1.0, 1e30)), "cbrt": _c(libdevice.cbrt, _WIDE),
    "rcbrt": _c(libdevice.rcbrt, _WIDE), "tan": _c(libdevice.tan, (-1e5, 1e5)),
    "sinpi": _c(libdevice.sinpi, (-1e3, 1e3)), "cospi": _c(libdevice.cospi, (-1e3, 1e3)),
    "hypot": _c(libdevice.hypot, _WIDE, _WIDE), "rhypot": _c(libdevice.rhypot, _WIDE, _WIDE),
    "norm3d": _c(libdevice.norm3d, _WIDE, _WIDE, _WIDE),
    "rnorm3d": _c(libdevice.rnorm3d, _WIDE, _WIDE, _WIDE),
    "norm4d": _c(libdevice.norm4d, _WIDE, _WIDE, _WIDE, _WIDE),
    "rnorm4d": _c(libdevice.rnorm4d, _WIDE, _WIDE, _WIDE, _WIDE),
    "erfc": _c(libdevice.erfc, (-10.0, 11.0)), "erfcx": _c(libdevice.erfcx, (-9.0, 1e30)),
    "erfinv": _c(libdevice.erfinv, (-1.0, 1.0)), "erfcinv": _c(libdevice.erfcinv, (0.0, 2.0)),
    "normcdf": _c(libdevice.normcdf, (-15.0, 15.0)),
    "normcdfinv": _c(libdevice.normcdfinv, (0.0, 1.0)),
    "lgamma": _c(libdevice.lgamma, (0.0, 1e30)), "tgamma": _c(libdevice.tgamma, (-40.0, 36.0)),
    "round": _c(libdevice.round, (-1e8, 1e8)), "copysign": _c(libdevice.copysign, _WIDE, _WIDE),
    "fmod": _c(libdevice.fmod, _WIDE, _WIDE), "remainder": _c(libdevice.remainder, _WIDE, _WIDE),
    "nextafter": _c(libdevice.nextafter, _WIDE, _WIDE), "logb": _c(libdevice.logb, _WIDE),
    "ldexp": _c(libdevice.ldexp, _WIDE, (-300, 300)),
}


def inputs(lo: float, hi: float, n: int, rng: np.random.Generator,
           dtype: type = np.float32) -> np.ndarray:
    """Half uniform over [lo, hi], half of log-spread magnitudes (small values too)."""
    uniform = rng.uniform(lo, hi, n // 2)
    top = max(abs(lo), abs(hi))
    tiny = 1e-30 if lo <= 0 <= hi or lo < 1e-6 else min(abs(lo), abs(hi))
    mags = np.exp(rng.uniform(np.log(max(tiny, 1e-30)), np.log(top), n - n // 2))
    signs = np.where(rng.random(n - n // 2) < 0.5, -1.0, 1.0) if lo < 0 else 1.0
    return np.clip(np.concatenate([uniform, mags * signs]), lo, hi).astype(dtype)


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Errors in ulps of the result type of ``got`` (the ulp of the smallest normal below
    it); an infinity where the reference rounds to it and NaN where NaN are no error."""
    t, info = got.dtype.type, np.finfo(got.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.minimum(np.abs(ref), info.max).astype(t)
        ulp = np.maximum(np.spacing(near), np.spacing(info.tiny)).astype(np.longdouble)
        err = np.abs(got.astype(np.longdouble) - ref) / ulp
        same = np.isinf(got) & (got == ref.astype(t)) | np.isnan(got) & np.isnan(ref)
    return np.where(same, 0.0, err).astype(np.float64)


def reference(name: str, args: list[np.ndarray]) -> np.ndarray:
    """``name`` of ``args``, unrounded, in float64 (long double for f64 where it can); the
    functions computed exactly, in the operands' type."""
    with np.errstate(all="ignore"):
        if name in EXACT:
            return EXACT[name](*args)
        fn, long = REFERENCES[name]
        wide = np.longdouble if args[0].dtype == np.float64 and long else np.float64
        return np.asarray(fn(*(a.astype(wide) for a in args)))


def run(name: str, args: list[np.ndarray], backend: str) -> np.ndarray:
    """``name`` of ``args`` on ``backend``."""
    n = len(args[0])
    out = np.empty_like(args[0])
    pad = [args[i] if i < len(args) else args[0] for i in range(4)]
    _apply[(-(-n // BLOCK),)](*pad, out, n, FN=FUNCTIONS[name].fn, ARITY=len(args),
                              BLOCK=BLOCK, backend=backend)
    return out


def measure(backend: str, n: int, names: list[str] | None = None,
            dtype: type = np.float32, seed: int = 0) -> dict[str, float]:
    """Max ulp error of each function on ``backend``."""
    rng = np.random.default_rng(seed)
    found = {}
    for name in names or list(FUNCTIONS):
        case = FUNCTIONS[name]
        args = [rng.integers(lo, hi, n).astype(np.int32) if isinstance(lo, int) else
                inputs(lo, hi, n, rng, dtype) for lo, hi in case.ranges]
        got = run(name, args, backend)
        found[name] = float(ulp_error(got, reference(case.ref or name, args)).max())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    dtype = np.float64 if args.dtype == "f64" else np.float32
    for name, err in measure(args.backend, args.n, args.names, dtype).items():
        print(f"{args.backend:6} {args.dtype} {name:10} max {err:10.2f} ulp", flush=True)


if __name__ == "__main__":
    main()
