"""The NumPy backend on hand-written tile IR: every op against an independent NumPy or
Python-integer reference, on random inputs whose sizes are not multiples of the block.

``python tests/test_numpy_backend.py`` prints the launch time of a 2^20-element vector add.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from backends.numpy import Launcher, availability, run
from backends.numpy import kernel as interp
from compiler.context import parse_module
from compiler.errors import LaunchError, OutOfBoundsError, UnsupportedError
from compiler.kinfo import KernelInfo, Param
from compiler.language import dtype_from_str

B = 64  # block size of the generated kernels
N = 300  # not a multiple of B: the last program masks lanes that would be out of bounds
IR = {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "i1": "i1", "i8": "i8",
      "i16": "i16", "i32": "i32", "i64": "i64", "u8": "i8", "u32": "i32"}


def np_dtype(dt: str) -> np.dtype:
    return dtype_from_str(dt).numpy


def tt(dt: str, b: int = B) -> str:
    return f"tensor<{b}x{IR[dt]}>"


def pt(dt: str, b: int = B) -> str:
    return f"tensor<{b}x!tile.ptr<{IR[dt]}>>"


def elementwise(ins: list[str], out: str, body: str, b: int = B, store: bool = True) -> str:
    """Tile IR of ``out[i] = body(x0[i], x1[i], ...)`` for ``i < n``; ``body`` reads
    ``%x0``... and defines ``%res``; masked-off lanes load ``other`` = 0. Without
    ``store`` the body does its own stores."""
    args = [f"%p{i}: !tile.ptr<{IR[d]}>" for i, d in enumerate(ins)]
    lines = [
        f"func.func @k({', '.join(args)}, %pout: !tile.ptr<{IR[out]}>, %n: i32) {{",
        "%pid = tile.program_id 0 : i32",
        f"%bs = arith.constant {b} : i32",
        "%start = arith.muli %pid, %bs : i32",
        f"%rng = tile.range 0, {b} : {tt('i32', b)}",
        f"%starts = tile.splat %start : i32 -> {tt('i32', b)}",
        f"%offs = arith.addi %starts, %rng : {tt('i32', b)}",
        f"%ns = tile.splat %n : i32 -> {tt('i32', b)}",
        f"%m = tile.cmpi \"slt\", %offs, %ns : {tt('i32', b)} -> {tt('i1', b)}",
    ]
    for i, d in enumerate(ins):
        lines += [
            f"%ps{i} = tile.splat %p{i} : !tile.ptr<{IR[d]}> -> {pt(d, b)}",
            f"%pp{i} = tile.addptr %ps{i}, %offs : {pt(d, b)}, {tt('i32', b)}",
            f"%x{i} = tile.load %pp{i} mask %m : {tt('i1', b)} : {pt(d, b)} -> {tt(d, b)}",
        ]
    lines += body.strip().splitlines()
    if store:
        lines += [f"%pos = tile.splat %pout : !tile.ptr<{IR[out]}> -> {pt(out, b)}",
                  f"%pop = tile.addptr %pos, %offs : {pt(out, b)}, {tt('i32', b)}",
                  f"tile.store %pop, %res mask %m : {tt('i1', b)} : {pt(out, b)}, {tt(out, b)}"]
    lines += ["func.return", "}"]
    return "\n".join(lines)


def info_for(ins: list[str], out: str) -> KernelInfo:
    params = [Param(f"x{i}", d, True) for i, d in enumerate(ins)]
    return KernelInfo("k", [*params, Param("out", out, True, True), Param("n", "i32", False)],
                      "numpy")


def launch(ins: list[str], out: str, body: str, arrays: list[np.ndarray],
           module=None) -> np.ndarray:
    """Run ``elementwise`` (through ``run`` when a parsed ``module`` is given)."""
    n = len(arrays[0])
    result = np.zeros(n, np_dtype(out))
    args, grid = [*arrays, result, n], (math.ceil(n / B), 1, 1)
    if module is None:
        Launcher(elementwise(ins, out, body), info_for(ins, out))(grid, args)
    else:
        run(module, info_for(ins, out), grid, args)
    return result


def random(dt: str, n: int = N, rng=None) -> np.ndarray:
    """Random values over the whole range of ``dt``, with the edge values mixed in."""
    rng = rng or np.random.default_rng(1)
    d = np_dtype(dt)
    if d == np.bool_:
        return rng.random(n) < 0.5
    if d.kind == "f":
        x = (rng.standard_normal(n) * 10).astype(d)
        x[rng.integers(0, n, 12)] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0] * 2
        return x
    info = np.iinfo(d)
    x = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    x[rng.integers(0, n, 10)] = [0, 1, info.max, info.min, info.max - 1] * 2
    if d.kind == "i":
        x[rng.integers(0, n, 4)] = -1
    return x


def same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal bit for bit, except any NaN equals any NaN."""
    assert got.dtype == want.dtype
    if got.dtype.kind == "f":
        nan = np.isnan(got) & np.isnan(want)
        ok = nan | ((got == want) & (np.signbit(got) == np.signbit(want)))
        assert ok.all(), f"first mismatch at {np.argmin(ok)}: {got[~ok][:5]} vs {want[~ok][:5]}"
    else:
        np.testing.assert_array_equal(got, want)


# -- integers -------------------------------------------------------------------------

def c_int_op(name: str, a: int, b: int, w: int) -> int:
    """C / LLVM semantics on w-bit patterns; the backend's choices for the undefined cases."""
    sa, sb = (x - (1 << w) if x >> (w - 1) else x for x in (a, b))
    ua, ub = a, b
    if name in ("divsi", "remsi"):
        if sb == 0:
            return -1 if name == "divsi" else sa
        q = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
        return q if name == "divsi" else sa - q * sb
    shifted = ub < w
    return {
        "addi": sa + sb, "subi": sa - sb, "muli": sa * sb,
        "divui": ua // ub if ub else -1, "remui": ua % ub if ub else ua,
        "andi": ua & ub, "ori": ua | ub, "xori": ua ^ ub,
        "shli": ua << ub if shifted else 0,
        "shrsi": sa >> ub if shifted else -(sa < 0),
        "shrui": ua >> ub if shifted else 0,
        "maxsi": max(sa, sb), "minsi": min(sa, sb), "maxui": max(ua, ub), "minui": min(ua, ub),
    }[name]


INT_OPS = ["addi", "subi", "muli", "divsi", "remsi", "divui", "remui", "andi", "ori", "xori",
           "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui"]


def int_operands(name: str, dt: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(INT_OPS.index(name))
    a, b = random(dt, rng=rng), random(dt, rng=rng)
    d = np_dtype(dt)
    w = d.itemsize * 8
    if name.startswith(("div", "rem")):
        b[::7] = 0  # division by zero is defined here
        b[::5] = rng.integers(-9 if d.kind == "i" else 1, 10, len(b[::5]))
        if d.kind == "i":
            a[3], b[3] = np.iinfo(d).min, -1  # overflows: wraps
    if name.startswith("sh"):
        b = rng.integers(-2, w + 3, len(a)).astype(d)  # includes over-wide and negative
    return a, b


@pytest.mark.parametrize("dt", ["i8", "i16", "i32", "i64", "u8", "u32"])
@pytest.mark.parametrize("name", INT_OPS)
def test_integer_binary(name, dt):
    a, b = int_operands(name, dt)
    got = launch([dt, dt], dt, f"%res = arith.{name} %x0, %x1 : {tt(dt)}", [a, b])
    d = np_dtype(dt)
    w = d.itemsize * 8
    bits = [c_int_op(name, int(x) % (1 << w), int(y) % (1 << w), w) % (1 << w)
            for x, y in zip(a, b, strict=True)]
    want = np.array(bits, np.uint64).astype(f"u{d.itemsize}").view(d)
    same(got, want)


def test_c_division_examples():
    a = np.array([7, -7, 7, -7, 5, -2**31, 0], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 0], np.int32)
    q = launch(["i32", "i32"], "i32", f"%res = arith.divsi %x0, %x1 : {tt('i32')}", [a, b])
    r = launch(["i32", "i32"], "i32", f"%res = arith.remsi %x0, %x1 : {tt('i32')}", [a, b])
    same(q, np.array([3, -3, -3, 3, -1, -2**31, -1], np.int32))
    same(r, np.array([1, -1, 1, -1, 5, 0, 0], np.int32))


def test_absi_wraps():
    a = random("i32")
    got = launch(["i32"], "i32", f"%res = math.absi %x0 : {tt('i32')}", [a])
    same(got, np.where(a < 0, -a, a))  # -INT_MIN wraps to INT_MIN in NumPy too


# -- floats ---------------------------------------------------------------------------

def ieee_max(a, b):
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) & np.signbit(b), a, np.abs(a)),
                    np.maximum(a, b))


def ieee_min(a, b):
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) | np.signbit(b), -np.abs(a), a),
                    np.minimum(a, b))


FLOAT_BINARY = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply,
                "divf": np.divide, "maximumf": ieee_max,
                "minimumf": ieee_min}


@pytest.mark.parametrize("dt", ["f16", "f32", "f64"])
@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_float_binary(name, dt):
    rng = np.random.default_rng(5)
    a, b = random(dt, rng=rng), random(dt, rng=rng)
    a[:8], b[:8] = [0.0, -0.0, 0.0, -0.0, np.nan, 1, np.nan, 3], [-0.0, 0.0, 0.0, -0.0, 1, np.nan,
                                                                  np.nan, 0]
    body = f"%res = arith.{name} %x0, %x1 : {tt(dt)}"
    got = launch([dt, dt], dt, body, [a, b])
    with np.errstate(all="ignore"):
        same(got, FLOAT_BINARY[name](a, b).astype(a.dtype))


MATH = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
        "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "absf": np.abs,
        "floor": np.floor, "ceil": np.ceil, "negf": np.negative}


@pytest.mark.parametrize("dt", ["f16", "f32"])
@pytest.mark.parametrize("name", MATH)
def test_float_unary(name, dt):
    a = random(dt)
    dialect = "arith" if name == "negf" else "math"
    got = launch([dt], dt, f"%res = {dialect}.{name} %x0 : {tt(dt)}", [a])
    with np.errstate(all="ignore"):
        same(got, MATH[name](a).astype(a.dtype))


def test_powf():
    rng = np.random.default_rng(3)
    a, b = np.abs(random("f32", rng=rng)), rng.uniform(-3, 3, N).astype(np.float32)
    got = launch(["f32", "f32"], "f32", f"%res = math.powf %x0, %x1 : {tt('f32')}", [a, b])
    with np.errstate(all="ignore"):
        same(got, np.power(a, b))


def test_fma_rounds_once():
    # a * b + c = 1 + 2^-24 + 2^-70 exactly: the f32 answer is 1 + 2^-23, but rounding the
    # sum to f64 first lands on the tie 1 + 2^-24, which rounds (to even) down to 1.
    a = np.full(N, -(1 + 2.0**-23) * 2.0**-12, np.float32)
    b = np.full(N, (1 - 2.0**-23) * 2.0**-12, np.float32)
    c = np.full(N, 1 + 2.0**-23, np.float32)
    body = f"%res = math.fma %x0, %x1, %x2 : {tt('f32')}"
    got = launch(["f32"] * 3, "f32", body, [a, b, c])
    assert np.float32(np.float64(a[0]) * b[0] + c[0]) == 1.0  # the double-rounded answer
    same(got, np.full(N, 1 + 2.0**-23, np.float32))
    rng = np.random.default_rng(4)
    x, y, z = (rng.standard_normal(N).astype(np.float32) for _ in range(3))
    got = launch(["f32"] * 3, "f32", body, [x, y, z])
    np.testing.assert_allclose(got, np.float64(x) * y + z, rtol=2**-24)


# -- comparisons and select -------------------------------------------------------------

CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
        "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}


@pytest.mark.parametrize("dt", ["i8", "i32", "i64"])
@pytest.mark.parametrize("pred", CMPI)
def test_cmpi(pred, dt):
    rng = np.random.default_rng(6)
    a, b = random(dt, rng=rng), random(dt, rng=rng)
    b[::3] = a[::3]
    body = f"%res = tile.cmpi \"{pred}\", %x0, %x1 : {tt(dt)} -> {tt('i1')}"
    got = launch([dt, dt], "i1", body, [a, b])
    if pred[0] == "u":
        a, b = a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")
    want = np.array([eval(f"{int(x)} {CMPI[pred]} {int(y)}") for x, y in zip(a, b, strict=True)])
    same(got, want)


def cmpf_reference(pred: str, x: float, y: float) -> bool:
    unordered = math.isnan(x) or math.isnan(y)
    if pred in ("ord", "uno"):
        return unordered == (pred == "uno")
    rel = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
           "ge": x >= y}[pred[1:]]
    return (not unordered and rel) if pred[0] == "o" else (unordered or rel)


@pytest.mark.parametrize("pred", ["oeq", "one", "olt", "ole", "ogt", "oge", "ord", "ueq",
                                  "une", "ult", "ule", "ugt", "uge", "uno"])
def test_cmpf(pred):
    rng = np.random.default_rng(7)
    a, b = random("f32", rng=rng), random("f32", rng=rng)
    b[::3] = a[::3]
    body = f"%res = tile.cmpf \"{pred}\", %x0, %x1 : {tt('f32')} -> {tt('i1')}"
    got = launch(["f32", "f32"], "i1", body, [a, b])
    want = [cmpf_reference(pred, float(x), float(y)) for x, y in zip(a, b, strict=True)]
    same(got, np.array(want))


def test_select():
    rng = np.random.default_rng(8)
    a, b = random("f32", rng=rng), random("f32", rng=rng)
    body = (f"%c = tile.cmpf \"olt\", %x0, %x1 : {tt('f32')} -> {tt('i1')}\n"
            f"%res = tile.select %c, %x0, %x1 : {tt('i1')}, {tt('f32')}")
    same(launch(["f32", "f32"], "f32", body, [a, b]), np.where(a < b, a, b))


# -- casts ----------------------------------------------------------------------------

def saturate(x: np.ndarray, dt: str) -> np.ndarray:
    info = np.iinfo(np_dtype(dt))
    out = [0 if math.isnan(v) else int(min(max(math.trunc(v) if math.isfinite(v) else v,
                                               info.min), info.max)) for v in x.tolist()]
    return np.array(out, np_dtype(dt))


CASTS = [  # (op, source, destination, reference)
    ("sitofp", "i32", "f32", lambda a: a.astype(np.float32)),
    ("sitofp", "i8", "f16", lambda a: a.astype(np.float16)),
    ("sitofp", "i64", "f64", lambda a: a.astype(np.float64)),
    ("sitofp", "i1", "f32", lambda a: np.where(a, -1, 0).astype(np.float32)),  # true is -1
    ("uitofp", "u32", "f32", lambda a: a.astype(np.float32)),
    ("uitofp", "u8", "f16", lambda a: a.astype(np.float16)),
    ("fptosi", "f32", "i32", lambda a: saturate(a, "i32")),
    ("fptosi", "f16", "i8", lambda a: saturate(a, "i8")),
    ("fptosi", "f64", "i64", lambda a: saturate(a, "i64")),
    ("fptoui", "f32", "u32", lambda a: saturate(a, "u32")),
    ("fptoui", "f64", "u8", lambda a: saturate(a, "u8")),
    ("extf", "f16", "f32", lambda a: a.astype(np.float32)),
    ("truncf", "f32", "f16", lambda a: a.astype(np.float16)),
    ("truncf", "f64", "f32", lambda a: a.astype(np.float32)),
    ("extsi", "i8", "i32", lambda a: a.astype(np.int32)),
    ("extsi", "i1", "i32", lambda a: -a.astype(np.int32)),
    ("extui", "u8", "u32", lambda a: a.astype(np.uint32)),
    ("extui", "i8", "i64", lambda a: a.view(np.uint8).astype(np.int64)),
    ("extui", "i1", "i32", lambda a: a.astype(np.int32)),
    ("trunci", "i64", "i8", lambda a: a.astype(np.int8)),
    ("trunci", "i32", "i1", lambda a: (a & 1).astype(bool)),
    ("bitcast", "f32", "i32", lambda a: a.view(np.int32)),
    ("bitcast", "i16", "f16", lambda a: a.view(np.float16)),
]


@pytest.mark.parametrize(("name", "src", "dst", "reference"), CASTS,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in CASTS])
def test_cast(name, src, dst, reference):
    a = random(src)
    if np_dtype(src).kind == "f":
        with np.errstate(over="ignore"):  # 1e10 is inf in f16
            a[:6] = np.array([2.7, -2.7, 1e10, -1e10, 255.9, -0.9]).astype(a.dtype)
        if src == "f64":
            a[6:9] = [2.0**63, -(2.0**63), 2.0**63 - 1024]
    body = f"%res = arith.{name} %x0 : {tt(src)} to {tt(dst)}"
    with np.errstate(all="ignore"):
        same(launch([src], dst, body, [a]), reference(a))


# -- f16, constants, scalars, grids -----------------------------------------------------

def test_f16_arithmetic_with_scalar():
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal(N).astype(np.float16) for _ in range(2))
    text = elementwise(["f16", "f16"], "f16", f"""
        %alphas = tile.splat %alpha : f16 -> {tt('f16')}
        %t = arith.mulf %x0, %alphas : {tt('f16')}
        %res = arith.addf %t, %x1 : {tt('f16')}""").replace(
        "%n: i32)", "%n: i32, %alpha: f16)")
    info = info_for(["f16", "f16"], "f16")
    info.params.append(Param("alpha", "f16", False))
    out = np.zeros(N, np.float16)
    Launcher(text, info)((math.ceil(N / B), 1, 1), [a, b, out, N, 0.3])
    same(out, a * np.float16(0.3) + b)  # every step rounded to f16


def test_vector_add_mask_and_other():
    rng = np.random.default_rng(10)
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    # Load with other = 2.5 and store unmasked into a padded output: the tail shows other.
    text = elementwise(["f32", "f32"], "f32", f"""
        %five = arith.constant dense<2.5> : {tt('f32')}
        %y = tile.load %pp1 mask %m : {tt('i1')} other %five : {pt('f32')} -> {tt('f32')}
        %res = arith.addf %x0, %y : {tt('f32')}""").replace(
        f"tile.store %pop, %res mask %m : {tt('i1')} :", "tile.store %pop, %res :")
    grid = math.ceil(N / B)
    out = np.full(grid * B, -1.0, np.float32)
    Launcher(text, info_for(["f32", "f32"], "f32"))((grid, 1, 1), [x, y, out, N])
    same(out[:N], x + y)
    same(out[N:], np.full(grid * B - N, 2.5, np.float32))  # other + masked x (0)


def test_dense_constants():
    values = np.arange(B, dtype=np.int32) * 3 - 50
    a = random("i32")
    body = (f"%k = arith.constant dense<[{', '.join(map(str, values))}]> : {tt('i32')}\n"
            f"%one = arith.constant dense<1> : {tt('i32')}\n"
            f"%t = arith.addi %x0, %k : {tt('i32')}\n"
            f"%res = arith.subi %t, %one : {tt('i32')}")
    got = launch(["i32"], "i32", body, [a])
    same(got, a + np.resize(values, N) - 1)


SCALAR_KERNEL = """
func.func @k(%out: !tile.ptr<i32>, %v: i32) {
  %x = tile.program_id 0 : i32
  %y = tile.program_id 1 : i32
  %z = tile.program_id 2 : i32
  %gx = tile.num_programs 0 : i32
  %gy = tile.num_programs 1 : i32
  %gz = tile.num_programs 2 : i32
  %t0 = arith.muli %z, %gy : i32
  %t1 = arith.addi %t0, %y : i32
  %t2 = arith.muli %t1, %gx : i32
  %p = arith.addi %t2, %x : i32
  %c100 = arith.constant 100 : i32
  %c10 = arith.constant 10 : i32
  %t3 = arith.muli %z, %c100 : i32
  %t4 = arith.muli %y, %c10 : i32
  %t5 = arith.addi %t3, %t4 : i32
  %code = arith.addi %t5, %x : i32
  %on = arith.constant true
  %g = arith.muli %gx, %gy : i32
  %gxyz = arith.muli %g, %gz : i32
  %w = arith.addi %code, %v : i32
  %sel = tile.select %on, %w, %gxyz : i1, i32
  %q = tile.addptr %out, %p : !tile.ptr<i32>, i32
  tile.store %q, %sel : !tile.ptr<i32>, i32
  func.return
}
"""
SCALAR_INFO = KernelInfo("k", [Param("out", "i32", True, True), Param("v", "i32", False)],
                         "numpy")


@pytest.mark.parametrize("serial", [False, True])
def test_3d_grid_program_ids(serial):
    gx, gy, gz = 3, 5, 2
    out = np.zeros(gx * gy * gz, np.int32)
    run(parse_module(SCALAR_KERNEL), SCALAR_INFO, (gx, gy, gz), [out, np.int32(1000)],
        serial=serial)
    z, y, x = np.unravel_index(np.arange(out.size), (gz, gy, gx))
    same(out, (1000 + 100 * z + 10 * y + x).astype(np.int32))


def test_2d_grid_matrix_add():
    rows, cols, b = 7, 100, 32
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((rows, cols)), rng.standard_normal((rows, cols))
    text = f"""func.func @k(%x: !tile.ptr<f64>, %y: !tile.ptr<f64>, %o: !tile.ptr<f64>,
                            %ncols: i32) {{
      %col_block = tile.program_id 0 : i32
      %row = tile.program_id 1 : i32
      %bs = arith.constant {b} : i32
      %c0 = arith.muli %col_block, %bs : i32
      %rng = tile.range 0, {b} : {tt('i32', b)}
      %c0s = tile.splat %c0 : i32 -> {tt('i32', b)}
      %cols = arith.addi %c0s, %rng : {tt('i32', b)}
      %ns = tile.splat %ncols : i32 -> {tt('i32', b)}
      %m = tile.cmpi "slt", %cols, %ns : {tt('i32', b)} -> {tt('i1', b)}
      %r0 = arith.muli %row, %ncols : i32
      %xr = tile.addptr %x, %r0 : !tile.ptr<f64>, i32
      %yr = tile.addptr %y, %r0 : !tile.ptr<f64>, i32
      %or = tile.addptr %o, %r0 : !tile.ptr<f64>, i32
      %xs = tile.splat %xr : !tile.ptr<f64> -> {pt('f64', b)}
      %ys = tile.splat %yr : !tile.ptr<f64> -> {pt('f64', b)}
      %os = tile.splat %or : !tile.ptr<f64> -> {pt('f64', b)}
      %xp = tile.addptr %xs, %cols : {pt('f64', b)}, {tt('i32', b)}
      %yp = tile.addptr %ys, %cols : {pt('f64', b)}, {tt('i32', b)}
      %op = tile.addptr %os, %cols : {pt('f64', b)}, {tt('i32', b)}
      %a = tile.load %xp mask %m : {tt('i1', b)} : {pt('f64', b)} -> {tt('f64', b)}
      %c = tile.load %yp mask %m : {tt('i1', b)} : {pt('f64', b)} -> {tt('f64', b)}
      %s = arith.addf %a, %c : {tt('f64', b)}
      tile.store %op, %s mask %m : {tt('i1', b)} : {pt('f64', b)}, {tt('f64', b)}
      func.return
    }}"""
    info = KernelInfo("k", [Param("x", "f64", True), Param("y", "f64", True),
                            Param("o", "f64", True, True), Param("ncols", "i32", False)], "numpy")
    out = np.zeros((rows, cols))
    Launcher(text, info)((math.ceil(cols / b), rows, 1), [x, y, out, cols])
    same(out, x + y)


def test_batches_and_serial_agree(monkeypatch):
    a, b = random("i32"), random("i32")
    want = launch(["i32", "i32"], "i32", f"%res = arith.muli %x0, %x1 : {tt('i32')}", [a, b])
    monkeypatch.setattr(interp, "_BATCH_ELEMENTS", 2 * B)  # 2 programs per batch
    same(launch(["i32", "i32"], "i32", f"%res = arith.muli %x0, %x1 : {tt('i32')}", [a, b]),
         want)
    module = parse_module(elementwise(["i32", "i32"], "i32",
                                      f"%res = arith.muli %x0, %x1 : {tt('i32')}"))
    out = np.zeros(N, np.int32)
    run(module, info_for(["i32", "i32"], "i32"), (math.ceil(N / B),), [a, b, out, N], serial=True)
    same(out, want)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("serial", [False, True])
def test_overlapping_stores_later_program_wins(serial, masked):
    mask = " mask %m : tensor<4xi1>" if masked else ""
    text = f"""func.func @k(%out: !tile.ptr<i32>, %v: i32) {{
      %pid = tile.program_id 0 : i32
      %r = tile.range 0, 4 : tensor<4xi32>
      %three = arith.constant dense<3> : tensor<4xi32>
      %m = tile.cmpi "slt", %r, %three : tensor<4xi32> -> tensor<4xi1>
      %ps = tile.splat %out : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
      %p = tile.addptr %ps, %r : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
      %pids = tile.splat %pid : i32 -> tensor<4xi32>
      tile.store %p, %pids{mask} : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
      func.return
    }}"""
    out = np.full(4, -1, np.int32)
    run(parse_module(text), SCALAR_INFO, (37, 1, 1), [out, 0], serial=serial)
    same(out, np.array([36, 36, 36, -1 if masked else 36], np.int32))


def test_writes_user_arrays_in_place():
    out = np.zeros(4, np.int32)
    buf = out
    Launcher(SCALAR_KERNEL, SCALAR_INFO)((4,), [out, 7])
    assert buf is out and list(out) == [7, 8, 9, 10]
    fortran = np.zeros((2, 2), np.int32, order="F")
    Launcher(SCALAR_KERNEL, SCALAR_INFO)((4,), [fortran, 0])
    assert fortran.ravel(order="F").tolist() == [0, 1, 2, 3]  # memory order


# -- errors ---------------------------------------------------------------------------

def test_out_of_bounds_load(tmp_path):
    src = tmp_path / "kern.py"
    src.write_text("def k(x):\n    a = tl.load(x + offs)\n")
    body = f"%res = arith.addf %x0, %x0 : {tt('f32')}"
    text = elementwise(["f32"], "f32", body).replace(
        f"%x0 = tile.load %pp0 mask %m : {tt('i1')} : {pt('f32')} -> {tt('f32')}",
        f"%x0 = tile.load %pp0 : {pt('f32')} -> {tt('f32')} loc(\"{src}\":2:9)")
    x, out = np.zeros(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(OutOfBoundsError) as e:
        Launcher(text, info_for(["f32"], "f32"))((2, 1, 1), [x, out, 100])
    msg = str(e.value)
    assert "program (1, 0, 0)" in msg and "x0[100]" in msg and "length 100" in msg
    assert (e.value.loc.file, e.value.loc.line, e.value.loc.col) == (str(src), 2, 9)
    assert "a = tl.load(x + offs)" in msg and msg.rstrip().endswith("^")
    with pytest.raises(OutOfBoundsError) as serial:
        run(parse_module(text), info_for(["f32"], "f32"), (2, 1, 1), [x, out, 100], serial=True)
    assert str(serial.value) == msg


def test_out_of_bounds_store_negative_offset():
    text = elementwise(["f32"], "f32", f"""
        %five = arith.constant dense<5> : {tt('i32')}
        %back = arith.subi %offs, %five : {tt('i32')}
        %pos = tile.splat %pout : !tile.ptr<f32> -> {pt('f32')}
        %pop = tile.addptr %pos, %back : {pt('f32')}, {tt('i32')}
        tile.store %pop, %x0 : {pt('f32')}, {tt('f32')}""", store=False)
    with pytest.raises(OutOfBoundsError, match=r"store of out\[-5\] .* program \(0, 0, 0\)"):
        Launcher(text, info_for(["f32"], "f32"))((3,), [np.ones(N, np.float32),
                                                        np.zeros(N, np.float32), N])


LAUNCH_ERRORS = [
    ([[1.0, 2.0], np.zeros(2, np.float32), 2], "NumPy arrays, got list"),
    ([np.zeros(2), np.zeros(2, np.float32), 2],
     "expected an array of float32, got a NumPy array of float64 with shape \\(2,\\)"),
    ([np.zeros(4, np.float32)[::-2], np.zeros(2, np.float32), 2], "negative strides"),
    ([np.zeros(2, np.float32), np.zeros(2, np.float32), 2**31], "int 2147483648 does not fit int32"),
    ([np.zeros(2, np.float32), np.zeros(2, np.float32), 2.0],
     "expected a scalar of type int32, got float 2.0"),
    ([np.zeros(2, np.float32), np.zeros(2, np.float32)], "takes 3 arguments, got 2"),
]


@pytest.mark.parametrize(("args", "message"), LAUNCH_ERRORS)
def test_launch_errors(args, message):
    launcher = Launcher(elementwise(["f32"], "f32", "%res = arith.addf %x0, %x0 : "
                                    + tt("f32")), info_for(["f32"], "f32"))
    with pytest.raises(LaunchError, match=message):
        launcher((1, 1, 1), args)


def test_read_only_output_and_bad_grid():
    launcher = Launcher(SCALAR_KERNEL, SCALAR_INFO)
    out = np.zeros(2, np.int32)
    with pytest.raises(LaunchError, match="positive"):
        launcher((0, 1, 1), [out, 1])
    out.flags.writeable = False
    with pytest.raises(LaunchError, match="read-only"):
        launcher((1, 1, 1), [out, 1])


def test_device_array_is_rejected():
    class GPUBuffer:  # stands in for wgpu.GPUBuffer / a CUDA tensor
        pass

    with pytest.raises(LaunchError, match="got .*GPUBuffer"):
        Launcher(SCALAR_KERNEL, SCALAR_INFO)((1,), [GPUBuffer(), 1])


def test_unsupported_op_names_op_and_backend():
    body = f"%res = math.ipowi %x0, %x0 : {tt('i32')}"
    with pytest.raises(UnsupportedError, match="math.ipowi is not supported by the numpy"):
        Launcher(elementwise(["i32"], "i32", body), info_for(["i32"], "i32"))


def test_bfloat16():
    info = info_for(["bf16"], "bf16")
    text = elementwise(["bf16"], "bf16", f"%res = arith.addf %x0, %x0 : {tt('bf16')}")
    try:
        import ml_dtypes
    except ImportError:
        with pytest.raises(UnsupportedError, match="bf16 .*numpy backend"):
            Launcher(text, info)
        return
    a = np.arange(N).astype(ml_dtypes.bfloat16)
    out = np.zeros(N, ml_dtypes.bfloat16)
    Launcher(text, info)((math.ceil(N / B),), [a, out, N])
    np.testing.assert_array_equal(out.astype(np.float32), (a + a).astype(np.float32))


def test_unsigned_scalar_param():
    info = KernelInfo("k", [Param("out", "u32", True, True), Param("v", "u32", False)], "numpy")
    out = np.zeros(2, np.uint32)
    Launcher(SCALAR_KERNEL, info)((2,), [out, 2**32 - 2])
    same(out, np.array([2**32 - 2, 2**32 - 1], np.uint32))


def test_availability():
    ok, why = availability()
    assert ok and why == f"NumPy {np.__version__}"


# -- timing (a printout, not a test) --------------------------------------------------

def vector_add_ms(n: int = 1 << 20, block: int = 1024, repeats: int = 20) -> float:
    """Median milliseconds per launch of a masked vector add, after a first launch."""
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    text = elementwise(["f32", "f32"], "f32", f"%res = arith.addf %x0, %x1 : {tt('f32', block)}",
                       b=block)
    launcher = Launcher(text, info_for(["f32", "f32"], "f32"))
    args, grid = [x, y, out, n], (math.ceil(n / block), 1, 1)
    launcher(grid, args)
    assert np.array_equal(out, x + y)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        launcher(grid, args)
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e3


if __name__ == "__main__":
    print(f"numpy backend, vector add of 2^20 f32, BLOCK=1024 (grid 1024): "
          f"{vector_add_ms():.1f} ms per launch (median of 20, after the first)")
