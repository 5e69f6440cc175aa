"""WGSL backend: hand-written SIMT IR -> emit_wgsl -> wgpu, compared with NumPy.

Runs on whatever adapter wgpu finds (Mesa's lavapipe on a machine without a GPU), so the
sizes stay modest. Tolerances for transcendental functions are WGSL's accuracy bounds.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from backends import wgsl
from backends.wgsl import Launcher, make_artifact, unpack_artifact
from backends.wgsl.emit import emit_wgsl
from compiler.context import parse_module
from compiler.errors import LaunchError, UnsupportedError
from compiler.kinfo import KernelInfo, Param

AVAILABLE, WHY = wgsl.availability()
device_test = pytest.mark.skipif(not AVAILABLE, reason=f"no WebGPU adapter: {WHY}")

IR = {"f32": "f32", "f16": "f16", "i32": "i32", "u32": "i32", "i1": "i1", "f64": "f64",
      "i8": "i8", "i64": "i64", "bf16": "bf16"}
NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32,
      "i64": np.int64}


def elementwise(ins, outs, body, k=4, warps=1, scalars=(), vec=1):
    """SIMT IR of ``out_j[i] = body(in_0[i], ...)`` for i < n, as tile-to-simt lowers it
    with ``vec`` contiguous elements per thread per chunk: thread t of program p owns the
    k lanes ``p * BLOCK + t * vec + j % vec + j // vec * vec * 32 * warps`` (n must then be
    a multiple of vec). ``body`` reads ``%x<i>`` (and scalars ``%s<i>``), defines ``%r<j>``
    and writes vector types as ``{f32}``, ``{i1}``, ..."""
    threads = 32 * warps
    vt = {d: f"vector<{k}x{IR[d]}>" for d in IR}
    args = ([f"%in{i}: !tile.ptr<{IR[d]}>" for i, d in enumerate(ins)]
            + [f"%out{j}: !tile.ptr<{IR[d]}>" for j, d in enumerate(outs)]
            + ["%n: i32"] + [f"%s{i}: {IR[d]}" for i, d in enumerate(scalars)])
    lanes = ", ".join(str(j // vec * vec * threads + j % vec) for j in range(k))
    acc = f"mask %mask : {vt['i1']} {{vec = {vec} : i32}}"
    lines = [
        f"func.func @ew({', '.join(args)}) attributes {{simt.num_warps = {warps} : i32}} {{",
        "%pid = tile.program_id 0 : i32",
        f"%blk = arith.constant {k * threads} : i32",
        "%base = arith.muli %pid, %blk : i32",
        "%tid = simt.thread_id : i32",
        f"%vec = arith.constant {vec} : i32",
        "%tv = arith.muli %tid, %vec : i32",
        "%t = arith.addi %base, %tv : i32",
        f"%tb = vector.broadcast %t : i32 to {vt['i32']}",
        f"%lanes = arith.constant dense<[{lanes}]> : {vt['i32']}",
        f"%offs = arith.addi %tb, %lanes : {vt['i32']}",
        f"%nb = vector.broadcast %n : i32 to {vt['i32']}",
        f"%mask = tile.cmpi \"slt\", %offs, %nb : {vt['i32']} -> {vt['i1']}"]
    lines += [f"%x{i} = simt.load %in{i}[%offs] {acc} : !tile.ptr<{IR[d]}>, {vt['i32']} -> "
              f"{vt[d]}" for i, d in enumerate(ins)]
    lines += body.format(**vt).splitlines()
    lines += [f"simt.store %out{j}[%offs], %r{j} {acc} : !tile.ptr<{IR[d]}>, {vt['i32']}, "
              f"{vt[d]}" for j, d in enumerate(outs)]
    lines += ["func.return", "}"]
    params = ([Param(f"in{i}", d, True) for i, d in enumerate(ins)]
              + [Param(f"out{j}", d, True, True) for j, d in enumerate(outs)]
              + [Param("n", "i32", False)] + [Param(f"s{i}", d, False)
                                              for i, d in enumerate(scalars)])
    return "\n".join(lines), KernelInfo("ew", params, "wgsl", num_warps=warps)


def compile_text(text: str, info: KernelInfo) -> Launcher:
    return Launcher(make_artifact(*emit_wgsl(parse_module(text))), info)


def apply(body, inputs, out_dtypes, k=4, warps=1, scalars=(), vec=1, in_dtypes=None):
    """Run an elementwise body over equal-length 1-D arrays; checks that the masked-off
    tail of each output is untouched and returns the outputs. ``in_dtypes`` defaults to
    the arrays' (u32 must be named: it is i32 in IR)."""
    n = len(inputs[0])
    in_dtypes = in_dtypes or [{v: d for d, v in NP.items()}[a.dtype.type] for a in inputs]
    text, info = elementwise(in_dtypes, out_dtypes, body, k, warps,
                             [d for d, _ in scalars], vec)
    outs = [np.full(n + 3, 77, NP[d]) for d in out_dtypes]
    block = k * 32 * warps
    compile_text(text, info)((-(-n // block), 1, 1),
                             list(inputs) + outs + [n] + [v for _, v in scalars])
    for o in outs:
        assert (o[n:] == 77).all(), "a masked-off element was written"
    return [o[:n] for o in outs]


RNG = np.random.default_rng(1234)


def ints(n, lo=-2**31, hi=2**31):
    """Random int32 with half the values small, so products and quotients stay varied."""
    big = RNG.integers(lo, hi, n, dtype=np.int64)
    small = RNG.integers(max(lo, -100), min(hi, 100), n, dtype=np.int64)
    return np.where(RNG.random(n) < 0.5, big, small).astype(np.int32)


def c_div(a, b):
    """C's truncating quotient and remainder, with the NumPy backend's answers where C
    has none: x / 0 = -1, x % 0 = x, INT_MIN / -1 wraps to INT_MIN."""
    a, b = a.astype(np.int64), b.astype(np.int64)
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b)) * np.sign(a) * np.sign(b)
    q = np.where(b == 0, -1, q)
    return q.astype(np.int32), np.where(b == 0, a, a - b * q).astype(np.int32)


def shift_amount(b):
    return b.view(np.uint32).astype(np.int64)  # read as unsigned: negative means huge


# ---------------------------------------------------------------- elementwise numerics


@device_test
@pytest.mark.parametrize("k,warps", [(1, 1), (4, 2), (6, 1), (8, 4)])
def test_vector_add_masked(k, warps):
    n = 1000 + k  # never a multiple of the block
    x, y = RNG.random(n, np.float32), RNG.random(n, np.float32)
    (out,) = apply("%r0 = arith.addf %x0, %x1 : {f32}", [x, y], ["f32"], k, warps)
    np.testing.assert_array_equal(out, x + y)


@device_test
@pytest.mark.parametrize("k,vec", [(8, 4), (4, 2), (2, 2)])
def test_select_exp_with_wide_access(k, vec):
    body = ("%e = arith.addf %x0, %x1 : {f32}\n%q = math.exp %e : {f32}\n"
            "%r0 = tile.select %mask, %q, %e : {i1}, {f32}")
    n = 4 * 1001  # vec = 4 promises masks uniform over 4 lanes: n is a multiple of 4
    x, y = RNG.random(n, np.float32), RNG.random(n, np.float32)
    (out,) = apply(body, [x, y], ["f32"], k=k, warps=4, vec=vec)
    np.testing.assert_allclose(out, np.exp(x + y), rtol=1e-5)


INT_BINARY = {
    "addi": lambda a, b: (a.astype(np.int64) + b).astype(np.int32),
    "subi": lambda a, b: (a.astype(np.int64) - b).astype(np.int32),
    "muli": lambda a, b: (a.astype(np.int64) * b).astype(np.int32),
    "divsi": lambda a, b: c_div(a, b)[0], "remsi": lambda a, b: c_div(a, b)[1],
    "andi": np.bitwise_and, "ori": np.bitwise_or, "xori": np.bitwise_xor,
    "maxsi": np.maximum, "minsi": np.minimum,
    "shli": lambda a, b: np.where(shift_amount(b) < 32, a.astype(np.int64) << np.minimum(
        shift_amount(b), 31), 0).astype(np.int32),
    "shrsi": lambda a, b: a >> np.minimum(shift_amount(b), 31),  # sign fill from 31 on
}


@device_test
@pytest.mark.parametrize("op", list(INT_BINARY))
def test_int_binary(op):
    n = 777
    a, b = ints(n), ints(n)
    if op.startswith("sh"):
        b = np.where(RNG.random(n) < 0.8, RNG.integers(0, 32, n), b).astype(np.int32)
    if op.startswith(("div", "rem")):
        b[::7], b[1::7], a[1::7] = 0, -1, -2**31  # by zero; INT_MIN / -1
    (out,) = apply(f"%r0 = arith.{op} %x0, %x1 : {{i32}}", [a, b], ["i32"])
    np.testing.assert_array_equal(out, INT_BINARY[op](a, b))


def u32_div(a, b):
    q = a // np.where(b == 0, 1, b)
    return np.where(b == 0, 2**32 - 1, q).astype(np.uint32), np.where(b == 0, a, a - b * q)


U32_BINARY = {"divui": lambda a, b: u32_div(a, b)[0], "remui": lambda a, b: u32_div(a, b)[1],
              "maxui": np.maximum, "minui": np.minimum,
              "shrui": lambda a, b: np.where(b < 32, a >> np.minimum(b, 31), 0)}


@device_test
@pytest.mark.parametrize("op", list(U32_BINARY))
def test_u32_binary(op):
    n = 555
    a = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(1, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b[::3] = RNG.integers(1, 1000, len(b[::3]))
    b[::11] = 0  # x / 0 = 2^32 - 1, x % 0 = x (the NumPy backend's answers)
    if op == "shrui":
        b[::2] %= 32
    (out,) = apply(f"%r0 = arith.{op} %x0, %x1 : {{u32}}", [a, b], ["u32"],
                   in_dtypes=["u32", "u32"])
    np.testing.assert_array_equal(out, U32_BINARY[op](a, b))


FLOAT_UNARY = {  # op: (reference, input range, rtol, atol)
    "math.exp": (np.exp, (-10, 10), 3e-6, 0), "math.exp2": (np.exp2, (-10, 10), 3e-6, 0),
    "math.log": (np.log, (1e-3, 1e3), 2e-6, 1e-6),
    "math.log2": (np.log2, (1e-3, 1e3), 2e-6, 1e-6),
    "math.sqrt": (np.sqrt, (0, 1e4), 1e-6, 0),
    "math.rsqrt": (lambda x: 1 / np.sqrt(x), (1e-3, 1e3), 1e-6, 0),
    "math.sin": (np.sin, (-np.pi, np.pi), 0, 5e-4),  # WGSL: absolute 2^-11 on [-pi, pi]
    "math.cos": (np.cos, (-np.pi, np.pi), 0, 5e-4),
    "math.floor": (np.floor, (-50, 50), 0, 0), "math.ceil": (np.ceil, (-50, 50), 0, 0),
    "math.trunc": (np.trunc, (-50, 50), 0, 0), "math.absf": (np.abs, (-50, 50), 0, 0),
    "arith.negf": (np.negative, (-50, 50), 0, 0),
}


@device_test
@pytest.mark.parametrize("op", list(FLOAT_UNARY))
def test_float_unary(op):
    ref, (lo, hi), rtol, atol = FLOAT_UNARY[op]
    x = RNG.uniform(lo, hi, 999).astype(np.float32)
    (out,) = apply(f"%r0 = {op} %x0 : {{f32}}", [x], ["f32"])
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=rtol, atol=atol)


@device_test
def test_float_binary_and_fma():
    n = 1001
    a, b, c = (RNG.uniform(-100, 100, n).astype(np.float32) for _ in range(3))
    body = ("%r0 = arith.mulf %x0, %x1 : {f32}\n%r1 = arith.divf %x0, %x1 : {f32}\n"
            "%r2 = math.fma %x0, %x1, %x2 : {f32}\n%r3 = arith.subf %x0, %x2 : {f32}")
    mul, div, fma, sub = apply(body, [a, b, c], ["f32"] * 4)
    np.testing.assert_array_equal(mul, a * b)
    np.testing.assert_allclose(div, a / b, rtol=3e-7)  # WGSL: 2.5 ULP
    np.testing.assert_allclose(fma, a.astype(np.float64) * b + c, rtol=1e-6, atol=1e-4)
    np.testing.assert_array_equal(sub, a - c)


def needs_f16(dtype):
    if dtype == "f16" and "shader-f16" not in wgsl.wgsl_device().features:
        pytest.skip("adapter lacks shader-f16")


@device_test
@pytest.mark.parametrize("dtype,rtol", [("f32", 1e-5), ("f16", 2**-10)])
def test_powf_negative_bases_and_zero(dtype, rtol):
    needs_f16(dtype)
    n = 800
    a = RNG.uniform(-4, 4, n).astype(NP[dtype])
    b = np.where(RNG.random(n) < 0.5, RNG.integers(-3, 4, n),
                 RNG.uniform(-3, 3, n)).astype(NP[dtype])
    a[:20], b[:10], b[10:20] = 0, 2.5, 0  # 0^2.5 = 0, 0^0 = 1
    for k in (1, 4):  # scalars and vectors
        (out,) = apply(f"%r0 = math.powf %x0, %x1 : {{{dtype}}}", [a, b], [dtype], k=k)
        with np.errstate(invalid="ignore"):
            ref = np.power(a.astype(np.float64), b.astype(np.float64)).astype(NP[dtype])
        # the rounding of a result near f16's largest value decides between it and inf
        near_max = np.abs(ref) >= 0.99 * np.finfo(NP[dtype]).max
        np.testing.assert_allclose(out[~near_max], ref[~near_max], rtol=rtol, atol=1e-6,
                                   equal_nan=True)
        assert np.isnan(out).sum() > 50  # negative base, fractional exponent


@device_test
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_maximum_minimum_nan_and_signed_zero(dtype):
    needs_f16(dtype)
    n = 600
    a, b = (RNG.uniform(-10, 10, n).astype(NP[dtype]) for _ in range(2))
    a[RNG.random(n) < 0.2] = np.nan
    b[RNG.random(n) < 0.2] = np.nan
    a[:40], b[:40] = RNG.choice([0.0, -0.0], 40), RNG.choice([0.0, -0.0], 40)
    body = "%r0 = arith.maximumf %x0, %x1 : {T}\n%r1 = arith.minimumf %x0, %x1 : {T}"
    mx, mn = apply(body.replace("{T}", "{" + dtype + "}"), [a, b], [dtype] * 2)
    zeros = (a == 0) & (b == 0)  # -0.0 orders below +0.0
    np.testing.assert_array_equal(mx, np.where(zeros, a + b, np.maximum(a, b)))
    np.testing.assert_array_equal(mn, np.where(zeros, -(-a - b), np.minimum(a, b)))
    assert (np.signbit(mx[:40]) == (np.signbit(a) & np.signbit(b))[:40]).all()
    assert (np.signbit(mn[:40]) == (np.signbit(a) | np.signbit(b))[:40]).all()


SPECIAL = np.array([-1, 0, 1, 2, np.nan, np.inf, -np.inf, -0.0], np.float32)
CMPF = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less,
    "ole": np.less_equal, "one": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
    "ueq": lambda a, b: (a == b) | np.isnan(a) | np.isnan(b), "une": np.not_equal,
    "ult": lambda a, b: ~(a >= b), "ule": lambda a, b: ~(a > b),
    "ugt": lambda a, b: ~(a <= b), "uge": lambda a, b: ~(a < b),
}


@device_test
@pytest.mark.parametrize("pred", list(CMPF))
def test_cmpf_with_nan(pred):
    a, b = RNG.choice(SPECIAL, 300), RNG.choice(SPECIAL, 300)
    body = (f'%c = tile.cmpf "{pred}", %x0, %x1 : {{f32}} -> {{i1}}\n'
            "%r0 = arith.extui %c : {i1} to {i32}")
    (out,) = apply(body, [a, b], ["i32"])
    np.testing.assert_array_equal(out, CMPF[pred](a, b).astype(np.int32))


CMPI = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
        "sgt": np.greater, "sge": np.greater_equal}


def unsigned(f):
    return lambda a, b: f(a.view(np.uint32), b.view(np.uint32))


CMPI |= {"ult": unsigned(np.less), "ule": unsigned(np.less_equal),
         "ugt": unsigned(np.greater), "uge": unsigned(np.greater_equal)}


@device_test
@pytest.mark.parametrize("pred", list(CMPI))
def test_cmpi_and_select(pred):
    pool = np.array([-2**31, -5, -1, 0, 1, 5, 2**31 - 1], np.int32)
    a, b = RNG.choice(pool, 300), RNG.choice(pool, 300)
    body = (f'%c = tile.cmpi "{pred}", %x0, %x1 : {{i32}} -> {{i1}}\n'
            "%r0 = tile.select %c, %x0, %x1 : {i1}, {i32}")
    (out,) = apply(body, [a, b], ["i32"])
    np.testing.assert_array_equal(out, np.where(CMPI[pred](a, b), a, b))


def fptosi_ref(x, lo, hi):
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(x), 0, np.clip(np.trunc(x.astype(np.float64)), lo, hi))


CASTS = {  # name: (body, input dtype, output dtype, inputs, reference)
    "sitofp": ("%r0 = arith.sitofp %x0 : {i32} to {f32}", "i32", "f32", ints(500),
               lambda a: a.astype(np.float32)),
    "uitofp": ("%r0 = arith.uitofp %x0 : {u32} to {f32}", "u32", "f32",
               ints(500).view(np.uint32), lambda a: a.astype(np.float32)),
    "fptosi": ("%r0 = arith.fptosi %x0 : {f32} to {i32}", "f32", "i32",
               np.concatenate([SPECIAL, [3e9, -3e9, 2.7, -2.7, 2147483520.0]]).astype(
                   np.float32), lambda x: fptosi_ref(x, -2**31, 2**31 - 1).astype(np.int32)),
    "fptoui": ("%r0 = arith.fptoui %x0 : {f32} to {u32}", "f32", "u32",
               np.concatenate([SPECIAL, [5e9, 3.7e9, 2.7]]).astype(np.float32),
               lambda x: fptosi_ref(x, 0, 2**32 - 1).astype(np.uint32)),
    "bitcast": ("%r0 = arith.bitcast %x0 : {f32} to {i32}", "f32", "i32",
                RNG.standard_normal(300).astype(np.float32), lambda x: x.view(np.int32)),
    "i1": (("%c = arith.trunci %x0 : {i32} to {i1}\n%s = arith.extsi %c : {i1} to {i32}\n"
            "%u = arith.extui %c : {i1} to {i32}\n%r0 = arith.subi %s, %u : {i32}"),
           "i32", "i32", ints(300), lambda a: -2 * (a & 1)),
    "i1-to-float": (("%c = arith.trunci %x0 : {i32} to {i1}\n"
                     "%s = arith.sitofp %c : {i1} to {f32}\n%u = arith.uitofp %c : {i1} to {f32}\n"
                     "%uu = arith.mulf %u, %u : {f32}\n%r0 = arith.subf %s, %uu : {f32}"),
                    "i32", "f32", ints(300), lambda a: (-2 * (a & 1)).astype(np.float32)),
    "xori-i1": (("%c = arith.trunci %x0 : {i32} to {i1}\n"
                 "%tr = arith.constant dense<true> : {i1}\n%d = arith.xori %c, %tr : {i1}\n"
                 "%r0 = arith.extsi %d : {i1} to {i32}"),
                "i32", "i32", ints(300), lambda a: -(1 - (a & 1))),
}


@device_test
@pytest.mark.parametrize("name", list(CASTS))
def test_casts(name):
    body, din, dout, x, ref = CASTS[name]
    (out,) = apply(body, [x], [dout], in_dtypes=[din])
    if dout == "f32":
        np.testing.assert_allclose(out, ref(x), rtol=2**-23)  # WGSL may round either way
    else:
        np.testing.assert_array_equal(out, ref(x))


@device_test
def test_f16_arithmetic_and_casts():
    needs_f16("f16")
    n = 700
    a, b = (RNG.uniform(-1.5, 1.5, n).astype(np.float16) for _ in range(2))
    body = ("%s = arith.addf %x0, %x1 : {f16}\n%m = arith.mulf %s, %x1 : {f16}\n"
            "%r0 = math.exp %m : {f16}\n%w = arith.extf %x0 : {f16} to {f32}\n"
            "%h = arith.constant dense<0.5> : {f32}\n%p = arith.addf %w, %h : {f32}\n"
            "%r1 = arith.truncf %p : {f32} to {f16}\n%r2 = arith.fptosi %x0 : {f16} to {i32}\n"
            "%sb = vector.broadcast %s0 : f16 to {f16}\n%r3 = arith.mulf %x0, %sb : {f16}")
    ex, tr, fi, sc = apply(body, [a, b], ["f16", "f16", "i32", "f16"], scalars=[("f16", 0.75)])
    m = ((a + b) * b).astype(np.float32)
    ulp = np.spacing(np.exp(m).astype(np.float16)).astype(np.float32)
    assert (np.abs(ex - np.exp(m)) <= (3 + 2 * np.abs(m)) * ulp).all()  # WGSL: 1 + 2|x| ULP
    np.testing.assert_allclose(tr, (a.astype(np.float32) + 0.5), rtol=2**-10)
    np.testing.assert_array_equal(fi, np.trunc(a).astype(np.int32))
    np.testing.assert_array_equal(sc, a * np.float16(0.75))


@device_test
def test_scalar_params():
    n = 300
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    body = ("%sb = vector.broadcast %s0 : f32 to {f32}\n%r0 = arith.mulf %x0, %sb : {f32}\n"
            "%ib = vector.broadcast %s1 : i32 to {i32}\n%c5 = arith.constant dense<5> : {i32}\n"
            "%r1 = arith.shrui %ib, %c5 : {i32}\n"
            "%neg = arith.negf %x0 : {f32}\n%r2 = arith.select %s2, %x0, %neg : {f32}")
    for flag in (True, False):
        scaled, shifted, picked = apply(body, [x], ["f32", "u32", "f32"], scalars=[
            ("f32", 2.5), ("u32", 2**31 + 5), ("i1", flag)])
        np.testing.assert_array_equal(scaled, x * np.float32(2.5))
        assert (shifted == (2**31 + 5) >> 5).all()
        np.testing.assert_array_equal(picked, x if flag else -x)


def every_op(dtype: str) -> str:
    """A body using every elementwise op of a float or integer dtype once."""
    v = "{" + dtype + "}"
    if dtype.startswith("f"):
        binary = ["arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
                  "arith.minimumf", "math.powf"]
        unary = [op for op in FLOAT_UNARY] + [f"arith.fptosi %x0 : {v} to {{i32}}",
                                              f"arith.fptoui %x0 : {v} to {{i32}}"]
        cmp = [f'tile.cmpf "{p}"' for p in CMPF]
    else:
        binary = [f"arith.{op}" for op in list(INT_BINARY) + list(U32_BINARY)]
        unary = [f"arith.sitofp %x0 : {v} to {{f32}}", f"arith.uitofp %x0 : {v} to {{f32}}",
                 f"arith.bitcast %x0 : {v} to {{f32}}", "math.absi"]
        cmp = [f'tile.cmpi "{p}"' for p in CMPI]
    lines = [f"%b{i} = {op} %x0, %x1 : {v}" for i, op in enumerate(binary)]
    lines += [f"%u{i} = {op}" if " to " in op else f"%u{i} = {op} %x0 : {v}"
              for i, op in enumerate(unary)]
    lines += [f"%c{i} = {op}, %x0, %x1 : {v} -> {{i1}}" for i, op in enumerate(cmp)]
    return "\n".join(lines + ["%r0 = math.fma %x0, %x1, %x0 : {f32}" if dtype == "f32"
                               else "%r0 = arith.addi %x0, %x1 : {i32}"])


@device_test
@pytest.mark.parametrize("dtype", ["f32", "f16", "i32"])
@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_every_template_is_valid_wgsl(dtype, k):
    """Each table entry and helper, as a scalar and as vectors of every width."""
    needs_f16(dtype)
    body = every_op(dtype)
    if dtype == "f16":
        body = body.replace("%r0 = arith.addi %x0, %x1 : {i32}",
                            "%r0 = arith.fptosi %x0 : {f16} to {i32}")
    text, _ = elementwise([dtype, dtype], ["f32" if dtype == "f32" else "i32"], body, k=k)
    source, _ = emit_wgsl(parse_module(text))
    wgsl.wgsl_device().create_shader_module(code=source)  # raises on invalid WGSL


# ---------------------------------------------------------------- control flow


@device_test
def test_scf_for_with_swapped_yield_and_if():
    body = ("%c0 = arith.constant 0 : i32\n%c1 = arith.constant 1 : i32\n"
            "%r0, %r1 = scf.for %i = %c0 to %s0 step %c1 iter_args(%a = %x0, %b = %x1) -> "
            "({f32}, {f32}) : i32 {{\n%s = arith.addf %a, %b : {f32}\n"
            "scf.yield %b, %s : {f32}, {f32}\n}}\n"
            "%big = tile.cmpi \"sgt\", %s0, %c1 : i32 -> i1\n"
            "%r2 = scf.if %big -> ({f32}) {{\nscf.yield %r0 : {f32}\n}} else {{\n"
            "%ng = arith.negf %r0 : {f32}\nscf.yield %ng : {f32}\n}}")
    x, y = RNG.random(333, np.float32), RNG.random(333, np.float32)
    for steps in (0, 1, 6):
        a, b, c = apply(body, [x, y], ["f32"] * 3, scalars=[("i32", steps)])
        ra, rb = x.copy(), y.copy()
        for _ in range(steps):
            ra, rb = rb, ra + rb
        np.testing.assert_array_equal(a, ra)
        np.testing.assert_array_equal(b, rb)
        np.testing.assert_array_equal(c, ra if steps > 1 else -ra)


# ---------------------------------------------------------------- grids

PROBE = """func.func @probe({outs}) attributes {{simt.num_warps = 1 : i32}} {{
  %p0 = tile.program_id 0 : i32
  %p1 = tile.program_id 1 : i32
  %p2 = tile.program_id 2 : i32
  %n0 = tile.num_programs 0 : i32
  %n1 = tile.num_programs 1 : i32
  %n2 = tile.num_programs 2 : i32
  %t = simt.thread_id : i32
  %z = arith.constant 0 : i32
  %first = tile.cmpi "eq", %t, %z : i32 -> i1
  %a = arith.muli %p2, %n1 : i32
  %b = arith.addi %a, %p1 : i32
  %c = arith.muli %b, %n0 : i32
  %flat = arith.addi %c, %p0 : i32
{stores}
  func.return
}}"""


def probe_kernel() -> Launcher:
    names = ["p0", "p1", "p2", "n0", "n1", "n2"]
    outs = ", ".join(f"%o_{v}: !tile.ptr<i32>" for v in names)
    stores = "\n".join(f"  simt.store %o_{v}[%flat], %{v} mask %first : i1 : "
                       "!tile.ptr<i32>, i32, i32" for v in names)
    info = KernelInfo("probe", [Param(f"o_{v}", "i32", True, True) for v in names], "wgsl",
                      num_warps=1)
    return compile_text(PROBE.format(outs=outs, stores=stores), info)


@device_test
@pytest.mark.parametrize("grid", [(1, 1, 1), (7, 1, 1), (5, 3, 1), (3, 2, 4),
                                  (65_536, 1, 1), (65_537, 1, 1), (65_537, 2, 1)])
def test_grid_program_ids(grid):
    total = int(np.prod(grid))
    outs = [np.full(total + 64, -1, np.int32) for _ in range(6)]
    probe_kernel()(grid, outs)
    flat = np.arange(total)
    expect = [flat % grid[0], flat // grid[0] % grid[1], flat // (grid[0] * grid[1])]
    expect += [np.full(total, g) for g in grid]
    for out, ref in zip(outs, expect):
        np.testing.assert_array_equal(out[:total], ref)
        assert (out[total:] == -1).all(), "a padding program wrote"


@device_test
def test_vector_add_over_65535_programs():
    programs = 65_600  # BLOCK = 32: 2.1 M elements
    n = programs * 32 - 5
    x = RNG.random(n, np.float32)
    y = RNG.random(n, np.float32)
    (out,) = apply("%r0 = arith.addf %x0, %x1 : {f32}", [x, y], ["f32"], k=1, warps=1)
    np.testing.assert_array_equal(out, x + y)


@device_test
def test_grid_too_large_and_empty():
    with pytest.raises(LaunchError, match="too large"):
        probe_kernel()((70_000, 40_000, 1), [np.zeros(1, np.int32)] * 6)
    with pytest.raises(LaunchError, match="positive"):
        probe_kernel()((0, 1, 1), [np.zeros(1, np.int32)] * 6)


# ---------------------------------------------------------------- device buffers, aliasing

ADD = elementwise(["f32", "f32"], ["f32"], "%r0 = arith.addf %x0, %x1 : {f32}")


@device_test
def test_gpubuffer_arguments_and_inplace_aliasing():
    import wgpu

    device = wgsl.wgsl_device()
    n = 500
    x, y = RNG.random(n, np.float32), RNG.random(n, np.float32)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    bx, by = (device.create_buffer_with_data(data=a, usage=usage) for a in (x, y))
    launch = compile_text(*ADD)
    launch((4, 1, 1), [bx, by, bx, n])  # in place on device: x is read and written
    got = wgsl.read_buffer(bx, np.float32)
    np.testing.assert_array_equal(got, x + y)
    xs = x.copy()
    launch((4, 1, 1), [xs, y, xs, n])  # in place on NumPy arrays: one buffer
    np.testing.assert_array_equal(xs, x + y)


@device_test
def test_aliased_writable_ranges_are_one_binding():
    """WebGPU (as Chrome checks) forbids two writable bindings of one range: where a
    kernel writes a range bound twice, the shader variant declares it once and both
    parameters name it; other overlapping ranges of a written buffer are a LaunchError."""
    import compiler as tc
    from backends.wgsl.aliasing import Aliasing
    n = 256
    x = RNG.random(3 * n, np.float32)
    a = tc.asarray(x, backend="wgsl")
    launch = compile_text(*ADD)
    launch((4, 1, 1), [a[:n], a[:n], a[:n], n])
    np.testing.assert_array_equal(tc.to_numpy(a)[:n], 2 * x[:n])
    shape = next(iter(launch.kernel.pipelines[wgsl.wgsl_device()]))
    assert shape == Aliasing(frozenset({(1, 0), (2, 0)}), frozenset({0}))
    source = shape.variant(launch.kernel.source)
    assert source.count("@binding(0) var<storage, read_write>") == 1
    assert "@binding(1)" not in source and "@binding(2)" not in source
    with pytest.raises(LaunchError, match="arguments in0 and out0 overlap in one buffer"):
        launch((4, 1, 1), [a[:2 * n], a[2 * n:], a[n:3 * n], n])
    launch((4, 1, 1), [a[:n], a[n:2 * n], a[2 * n:], n])  # apart: three bindings
    np.testing.assert_array_equal(tc.to_numpy(a)[2 * n:], 2 * x[:n] + x[n:2 * n])


SCALE = elementwise(["f32"], ["f32"], "%sb = vector.broadcast %s0 : f32 to {f32}\n"
                    "%r0 = arith.mulf %x0, %sb : {f32}", scalars=["f32"])


@device_test
def test_launches_in_flight_keep_their_own_arguments():
    """Launches reuse one uniform buffer and cached bind groups: each of several launches
    queued without a wait still reads its own scalar, and a buffer made after another was
    freed (perhaps at the same id) is bound, not the freed one."""
    import wgpu

    device = wgsl.wgsl_device()
    n, usage = 256, wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    x = RNG.random(n, np.float32)
    bx = device.create_buffer_with_data(data=x, usage=usage)
    outs = [device.create_buffer(size=4 * n, usage=usage) for _ in range(5)]
    launch = compile_text(*SCALE)
    for k, out in enumerate(outs):
        launch((2, 1, 1), [bx, out, n, float(k + 1)])
    for k, out in enumerate(outs):
        np.testing.assert_array_equal(wgsl.read_buffer(out, np.float32), x * (k + 1))
    for k in range(3):
        data = RNG.random(n, np.float32)
        fresh = device.create_buffer_with_data(data=data, usage=usage)
        launch((2, 1, 1), [fresh, outs[0], n, 2.0])
        np.testing.assert_array_equal(wgsl.read_buffer(outs[0], np.float32), data * 2)
        del fresh


@device_test
def test_other_device_and_pipeline_cache():
    import wgpu

    from backends.wgsl import runtime

    other = runtime.adapter().request_device_sync()
    n = 100
    x = RNG.random(n, np.float32)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    bx, bo = (other.create_buffer_with_data(data=a, usage=usage) for a in (x, x * 0))
    launch = compile_text(*ADD)
    launch((1, 1, 1), [bx, bx, bo, n])  # runs on the buffers' device
    np.testing.assert_array_equal(np.frombuffer(other.queue.read_buffer(bo), np.float32), 2 * x)
    launch((1, 1, 1), [bx, bx, bo, n])
    assert len(runtime._PIPELINES[other]) == 1
    compile_text(*ADD)((1, 1, 1), [bx, bx, bo, n])  # a second launcher shares the pipeline
    assert len(runtime._PIPELINES[other]) == 1
    with pytest.raises(LaunchError, match="different devices"):
        launch((1, 1, 1), [bx, wgsl.wgsl_device().create_buffer(size=400, usage=usage), bo, n])


@device_test
def test_f16_kernel_needs_the_feature():
    import wgpu

    from backends.wgsl import runtime

    bare = runtime.adapter().request_device_sync()  # no shader-f16 requested
    buf = bare.create_buffer(size=64, usage=wgpu.BufferUsage.STORAGE)
    launch = compile_text(*elementwise(["f16"], ["f16"], "%r0 = arith.addf %x0, %x0 : {f16}"))
    with pytest.raises(UnsupportedError, match="shader-f16"):
        launch((1, 1, 1), [buf, buf, 4])


@device_test
def test_zero_size_arrays():
    launch = compile_text(*ADD)
    empty = np.zeros(0, np.float32)
    launch((1, 1, 1), [empty, empty, np.zeros(0, np.float32), 0])


@device_test
@pytest.mark.parametrize("args,match", [
    (lambda a: [a, a], "takes 4 arguments"),
    (lambda a: [a.astype(np.float64), a, a, 4], ("expected an array of float32, got a NumPy "
                                                    "array of float64")),
    (lambda a: [a[::-2], a, a, 4], "negative strides"),
    (lambda a: [list(a), a, a, 4], "got list"),
    (lambda a: [a, a, a, 2**31], "int 2147483648 does not fit int32"),
    (lambda a: [a, a, a, 1.5], "expected a scalar of type int32, got float 1.5"),
    (lambda a: [a, a, np.broadcast_to(a, a.shape), 4], "read-only"),
])
def test_launch_errors(args, match):
    with pytest.raises(LaunchError, match=match):
        compile_text(*ADD)((1, 1, 1), args(np.zeros(8, np.float32)))


@device_test
def test_buffer_without_storage_usage():
    import wgpu

    buf = wgsl.wgsl_device().create_buffer(size=32, usage=wgpu.BufferUsage.COPY_SRC)
    with pytest.raises(LaunchError, match="STORAGE"):
        compile_text(*ADD)((1, 1, 1), [buf, buf, buf, 8])


# ---------------------------------------------------------------- emission (no device)

HERE = __file__
LINE = inspect.currentframe().f_lineno  # the location the kernels below point at


def located(text: str) -> str:
    return text.replace("LOC", f'loc("{HERE}":{LINE}:5)')


@pytest.mark.parametrize("ir,dtype", [
    ("%c = arith.constant 1.0 : f64 LOC", "f64"),
    ("%c = arith.constant 1.0 : f8E4M3FN LOC", "f8E4M3FN"),  # lower-fp8 makes bytes of it
])
def test_unsupported_dtypes_name_the_line(ir, dtype):
    text = "func.func @bad() {\n" + located(ir) + "\nfunc.return\n}"
    with pytest.raises(UnsupportedError) as err:
        emit_wgsl(parse_module(text))
    msg = str(err.value)
    assert dtype in msg and "wgsl" in msg and f"{HERE}:{LINE}:5" in msg
    assert "the location the kernels" in msg  # the source line is shown


@pytest.mark.parametrize("param,dtype", [("!tile.ptr<f64>", "f64"), ("f64", "f64")])
def test_unsupported_params(param, dtype):
    text = located(f"func.func @bad(%p: {param}) {{\nfunc.return\n}} LOC")
    with pytest.raises(UnsupportedError, match=f"{dtype}.*wgsl") as err:
        emit_wgsl(parse_module(text))
    assert err.value.loc is not None and err.value.loc.line == LINE


def test_unsupported_op():
    text = located("func.func @bad(%a: i32) {\n%b = arith.floordivsi %a, %a : i32 LOC\n"
                   "func.return\n}")
    with pytest.raises(UnsupportedError, match="arith.floordivsi.*wgsl"):
        emit_wgsl(parse_module(text))


def test_emitted_text_and_facts():
    text, _ = elementwise(["f32", "f32"], ["f32"],
                          located("%m1 = arith.maximumf %x0, %x1 : {f32} LOC\n"
                                  "%r0 = arith.maximumf %m1, %x1 : {f32} LOC"), warps=2)
    src, facts = emit_wgsl(parse_module(text))
    assert f"// test_wgsl_backend.py:{LINE}: LINE = inspect" in src
    assert src.count("fn maximumf_v4f32") == 1 and src.count("fn isnan_v4f32") == 1
    assert "var<storage, read> in0_0: array<f32>" in src
    assert "var<storage, read_write> out0_2: array<f32>" in src
    assert "enable f16;" not in src and facts["features"] == []
    assert facts["workgroup_size"] == 64
    assert [p["kind"] for p in facts["params"]] == ["ptr", "ptr", "ptr", "scalar"]
    assert unpack_artifact(make_artifact(src, facts)) == (src, facts)


def test_f16_kernel_enables_f16():
    text, _ = elementwise(["f16"], ["f16"], "%r0 = arith.addf %x0, %x0 : {f16}")
    src, facts = emit_wgsl(parse_module(text))
    assert src.startswith("// tilec kernel ew") and "\nenable f16;\n" in src
    assert facts["features"] == ["shader-f16"]


def test_availability_describes_the_adapter():
    ok, why = wgsl.availability()
    assert isinstance(ok, bool) and why
    if ok:
        assert " on " in why


def test_half_functions_computed_in_f32():
    """f16 exp/log/sin... go through f32 (one rounding at the end), as on PTX: the f16
    builtins of some drivers are several ulps off."""
    text, _ = elementwise(["f16"], ["f16"], "%r0 = math.exp %x0 : {f16}")
    source, _ = emit_wgsl(parse_module(text))
    assert "vec4<f16>(exp(vec4<f32>(x" in source and "exp(x" not in source


@device_test
def test_a_launch_rewrites_the_arguments_only_when_they_change():
    """Launches of one pipeline share its uniform buffer of arguments, written only when
    they differ from the last launch's: each launch must still see its own ``n``."""
    import wgpu

    import compiler as tc
    from examples.vector_add import add
    device, usage = tc.wgsl_device(), wgpu.BufferUsage
    x = np.arange(1024, dtype=np.float32)
    bx = tc.wgsl_array(device.create_buffer_with_data(
        data=x, usage=usage.STORAGE | usage.COPY_SRC), np.float32, (1024,))
    out = device.create_buffer(size=4096, usage=usage.STORAGE | usage.COPY_SRC
                               | usage.COPY_DST)
    bo = tc.wgsl_array(out, np.float32, (1024,))
    for n in (1024, 1024, 100, 100, 1024, 7):
        device.queue.write_buffer(out, 0, np.zeros(1024, np.float32))
        add[(1,)](bx, bx, bo, n, BLOCK=1024, backend="wgsl")
        got = wgsl.read_buffer(out, np.float32)
        np.testing.assert_array_equal(got[:n], 2 * x[:n])
        assert not got[n:].any(), n


def test_non_finite_constants_are_not_constant_expressions():
    """WGSL has no literal for inf or NaN, and a constant expression that evaluates to
    one is an error in Chrome's compiler (Tint), though Naga folds it: such a constant is
    its bits or'ed with a zero the compiler cannot see, and still the value."""
    import compiler as tc
    import compiler.language as tl

    @tc.kernel
    def fill(out, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        v = tl.where(i % 3 == 0, float("-inf"), tl.where(i % 3 == 1, float("inf"),
                                                         float("nan")))
        tl.store(out + i, v)

    out = np.zeros(128, np.float32)
    text = tc.compile(fill, args=(out,), constants={"BLOCK": 128}, backend="wgsl").asm["wgsl"]
    for bits in ("ff800000", "7f800000"):
        assert f"bitcast<f32>(0x{bits}u | (args.grid_z >> 31u))" in text
    assert "bitcast<f32>(0xff800000u))" not in text
    if wgsl.availability()[0]:
        fill[(1,)](out, BLOCK=128, backend="wgsl")
        np.testing.assert_array_equal(out[0::3], -np.inf)
        np.testing.assert_array_equal(out[1::3], np.inf)
        assert np.isnan(out[2::3]).all()
