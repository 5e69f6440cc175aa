"""Accuracy of tilec's approximated math functions, in ulps of float32, against float64.

    python -m benchmarks.math_accuracy [--backend ptx|wgsl|numpy] [--n 1048576]

Each function runs on a backend over float32 inputs spread over its interesting range
(uniform plus log-spaced magnitudes); the error of each result is
``|got - f(x in float64)| / ulp(f(x) rounded to float32)``. The README's accuracy table
holds the maxima measured this way.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import compiler as tc
import compiler.language as tl

BLOCK = 1024


@tc.kernel
def _unary(x, out, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask, other=1.0)
    if FN == "erf":
        r = tl.erf(v)
    elif FN == "tanh":
        r = tl.tanh(v)
    elif FN == "exp":
        r = tl.exp(v)
    elif FN == "log":
        r = tl.log(v)
    elif FN == "sin":
        r = tl.sin(v)
    else:
        r = tl.sqrt(v)
    tl.store(out + offs, r, mask=mask)


@tc.kernel
def _pow(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=1.0)
    b = tl.load(y + offs, mask=mask, other=1.0)
    tl.store(out + offs, tl.pow(a, b), mask=mask)


_ERF64 = np.frompyfunc(math.erf, 1, 1)

# name -> (float64 reference, input range (lo, hi))
FUNCTIONS = {
    "erf": (lambda v: _ERF64(v).astype(np.float64), (-5.0, 5.0)),
    "tanh": (np.tanh, (-12.0, 12.0)),
    "exp": (np.exp, (-80.0, 80.0)),
    "log": (np.log, (1e-30, 1e30)),
    "sin": (np.sin, (-100.0, 100.0)),
    "sqrt": (np.sqrt, (0.0, 1e30)),
}


def inputs(lo: float, hi: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Half uniform over [lo, hi], half of log-spread magnitudes (small values too)."""
    uniform = rng.uniform(lo, hi, n // 2)
    top = max(abs(lo), abs(hi))
    mags = np.exp(rng.uniform(np.log(1e-6), np.log(top), n - n // 2))
    signs = np.where(rng.random(n - n // 2) < 0.5, -1.0, 1.0) if lo < 0 else 1.0
    return np.clip(np.concatenate([uniform, mags * signs]), lo, hi).astype(np.float32)


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Errors in ulps of the float32 result (ulp of the smallest normal below it)."""
    ulp = np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64)
    ulp = np.maximum(ulp, np.spacing(np.float32(np.finfo(np.float32).tiny)))
    return np.abs(got.astype(np.float64) - ref) / ulp


def measure(backend: str, n: int, seed: int = 0) -> dict[str, float]:
    """Max ulp error of each function (and of ``pow``) on ``backend``."""
    rng = np.random.default_rng(seed)
    grid = (-(-n // BLOCK),)
    out = np.empty(n, np.float32)
    found = {}
    for name, (ref, (lo, hi)) in FUNCTIONS.items():
        x = inputs(lo, hi, n, rng)
        _unary[grid](x, out, n, FN=name, BLOCK=BLOCK, backend=backend)
        found[name] = float(ulp_error(out, ref(x.astype(np.float64))).max())
    x = rng.uniform(0.01, 10.0, n).astype(np.float32)
    y = rng.uniform(-8.0, 8.0, n).astype(np.float32)
    _pow[grid](x, y, out, n, BLOCK=BLOCK, backend=backend)
    found["pow"] = float(ulp_error(out, np.power(x.astype(np.float64), y)).max())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--n", type=int, default=1 << 20)
    args = parser.parse_args()
    for name, err in measure(args.backend, args.n).items():
        print(f"{args.backend:6} {name:5} max {err:8.2f} ulp")


if __name__ == "__main__":
    main()
