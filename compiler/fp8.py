"""fp8 values in NumPy, rounded as Triton rounds them on NVIDIA GPUs.

A float becomes fp8 (``tl.float8e4nv``: e4m3fn, ``tl.float8e5``: e5m2) as Triton converts
it on sm_90, by ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`` (f16 and bf16 sources too: their
values are exact in f32): rounded to nearest, ties to even; a magnitude beyond the largest
finite value, infinity included, saturates to that value (448 for e4m3fn, 57344 for
e5m2); NaN becomes the canonical NaN ``0x7F``. fp8 to a wider float is exact. The numpy
backend computes with these functions, the frontend rounds fp8 constants with them, and
``lower-fp8`` reads constants' bits with them (without ml_dtypes: PTX and WGSL kernels
need no NumPy fp8), so every backend agrees with the PTX instructions bit for bit.

``ml_dtypes``' own ``astype`` rounds to nearest too but does not saturate (an overflow
becomes NaN for e4m3fn, infinity for e5m2), and keeps a NaN's sign: hence the clamp and
the NaN fix below.
"""

from __future__ import annotations

import math

import numpy as np

from compiler.dtypes import ML_DTYPES, dtype, dtype_from_str
from compiler.errors import UnsupportedError

MAX_FINITE = {"fp8e4nv": 448.0, "fp8e5": 57344.0}
FORMATS = {"fp8e4nv": (3, 7), "fp8e5": (2, 15)}  # explicit mantissa bits, exponent bias
NAN_BITS = 0x7F


def numpy_dtype(short: str) -> np.dtype:
    """The ml_dtypes dtype of fp8 (or bfloat16) dtype ``short``; an UnsupportedError that
    names it where ml_dtypes is not installed."""
    d = dtype_from_str(short)
    found = d.numpy
    if found is None:
        raise UnsupportedError(f"dtype {d} needs the ml_dtypes package on the host "
                               f"(NumPy has no {ML_DTYPES[d]}); pip install ml_dtypes")
    return found


def round_to_fp8(x: np.ndarray | float, d: dtype) -> np.ndarray:
    """``x`` (floats of any NumPy type; f64 rounds to f32 first) as fp8 dtype ``d``."""
    x32 = np.asarray(x).astype(np.float32)
    limit = MAX_FINITE[d.short]
    with np.errstate(invalid="ignore"):
        r = np.clip(x32, -limit, limit).astype(numpy_dtype(d.short))  # NaN passes clip
    bits = np.where(np.isnan(x32), np.uint8(NAN_BITS), r.view(np.uint8))
    return bits.astype(np.uint8).view(r.dtype)


def fp8_bits(x: float, d: dtype) -> int:
    """The 8 bits of ``x`` (a Python float is an f32 first) rounded to fp8 dtype ``d``, in
    Python alone: the frontend and ``lower-fp8`` round constants without ml_dtypes. Between
    the powers of two ``2^e`` and ``2^(e+1)`` (``e`` no lower than the subnormals') the
    fp8 values are the multiples of ``2^(e-m)``; the nearest one's count of them, rounded
    half to even by ``round``, added to the code of ``2^e`` less its own count, is the
    code (a count of ``2^(m+1)`` carries into the next exponent)."""
    m, bias = FORMATS[d.short]
    with np.errstate(over="ignore"):
        x = float(np.float32(x))
    if math.isnan(x):
        return NAN_BITS
    a = min(abs(x), MAX_FINITE[d.short])
    e = max(math.frexp(a)[1] - 1, 1 - bias) if a else 1 - bias
    count = round(a / 2.0 ** (e - m))
    return ((e + bias) << m) + count - (1 << m) | (0x80 if math.copysign(1.0, x) < 0 else 0)


def fp8_value(x: float, d: dtype) -> float:
    """``x`` rounded to fp8 dtype ``d``, as a Python float (NaN for the NaN)."""
    code = fp8_bits(x, d)
    if code & 0x7F == NAN_BITS:
        return math.nan
    m, bias = FORMATS[d.short]
    e, count = (code & 0x7F) >> m, code & ((1 << m) - 1)
    value = (count if e == 0 else count + (1 << m)) * 2.0 ** (max(e, 1) - bias - m)
    return -value if code & 0x80 else value
