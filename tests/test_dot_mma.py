"""``tile.dot`` on tensor cores: the ``#tile.mma`` layouts assign-layouts picks per operand
type and target, the SIMT IR tile-to-simt makes (``simt.ldmatrix`` + ``simt.mma`` in one
``scf.for`` over k), whole lowered kernels in the SIMT simulator (with ``tests/test_mma.py``'s
fragment model for ldmatrix and mma, and cp.async copies that land at their wait) against
``np.matmul``, and ``mma.sync`` and ``cp.async`` in the PTX of ``examples.matmul`` for sm_80
and sm_90."""

from typing import ClassVar

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

import compiler as tc
from compiler import pipeline
from compiler.context import parse_module
from compiler.passes.assign_layouts import AssignLayouts, dot_layout, mma_warps
from compiler.passes.lower_mma_dot import Geometry
from compiler.passes.tile_to_simt import TileToSimt
from dialects import simt, tile
from dialects.tile import MmaLayoutAttr, element_type
from examples import attention
from examples import matmul as example
from tests.test_dot import one_block
from tests.test_dot_lowering import DotProgram, dot_kernel, round_tf32, run_passes
from tests.test_mma import ldmatrix, mma

MMA = 80  # what backends/ptx/target.py asks of assign-layouts


def lowered(text: str, num_warps: int, mma_version: int = MMA):
    return run_passes(text, AssignLayouts(num_warps, mma=mma_version), TileToSimt(),
                      CanonicalizePass(), CommonSubexpressionElimination())


def _bits(t) -> int:
    return element_type(t).bitwidth


class MmaProgram(DotProgram):
    """The simulator plus warp-level ``simt.ldmatrix``/``simt.mma`` (the fragment model);
    it also checks that every ldmatrix row is 16-byte aligned and that the 8 rows of each
    matrix fall in 8 different groups of 4 banks (no bank conflicts)."""

    def _ldmatrix(self, op, buf, offset):
        bits, count = _bits(op.result.type), op.count
        offsets = np.broadcast_to(offset, (self.threads, 1))[:, 0].astype(np.int64)
        row = np.arange(128 // bits)  # a row of a matrix: 16 bytes from its thread's address
        addressing = (np.arange(self.threads) % 32) < 8 * count
        self.reads(op.buffer, (offsets[addressing, None] + row).ravel())
        chunks = offsets * bits // 128
        assert (offsets * bits % 128 == 0).all(), "ldmatrix rows must be 16-byte aligned"
        for warp in range(self.threads // 32):
            for i in range(count):
                rows = chunks[32 * warp + 8 * i:32 * warp + 8 * i + 8]
                assert len(set(rows % 8)) == 8, f"bank conflict: rows at chunks {rows}"
        trans = op.trans is not None
        return np.concatenate([np.array(ldmatrix(buf, offsets[w:w + 32].tolist(), count, bits,
                                                 trans), np.float64)
                               for w in range(0, self.threads, 32)])

    def _mma(self, op, a, b, c):
        k = int(op.shape.data.split("k")[1])
        bits = _bits(op.a.type)
        if isinstance(element_type(op.a.type), Float32Type):  # cvt.rna.tf32.f32
            a, b = round_tf32(a), round_tf32(b)
        a, b, c = (np.broadcast_to(x, (self.threads, x.shape[1])).astype(np.float64)
                   for x in (a, b, c))
        return np.concatenate([np.array(mma(k, bits, *(x[w:w + 32].tolist() for x in (a, b, c))))
                               for w in range(0, self.threads, 32)])

    def _cp_async(self, op, buf, index, base, src, *rest):
        """Reads global memory now; writes shared memory when a wait completes its group
        (so a stage read too early holds stale values)."""
        mask = self._check_access(op, base, src, self.mask(op))
        self._check_access(op, buf, index, mask)
        value = np.where(mask, base[np.where(mask, src, 0)], 0)
        self.__dict__.setdefault("copying", []).append((op.buffer, buf, index, value))

    def _commit(self, op):
        self.__dict__.setdefault("groups", []).append(self.__dict__.pop("copying", []))

    def _wait(self, op):
        groups = self.__dict__.get("groups", [])
        keep = op.pending.value.data
        done = groups[:max(0, len(groups) - keep)]
        self.groups = groups[len(done):]
        for buffer, buf, index, value in (c for group in done for c in group):
            index = np.broadcast_to(index, value.shape)
            self.writes(buffer, index.ravel())
            buf[index] = value

    HANDLERS: ClassVar = {**DotProgram.HANDLERS, "simt.ldmatrix": _ldmatrix,
                          "simt.mma": _mma, "arith.truncf": lambda self, op, a: a,
                          "math.exp": lambda self, op, a: np.exp(a),
                          "simt.cp_async": _cp_async, "simt.cp_async_commit": _commit,
                          "simt.cp_async_wait": _wait}


# -- layouts -------------------------------------------------------------------------------

def _layout(ab: str, acc: str, precision: str = "ieee", shape=(64, 64, 32), num_warps=4,
            mma_version=MMA):
    module = run_passes(dot_kernel(*shape, ab, acc, precision),
                        AssignLayouts(num_warps, mma=mma_version))
    return next(op for op in module.walk() if isinstance(op, tile.DotOp)).result.type.encoding


@pytest.mark.parametrize("ab, acc, precision", [
    ("f16", "f32", "ieee"), ("f16", "f16", "ieee"), ("bf16", "f32", "ieee"),
    ("f32", "f32", "tf32"), ("f32", "f32", "tf32x3"), ("i8", "i32", "ieee")])
def test_tensor_core_dots_take_the_mma_layout(ab, acc, precision):
    assert _layout(ab, acc, precision) == MmaLayoutAttr(2, (2, 2))
    assert _layout(ab, acc, precision, mma_version=0) == dot_layout((64, 64), 4)


@pytest.mark.parametrize("ab, acc, precision, shape, num_warps", [
    ("f32", "f32", "ieee", (64, 64, 32), 4),  # exact f32 products: FMAs
    ("f16", "f32", "ieee", (16, 16, 16), 4),  # two m16n8 tiles for four warps
    ("i8", "i32", "ieee", (64, 64, 16), 4),  # K below the mma's 32
    ("f16", "f32", "ieee", (256, 256, 128), 4),  # 128 KiB of operands: FMAs chunk them
])
def test_other_dots_keep_the_fma_layout(ab, acc, precision, shape, num_warps):
    assert _layout(ab, acc, precision, shape, num_warps) == dot_layout(shape[:2], num_warps)


@pytest.mark.parametrize("m, n, num_warps, want", [
    (64, 64, 4, (2, 2)), (128, 128, 4, (2, 2)), (128, 64, 4, (2, 2)), (128, 32, 4, (4, 1)), (16, 64, 4, (1, 4)),
    (64, 16, 8, (4, 2)), (32, 32, 1, (1, 1)), (128, 256, 8, (2, 4)), (16, 8, 2, None)])
def test_warps_balance_the_per_warp_tile_m_first(m, n, num_warps, want):
    assert mma_warps(m, n, num_warps) == want


def test_ptx_pipeline_picks_mma_and_wgsl_does_not():
    args = {"signature": "*f16,*f16,*f32", "constants": {"M": 64, "N": 64, "K": 32}}
    ptx = dict(tc.compile(one_block, backend="ptx", **args).stages)
    assert "#tile.mma<version = 2, warps = [2, 2]>" in ptx["assign-layouts"]
    assert any(p.startswith("assign-layouts{vector-bits=32 mma=0 ")
               for p in pipeline.passes("wgsl"))


# -- the SIMT IR ---------------------------------------------------------------------------

@pytest.mark.parametrize("m, n, k, num_warps", [(64, 64, 32, 4), (128, 128, 64, 4),
                                                (128, 128, 32, 8)])
def test_simt_ir_is_a_warp_tile_per_k_step_in_line(m, n, k, num_warps):
    module = lowered(dot_kernel(m, n, k, "f16", "f32"), num_warps)
    # (the store after it may loop: its conversion to a coalesced layout takes trips)
    assert not any(isinstance(op, scf.ForOp) and any(isinstance(o, simt.MmaOp) for o in op.walk())
                   for op in module.walk())
    wm, wn = mma_warps(m, n, num_warps)
    g = Geometry(m, n, k, 16, wm, wn)
    ops = list(module.walk())
    count = {cls: sum(isinstance(op, cls) for op in ops) for cls in (simt.MmaOp, simt.LdMatrixOp)}
    steps = k // g.mk
    assert count[simt.MmaOp] == g.rows * g.cols * steps
    assert count[simt.LdMatrixOp] == (g.rows + g.cols // 2) * steps  # B: two n8 tiles per x4
    assert all(not isinstance(t, TensorType) for op in module.walk() for t in op.result_types)


def test_simt_ir_of_a_long_k_is_one_loop_of_a_warp_tile():
    m, n, k, num_warps = 64, 64, 256, 4  # 16 k steps
    module = lowered(dot_kernel(m, n, k, "f16", "f32"), num_warps)
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert len(loops) == 1
    wm, wn = mma_warps(m, n, num_warps)
    g = Geometry(m, n, k, 16, wm, wn)
    body = list(loops[0].body.block.ops)
    count = {cls: sum(isinstance(op, cls) for op in body)
             for cls in (simt.MmaOp, simt.LdMatrixOp)}
    assert count[simt.MmaOp] == g.rows * g.cols
    assert count[simt.LdMatrixOp] == g.rows + g.cols // 2
    assert len(body) <= 2 * g.rows * g.cols + 2 * g.rows + 8


def test_tf32x3_is_three_mmas_per_tile():
    module = lowered(dot_kernel(32, 32, 16, "f32", "f32", "tf32x3"), 4)
    shapes = [op.shape.data for op in module.walk() if isinstance(op, simt.MmaOp)]
    assert shapes == ["m16n8k8"] * 12  # (r, c) = (1, 2) per warp, 3 products, 2 k steps


# -- simulation ----------------------------------------------------------------------------

def _bf16(x: np.ndarray) -> np.ndarray:
    """bf16 values (as f64: the simulator keeps bf16 that way), truncated from f32."""
    return (x.astype(np.float32).view(np.int32) & -0x10000).view(np.float32).astype(np.float64)


def _inputs(rng, ab: str, m: int, n: int, k: int):
    if ab == "i8":
        return (rng.integers(-128, 128, (m, k)).astype(np.int8),
                rng.integers(-128, 128, (k, n)).astype(np.int8))
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    convert = {"f16": lambda x: x.astype(np.float16), "bf16": _bf16,
               "f32": lambda x: x.astype(np.float32)}[ab]
    return convert(a), convert(b)


def _want(a, b, ab: str, precision: str) -> np.ndarray:
    if ab == "f32" and precision == "tf32":
        a, b = round_tf32(a), round_tf32(b)
    return a.astype(np.float64) @ b.astype(np.float64)


def simulate(m, n, k, ab, acc, num_warps, precision="ieee", load_acc=False, seed=0):
    rng = np.random.default_rng(seed)
    a, b = _inputs(rng, ab, m, n, k)
    acc_np = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[acc]
    c = (rng.integers(-100, 100, (m, n)) if acc == "i32" else
         rng.standard_normal((m, n))).astype(acc_np)
    out = np.zeros((m, n), acc_np)
    module = lowered(dot_kernel(m, n, k, ab, acc, precision, load_acc), num_warps)
    assert any(isinstance(op, simt.MmaOp) for op in module.walk())
    arrays = {"a": a.ravel(), "b": b.ravel(), "o": out.reshape(-1), "c": c.ravel()}
    MmaProgram(module, arrays, {}).run()
    return out, _want(a, b, ab, precision) + (c if load_acc else 0)


SHAPES = [(16, 8, 1), (32, 32, 1), (64, 64, 4), (128, 64, 4), (16, 64, 4), (128, 128, 8),
          (64, 32, 2)]  # (m, n, num_warps)


@pytest.mark.parametrize("ab, precision, rtol", [
    ("f16", "ieee", 1e-6), ("bf16", "ieee", 1e-6), ("f32", "tf32", 1e-6),
    ("f32", "tf32x3", 1e-6)])
@pytest.mark.parametrize("m, n, num_warps", SHAPES)
def test_float_dots_match_matmul(ab, precision, rtol, m, n, num_warps):
    k = 64
    out, want = simulate(m, n, k, ab, "f32", num_warps, precision)
    if precision == "tf32x3":  # about f32 accuracy: compare with exact products
        np.testing.assert_allclose(out, want, rtol=0, atol=1e-5 * np.sqrt(k))
        return
    np.testing.assert_allclose(out, want, rtol=rtol, atol=1e-5)


@pytest.mark.parametrize("m, n, num_warps", SHAPES)
@pytest.mark.parametrize("k", [32, 128])
def test_i8_dots_match_matmul(m, n, num_warps, k):
    out, want = simulate(m, n, k, "i8", "i32", num_warps)
    np.testing.assert_array_equal(out, want)


def test_accumulator_from_memory():
    out, want = simulate(64, 32, 32, "f16", "f32", 4, load_acc=True)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-5)
    out, want = simulate(32, 64, 64, "i8", "i32", 2, load_acc=True)
    np.testing.assert_array_equal(out, want)


def test_f16_accumulator():
    out, want = simulate(32, 32, 32, "f16", "f16", 4, load_acc=True)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=0,
                               atol=4e-3 * np.abs(want).max())


def test_tf32x3_is_more_accurate_than_tf32():
    x3, want = simulate(64, 64, 64, "f32", "f32", 4, "tf32x3")
    one, _ = simulate(64, 64, 64, "f32", "f32", 4, "tf32")
    assert np.abs(x3 - want).max() * 100 < np.abs(one - want).max()


def _simulate_ptx_kernel(kernel, signature: str, constants: dict, arrays: dict,
                        scalars: dict, grid: tuple[int, ...], num_stages: int = 2,
                        target: str = "sm_80", program=None) -> str:
    """Compile ``kernel`` for PTX ``target`` and run its SIMT IR (the last stage before
    simt-to-ptx) on every program of ``grid`` with ``program`` (default ``MmaProgram``);
    the SIMT text."""
    ck = tc.compile(kernel, backend="ptx", signature=signature, constants=constants,
                    num_stages=num_stages, target=target)
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    module = parse_module(text)
    for pid in np.ndindex(*reversed(grid)):
        (program or MmaProgram)(module, arrays, scalars, tuple(reversed(pid)), grid).run()
    return text


def test_example_matmul_simulated():
    """Masked edges, grouped program order, a K loop carrying the accumulator, f16 out."""
    (m, n, k), rng = (100, 70, 130), np.random.default_rng(3)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    c = np.zeros((m, n), np.float16)
    text = _simulate_ptx_kernel(
        example.matmul, "*f16,*f16,*f16,i32,i32,i32,i32,i32,i32",
        {"BM": 64, "BN": 32, "BK": 32, "GROUP": 8, "ACTIVATION": "leaky_relu"},
        {"a": a.ravel(), "b": b.ravel(), "c": c.reshape(-1)},
        dict(zip(["M", "N", "K", "stride_am", "stride_bk", "stride_cm"], [m, n, k, k, n, n])),
        (tc.cdiv(m, 64) * tc.cdiv(n, 32),))
    assert "simt.mma" in text
    want = example.reference(a, b, "leaky_relu")
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-10 * np.abs(want).max())


@pytest.mark.parametrize("kernel, stages, blocks", [
    ("matmul", 2, (64, 32, 32)), ("matmul", 3, (64, 32, 32)), ("matmul", 4, (64, 32, 32)),
    ("matmul_tutorial", 3, (64, 32, 32)), ("matmul", 3, (64, 64, 64)),
    ("matmul", 2, (32, 128, 64))])
def test_example_matmul_cp_async_simulated(kernel, stages, blocks):
    """Sizes that are multiples of 16 (declared so): operands go to shared-memory stages
    by 16-byte asynchronous copies; edges of M and N masked, zero-filled. The same for
    ``matmul_tutorial``: its ``% N`` (N a multiple of 16) and pointers carried by the loop
    keep their runs (the axis analysis' loop fixpoint). Rows of 64 halves or more are
    swizzled stages (B of 128 columns: two atoms), shorter ones padded."""
    (m, n, k), rng = (96, 80, 160), np.random.default_rng(stages)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    c = np.zeros((m, n), np.float16)
    bm, bn, bk = blocks
    text = _simulate_ptx_kernel(
        getattr(example, kernel), "*f16,*f16,*f16" + ",i32:16" * 6,
        {"BM": bm, "BN": bn, "BK": bk, "GROUP": 8, "ACTIVATION": ""},
        {"a": a.ravel(), "b": b.ravel(), "c": c.reshape(-1)},
        dict(zip(["M", "N", "K", "stride_am", "stride_bk", "stride_cm"], [m, n, k, k, n, n])),
        (tc.cdiv(m, bm) * tc.cdiv(n, bn),), stages)
    assert text.count("simt.cp_async ") == 2 * stages  # a and b: prologue, then the loop
    assert "vec = 8" in text and f"simt.cp_async_wait {stages - 2}" in text
    assert ("align = 1024" in text) == (bk >= 64)  # swizzled stages are 1024-byte aligned
    want = example.reference(a, b)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-10 * np.abs(want).max())


def simulate_attention(causal: bool, target: str = "sm_80", program=None) -> str:
    """The attention example on 2 x 2 programs of (100 keys, D = 64) in the simulator,
    checked against the reference; the SIMT text."""
    shape, rng = (1, 2, 100, 64), np.random.default_rng(4)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    text = _simulate_ptx_kernel(
        attention.attention, "*f16,*f16,*f16,*f16,f32,i32",
        {"CAUSAL": causal, "BM": 64, "BN": 64, "D": 64},
        {"q": q.ravel(), "k": k.ravel(), "v": v.ravel(), "out": out.reshape(-1)},
        {"scale": np.float32(1 / 8), "seq_len": 100}, (2, 2), target=target,
        program=program)
    np.testing.assert_allclose(out.astype(np.float64), attention.reference(q, k, v, causal),
                               rtol=0, atol=2e-3)
    return text


def test_example_attention_simulated():
    """Two dots (q k^T, p v) whose results meet row reductions and each other's layouts."""
    text = simulate_attention(True)
    # two loops of two dots of 2 x 4 (m16, n8) tiles, each in 4 k steps (K = D = BN = 64)
    assert text.count("simt.mma") == 2 * 2 * 8 * 4


# -- PTX -----------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_example_matmul_uses_mma_sync(arch, dtype):
    precision_free = dtype == "f16"  # the example's f32 dot is "ieee": FMAs
    ck = tc.compile(example.matmul, backend="ptx", target=arch,
                    signature=f"*{dtype},*{dtype},*{dtype},i32,i32,i32,i32,i32,i32",
                    constants={"BM": 64, "BN": 64, "BK": 32, "GROUP": 8,
                               "ACTIVATION": "leaky_relu"})
    ptx = ck.asm["ptx"]
    assert ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx) == precision_free
    assert ("ldmatrix.sync.aligned.m8n8.x4" in ptx) == precision_free
    assert isinstance(ck.asm["cubin"], bytes) and ck.asm["cubin"]


def test_example_matmul_copies_asynchronously():
    """Sizes declared multiples of 16: 16-byte cp.async into 3 stages, assembled (sm_80:
    rows of 64 halves swizzled for ldmatrix, no fence for the async proxy;
    ``tests/test_wgmma.py`` has sm_90's)."""
    ck = tc.compile(example.matmul, backend="ptx", target="sm_80", num_stages=3,
                    signature="*f16,*f16,*f16" + ",i32:16" * 6,
                    constants={"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "ACTIVATION": ""})
    ptx = ck.asm["ptx"]
    assert ptx.count("cp.async.cg.shared.global") == 3 * (8 + 8)  # 16 bytes a thread
    assert "cp.async.wait_group 1" in ptx and "ld.global" not in ptx.split("$L__for")[1]
    assert ck.metadata.extra["shared"] == 3 * 2 * (128 * 64 + 64 * 128)  # not padded
    assert "fence.proxy.async" not in ptx
    assert isinstance(ck.asm["cubin"], bytes) and ck.asm["cubin"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("ab, acc, precision, shape", [
    ("f16", "f32", "ieee", "m16n8k16.row.col.f32.f16.f16.f32"),
    ("f16", "f16", "ieee", "m16n8k16.row.col.f16.f16.f16.f16"),
    ("bf16", "f32", "ieee", "m16n8k16.row.col.f32.bf16.bf16.f32"),
    ("f32", "f32", "tf32", "m16n8k8.row.col.f32.tf32.tf32.f32"),
    ("f32", "f32", "tf32x3", "m16n8k8.row.col.f32.tf32.tf32.f32"),
    ("i8", "i32", "ieee", "m16n8k32.row.col.s32.s8.s8.s32")])
def test_every_mma_kind_assembles(arch, ab, acc, precision, shape):
    text = dot_kernel(64, 64, 64, ab, acc, precision)
    compiled = pipeline.run(parse_module(text), "ptx", 4, arch=arch)
    if arch == "sm_90" and ab in ("f16", "bf16") and acc == "f32":  # Hopper's own
        shape = f"wgmma.mma_async.sync.aligned.m64n64k16.f32.{ab}.{ab}"
        assert shape in compiled.asm["ptx"]
    else:
        assert f"mma.sync.aligned.{shape}" in compiled.asm["ptx"]
    assert isinstance(compiled.artifact, bytes) and compiled.artifact
