"""What each tile-IR op means, in NumPy: the reference semantics of tilec.

Every value carries a leading program axis (see ``kernel.py``): a scalar is an array
of shape ``(L,)``, a tile ``(L, *shape)``, with ``L`` the number of programs run together
or 1 for a value that is the same in every program. Integers are stored signless, as the
signed NumPy type of their width (i1 as bool); unsigned ops view them as unsigned.

This module registers into ``kernel.BUILDERS``, which maps an op name to a builder that
reads the op's types and attributes once and returns its implementation
``impl(batch, *operands) -> tuple of results``. ``batch`` is the ``kernel.Batch`` being run
(program ids, memory).

Semantics the NumPy backend defines (CONTRIBUTING.md leaves them open):

- integer division by zero: ``divsi``/``divui`` give -1 (all ones), ``remsi``/``remui``
  give the dividend; ``INT_MIN / -1`` wraps to ``INT_MIN`` (remainder 0);
- shifts by an amount >= the bit width (the amount read as unsigned) give 0, or the sign
  fill for ``shrsi`` (as PTX's clamping shifts do);
- ``fptosi``/``fptoui`` saturate to the integer range and map NaN to 0;
- ``maximumf``/``minimumf`` propagate NaN and order -0.0 below +0.0 (IEEE 754-2019);
- ``math.fma`` is fused (rounded once), f64 included (where no part of the exact product
  overflows or underflows);
- ``math.rsqrt`` is ``1 / sqrt(x)`` in the operand's type.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation

from backends.numpy.kernel import BUILDERS, Builder, Impl, Ptr, np_dtype, run_start, shape
from backends.numpy.rows import row_starts
from compiler.dtypes import ML_DTYPES, float8e4nv, float8e5
from compiler.errors import UnsupportedError
from compiler.fp8 import numpy_dtype, round_to_fp8
from dialects.arith_shaped import rounds_toward_zero

# -- types ------------------------------------------------------------------------------

_UNSIGNED = {np.dtype(np.bool_): np.uint8, np.dtype(np.int8): np.uint8,
             np.dtype(np.int16): np.uint16, np.dtype(np.int32): np.uint32,
             np.dtype(np.int64): np.uint64}


def _width(dt: np.dtype) -> int:
    return 1 if dt == np.bool_ else dt.itemsize * 8


def _signed(a: np.ndarray) -> np.ndarray:
    """``a`` read as signed (a true i1 is -1)."""
    return -a.astype(np.int8) if a.dtype == np.bool_ else a


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(_UNSIGNED[a.dtype])


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _wrap(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Integer array ``x`` stored as ``dt``, keeping the low bits (as the hardware does)."""
    if dt == np.bool_:
        return (x & 1).astype(np.bool_)
    if x.dtype == dt:
        return x
    return x.view(dt) if x.dtype.itemsize == dt.itemsize else x.astype(dt)


def _ones(dt: np.dtype) -> np.ndarray:
    return ~np.zeros((), dt)


# -- integer arithmetic ---------------------------------------------------------------

def _divsi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # a - fmod(a, b) is an exact multiple of b, so floor division truncates like C.
    q = np.floor_divide(a - np.fmod(a, b), b)
    return np.where(b == 0, _ones(a.dtype), q)


def _remsi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b == 0, a, np.fmod(a, b))  # fmod of integers is C's %


def _divui(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b == 0, _ones(a.dtype), np.floor_divide(a, b))


def _remui(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b == 0, a, np.remainder(a, b))


# (function on NumPy ints, how to read the operands). NumPy's shifts already give 0 / the
# sign fill for amounts >= the width, negative amounts included (read as unsigned).
_INT_BINARY: dict[str, tuple[Callable, Callable]] = {
    "arith.addi": (np.add, _signed), "arith.subi": (np.subtract, _signed),
    "arith.muli": (np.multiply, _signed),
    "arith.divsi": (_divsi, _signed), "arith.remsi": (_remsi, _signed),
    "arith.divui": (_divui, _unsigned), "arith.remui": (_remui, _unsigned),
    "arith.andi": (np.bitwise_and, _signed), "arith.ori": (np.bitwise_or, _signed),
    "arith.xori": (np.bitwise_xor, _signed),
    "arith.shli": (np.left_shift, _signed), "arith.shrsi": (np.right_shift, _signed),
    "arith.shrui": (np.right_shift, _unsigned),
    "arith.maxsi": (np.maximum, _signed), "arith.minsi": (np.minimum, _signed),
    "arith.maxui": (np.maximum, _unsigned), "arith.minui": (np.minimum, _unsigned),
}


_BOOL_LOGIC = (np.bitwise_and, np.bitwise_or, np.bitwise_xor)


def _pooled(fn: Callable, dt: np.dtype) -> Impl:
    """``fn`` on operands of one dtype, its result (of dtype ``dt``) written into an array
    from the pool: large results then reuse dead values' memory."""
    def impl(batch, *args: np.ndarray) -> tuple:
        shape, dtype = args[0].shape, args[0].dtype
        for a in args[1:]:
            if a.dtype != dtype:  # not an op's own typing: no out
                return (fn(*args),)
            if a.shape != shape:
                shape = np.broadcast_shapes(shape, a.shape)
        return (fn(*args, out=batch.pool.empty(shape, dt)),)
    return impl


def _int_binary(fn: Callable, read: Callable) -> Builder:
    def build(op: Operation) -> Impl:
        dt = np_dtype(op.results[0].type)
        if isinstance(fn, np.ufunc) and read is _signed and dt != np.bool_:
            return _pooled(fn, dt)  # operands read as they are, result already dt
        if fn in _BOOL_LOGIC and dt == np.bool_:
            return _pooled(fn, dt)  # on i1, and/or/xor of -1 and 0 are those of bools
        return lambda _, a, b: (_wrap(fn(read(a), read(b)), dt),)
    return build


def _umulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high half of the double-width unsigned product of i32s or i64s, in uint64:
    directly for i32, from 32-bit halves (schoolbook, no partial sum overflows) for i64."""
    ua, ub = _unsigned(a).astype(np.uint64), _unsigned(b).astype(np.uint64)
    if a.dtype.itemsize == 4:
        return _wrap(ua * ub >> np.uint64(32), a.dtype)
    half, low = np.uint64(32), np.uint64(0xFFFFFFFF)
    al, ah, bl, bh = ua & low, ua >> half, ub & low, ub >> half
    mid = ah * bl + (al * bl >> half)
    mid2 = al * bh + (mid & low)
    return _wrap(ah * bh + (mid >> half) + (mid2 >> half), a.dtype)


# -- float arithmetic -----------------------------------------------------------------

def _maximumf(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # np.maximum propagates NaN but may return -0.0 for (-0.0, +0.0); a + b of two zeros
    # is +0.0 unless both are -0.0, which is exactly the IEEE maximum of zeros. Without a
    # zero in the result no lane had two zeros, so one test skips the fix-up's passes.
    m = np.maximum(a, b, out=out)
    if not (m == 0).any():
        return m
    return np.where((a == 0) & (b == 0), a + b, m)


def _minimumf(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    m = np.minimum(a, b, out=out)
    if not (m == 0).any():
        return m
    return np.where((a == 0) & (b == 0), -(-a + -b), m)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth's TwoSum: ``s + err == a + b`` exactly."""
    s = a + b
    bv = s - a
    return s, (a - (s - bv)) + (b - bv)


def _round_to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``s`` (the nearest to ``s + err``) moved to an odd neighbour when inexact."""
    bits = s.view(np.int64 if s.dtype == np.float64 else np.int32)
    inexact_even = (err != 0) & np.isfinite(s) & ((bits & 1) == 0)
    return np.where(inexact_even, np.nextafter(s, np.copysign(np.inf, err)), s)


def _high_half(x: np.ndarray) -> np.ndarray:
    """The upper 26 bits of ``x``'s mantissa (Veltkamp): their products are exact."""
    t = x * 134217729.0  # 2^27 + 1
    return t - (t - x)


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """f64 ``a * b + c`` rounded once (Boldo and Melquiond): the product split exactly
    by Dekker's method, the low parts summed with rounding to odd; where a part
    overflows or the product is tiny, ``a * b + c`` rounded twice (exact for a zero
    product, whose sign it keeps)."""
    with np.errstate(all="ignore"):
        p = a * b
        ah, bh = _high_half(a), _high_half(b)
        al, bl = a - ah, b - bh
        pl = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + pl == a * b
        s, t = _two_sum(c, p)
        u, err = _two_sum(t, pl)
        r = s + _round_to_odd(u, err)
        plain = a * b + c
    ok = np.isfinite(r) & np.isfinite(pl) & (np.abs(p) > 1e-290)  # a zero p: plain is exact
    return np.where(ok, r, plain)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once. For types of at most 24 bits of precision the product is
    exact in f64; the f64 sum is rounded to odd, which makes the final rounding exact."""
    if a.dtype == np.float64:
        return _fma64(a, b, c)
    p = a.astype(np.float64) * b
    s, err = _two_sum(p, c.astype(np.float64))
    return _round_to_odd(s, err).astype(a.dtype)


def _rsqrt(a: np.ndarray) -> np.ndarray:
    return np.divide(np.ones((), a.dtype), np.sqrt(a))


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(a: np.ndarray) -> np.ndarray:
    """erf correctly rounded from float64 (NumPy has none; ``math.erf`` per element)."""
    return _ERF(a.astype(np.float64)).astype(a.dtype)


def _tanh(a: np.ndarray) -> np.ndarray:
    """tanh rounded from float64 (NumPy's float32 tanh is off by more than half an ulp)."""
    return np.tanh(a.astype(np.float64)).astype(a.dtype)


_FLOAT_BINARY: dict[str, Callable] = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "math.powf": np.power,
    "arith.maximumf": _maximumf, "arith.minimumf": _minimumf,
}

_UNARY: dict[str, Callable] = {
    "arith.negf": np.negative, "math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log,
    "math.log2": np.log2, "math.sqrt": np.sqrt, "math.rsqrt": _rsqrt, "math.sin": np.sin,
    "math.cos": np.cos, "math.absf": np.abs, "math.absi": np.abs, "math.floor": np.floor,
    "math.ceil": np.ceil, "math.trunc": np.trunc, "math.erf": _erf, "math.tanh": _tanh,
}


def _elementwise(fn: Callable) -> Builder:
    def build(op: Operation) -> Impl:
        if isinstance(fn, np.ufunc) or fn in (_maximumf, _minimumf):  # these take out=
            return _pooled(fn, np_dtype(op.results[0].type))
        return lambda _, *args: (fn(*args),)
    return build


# -- comparisons and select -----------------------------------------------------------

_CMPI: dict[str, tuple[Callable, Callable]] = {
    "eq": (np.equal, _same), "ne": (np.not_equal, _same),
    "slt": (np.less, _signed), "sle": (np.less_equal, _signed),
    "sgt": (np.greater, _signed), "sge": (np.greater_equal, _signed),
    "ult": (np.less, _unsigned), "ule": (np.less_equal, _unsigned),
    "ugt": (np.greater, _unsigned), "uge": (np.greater_equal, _unsigned),
}

# NumPy's comparisons are false on NaN except !=, i.e. ordered except "une"; an unordered
# predicate is the negation of the opposite ordered one.
_CMPF: dict[str, Callable] = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal,
    "olt": np.less, "ole": np.less_equal,
    "one": lambda a, b: (a < b) | (a > b),
    "ord": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    "ueq": lambda a, b: ~((a < b) | (a > b)),
    "ugt": lambda a, b: ~(a <= b), "uge": lambda a, b: ~(a < b),
    "ult": lambda a, b: ~(a >= b), "ule": lambda a, b: ~(a > b),
    "une": np.not_equal,
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
}


def _cmpi(op: Operation) -> Impl:
    fn, read = _CMPI[op.properties["predicate"].data]
    if read is _same or (read is _signed and np_dtype(op.operands[0].type) != np.bool_):
        return _pooled(fn, np.dtype(np.bool_))
    return lambda _, a, b: (fn(read(a), read(b)),)


def _cmpf(op: Operation) -> Impl:
    fn = _CMPF[op.properties["predicate"].data]
    if isinstance(fn, np.ufunc):
        return _pooled(fn, np.dtype(np.bool_))
    return lambda _, a, b: (fn(a, b),)


def _select(op: Operation) -> Impl:
    def impl(_, cond: np.ndarray, a: Any, b: Any) -> tuple:
        if not isinstance(a, Ptr):
            return (np.where(cond, a, b),)
        if a.buf != b.buf:
            raise UnsupportedError(
                "the numpy backend cannot select between pointers into different arrays")
        return (Ptr(a.buf, np.where(cond, a.off, b.off)),)
    return impl


# -- casts ----------------------------------------------------------------------------

def _fp_to_int(x: np.ndarray, dt: np.dtype, signed: bool) -> np.ndarray:
    """Truncate toward zero, saturating at the range of ``dt``; NaN gives 0."""
    w = _width(dt)
    t = np.trunc(x.astype(np.float64))  # every f16/bf16/f32 value is exact in f64
    lo, hi = (-(2 ** (w - 1)), 2 ** (w - 1)) if signed else (0, 2 ** w)
    inside = (t >= float(lo)) & (t < float(hi))  # powers of two: exact; false for NaN
    wide = np.dtype(np.uint64 if not signed and w == 64 else np.int64)
    v = np.where(inside, t, 0.0).astype(wide)
    v = np.where(t >= float(hi), wide.type(hi - 1), np.where(t < float(lo), wide.type(lo), v))
    return _wrap(v, dt)


_CASTS: dict[str, Callable[[np.ndarray, np.dtype], np.ndarray]] = {
    "arith.sitofp": lambda a, dt: _signed(a).astype(dt),
    "arith.uitofp": lambda a, dt: _unsigned(a).astype(dt),
    "arith.fptosi": lambda a, dt: _fp_to_int(a, dt, signed=True),
    "arith.fptoui": lambda a, dt: _fp_to_int(a, dt, signed=False),
    "arith.extf": lambda a, dt: a.astype(dt),
    "arith.truncf": lambda a, dt: a.astype(dt),
    "arith.extsi": lambda a, dt: _signed(a).astype(dt),
    "arith.extui": lambda a, dt: _unsigned(a).astype(dt),
    "arith.trunci": _wrap,
    "arith.bitcast": lambda a, dt: a.view(dt),
}


_FP8 = {name: d for d, name in ML_DTYPES.items() if d.is_fp8()}  # ml_dtypes name -> dtype


def _toward_zero(a: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``a`` narrowed to the float type ``dt``, rounded toward zero: rounded to nearest,
    then, where that moved away from zero (to infinity too), one step back (the bits of
    the magnitude less one: the next value toward zero in every IEEE format)."""
    with np.errstate(over="ignore"):
        r = np.asarray(a.astype(dt))
    wide = np.abs(a.astype(np.float64))
    away = np.abs(r.astype(np.float64)) > wide  # false for NaN and infinity in
    bits = r.view(np.dtype(f"u{r.itemsize}"))
    return np.where(away, (bits - away.astype(bits.dtype)).view(dt), r)


def _truncf(op: Operation) -> Impl:
    dt = np_dtype(op.results[0].type)
    fp8 = _FP8.get(dt.name)
    if fp8 is not None:  # saturating, as Triton's conversion on NVIDIA GPUs (compiler.fp8)
        return lambda _, a: (round_to_fp8(a, fp8),)
    fn = _toward_zero if rounds_toward_zero(op) else _CASTS["arith.truncf"]
    return lambda _, a: (fn(a, dt),)


_FP8_FORMATS = {"e4m3": float8e4nv, "e5m2": float8e5}  # tile.from_fp8/to_fp8


def _from_fp8(op: Operation) -> Impl:
    """fp8 bits held in i8 (after ``lower-fp8``) -> f32 or f16, exactly."""
    dt = numpy_dtype(_FP8_FORMATS[op.properties["format"].data].short)
    wide = np_dtype(op.results[0].type)
    return lambda _, a: (a.view(dt).astype(wide),)


def _to_fp8(op: Operation) -> Impl:
    d = _FP8_FORMATS[op.properties["format"].data]
    return lambda _, a: (round_to_fp8(a, d).view(np.int8),)


def _cast(fn: Callable[[np.ndarray, np.dtype], np.ndarray]) -> Builder:
    def build(op: Operation) -> Impl:
        dt = np_dtype(op.results[0].type)
        return lambda _, a: (fn(a, dt),)
    return build


# -- constants and tile creation ------------------------------------------------------

def _constant(op: Operation) -> Impl:
    attr, t = op.properties["value"], op.results[0].type
    dt = np_dtype(t)
    values = attr.get_values() if isinstance(attr, DenseIntOrFPElementsAttr) else attr.value.data
    if dt.kind in "biu":
        data = _wrap(np.array(values, np.int64), dt)
    elif dt.name in _FP8:  # NaN as the canonical 0x7F
        data = round_to_fp8(np.array(values, np.float64), _FP8[dt.name])
    else:
        data = np.array(values, np.float64).astype(dt)
    data = data.reshape(1, *shape(t))
    return lambda _: (data,)


def _range(op: Operation) -> Impl:
    r = np.arange(op.properties["start"].value.data, op.properties["end"].value.data,
                  dtype=np.int32).reshape(1, -1)
    return lambda _: (r,)


def _broadcast_scalar(x: np.ndarray, tile: tuple[int, ...]) -> np.ndarray:
    """Scalars ``x`` of shape (L,) as tiles (L, *tile), without copying: a read-only view
    made directly (a sixth of ``np.broadcast_to``'s time, which every splat pays)."""
    if x.ndim != 1 or not x.flags.c_contiguous:
        return np.broadcast_to(x.reshape(len(x), *(1,) * len(tile)), (len(x), *tile))
    view = np.ndarray((len(x), *tile), x.dtype, x, 0, (x.strides[0], *(0,) * len(tile)))
    view.flags.writeable = False
    return view


def _splat(op: Operation) -> Impl:
    tile = shape(op.results[0].type)

    def impl(_, x: Any) -> tuple:
        return (Ptr(x.buf, _broadcast_scalar(x.off, tile)) if isinstance(x, Ptr)
                else _broadcast_scalar(x, tile),)
    return impl


_INT64 = np.dtype(np.int64)


def _is_zero(a: np.ndarray) -> bool:
    """Whether ``a`` is one 0 broadcast (an argument's own offset), known without a pass."""
    return a.size > 0 and not any(a.strides) and a[(0,) * a.ndim] == 0


def _rows_run_start(base: np.ndarray, off: np.ndarray) -> int | None:
    """``run_start`` of ``base + off`` where ``base`` is one pointer per program (a row
    start) and ``off`` one tile for every program (the columns), decided in O(programs +
    tile) instead of a pass over the sum: the tile must be consecutive and each program
    start where the previous one ended."""
    if base.shape[1:] != off.shape[1:] or len(off) != 1 or any(base.strides[1:]) \
            or not off.size:
        return None
    starts = base[(slice(None), *(0,) * (base.ndim - 1))]
    tile = off.reshape(-1)
    first = int(tile[0])
    if not np.array_equal(tile, np.arange(first, first + tile.size)):
        return None
    if len(starts) > 1 and not (np.diff(starts) == tile.size).all():
        return None
    return int(starts[0]) + first


def _addptr(op: Operation) -> Impl:
    def impl(batch, p: Ptr, off: np.ndarray) -> tuple:
        # Pointer arithmetic is 64-bit; a consecutive run stays one without offsets.
        tile = p.shape if off.shape == p.shape else np.broadcast_shapes(off.shape, p.shape)
        moved = tile == p.shape and off.size and not any(off.strides)  # by one offset
        if moved and p.run is not None:
            return (Ptr.consecutive(p.buf, p.run + int(off[(0,) * off.ndim]), tile),)
        if moved and p.rows is not None:
            return (Ptr.of_rows(p.buf, p.rows + int(off[(0,) * off.ndim]), tile),)
        if p.run is None and p.rows is None and _is_zero(p.off):
            return (_from_base(batch, p.buf, off, tile),)
        run = _rows_run_start(p.off, off)
        if run is not None:
            return (Ptr.consecutive(p.buf, run, tile),)
        starts = row_starts(p.off, off, tile)
        if starts is not None:
            return (Ptr.of_rows(p.buf, starts, tile),)
        wide = batch.pool.empty(tile, _INT64)
        if off.size < wide.size:  # a row shared by the programs: widen it alone, then add
            np.add(off.astype(np.int64), p.off, out=wide)
        else:  # sign-extend, then add in place: this beats a mixed-type add
            np.copyto(wide, off)
            wide += p.off
        return (Ptr(p.buf, wide, run_start(wide, batch.pool)),)
    return impl


def _from_base(batch, buf: int, off: np.ndarray, tile: tuple[int, ...]) -> Ptr:
    """An argument's base (offset 0) plus ``off``: the sign-extended offsets themselves,
    shared by the pointers into x, y and out of one index tile (never written in place)."""
    if off.shape != tile:
        return Ptr(buf, np.broadcast_to(off.astype(np.int64), tile))
    wide, run = batch.widen(off)
    return Ptr(buf, wide, run) if wide is not None else Ptr.consecutive(buf, run, tile)


# -- program ids and memory -----------------------------------------------------------

def _program_id(op: Operation) -> Impl:
    axis = op.properties["axis"].value.data
    return lambda batch: (batch.pid[axis],)


def _num_programs(op: Operation) -> Impl:
    axis = op.properties["axis"].value.data
    return lambda batch: (batch.num_programs[axis],)


def _load(op: Operation) -> Impl:
    has_mask, has_other = op.mask is not None, op.other is not None
    zero = np.zeros((), np_dtype(op.results[0].type))

    def impl(batch, ptr: Ptr, *rest: np.ndarray) -> tuple:
        mask = rest[0] if has_mask else None
        other = rest[-1] if has_other else zero
        return (batch.load(op, ptr, mask, other),)
    return impl


def _store(op: Operation) -> Impl:
    def impl(batch, ptr: Ptr, value: np.ndarray, mask: np.ndarray | None = None) -> tuple:
        batch.store(op, ptr, value, mask)
        return ()
    return impl


BUILDERS.update({
    **{name: _int_binary(fn, read) for name, (fn, read) in _INT_BINARY.items()},
    **{name: _elementwise(fn) for name, fn in _FLOAT_BINARY.items()},
    **{name: _elementwise(fn) for name, fn in _UNARY.items()},
    **{name: _cast(fn) for name, fn in _CASTS.items()}, "arith.truncf": _truncf,
    "tile.from_fp8": _from_fp8, "tile.to_fp8": _to_fp8,
    "math.fma": _elementwise(_fma), "tile.umulhi": _elementwise(_umulhi),
    "tile.cmpi": _cmpi, "tile.cmpf": _cmpf, "tile.select": _select,
    "arith.constant": _constant, "tile.range": _range, "tile.splat": _splat,
    "tile.addptr": _addptr, "tile.program_id": _program_id,
    "tile.num_programs": _num_programs, "tile.load": _load, "tile.store": _store,
})
