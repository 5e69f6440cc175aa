"""pipeline-loads: a K loop's dot operands prefetched one or more iterations ahead. The
tile IR before and after the pass runs in the NumPy interpreter on the same inputs and
must write identical bits (K a multiple of the block, not one, under one block, zero); the
GPU pipelines (wgsl on lavapipe, ptx to a cubin) run the pass and stay correct; loops it
does not recognize are left as they were."""

import re

import numpy as np
import pytest
from xdsl.dialects import scf

import compiler as tc
import compiler.language as tl
from backends import numpy as numpy_backend
from compiler.context import make_context, parse_module
from compiler.jit import availability
from compiler.passes.lower_control import LowerControl
from compiler.passes.pipeline_loads import PipelineLoads
from examples import attention
from examples import matmul as example
from tests.conftest import launch, tolerance
from tests.test_dot import matmul as strided_matmul
from tests.test_wgmma_transposed_a import at_b_pointers


@tc.kernel
def advancing(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Pointers moved by ``+= BK`` each iteration; B is stored transposed. (lower-control
    traces a carried pointer through splat and addptr, not broadcast: offsets first.)"""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    pa = a + (rm[:, None] * K + rk[None, :])
    pb = b + (rn[:, None] * K + rk[None, :])
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(pa, mask=(rm[:, None] < M) & (k0 + rk[None, :] < K), other=0.0)
        yt = tl.load(pb, mask=(rn[:, None] < N) & (k0 + rk[None, :] < K))
        acc = tl.dot(x, tl.trans(yt), acc)
        pa += BK
        pb += BK
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tc.kernel
def lagging(a, c, K, BK: tl.constexpr):
    """An address from an iter_arg that is the previous induction variable."""
    r, rk = tl.arange(0, 16), tl.arange(0, BK)
    prev = 0
    acc = tl.zeros((16, 16), tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(a + (r[:, None] * K + prev + rk[None, :]), mask=prev + rk[None, :] < K)
        acc = tl.dot(x, tl.trans(x), acc)
        prev = k0
    tl.store(c + (r[:, None] * 16 + r[None, :]), acc)


@tc.kernel
def left_alone(a, c, K, S, BK: tl.constexpr):
    """A runtime step and a loop that stores: neither is pipelined."""
    r = tl.arange(0, 16)
    acc = tl.zeros((16, 16), tl.float32)
    for k0 in range(0, K, S):
        x = tl.load(a + r[:, None] * 16 + r[None, :])
        acc = tl.dot(x, x, acc)
    for k0 in range(0, K, BK):
        x = tl.load(a + r[:, None] * 16 + r[None, :])
        acc = tl.dot(x, x, acc)
        tl.store(c + r[:, None] * 16 + r[None, :], acc)


@tc.kernel
def softmax_rows(out, x, n_rows, n_cols, STAGES: tl.constexpr, BLOCK: tl.constexpr):
    """Triton's fused-softmax tutorial: rows ``pid, pid + programs, ...`` of a persistent
    grid, in a loop that asks for pipelining and stores; lanes past ``n_cols`` read -inf."""
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        cols = tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        num = tl.exp(v - tl.max(v, axis=0))
        tl.store(out + row * n_cols + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@tc.kernel
def softmax_rows_plain(out, x, n_rows, n_cols, BLOCK: tl.constexpr):
    """``softmax_rows`` in a plain ``range`` loop: not pipelined (it stores, and has no dot)."""
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        num = tl.exp(v - tl.max(v, axis=0))
        tl.store(out + row * n_cols + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@tc.kernel
def shift_rows_in_place(x, n_rows, n_cols, STAGES: tl.constexpr, BLOCK: tl.constexpr):
    """Each row less its maximum, written over itself: a pipelined loop storing into the
    buffer it loads, a different row each iteration (as its ``num_stages`` promises)."""
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        cols = tl.arange(0, BLOCK)
        v = tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(x + row * n_cols + cols, v - tl.max(v, axis=0), mask=cols < n_cols)


@tc.kernel
def biased_products(a, bias, out, K, BK: tl.constexpr, STAGES: tl.constexpr):
    """A K loop asking for pipelining whose dot's operand and a bias added to the
    accumulator (no dot operand) are loaded."""
    r, rk = tl.arange(0, 16), tl.arange(0, BK)
    acc = tl.zeros((16, 16), tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        x = tl.load(a + r[:, None] * K + k0 + rk[None, :], mask=k0 + rk[None, :] < K,
                    other=0.0)
        b = tl.load(bias + k0 // BK * 16 + r)
        acc = tl.dot(x, tl.trans(x), acc) + b[None, :]
    tl.store(out + r[:, None] * 16 + r[None, :], acc)


def _tile_ir(kernel, args, constants) -> tuple[str, object]:
    """The tile IR the NumPy backend runs, and the kernel's launch metadata."""
    ck = tc.compile(kernel, args=args, constants=constants, backend="numpy")
    return ck.stages[-1][1], ck.metadata


def _run(text: str, info, grid, args, *passes) -> str:
    """Run ``passes`` (verifying after each) on ``text``, then interpret it; the IR run."""
    module, ctx = parse_module(text), make_context()
    for p in passes:
        p.apply(ctx, module)
        module.verify()
    numpy_backend.run(module, info, grid, args)
    return str(module)


def _loop_arity(text: str) -> list[int]:
    module = parse_module(text)
    return [len(op.iter_args) for op in module.walk() if isinstance(op, scf.ForOp)]


def _same_bits(kernel, grid, make_args, constants, stages, lower=False, cp_async=0):
    """The kernel's outputs with and without the pass, bit for bit; the pipelined IR."""
    plain, piped = make_args(), make_args()
    text, info = _tile_ir(kernel, plain, constants)
    first = (LowerControl(),) if lower else ()
    _run(text, info, grid, plain, *first)
    out = _run(text, info, grid, piped, *first,
               PipelineLoads(num_stages=stages, cp_async=cp_async))
    for x, y in zip(plain, piped, strict=True):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()
    return out


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("k", [64, 70, 16, 0])
def test_example_matmul_bits_unchanged(k, stages):
    """K a multiple of BK, not one, under one block (one iteration), zero (none)."""
    m, n, rng = 40, 24, np.random.default_rng(k)
    a = rng.standard_normal((m, max(k, 1))).astype(np.float16)
    b = rng.standard_normal((max(k, 1), n)).astype(np.float16)

    def make_args():
        return [a, b, np.full((m, n), np.nan, np.float16), m, n, k, a.shape[1], n, n]

    consts = {"BM": 16, "BN": 16, "BK": 32, "GROUP": 2, "ACTIVATION": "leaky_relu"}
    text = _same_bits(example.matmul, (tc.cdiv(m, 16) * tc.cdiv(n, 16),), make_args, consts,
                      stages, lower=True)
    assert _loop_arity(text) == [1 + 2 * (stages - 1)]  # acc and the prefetched a, b tiles


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("k", [128, 70, 16, 0])
def test_shared_memory_stages_bits_unchanged(k, stages):
    """With cp.async (sm_80): the dot operands go through shared-memory stages filled
    ``stages - 1`` iterations ahead; the NumPy meaning of the stages delays each copy
    until its wait, so a wrong count of groups or waits shows."""
    m, n, rng = 70, 48, np.random.default_rng(k)  # B's row stride n: a multiple of 16
    a = rng.standard_normal((m, max(k, 1))).astype(np.float16)
    b = rng.standard_normal((max(k, 1), n)).astype(np.float16)

    def make_args():
        return [a, b, np.full((m, n), np.nan, np.float16), m, n, k, a.shape[1], n, n]

    consts = {"BM": 64, "BN": 32, "BK": 32, "GROUP": 2, "ACTIVATION": ""}
    text = _same_bits(example.matmul, (tc.cdiv(m, 64) * tc.cdiv(n, 32),), make_args, consts,
                      stages, lower=True, cp_async=80)
    if a.shape[1] % 16:  # A's rows (and the mask along k) not aligned runs: registers
        assert "tile.async_copy" not in text and _loop_arity(text) == [1 + 2 * (stages - 1)]
        return
    assert _loop_arity(text) == [2]  # the accumulator and the stage it reads
    assert text.count("tile.async_copy") == 2 * stages and "tile.shared_read" in text


@pytest.mark.parametrize("stages", [2, 3])
@pytest.mark.parametrize("k", [48, 50, 8])
def test_advancing_pointers_bits_unchanged(k, stages):
    """Carried pointers (as the NumPy backend runs them, and as lower-control's offsets)."""
    rng = np.random.default_rng(k)
    a = rng.standard_normal((16, k)).astype(np.float16)
    bt = rng.standard_normal((16, k)).astype(np.float16)

    def make_args():
        return [a, bt, np.zeros((16, 16), np.float32), 16, 16, k]

    consts = {"BM": 16, "BN": 16, "BK": 16}
    for lower in (False, True):
        text = _same_bits(advancing, (1,), make_args, consts, stages, lower)
        assert _loop_arity(text) == [3 + 2 * (stages - 1)]  # acc, pa, pb and the prefetches


@pytest.mark.parametrize("stages", [2, 3])
def test_iter_arg_equal_to_induction_variable(stages):
    a = np.random.default_rng(3).standard_normal((16, 40)).astype(np.float16)

    def make_args():
        return [a, np.zeros((16, 16), np.float32), 40]

    text = _same_bits(lagging, (1,), make_args, {"BK": 16}, stages, lower=True)
    assert _loop_arity(text) == [2 + (stages - 1)]


@pytest.mark.parametrize("trans_b", [False, True])
def test_strided_matmul_bits_unchanged(trans_b):
    m, n, k, rng = 20, 24, 40, np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    strides = (1, k) if trans_b else (n, 1)

    def make_args():
        return [a, b, np.zeros((m, n), np.float32), m, n, k, k, 1, *strides]

    consts = {"BM": 16, "BN": 16, "BK": 16, "PRECISION": "ieee", "TRANS_B": trans_b,
              "ACC": "f32"}
    text = _same_bits(strided_matmul, (2, 2), make_args, consts, 2, lower=True)
    assert _loop_arity(text) == [3]


def test_attention_bits_unchanged():
    """Two dots: K through the score dot, V through the value dot; a causal bound."""
    shape, rng = (1, 1, 40, 16), np.random.default_rng(2)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))

    def make_args():
        return [q, k, v, np.zeros(shape, np.float16), np.float32(0.25), shape[2]]

    consts = {"CAUSAL": True, "BM": 16, "BN": 16, "D": 16}
    text = _same_bits(attention.attention, (3, 1), make_args, consts, 2, lower=True)
    # each loop (blocks before the diagonal, then the diagonal): m, l, acc, K and V tiles
    assert _loop_arity(text) == [5, 5]


def test_unrecognized_loops_unchanged():
    args = [np.ones((16, 16), np.float16), np.zeros((16, 16), np.float32), 32, 16]
    text, _ = _tile_ir(left_alone, args, {"BK": 16})
    module = parse_module(text)
    PipelineLoads().apply(make_context(), module)
    assert str(module) == str(parse_module(text))


def test_wgsl_pipeline_matmul():
    """The wgsl pipeline runs the pass (lavapipe): a partial last block and one block."""
    if not availability("wgsl")[0]:
        pytest.skip("no WebGPU adapter")
    rng = np.random.default_rng(5)
    for k in (40, 8):
        a, b = (rng.standard_normal(s).astype(np.float16) for s in ((32, k), (k, 16)))
        c = np.full((32, 16), np.nan, np.float16)
        example.matmul[(2,)](a, b, c, 32, 16, k, k, 16, 16, BM=16, BN=16, BK=16, GROUP=2,
                             ACTIVATION="", backend="wgsl")
        want = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c.astype(np.float64), want, atol=2e-2 * np.abs(want).max())


@pytest.mark.parametrize("ints, arity", [("i32", 3), ("i32:16", 2)])
def test_ptx_pipeline_pipelines_and_assembles(ints, arity):
    """Sizes of unknown divisibility: element-wise masks along k, so the operands wait in
    registers (the loop carries them); multiples of 16: cp.async stages (the loop carries
    the stage it reads)."""
    ck = tc.compile(example.matmul, backend="ptx", signature="*f16,*f16,*f16" + f",{ints}" * 6,
                    constants={"BM": 64, "BN": 64, "BK": 32, "GROUP": 8, "ACTIVATION": ""})
    stages = dict(ck.stages)
    assert _loop_arity(stages["pipeline-loads"]) == [arity]
    assert isinstance(ck.asm["cubin"], bytes) and ck.asm["cubin"]


def _negative_rows(n_rows: int, n_cols: int, seed: int) -> np.ndarray:
    """Rows of values below -1: a masked-off lane that read 0 instead of -inf would be the
    row's maximum."""
    rng = np.random.default_rng(seed)
    return -1 - np.abs(rng.standard_normal((max(n_rows, 1), n_cols))).astype(np.float32)


@pytest.mark.parametrize("cp_async", [0, 80])
@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("n_rows, n_cols, grid", [(13, 50, 4), (16, 64, 4), (3, 64, 5),
                                                  (0, 64, 2)])
def test_explicit_loop_bits_unchanged(n_rows, n_cols, grid, stages, cp_async):
    """``tl.range(num_stages=S)``: its load moves S-1 iterations ahead though the body
    stores and feeds no dot: into registers, or with cp.async into S-1 shared-memory
    stages (-inf selected back into the lanes a copy zero-filled). Rows not a multiple of
    the grid, a ragged row, fewer rows than programs, none."""
    x = _negative_rows(n_rows, n_cols, n_cols + grid)

    def make_args():
        return [np.full_like(x, np.nan), x, n_rows, n_cols]

    text = _same_bits(softmax_rows, (grid,), make_args, {"STAGES": stages, "BLOCK": 64}, 2,
                      lower=True, cp_async=cp_async)
    if cp_async:  # the loop carries the stage it reads; S-1 rows copied ahead, 1 a loop
        assert _loop_arity(text) == [1] and text.count("tile.async_copy") == stages
        assert f"tile.shared_alloc : memref<{stages - 1}x1x64xf32, 3 : i32>" in text
    else:  # the rows ahead
        assert _loop_arity(text) == [stages - 1] and "tile.async_copy" not in text


@pytest.mark.parametrize("cp_async", [0, 80])
def test_explicit_loop_in_place_bits_unchanged(cp_async):
    x = _negative_rows(10, 40, 7)

    def make_args():
        return [x.copy(), 10, 40]

    text = _same_bits(shift_rows_in_place, (3,), make_args, {"STAGES": 3, "BLOCK": 64}, 2,
                      lower=True, cp_async=cp_async)
    assert _loop_arity(text) == ([1] if cp_async else [2])


@pytest.mark.parametrize("cp_async", [0, 80])
@pytest.mark.parametrize("stages", [2, 3])
def test_explicit_loop_with_dot_prefetches_each_load_once(stages, cp_async):
    """The dot's operand as a plain loop would have it (registers, or cp.async stages)
    and the bias in registers, each once (the operand's prefetches are not prefetched
    again); with staged operands the bias stays in registers (one count of groups)."""
    rng = np.random.default_rng(stages)
    a = rng.standard_normal((16, 48)).astype(np.float16)
    bias = rng.standard_normal(3 * 16).astype(np.float32)

    def make_args():
        return [a, bias, np.zeros((16, 16), np.float32), 48]

    text = _same_bits(biased_products, (1,), make_args, {"BK": 16, "STAGES": stages}, 2,
                      lower=True, cp_async=cp_async)
    ahead = stages - 1
    if cp_async:  # acc, the operand's stage, the bias tiles
        assert _loop_arity(text) == [2 + ahead] and "tile.async_copy" in text
    else:  # acc, the operand's tiles, the bias tiles
        assert _loop_arity(text) == [1 + 2 * ahead]


@pytest.mark.parametrize("block, ahead", [(4096, 3), (16384, 1), (32768, 0)])
def test_stages_within_budget(block, ahead):
    """4 stages asked for: 3 rows of 16 KiB ahead; of 64 KiB, 3 would pass STAGED_BYTES
    (96 KiB), so 1; a row of 128 KiB is left as written."""
    x = np.zeros((4, 64), np.float32)
    text, _ = _tile_ir(softmax_rows, [x, x, 4, 64], {"STAGES": 4, "BLOCK": block})
    module = parse_module(text)
    PipelineLoads(cp_async=80).apply(make_context(), module)
    text = str(module)
    assert text.count("tile.async_copy") == (ahead + 1 if ahead else 0)
    assert _loop_arity(text) == [1 if ahead else 0]


def test_plain_range_loop_unchanged():
    """Without ``num_stages``, a loop that stores and has no dot stays as written."""
    x = np.zeros((4, 64), np.float32)
    text, _ = _tile_ir(softmax_rows_plain, [x, x, 4, 64], {"BLOCK": 64})
    module = parse_module(text)
    PipelineLoads(num_stages=3, cp_async=80).apply(make_context(), module)
    assert str(module) == str(parse_module(text))


def test_explicit_loop_on_backends(backend):
    """The softmax rows and the in-place rows as each backend runs them (wgsl prefetches
    into registers, ptx copies into stages)."""
    n_rows, n_cols = 13, 50
    x = _negative_rows(n_rows, n_cols, 11)
    out = np.full_like(x, np.nan)
    if launch(softmax_rows, (4,), out, x, n_rows, n_cols, backend=backend, STAGES=3,
              BLOCK=64):
        num = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out, num / num.sum(axis=1, keepdims=True),
                                   **tolerance(np.float32, "exp"))
    y = x.copy()
    if launch(shift_rows_in_place, (4,), y, n_rows, n_cols, backend=backend, STAGES=3,
              BLOCK=64):
        np.testing.assert_array_equal(y, x - x.max(axis=1, keepdims=True))


def test_wgsl_explicit_loop_prefetches_into_registers():
    ck = tc.compile(softmax_rows, backend="wgsl", signature="*f32,*f32,i32,i32",
                    constants={"STAGES": 3, "BLOCK": 64})
    assert _loop_arity(dict(ck.stages)["pipeline-loads"]) == [2]


def test_ptx_explicit_loop_copies_rows_into_stages():
    """sm_90, 4 warps, 1024 f32 a row (8 a thread, in 16-byte runs): 2 stages of 4 KiB,
    2 copies of 16 bytes a thread per row (2 rows before the loop, 1 in it), each row read
    back by 2 vectorized shared loads; no global loads left."""
    ck = tc.compile(softmax_rows, backend="ptx", signature="*f32,*f32,i32,i32:16",
                    constants={"STAGES": 3, "BLOCK": 1024})
    ptx = ck.asm["ptx"]
    assert ptx.count("cp.async.cg.shared.global") == 3 * 2
    assert ptx.count("ld.shared.v4.f32") == 2 and "ld.global" not in ptx
    assert 2 * 1024 * 4 <= ck.metadata.shared < 3 * 1024 * 4


@pytest.mark.parametrize("form", ["pointers", "descriptors", "transposed"])
def test_wgmma_runs_on_from_stages_it_reads_in_place(form):
    """At 4 stages on sm_90 a dot reading both operands in place from stages runs on into
    the next iteration (waiting for all but its latest wgmma), whether TMA or cp.async
    filled them; one whose A is transposed out of a cp.async stage into registers
    (``ldmatrix.trans``) is waited for each iteration (running on, it gave wrong products
    at times on an H200). A in place: each warpgroup's descriptors start from the warp id
    lane 0 broadcasts, which ptxas keeps in uniform registers."""
    M = N = K = 1024
    f16 = np.float16
    a, b, c = np.zeros((M, K), f16), np.zeros((K, N), f16), np.zeros((M, N), f16)
    tiles = {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "ACTIVATION": ""}
    if form == "pointers":
        kernel, args = example.matmul, (a, b, c, M, N, K, K, N, N)
    elif form == "descriptors":
        kernel, args = example.matmul_descriptor, (a, b, c, M, N, K)
    else:
        kernel, args = at_b_pointers, (a, b, c.astype(np.float32), M, N, K)
        tiles = {"BM": 128, "BN": 128, "BK": 64, "SCALE": 1}
    ptx = tc.compile(kernel, backend="ptx", target="sm_90", args=args, constants=tiles,
                     num_warps=8, num_stages=4).asm["ptx"]
    assert "wgmma.mma_async" in ptx
    assert ("cp.async.bulk.tensor" in ptx) == (form == "descriptors")
    assert ("wgmma.wait_group.sync.aligned 1;" in ptx) == (form != "transposed")
    assert ("ldmatrix.sync.aligned.m8n8.x4.trans" in ptx) == (form == "transposed")
    assert form == "transposed" or "shfl.sync.idx.b32" in ptx


@pytest.mark.parametrize("arch, warps", [("sm_90", 8), ("sm_80", 4)])
def test_each_copy_of_a_stage_is_placed_from_one_base(arch, warps):
    """A thread's copies into a stage (swizzled for wgmma on sm_90, padded rows for
    ldmatrix on sm_80) land at one base plus constants, the same in every thread: one lane
    picked, offsets added, so ptxas folds the offsets into the copies' addresses instead
    of keeping a register (and an add a stage) for each copy."""
    n = 1024
    a = np.zeros((n, n), np.float16)
    ck = tc.compile(example.matmul_tutorial, backend="ptx", target=arch,
                    args=(a, a, a, n, n, n, n, n, n), num_warps=warps, num_stages=3,
                    constants={"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "ACTIVATION": ""})
    simt = dict(ck.stages)["tile-to-simt"]
    defs = {m[1]: m[2] for m in re.finditer(r"(%\w+) = (.*)", simt)}
    places = re.findall(r"simt\.cp_async %\w+\[%\w+\] to %\w+\[(%\w+)\]", simt)
    assert len(places) >= 4  # A and B, before the loop and in it
    for place in places:
        picked, offsets = re.fullmatch(r"arith\.addi (%\w+), (%\w+) : .*", defs[place]).groups()
        assert re.match(r"vector\.shuffle %\w+, %\w+ \[0(, 0)*\]", defs[picked])
        assert defs[offsets].startswith("arith.constant dense<[0, ")
