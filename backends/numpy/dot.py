"""The NumPy meaning of ``tile.dot`` (registered into ``kernel.BUILDERS``): ``np.matmul``
with the operands rounded and the sums typed the way GPU matrix units do them.

- f16 and bf16 operands: their products are exact in f32; sums in f32. With an f16
  accumulator the f32 result is rounded once at the end (a tensor core rounds as it goes,
  so f16 accumulators compare with f16 tolerance).
- f32 operands, ``ieee``: products and sums in f32 (the GPU's FMA loop differs only in
  the order of the sums); ``tf32``: each operand rounded to tf32 first (10 mantissa bits,
  to nearest with ties away from zero, as ``cvt.rna.tf32.f32``); ``tf32x3``: each operand
  split as ``hi = tf32(x)``, ``lo = tf32(x - hi)``, and ``a_hi b_hi + a_hi b_lo + a_lo b_hi``.
- i8 operands: products and sums in i32, wrapping.

Values carry the program axis first, so the matrices are the last two axes and
``np.matmul`` runs every program at once: a BLAS call per program's product. These run on
one BLAS thread (``one_blas_thread``): a tile's product is too small for a thread pool to
gain much, and a pool's hand-offs cost milliseconds each where the CPUs are busy (on a
loaded machine of two CPUs, 28 ms for a 128x64 by 64x128 product that takes 0.2 ms alone).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import os
from collections.abc import Callable, Iterator

import numpy as np

from backends.numpy.kernel import BUILDERS, Impl, np_dtype
from dialects import tile

_TF32_HALF_ULP = np.uint32(1 << 12)  # f32 has 23 mantissa bits, tf32 keeps 10
_TF32_MASK = np.uint32(0xFFFFE000)


def round_tf32(x: np.ndarray) -> np.ndarray:
    """``x`` (f32) rounded to tf32: add half a tf32 unit to the magnitude bits, then
    clear the 13 dropped bits (ties away from zero); NaN and infinities stay."""
    bits = x.view(np.uint32)
    rounded = ((bits + _TF32_HALF_ULP) & _TF32_MASK).view(np.float32)
    return np.where(np.isfinite(x), rounded, x)


def _f32_products(a: np.ndarray, b: np.ndarray, precision: str) -> np.ndarray:
    a, b = a.astype(np.float32, copy=False), b.astype(np.float32, copy=False)
    if precision == "tf32":
        return np.matmul(round_tf32(a), round_tf32(b))
    if precision == "tf32x3":
        a_hi, b_hi = round_tf32(a), round_tf32(b)
        a_lo, b_lo = round_tf32(a - a_hi), round_tf32(b - b_hi)
        return np.matmul(a_hi, b_lo) + np.matmul(a_lo, b_hi) + np.matmul(a_hi, b_hi)
    return np.matmul(a, b)


@functools.cache
def blas_threads_setter() -> Callable[[int], int] | None:
    """OpenBLAS's ``openblas_set_num_threads_local(n)`` (it sets the calling thread's count
    and returns the one before), from the OpenBLAS that NumPy's wheels bundle; None for a
    NumPy built on another BLAS, which keeps its own threading."""
    root = os.path.dirname(np.__file__)
    for path in sorted(glob.glob(f"{root}.libs/*openblas*") +
                       glob.glob(os.path.join(root, ".dylibs", "*openblas*"))):
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
        return fn
    return None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS calls of this thread on one BLAS thread, the thread's count restored after."""
    set_threads = blas_threads_setter()
    before = set_threads(1) if set_threads is not None else None
    try:
        yield
    finally:
        if set_threads is not None and before is not None:
            set_threads(before)


def _dot(op: tile.DotOp) -> Impl:
    precision = op.input_precision.data
    acc_dtype = np_dtype(op.acc.type)
    if acc_dtype == np.int32:
        def impl(batch, a, b, c):  # int64 products: NumPy's own loop, no BLAS
            exact = np.matmul(a.astype(np.int64), b.astype(np.int64)) + c
            return (exact.astype(np.int32),)  # wraps, as i32 sums on the GPU do
        return impl

    def impl_float(batch, a, b, c):
        with np.errstate(all="ignore"), one_blas_thread():  # inf and NaN: values, not news
            acc = _f32_products(a, b, precision) + c.astype(np.float32, copy=False)
            return (acc.astype(acc_dtype, copy=False),)
    return impl_float


BUILDERS.update({"tile.dot": _dot})
