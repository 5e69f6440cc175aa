"""Hopper's tensor memory accelerator: tensor-descriptor and array-view loads feeding a
warpgroup dot are copied by TMA on sm_90 (``cp.async.bulk.tensor`` into swizzled stages,
``mbarrier`` waits, tensor maps made at launch), and by pointers and masks elsewhere.

Without a GPU the PTX is compiled and assembled and its shape checked; on a GPU the
kernels run against NumPy, edges and a persistent loop (barriers made again for every
run of the K loop) included.
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from compiler.errors import OutOfResources
from compiler.jit import availability
from examples import attention as ex_attention
from examples import matmul as ex_matmul
from examples.tile.matmul import matmul as ct_matmul

HOPPER = {"BM": 128, "BN": 256, "BK": 64, "GROUP": 8, "ACTIVATION": ""}


def _compile(M: int, N: int, K: int, target: str = "sm_90", dtype=np.float16, **config):
    a, b, c = (np.zeros(s, dtype) for s in ((M, K), (K, N), (M, N)))
    constants = {**HOPPER, **{k: v for k, v in config.items() if k in HOPPER}}
    return tc.compile(ex_matmul.matmul_descriptor, backend="ptx", target=target,
                      args=(a, b, c, M, N, K), constants=constants,
                      num_warps=config.get("num_warps", 8),
                      num_stages=config.get("num_stages", 4))


def test_descriptor_matmul_is_copied_by_tma_on_sm90():
    ck = _compile(4096, 4096, 4096)
    ptx = ck.asm["ptx"]
    assert "wgmma.mma_async" in ptx and "mbarrier.try_wait.parity" in ptx
    # A's rows are permuted for the accumulator's warps: a tile of whole blocks of 16 W
    # rows is one 5-D box (the array as blocks t, warps w, halves h, rows r), any other
    # 8-row boxes; B is one box per 64 columns
    assert ptx.count("cp.async.bulk.tensor.5d") and ptx.count("cp.async.bulk.tensor.2d")
    assert ".param .align 64 .b8 matmul_descriptor_param_6[128]" in ptx
    M, K, N = (3, 1, 1), (5, 1, 1), (4, 1, 1)  # parameters 3, 5 and 4
    one = (-1, 1, 1)

    def flat(*entries):
        return [x for e in entries for x in e]

    assert ck.metadata.extra["tensor_maps"] == [
        {"base": 0, "dtype": "f16",
         "sizes": flat((3, 1, 128), (-1, 8, 1), (-1, 2, 1), (-1, 8, 1), K),
         "strides": flat((5, 128, 1), (5, 8, 1), (5, 64, 1), K, one),
         "box": [1, 8, 2, 8, 64], "swizzle": 128},
        {"base": 0, "dtype": "f16", "sizes": flat(M, K), "strides": flat(K, one),
         "box": [8, 64], "swizzle": 128},
        {"base": 1, "dtype": "f16", "sizes": flat(K, N), "strides": flat(N, one),
         "box": [64, 64], "swizzle": 128},
        {"base": 2, "dtype": "f16", "sizes": flat(M, N), "strides": flat(N, one),
         "box": [128, 64], "swizzle": 128}]
    stages = dict(ck.stages)
    assert "tile.tma_copy" in stages["pipeline-loads"]
    assert "tile.view_load" not in stages["lower-array-views"]


def test_descriptor_store_of_a_dot_goes_by_tma_on_sm90():
    """C leaves through a swizzled buffer (fenced for the async proxy), one bulk copy per
    64 columns, instead of 64 scattered 4-byte stores per thread."""
    ck = _compile(1000, 1008, 256)
    ptx = ck.asm["ptx"]
    assert "tile.tma_store" in dict(ck.stages)["tma-stores"]
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 4
    assert "fence.proxy.async.shared::cta" in ptx and "cp.async.bulk.wait_group.read 0" in ptx
    assert "st.global" not in ptx and "st.shared.v2.b16" in ptx
    for ptx in (_compile(1000, 1008, 256, target="sm_80").asm["ptx"],  # no TMA
                _compile(1000, 1000, 256).asm["ptx"]):  # C's rows not known 16-byte multiples
        assert "bulk_group" not in ptx and "st.global" in ptx


def test_tma_only_where_it_can_go():
    """sm_80 has no TMA; rows that are not 16-byte multiples (K = 100 halves) cannot be
    described to it; a dot of 2 warps (not a warpgroup) runs on mma.sync: all three
    load through pointers and masks (cp.async), with the same kernel."""
    for ptx in (_compile(256, 256, 256, target="sm_80").asm["ptx"],
                _compile(256, 256, 100).asm["ptx"],
                _compile(256, 256, 256, BM=32, BN=64, num_warps=2).asm["ptx"]):
        assert "shared::cluster.global" not in ptx and "mbarrier" not in ptx  # no TMA loads
        assert "cp.async.cg.shared.global" in ptx or "ld.global" in ptx


def test_cutile_views_are_copied_by_tma():
    a, b, c = (np.zeros((512, 512), np.float16) for _ in range(3))
    ck = tc.compile(ct_matmul, backend="ptx", target="sm_90",
                    args=(a, b, c, 128, 128, 64, False), num_warps=4, num_stages=3)
    assert "cp.async.bulk.tensor.2d" in ck.asm["ptx"]
    assert [m["box"] for m in ck.metadata.extra["tensor_maps"]] == [
        [2, 4, 2, 8, 64], [8, 64], [64, 64], [128, 64]]  # 128 rows: 2 blocks of 16 x 4; C


@tc.kernel
def persistent(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Every program walks tiles pid, pid + P, ...: its K loop runs once per tile."""
    da = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    db = tl.make_tensor_descriptor(b, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    tiles_n = tl.cdiv(N, BN)
    for t in range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, tl.num_programs(0)):
        pm, pn = t // tiles_n, t % tiles_n
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K, BK):
            acc = tl.dot(da.load([pm * BM, k0]), db.load([k0, pn * BN]), acc)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        tl.store(c + rm[:, None] * N + rn[None, :], acc,
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_persistent_kernel_assembles_with_barriers_per_loop():
    a, b, c = np.zeros((256, 64), np.float16), np.zeros((64, 256), np.float16), \
        np.zeros((256, 256), np.float32)
    ck = tc.compile(persistent, backend="ptx", target="sm_90", args=(a, b, c, 256, 256, 64),
                    constants={"BM": 128, "BN": 128, "BK": 64}, num_warps=4, num_stages=3)
    ptx = ck.asm["ptx"]
    assert "mbarrier.init" in ptx and "mbarrier.inval" in ptx
    assert "cp.async.bulk.tensor" in ptx


@pytest.fixture
def ptx_device():
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ b.astype(np.float64)


def _close(got: np.ndarray, want: np.ndarray, k: int) -> None:
    tol = 2e-3 * np.sqrt(k) * max(np.abs(want).max(), 1.0)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape,config", [
    ((256, 512, 256), {"BM": 128, "BN": 256, "BK": 64, "num_warps": 8, "num_stages": 4}),
    ((200, 272, 176), {"BM": 128, "BN": 128, "BK": 64, "num_warps": 4, "num_stages": 3}),
    ((64, 64, 64), {"BM": 64, "BN": 64, "BK": 64, "num_warps": 4, "num_stages": 2}),
    ((384, 128, 1024), {"BM": 128, "BN": 128, "BK": 64, "num_warps": 8, "num_stages": 5}),
    # fewer rows than one block of 16 x 8 warps: no whole blocks, 8-row boxes only
    ((100, 256, 128), {"BM": 128, "BN": 256, "BK": 64, "num_warps": 8, "num_stages": 4}),
])
def test_descriptor_matmul_on_gpu(ptx_device, dtype, shape, config):
    torch = pytest.importorskip("torch")
    M, N, K = shape
    t = getattr(torch, dtype)
    a = torch.randn(M, K, device="cuda", dtype=t)
    b = torch.randn(K, N, device="cuda", dtype=t)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=t)
    ex_matmul.launch_descriptor(a, b, c, "ptx", **config)
    torch.cuda.synchronize()
    if torch.cuda.get_device_capability() >= (9, 0):  # what the launch compiled
        ck = tc.compile(ex_matmul.matmul_descriptor, backend="ptx", args=(a, b, c, M, N, K),
                        constants={**HOPPER, **{k: config[k] for k in ("BM", "BN", "BK")}},
                        num_warps=config["num_warps"], num_stages=config["num_stages"])
        assert "cp.async.bulk.tensor" in ck.asm["ptx"]
    _close(c.float().cpu().numpy(), _reference(a.float().cpu().numpy(),
                                               b.float().cpu().numpy()), K)


@pytest.mark.gpu
def test_persistent_tma_on_gpu(ptx_device):
    """Fewer programs than tiles: each runs the K loop several times, its barriers made
    and released around every run; and a second launch with other arrays (new maps)."""
    rng = np.random.default_rng(0)
    for M, N, K in ((512, 384, 320), (300, 256, 128)):
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        c = np.full((M, N), np.nan, np.float32)
        persistent[(5,)](a, b, c, M, N, K, BM=128, BN=128, BK=64, backend="ptx",
                         num_warps=4, num_stages=3)
        _close(c, _reference(a, b), K)


@pytest.mark.gpu
def test_cutile_matmul_tma_on_gpu(ptx_device):
    rng = np.random.default_rng(1)
    M, N, K = 320, 192, 256
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    ct.launch(None, (ct.cdiv(M, 128), ct.cdiv(N, 128)), ct_matmul,
              (a, b, c, 128, 128, 64, False), backend="ptx")
    _close(c, _reference(a, b), K)


def test_attention_descriptor_copies_k_and_v_by_tma():
    """K, read as B = tl.trans(k), and V are staged by TMA; the first dot reads K's stage
    K-major (trans-b 0), the second V's N-major (trans-b 1), P from registers."""
    q = np.zeros((2, 2, 256, 64), np.float16)
    ck = tc.compile(ex_attention.attention_descriptor, backend="ptx", target="sm_90",
                    args=(q, q, q, q, 0.125, 256, 2 * 2 * 256),
                    constants={"CAUSAL": False, "BM": 128, "BN": 64, "D": 64}, num_warps=8)
    ptx = ck.asm["ptx"]
    assert "cp.async.bulk.tensor.2d" in ptx
    wgmmas = [line.rstrip(";") for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert {w.rsplit(", ", 1)[1] for w in wgmmas} == {"0", "1"}
    # K, V; and O, whose tiles are whole (256 % BM == 0), stored by TMA
    assert [m["box"] for m in ck.metadata.extra["tensor_maps"]] == [[64, 64], [64, 64],
                                                                    [128, 64]]
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 1


@pytest.mark.gpu
@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(1, 2, 200, 64), (2, 3, 333, 128), (1, 1, 64, 64),
                                   (2, 3, 256, 64), (1, 2, 384, 128)])
def test_attention_descriptor_on_gpu(ptx_device, shape, causal, stages):
    """Blocks past a head's keys read the next head's rows (or zeros at the end): the
    scores' mask drops them. Sequences of whole tiles store O by TMA. With 4 stages the
    P V dot runs on into the next iteration."""
    _check_attention(ex_attention.launch_descriptor, shape, causal, 3, num_warps=8,
                     num_stages=stages)


def _check_attention(launch, shape, causal: bool, seed: int, **config) -> None:
    """``launch`` (an attention example's) on random f16 q, k, v at BM 128, BN 64 on ptx,
    against the reference."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(shape).astype(np.float16) for _ in range(3))
    out = np.full(shape, np.nan, np.float16)
    launch(q, k, v, out, causal, "ptx", BM=128, BN=64, **config)
    np.testing.assert_allclose(out.astype(np.float64),
                               ex_attention.reference(q, k, v, causal), atol=2e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 512, 128), (1, 2, 512, 64)])
def test_attention_descriptor_four_warps_on_gpu(ptx_device, shape, causal):
    """The configuration Triton's tutorial 06 forward picks on an H200 (BM 128, BN 64, 4
    warps, 4 stages): one warpgroup holds 128 rows, and at head dim 128 its registers are
    full while the P V dot runs on (moving ops before a wait there once made the
    tutorial's causal forward wrong at this shape)."""
    _check_attention(ex_attention.launch_descriptor, shape, causal, 6, num_warps=4,
                     num_stages=4)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(1, 2, 200, 64), (2, 2, 384, 128)])
def test_attention_by_cp_async_running_on_gpu(ptx_device, shape, causal):
    """The pointer kernel, K and V copied by cp.async into 4 stages: its P V dot runs on
    into the next iteration as with TMA."""
    _check_attention(ex_attention.launch, shape, causal, 4, num_warps=8, num_stages=4)


@pytest.mark.gpu
def test_too_much_shared_memory_is_a_clear_launch_error(ptx_device):
    """D128 at BN 128 with 4 stages needs about 290 KB; an H100/H200 block gets 227 KiB:
    Triton's ``OutOfResources``, which an autotuner skips."""
    q = np.zeros((1, 1, 128, 128), np.float16)
    with pytest.raises(OutOfResources, match=r"needs [\d,]+ bytes of shared memory, this GPU "
                                             r"gives a block at most [\d,]+: fewer num_stages"):
        ex_attention.attention_descriptor[(1, 1)](
            q, q, q, q.copy(), 0.1, 128, 128, CAUSAL=False, BM=128, BN=128, D=128,
            backend="ptx", num_warps=8, num_stages=4)


@tc.kernel
def block_ptr_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    """Block pointers moved by ``tl.advance``: checked in every dimension, they load as
    descriptors do, so TMA copies them on Hopper."""
    pa = tl.make_block_ptr(a, shape=(M, K), strides=(K, 1), offsets=(tl.program_id(0) * BM, 0),
                           block_shape=(BM, BK), order=(1, 0))
    pb = tl.make_block_ptr(b, shape=(K, N), strides=(N, 1), offsets=(0, tl.program_id(1) * BN),
                           block_shape=(BK, BN), order=(1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(pa, boundary_check=(0, 1)), tl.load(pb, boundary_check=(0, 1)),
                     acc)
        pa = tl.advance(pa, (0, BK))
        pb = tl.advance(pb, (BK, 0))
    pc = tl.make_block_ptr(c, shape=(M, N), strides=(N, 1),
                           offsets=(tl.program_id(0) * BM, tl.program_id(1) * BN),
                           block_shape=(BM, BN), order=(1, 0))
    tl.store(pc, acc, boundary_check=(0, 1))


BLOCKS = {"BM": 128, "BN": 128, "BK": 64}


def test_block_pointers_are_copied_by_tma():
    a, b, c = np.zeros((256, 128), np.float16), np.zeros((128, 256), np.float16), \
        np.zeros((256, 256), np.float32)
    ck = tc.compile(block_ptr_matmul, backend="ptx", target="sm_90",
                    args=(a, b, c, 256, 256, 128), constants=BLOCKS, num_warps=4,
                    num_stages=3)
    assert "cp.async.bulk.tensor" in ck.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(256, 256, 256), (200, 272, 176)])
def test_block_pointer_matmul_on_gpu(ptx_device, shape):
    M, N, K = shape
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float32)
    block_ptr_matmul[(tc.cdiv(M, 128), tc.cdiv(N, 128))](a, b, c, M, N, K, **BLOCKS,
                                                          backend="ptx", num_warps=4,
                                                          num_stages=3)
    _close(c, _reference(a, b), K)
