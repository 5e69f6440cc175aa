"""The tensor-core building blocks: a NumPy model of ``ldmatrix`` and ``mma.sync`` fragments
(from the PTX ISA's fragment tables) that checks the ldmatrix addressing of a warp-tiled
dot against ``A @ B`` with the accumulator in ``#tile.mma`` lane order; kernels using
``simt.ldmatrix``/``simt.mma`` assembled by nvJitLink for sm_80 and sm_90 (and run when
a GPU is present); dynamic shared memory above 48 KB."""

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import backends.ptx as ptx_backend
from backends.ptx.target import generate
from compiler.passes.layouts import element_ids, lane_map, num_threads, per_thread_shape
from dialects.tile import BlockedLayoutAttr, MmaLayoutAttr, SliceLayoutAttr
from tests.test_ptx_backend import build, device, gpu, lower  # noqa: F401 - device: fixture

# -- the fragment model ---------------------------------------------------------------------

# kind -> (mma k, element bits, B staged transposed as N x K, ldmatrix .trans for B)
KINDS = {"f16": (16, 16, False), "tf32": (8, 32, True), "s8": (32, 8, True)}


def a_coords(k: int, bits: int, lane: int) -> list[tuple[int, int]]:
    """(row, col) of each A element lane ``lane`` holds (PTX ISA, mma.m16n8kK, A row)."""
    g, t, pack = lane // 4, lane % 4, 32 // bits
    return [(g + 8 * (j % 2), (t + 4 * (j // 2)) * pack + e)
            for j in range(16 * k // 32 // pack) for e in range(pack)]


def b_coords(k: int, bits: int, lane: int) -> list[tuple[int, int]]:
    """(k, n) of each B element lane ``lane`` holds (B col)."""
    g, t, pack = lane // 4, lane % 4, 32 // bits
    return [((t + 4 * j) * pack + e, g) for j in range(8 * k // 32 // pack) for e in range(pack)]


def c_coords(lane: int) -> list[tuple[int, int]]:
    g, t = lane // 4, lane % 4
    return [(g + 8 * (i // 2), 2 * t + i % 2) for i in range(4)]


def ldmatrix(smem: np.ndarray, offsets: list[int], count: int, bits: int,
             trans: bool) -> list[list]:
    """Per lane, the elements ``ldmatrix.xN[.trans].b16`` gives (lanes 8 i + j address row
    j of matrix i; a row is 16 bytes)."""
    per_row = 128 // bits
    rows = [[smem[offsets[8 * i + j]:offsets[8 * i + j] + per_row] for j in range(8)]
            for i in range(count)]
    out = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        if trans:  # 16-bit only: the pair is a column of the stored matrix
            out.append([m[2 * t + e][g] for m in rows for e in range(2)])
        else:
            pack = 32 // bits
            out.append([x for m in rows for x in m[g][t * pack:(t + 1) * pack]])
    return out


def mma(k: int, bits: int, a: list[list], b: list[list], c: list[list]) -> list[list]:
    """D fragments of ``A @ B + C`` from the warp's A, B, C fragments."""
    am, bm, cm = np.full((16, k), np.nan), np.full((k, 8), np.nan), np.full((16, 8), np.nan)
    for lane in range(32):
        for m, coords, vals in ((am, a_coords(k, bits, lane), a[lane]),
                                (bm, b_coords(k, bits, lane), b[lane]),
                                (cm, c_coords(lane), c[lane])):
            for (r, col), v in zip(coords, vals, strict=True):
                assert np.isnan(m[r, col])  # every element held by exactly one lane
                m[r, col] = v
    assert not (np.isnan(am).any() or np.isnan(bm).any() or np.isnan(cm).any())
    d = am @ bm + cm
    return [[d[r, col] for r, col in c_coords(lane)] for lane in range(32)]


def a_offsets(w_m: int, wm: int, r: int, k0: int, K: int, bits: int) -> list[int]:
    """Lane l's ldmatrix.x4 row address for A (M x K in shared memory) of the warp's m16
    tile r: matrix i = l / 8 is rows +8 wm (i % 2), k-columns +16 bytes (i / 2)."""
    return [(8 * w_m + 16 * wm * r + lane % 8 + 8 * wm * (lane // 8 % 2)) * K
            + k0 + (lane // 16) * (128 // bits) for lane in range(32)]


def b_offsets(w_n: int, wn: int, c: int, k0: int, K: int, N: int, bits: int,
              transposed: bool) -> list[int]:
    """Lane l's ldmatrix.x2 row address for B's n8 tile c: f16 B is K x N (rows are k,
    read .trans); tf32/s8 B is staged N x K (rows are n)."""
    n0, i = 8 * w_n + 8 * wn * c, [lane // 8 % 2 for lane in range(32)]
    if transposed:
        return [(n0 + lane % 8) * K + k0 + i[lane] * (128 // bits) for lane in range(32)]
    return [(k0 + 8 * i[lane] + lane % 8) * N + n0 for lane in range(32)]


def simulate_dot(M: int, N: int, K: int, warps: tuple[int, int], kind: str) -> None:
    k, bits, transposed = KINDS[kind]
    wm, wn = warps
    rng = np.random.default_rng(0)
    a, b = rng.integers(-4, 5, (M, K)).astype(float), rng.integers(-4, 5, (K, N)).astype(float)
    sa, sb = a.ravel(), (b.T if transposed else b).ravel()
    layout = MmaLayoutAttr(2, warps)
    lanes = per_thread_shape(layout, (M, N))  # (row repeats, columns)
    acc = np.zeros((num_threads(layout), lanes[0] * lanes[1]))
    for w in range(wm * wn):
        w_m, w_n = divmod(w, wn)
        warp = acc[32 * w:32 * (w + 1)]
        for r in range(M // (16 * wm)):
            for c in range(N // (8 * wn)):
                idx = [j * lanes[1] + 2 * c + e % 2 for e in range(4) for j in [2 * r + e // 2]]
                for k0 in range(0, K, k):
                    fa = ldmatrix(sa, a_offsets(w_m, wm, r, k0, K, bits), 4, bits, False)
                    fb = ldmatrix(sb, b_offsets(w_n, wn, c, k0, K, N, bits, transposed), 2,
                                  bits, not transposed)
                    warp[:, idx] = mma(k, bits, fa, fb, warp[:, idx].tolist())
    out = np.zeros(M * N)
    out[element_ids(layout, (M, N), (N, 1)).ravel()] = acc.ravel()
    np.testing.assert_array_equal(out.reshape(M, N), a @ b)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("M, N, warps", [(16, 8, (1, 1)), (64, 32, (2, 2)), (128, 64, (4, 2)),
                                         (32, 64, (1, 4))])
def test_ldmatrix_and_mma_fragments_compute_a_at_b(kind, M, N, warps):
    simulate_dot(M, N, 2 * KINDS[kind][0], warps, kind)


def test_mma_layout_is_the_blocked_layout():
    for warps, shape in (((2, 2), (64, 32)), ((4, 1), (64, 64)), ((1, 1), (16, 8))):
        mma_l, blocked = MmaLayoutAttr(2, warps), BlockedLayoutAttr([1, 2], [8, 4], warps)
        assert lane_map(mma_l, shape) == lane_map(blocked, shape)
        assert lane_map(SliceLayoutAttr(1, mma_l), shape[:1]) == \
            lane_map(SliceLayoutAttr(1, blocked), shape[:1])
        assert num_threads(mma_l) == 32 * warps[0] * warps[1]


# -- kernels: one warp, one mma, A and B staged through shared memory -------------------------

# kind -> (mma shape, operand dtype, accumulator dtype, simt kind of KINDS)
MMAS = {"f16": ("m16n8k16", "f16", "f32", "f16"), "f16acc": ("m16n8k16", "f16", "f16", "f16"),
        "bf16": ("m16n8k16", "bf16", "f32", "f16"), "tf32": ("m16n8k8", "f32", "f32", "tf32"),
        "s8": ("m16n8k32", "i8", "i32", "s8")}


def _stage(name: str, n: int, t: str) -> str:
    """Lines loading ``n`` elements of ``%name`` (global) into shared ``%s{name}``."""
    per, iv = n // 32, f"vector<{n // 32}xi32>"
    return f"""  %i{name} = arith.addi %tb{per}, %l{per} : {iv}
  %g{name} = simt.load %{name}[%i{name}] : !tile.ptr<{t}>, {iv} -> vector<{per}x{t}>
  %s{name} = simt.shared_alloc : memref<{n}x{t}, 3 : i32>
  simt.shared_store %s{name}[%i{name}], %g{name} : memref<{n}x{t}, 3 : i32>, {iv}, \
vector<{per}x{t}>
"""


def mma_kernel(kind: str) -> str:
    """D (16 x 8) = A (16 x k) @ B: B is k x 8 for f16/bf16, else staged as B^T (8 x k)."""
    shape, t, acc, model = MMAS[kind]
    k, bits, transposed = KINDS[model]
    cb = 128 // bits  # elements in 16 bytes: one ldmatrix row
    sa, sb = f"memref<{16 * k}x{t}, 3 : i32>", f"memref<{8 * k}x{t}, 3 : i32>"
    splat = "".join(f"  %tb{p} = vector.broadcast %tid : i32 to vector<{p}xi32>\n"
                    f"  %l{p} = arith.constant dense<{list(range(0, 32 * p, 32))}> : "
                    f"vector<{p}xi32>\n" for p in sorted({16 * k // 32, 8 * k // 32}))
    b_row, b_stride = ("%rr", k) if transposed else ("%brow", 8)
    b_col = "%acol" if transposed else "%c0"
    zero = "0" if acc == "i32" else "0.0"
    return f"""func.func @mma(%a: !tile.ptr<{t}>, %b: !tile.ptr<{t}>, %d: !tile.ptr<{acc}>) \
attributes {{simt.num_warps = 1 : i32}} {{
  %tid = simt.thread_id : i32
{splat}{_stage("a", 16 * k, t)}{_stage("b", 8 * k, t)}  simt.barrier
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c7 = arith.constant 7 : i32
  %c8 = arith.constant 8 : i32
  %ck = arith.constant {k} : i32
  %ccb = arith.constant {cb} : i32
  %cbs = arith.constant {b_stride} : i32
  %rr = arith.andi %tid, %c7 : i32
  %mi = arith.shrui %tid, %c3 : i32
  %mlo = arith.andi %mi, %c1 : i32
  %mhi = arith.shrui %mi, %c1 : i32
  %r8 = arith.muli %mlo, %c8 : i32
  %arow = arith.addi %rr, %r8 : i32
  %acol = arith.muli %mhi, %ccb : i32
  %acol2 = arith.muli %mlo, %ccb : i32
  %ar = arith.muli %arow, %ck : i32
  %aoff = arith.addi %ar, %acol : i32
  %brow = arith.addi %rr, %r8 : i32
  %br = arith.muli {b_row}, %cbs : i32
  %boff = arith.addi %br, {"%acol2" if transposed else b_col} : i32
  %fa = simt.ldmatrix %sa[%aoff] : {sa} -> vector<{16 * k // 32}x{t}>
  %fb = simt.ldmatrix %sb[%boff]{"" if transposed else " trans"} : {sb} -> \
vector<{8 * k // 32}x{t}>
  %zc = arith.constant dense<{zero}> : vector<4x{acc}>
  %fd = simt.mma "{shape}" %fa, %fb, %zc : vector<{16 * k // 32}x{t}>, vector<{8 * k // 32}x{t}>, \
vector<4x{acc}>
  %g = arith.shrui %tid, %c2 : i32
  %tg = arith.andi %tid, %c3 : i32
  %go = arith.muli %g, %c8 : i32
  %to = arith.muli %tg, %c2 : i32
  %o = arith.addi %go, %to : i32
  %ob = vector.broadcast %o : i32 to vector<4xi32>
  %ol = arith.constant dense<[0, 1, 64, 65]> : vector<4xi32>
  %oi = arith.addi %ob, %ol : vector<4xi32>
  simt.store %d[%oi], %fd : !tile.ptr<{acc}>, vector<4xi32>, vector<4x{acc}>
  func.return
}}"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("kind", MMAS)
def test_mma_kernel_assembles(kind, arch):
    text, _, _ = build(mma_kernel(kind), arch)
    shape, t, acc, _ = MMAS[kind]
    ab = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "i8": "s8"}[t]
    cd = {"f32": "f32", "f16": "f16", "i32": "s32"}[acc]
    assert f"mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd} {{" in text
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {" in text
    assert ("cvt.rna.tf32.f32" in text) == (t == "f32")
    assert ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in text) == (t in ("f16", "bf16"))


def test_f16_fragments_go_from_ldmatrix_to_mma_unpacked():
    text, _, _ = build(mma_kernel("f16"))
    ld = next(ln for ln in text.splitlines() if "ldmatrix" in ln and ".x4" in ln)
    mma_line = next(ln for ln in text.splitlines() if "mma.sync" in ln)
    regs = ld.split("{")[1].split("}")[0]
    assert "{" + regs + "}" in mma_line  # the registers ldmatrix filled


def _operands(kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A, B as passed to the kernel, the expected D, and the output array."""
    _, t, acc, model = MMAS[kind]
    k, _, transposed = KINDS[model]
    np_t = {"f16": np.float16, "f32": np.float32, "i8": np.int8}.get(t)
    if t == "bf16":
        np_t = pytest.importorskip("ml_dtypes").bfloat16
    rng = np.random.default_rng(1)
    a, b = rng.integers(-8, 9, (16, k)), rng.integers(-8, 9, (k, 8))
    out_t = {"f32": np.float32, "f16": np.float16, "i32": np.int32}[acc]
    bb = b.T if transposed else b
    return (a.astype(np_t), np.ascontiguousarray(bb).astype(np_t), (a @ b).astype(out_t),
            np.zeros((16, 8), out_t))


@gpu
@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("kind", MMAS)
def test_mma_kernel_runs(kind):
    a, b, want, out = _operands(kind)
    _, cubin, info = build(mma_kernel(kind))
    ptx_backend.Launcher(cubin, info)((1, 1, 1), [a, b, out])
    np.testing.assert_array_equal(out, want)


# -- dynamic shared memory --------------------------------------------------------------------


def smem_kernel(elems: list[int]) -> str:
    """Each thread writes its id into every buffer at its index and reads the last back."""
    lines = []
    for i, n in enumerate(elems):
        lines += [f"  %s{i} = simt.shared_alloc : memref<{n}xi32, 3 : i32>",
                  f"  simt.shared_store %s{i}[%tid], %tid : memref<{n}xi32, 3 : i32>, i32, i32"]
    last = f"memref<{elems[-1]}xi32, 3 : i32>"
    body = "\n".join(lines)
    return f"""func.func @smem(%o: !tile.ptr<i32>) attributes {{simt.num_warps = 1 : i32}} {{
  %tid = simt.thread_id : i32
{body}
  simt.barrier
  %v = simt.shared_load %s{len(elems) - 1}[%tid] : {last}, i32 -> i32
  simt.store %o[%tid], %v : !tile.ptr<i32>, i32, i32
  func.return
}}"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_shared_memory_above_48k_is_dynamic(arch):
    module, text, _ = lower(smem_kernel([20000, 1000, 3]), arch)
    assert text.index(".extern .shared .align 16 .b8 smem_smem[];") < text.index(".visible")
    assert "mov.u32 %r2, smem_smem;" in text and "smem_smem+80000;" in text
    assert "smem_smem+84000;" in text and ".shared .align 16 .b8 smem_smem0" not in text
    assert isinstance(module, ModuleOp)
    gen = generate(module, arch)
    assert gen.extra["shared"] == 84016  # 16-byte aligned arrays


def test_shared_memory_up_to_48k_stays_static():
    module, text, _ = lower(smem_kernel([12000, 288]))
    assert ".extern" not in text and ".shared .align 16 .b8 smem_smem1[1152];" in text
    assert generate(module, "sm_90").extra["shared"] == 49152


@gpu
@pytest.mark.usefixtures("device")
def test_dynamic_shared_memory_runs():
    _, cubin, info = build(smem_kernel([30000, 1000, 64]))
    module, _, _ = lower(smem_kernel([30000, 1000, 64]))
    info.shared = generate(module, "sm_90").extra["shared"]
    out = np.zeros(32, np.int32)
    ptx_backend.Launcher(cubin, info)((1, 1, 1), [out])
    np.testing.assert_array_equal(out, np.arange(32))
