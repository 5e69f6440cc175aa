"""``tile.dot`` on the portable FMA path: the layouts assign-layouts picks, the size of
the SIMT IR tile-to-simt makes, its numbers in the SIMT simulator against ``np.matmul``,
and the WGSL (lavapipe) and PTX (nvJitLink, sm_90) pipelines on a hand-written kernel."""

from typing import ClassVar

import numpy as np
import pytest
from xdsl.dialects import math, scf, vector
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from compiler import pipeline
from compiler.context import make_context, parse_module
from compiler.kinfo import KernelInfo, Param
from compiler.passes.assign_layouts import AssignLayouts, dot_layout
from compiler.passes.layouts import elements_per_thread, num_threads
from compiler.passes.lower_dot import plan
from compiler.passes.tile_to_simt import TileToSimt
from dialects import simt, tile
from tests.simt_sim import _CMP, Program

IR = {np.float32: "f32", np.float16: "f16", np.int8: "i8", np.int32: "i32"}


def _offsets(name: str, rows: int, cols: int, stride: str) -> list[str]:
    """``%{name}`` = row * stride + col over a rows x cols tile (``stride`` an i32)."""
    t, t0, t1 = (f"tensor<{rows}x{cols}xi32>", f"tensor<1x{cols}xi32>",
                 f"tensor<{rows}x1xi32>")
    return [
        f"%{name}_r = tile.range 0, {rows} : tensor<{rows}xi32>",
        f"%{name}_c = tile.range 0, {cols} : tensor<{cols}xi32>",
        f"%{name}_re = tile.expand_dims %{name}_r, 1 : tensor<{rows}xi32> -> {t1}",
        f"%{name}_s = tile.splat {stride} : i32 -> tensor<{rows}x1xi32>",
        f"%{name}_rs = arith.muli %{name}_re, %{name}_s : tensor<{rows}x1xi32>",
        f"%{name}_ce = tile.expand_dims %{name}_c, 0 : tensor<{cols}xi32> -> {t0}",
        f"%{name}_rb = tile.broadcast %{name}_rs : tensor<{rows}x1xi32> -> {t}",
        f"%{name}_cb = tile.broadcast %{name}_ce : tensor<1x{cols}xi32> -> {t}",
        f"%{name} = arith.addi %{name}_rb, %{name}_cb : {t}",
    ]


def _access(ptr: str, offs: str, shape: str, elem: str, value: str | None = None) -> str:
    """A load (``value`` None: defines ``%{ptr}_v``) or store of a tile at ``offs``."""
    pt = f"tensor<{shape}x!tile.ptr<{elem}>>"
    head = [f"%{ptr}_s = tile.splat %{ptr} : !tile.ptr<{elem}> -> {pt}",
            f"%{ptr}_p = tile.addptr %{ptr}_s, %{offs} : {pt}, tensor<{shape}xi32>"]
    if value is None:
        head.append(f"%{ptr}_v = tile.load %{ptr}_p : {pt} -> tensor<{shape}x{elem}>")
    else:
        head.append(f"tile.store %{ptr}_p, {value} : {pt}, tensor<{shape}x{elem}>")
    return "\n".join(head)


def dot_kernel(m: int, n: int, k: int, ab: str = "f32", acc: str = "f32",
               precision: str = "ieee", load_acc: bool = False, aligned: bool = True) -> str:
    """``o = a @ b (+ c)``: row-major a (m x k), b (k x n), c and o (m x n); ``aligned``
    pointers allow 128-bit accesses."""
    args = [f"%a: !tile.ptr<{ab}>", f"%b: !tile.ptr<{ab}>", f"%o: !tile.ptr<{acc}>",
            *[f"%c: !tile.ptr<{acc}>"] * load_acc]
    if aligned:
        args = [f"{a} {{tile.divisibility = 16 : i32}}" for a in args]
    lines = [f"func.func @dot({', '.join(args)}) {{",
             f"%k = arith.constant {k} : i32", f"%n = arith.constant {n} : i32",
             *_offsets("ao", m, k, "%k"), *_offsets("bo", k, n, "%n"),
             *_offsets("oo", m, n, "%n"),
             _access("a", "ao", f"{m}x{k}", ab), _access("b", "bo", f"{k}x{n}", ab)]
    if load_acc:
        lines.append(_access("c", "oo", f"{m}x{n}", acc))
        init = "%c_v"
    else:
        zero = "0" if acc == "i32" else "0.0"
        lines += [f"%zero = arith.constant {zero} : {acc}",
                  f"%init = tile.splat %zero : {acc} -> tensor<{m}x{n}x{acc}>"]
        init = "%init"
    types = f"tensor<{m}x{k}x{ab}>, tensor<{k}x{n}x{ab}> -> tensor<{m}x{n}x{acc}>"
    lines += [f'%d = tile.dot %a_v, %b_v, {init} precision "{precision}" : {types}',
              _access("o", "oo", f"{m}x{n}", acc, "%d"), "func.return", "}"]
    return "\n".join(lines)


def run_passes(text: str, *passes) -> ModuleOp:
    module = parse_module(text)
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
        module.verify()
    return module


def lowered(text: str, num_warps: int) -> ModuleOp:
    return run_passes(text, AssignLayouts(num_warps), TileToSimt(), CanonicalizePass(),
                      CommonSubexpressionElimination())


class DotProgram(Program):
    """The simulator plus what the dot lowering emits beyond elementwise kernels."""

    def _cmp(self, op, a, b):
        if op.predicate.data == "ult":
            return a.astype(np.int64) % 2**32 < b.astype(np.int64) % 2**32
        return _CMP[op.predicate.data](a, b)

    def _fma(self, op, a, b, c):
        # exact product and sum in f64, one rounding to the result type after
        return a.astype(np.float64) * b + c

    HANDLERS: ClassVar = {**Program.HANDLERS, "tile.cmpi": _cmp, "math.fma": _fma,
                          "arith.extf": lambda self, op, a: a,
                          "arith.extsi": lambda self, op, a: a.astype(np.int64)}


def _operands(rng, m, n, k, dtype):
    if dtype == np.int8:
        return (rng.integers(-128, 128, (m, k)).astype(np.int8),
                rng.integers(-128, 128, (k, n)).astype(np.int8))
    return (rng.standard_normal((m, k)).astype(dtype),
            rng.standard_normal((k, n)).astype(dtype))


def round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 to 10 mantissa bits, to nearest with ties away from zero."""
    bits = x.astype(np.float32).view(np.int32)
    return ((bits + 0x1000) & -0x2000).view(np.float32)


def simulate(m, n, k, dtype, acc_dtype, num_warps, precision="ieee", load_acc=False,
             seed=0):
    rng = np.random.default_rng(seed)
    a, b = _operands(rng, m, n, k, dtype)
    c = rng.standard_normal((m, n)).astype(acc_dtype) if load_acc else None
    out = np.zeros((m, n), acc_dtype)
    text = dot_kernel(m, n, k, IR[dtype], IR[acc_dtype], precision, load_acc)
    arrays = {"a": a.ravel(), "b": b.ravel(), "o": out.reshape(-1)}
    if load_acc:
        arrays["c"] = c.ravel()
    DotProgram(lowered(text, num_warps), arrays, {}).run()
    return a, b, c, out


SHAPES = [(16, 16, 16), (32, 64, 16), (64, 32, 128), (16, 256, 32)]


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_f32(m, n, k, num_warps):
    a, b, _, out = simulate(m, n, k, np.float32, np.float32, num_warps)
    want = a.astype(np.float64) @ b
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def test_replicated_result_layout():
    """16 warps on a 16 x 16 product: threads hold copies (and store equal values)."""
    a, b, _, out = simulate(16, 16, 16, np.float32, np.float32, 16)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("num_warps", [2, 4])
def test_f16_into_f32(m, n, k, num_warps):
    a, b, _, out = simulate(m, n, k, np.float16, np.float32, num_warps)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.sqrt(k))


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("num_warps", [1, 4])
def test_i8_into_i32(m, n, k, num_warps):
    a, b, _, out = simulate(m, n, k, np.int8, np.int32, num_warps)
    np.testing.assert_array_equal(out, a.astype(np.int64) @ b.astype(np.int64))


def test_accumulator_from_memory_and_f16_accumulation():
    a, b, c, out = simulate(32, 16, 16, np.float16, np.float16, 4, load_acc=True)
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    np.testing.assert_allclose(out, want, rtol=2e-2, atol=5e-2)


def test_tf32_rounds_the_operands():
    a, b, _, out = simulate(32, 32, 64, np.float32, np.float32, 4, precision="tf32")
    want = round_tf32(a).astype(np.float64) @ round_tf32(b)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert np.abs(out - a.astype(np.float64) @ b).max() > 1e-3  # rounding happened


@pytest.mark.filterwarnings("ignore:invalid value")
def test_tf32_rounding_ties_away_and_keeps_nan():
    x = np.array([1 + 2**-11, -(1 + 2**-11), 1 + 2**-12, np.nan, np.inf], np.float32)
    want = np.array([1 + 2**-10, -(1 + 2**-10), 1, np.nan, np.inf], np.float32)
    a = np.zeros((16, 16), np.float32)
    a[:5, 0] = x
    b = np.zeros((16, 16), np.float32)
    b[0, 0] = 1  # column 0 of the product is x; the others multiply inf by 0
    text = dot_kernel(16, 16, 16, precision="tf32")
    out = np.zeros((16, 16), np.float32)
    DotProgram(lowered(text, 4), {"a": a.ravel(), "b": b.ravel(), "o": out.reshape(-1)},
               {}).run()
    np.testing.assert_array_equal(out[:5, 0], want)


# -- layouts and IR shape ----------------------------------------------------------------

def _dot(module: ModuleOp) -> tile.DotOp:
    return next(op for op in module.walk() if isinstance(op, tile.DotOp))


@pytest.mark.parametrize("m, n", [(16, 16), (32, 64), (64, 32), (16, 256), (128, 128)])
@pytest.mark.parametrize("num_warps", [1, 2, 4, 8, 16])
def test_dot_layout_covers_the_tile_in_2d_blocks(m, n, num_warps):
    layout = dot_layout((m, n), num_warps)
    share = max(1, m * n // num_threads(layout))
    assert elements_per_thread(layout, (m, n)) == share
    (sm, sn), (tm, tn) = layout.spt, layout.tpw
    assert sm * sn == share and sm <= sn <= 2 * sm  # a near-square block
    assert tn * sn <= 32 or tm * sm >= m  # a warp's B reads within 32 banks where possible


def test_acc_group_takes_the_dot_layout_and_operands_keep_theirs():
    module = run_passes(dot_kernel(32, 64, 32, load_acc=True), AssignLayouts(4))
    dot = _dot(module)
    want = dot_layout((32, 64), 4)
    assert dot.result.type.encoding == want and dot.acc.type.encoding == want
    assert dot.a.type.encoding != want  # a (32x32) is not tied to the result by its shape
    assert not any(isinstance(op, tile.ConvertLayoutOp) for op in module.walk())
    stores = [op for op in module.walk() if isinstance(op, tile.StoreOp)]
    assert stores[0].vec.value.data == 4  # the result's 4 columns per thread, one access


def test_accumulator_carried_by_a_loop_keeps_the_dot_layout():
    t = "tensor<16x16xf32>"
    text = f"""
func.func @loop(%a: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32) {{
  %k = arith.constant 16 : i32
  {chr(10).join(_offsets("ao", 16, 16, "%k") + _offsets("oo", 16, 16, "%k"))}
  {_access("a", "ao", "16x16", "f32")}
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> {t}
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> ({t}) : i32 {{
    %d = tile.dot %a_v, %a_v, %acc precision "ieee" : {t}, {t} -> {t}
    scf.yield %d : {t}
  }}
  {_access("o", "oo", "16x16", "f32", "%r")}
  func.return
}}"""
    module = run_passes(text, AssignLayouts(2))
    want = dot_layout((16, 16), 2)
    loop = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    assert loop.results[0].type.encoding == want
    assert _dot(module).a.type.encoding != want  # a 16x16 operand is not the acc
    lowered_module = run_passes(text, AssignLayouts(2), TileToSimt())
    a, out = np.arange(256, dtype=np.float32) / 256, np.zeros(256, np.float32)
    DotProgram(lowered_module, {"a": a, "o": out}, {"n": 3}).run()
    a2 = a.reshape(16, 16).astype(np.float64)
    np.testing.assert_allclose(out.reshape(16, 16), 3 * a2 @ a2, rtol=1e-5)


@pytest.mark.parametrize("m, n, k", [(16, 16, 16), (64, 64, 64), (64, 32, 128),
                                     (128, 128, 256)])
def test_simt_ir_does_not_grow_with_the_tile(m, n, k):
    module = lowered(dot_kernel(m, n, k), 4)
    assert sum(1 for _ in module.walk()) < 260
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    trips = k // plan(m, n, k).kc
    assert len(loops) == (1 if trips == 1 else 2)
    inner = loops[-1].body.block
    assert sum(1 for _ in inner.ops) <= 14
    assert sum(isinstance(op, math.FmaOp) for op in inner.ops) == 1
    assert sum(isinstance(op, simt.SharedLoadOp) for op in inner.ops) == 2
    assert sum(isinstance(op, vector.ShuffleOp) for op in inner.ops) <= 2
    assert all(not isinstance(t, TensorType) for op in module.walk() for t in op.result_types)


# -- backends ----------------------------------------------------------------------------

def _compile(text: str, backend: str, num_warps: int) -> pipeline.Compiled:
    return pipeline.run(parse_module(text), backend, num_warps)


def test_ptx_assembles_for_sm90():
    # 8- and 16-bit operands unaligned: simt-to-ptx has no ld.global of 8 or 16 lanes yet;
    # the dots tensor cores can do take mma.sync (tests/test_dot_mma.py), the rest FMAs
    for ab, acc, shape, inst in (("f32", "f32", (64, 32, 128), "fma.rn.f32"),
                                 ("f16", "f32", (32, 64, 16), "mma.sync"),
                                 ("i8", "i32", (16, 16, 32), "mul.lo.s32"),
                                 ("f32", "f32", (16, 256, 32), "mma.sync")):
        text = dot_kernel(*shape, ab, acc, precision="tf32" if shape[1] == 256 else "ieee",
                          aligned=ab == "f32")
        compiled = _compile(text, "ptx", 4)
        assert isinstance(compiled.artifact, bytes) and compiled.artifact
        assert inst in compiled.asm["ptx"]
        assert ("mma.sync" in compiled.asm["ptx"]) == (inst == "mma.sync")


def test_wgsl_end_to_end():
    from backends import wgsl

    ok, why = wgsl.availability()
    if not ok:
        pytest.skip(f"no WebGPU adapter: {why}")
    rng = np.random.default_rng(7)
    for (m, n, k), warps in (((32, 64, 16), 4), ((64, 32, 128), 2)):
        a, b = _operands(rng, m, n, k, np.float32)
        c = rng.standard_normal((m, n)).astype(np.float32)
        out = np.zeros((m, n), np.float32)
        compiled = _compile(dot_kernel(m, n, k, load_acc=True), "wgsl", warps)
        assert "fma(" in compiled.asm["wgsl"]
        params = [Param("a", "f32", True), Param("b", "f32", True),
                  Param("o", "f32", True, True), Param("c", "f32", True)]
        launch = wgsl.Launcher(compiled.artifact, KernelInfo("dot", params, "wgsl",
                                                             num_warps=warps))
        launch((1, 1, 1), [a.ravel(), b.ravel(), out.reshape(-1), c.ravel()])
        want = a.astype(np.float64) @ b + c
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.sqrt(k))
