"""Kernels in the shapes of NVIDIA's cuTile samples that the CPU backends (numpy, and
wgsl on lavapipe) once could not run, on every backend (ptx without a GPU: compiled and
assembled): column sums of partial gradients in LayerNorm's backward pass, the row
statistics of AttentionFMHA's online softmax, BlockScaledMatMul's scale tiles put back in
order through five dimensions, and layout changes too large for one trip through shared
memory (its scale broadcasts)."""

import numpy as np

import compiler as tc
import compiler.tile as ct
from tests.conftest import launch

C = ct.Constant[int]


@ct.kernel
def column_sums(parts_a, parts_b, out_a, out_b, TM: C, TN: C):
    """Each program adds the rows of a TN-wide column band of two arrays of partials."""
    band = ct.bid(0)
    acc_a = ct.zeros((TM, TN), dtype=ct.float32)
    acc_b = ct.zeros((TM, TN), dtype=ct.float32)
    for i in range(ct.num_tiles(parts_a, axis=0, shape=(TM, TN))):
        acc_a += ct.load(parts_a, index=(i, band), shape=(TM, TN),
                         padding_mode=ct.PaddingMode.ZERO)
        acc_b += ct.load(parts_b, index=(i, band), shape=(TM, TN),
                         padding_mode=ct.PaddingMode.ZERO)
    ct.store(out_a, index=(band,), tile=ct.sum(acc_a, axis=0))
    ct.store(out_b, index=(band,), tile=ct.sum(acc_b, axis=0).astype(out_b.dtype))


def test_column_sums_of_wide_bands(backend, rng):
    """32 x 1024 bands on the eight warps the compiler gives them: two column sums whose
    warps split the rows took 64 KiB of workgroup memory, twice what lavapipe has."""
    a = rng.standard_normal((80, 2048)).astype(np.float32)
    b = rng.standard_normal((80, 2048)).astype(np.float32)
    out_a, out_b = np.zeros(2048, np.float32), np.zeros(2048, np.float16)
    if launch(column_sums, (2,), a, b, out_a, out_b, backend=backend, num_warps=None,
              TM=32, TN=1024):
        np.testing.assert_allclose(out_a, a.sum(axis=0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out_b, b.sum(axis=0).astype(np.float16), rtol=2e-3,
                                   atol=2e-3)


def test_column_sum_needs_no_workgroup_memory():
    """The warps of a tile summed along its rows go along its columns: each thread sums
    its own columns, and nothing crosses threads."""
    a = np.zeros((64, 2048), np.float32)
    ck = tc.compile(column_sums, args=(a, a, a[0], a[0].astype(np.float16), 32, 1024),
                    backend="wgsl")
    assert ck.metadata.num_warps == 8
    assert ck.metadata.shared == 0


@ct.kernel
def row_statistics(x, out_max, out_sum, TM: C, TN: C):
    """An online softmax's statistics of each row: its maximum, and the sum of the
    exponentials of its elements less that maximum, a column band at a time."""
    rows = ct.bid(0)
    top = ct.full((TM, 1), -np.inf, dtype=ct.float32)
    total = ct.zeros((TM, 1), dtype=ct.float32)
    for j in range(ct.num_tiles(x, axis=1, shape=(TM, TN))):
        band = ct.load(x, index=(rows, j), shape=(TM, TN))
        new_top = ct.maximum(top, ct.max(band, axis=1, keepdims=True))
        total = total * ct.exp(top - new_top) + ct.sum(ct.exp(band - new_top), axis=1,
                                                       keepdims=True)
        top = new_top
    ct.store(out_max, index=(rows, 0), tile=top)
    ct.store(out_sum, index=(rows, 0), tile=total)


def test_row_statistics_across_warps(backend, rng):
    """Rows of 2 x 1024 bands: each row spans two warps, so both reductions go through
    workgroup memory in every trip of the loop."""
    x = rng.standard_normal((4, 4096)).astype(np.float32)
    top, total = np.zeros((4, 1), np.float32), np.zeros((4, 1), np.float32)
    if launch(row_statistics, (2,), x, top, total, backend=backend, TM=2, TN=1024):
        want = x.max(axis=1, keepdims=True)
        np.testing.assert_array_equal(top, want)
        np.testing.assert_allclose(total, np.exp(x - want).sum(axis=1, keepdims=True),
                                   rtol=2e-5)


def test_reductions_in_turn_share_workgroup_memory():
    """The two reductions of the loop exchange their partials one after the other, with
    barriers between: one workgroup array serves both."""
    x = np.zeros((4, 4096), np.float32)
    ck = tc.compile(row_statistics, args=(x, x[:, :1], x[:, :1], 2, 1024), backend="wgsl",
                    num_warps=4)
    wgsl = ck.asm["wgsl"]
    arrays = [ln for ln in wgsl.splitlines() if ln.startswith("var<workgroup> v_")]
    assert len(arrays) == 1
    assert wgsl.count(arrays[0].split()[1].rstrip(":") + "[") >= 4  # both write and read it



@ct.kernel
def unswizzle(packed, out, M0: C, K0: C):
    """Scale tiles stored as blocks of (32, 4 x 4) for the tensor cores, back as the
    (rows, columns) matrix they came from: through a 5-D reshape and permute."""
    t = ct.load(packed, index=(ct.bid(0), 0, 0, 0), shape=(M0, K0, 32, 16))
    rows = t.reshape((M0, K0, 32, 4, 4)).permute((0, 3, 2, 1, 4)).reshape((M0 * 128, K0 * 4))
    ct.store(out, index=(ct.bid(0), 0), tile=rows)


def swizzled(scales: np.ndarray) -> np.ndarray:
    """(M, K) scales as (M / 128, K / 4, 32, 16) blocks: row 32 j + i of a block of 128
    goes to (i, 4 j + column mod 4)."""
    m, k = scales.shape
    blocks = scales.reshape(m // 128, 4, 32, k // 4, 4).transpose(0, 3, 2, 1, 4)
    return np.ascontiguousarray(blocks).reshape(m // 128, k // 4, 32, 16)


def test_scales_unswizzled_through_five_dimensions(backend, rng):
    scales = rng.integers(0, 255, (512, 8)).astype(np.float32)
    out = np.zeros_like(scales)
    if launch(unswizzle, (2,), swizzled(scales), out, backend=backend, M0=2, K0=2):
        np.testing.assert_array_equal(out, scales)


@ct.kernel
def transposed(x, out, TM: C, TN: C):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(TM, TN))
    ct.store(out, index=(0, ct.bid(0)), tile=ct.transpose(t))


def test_transpose_in_several_trips(backend, rng):
    """256 x 64 f32 (64 KiB) moves through 16 KiB of shared memory on wgsl in trips."""
    x = rng.standard_normal((512, 64)).astype(np.float32)
    out = np.zeros((64, 512), np.float32)
    if launch(transposed, (2,), x, out, backend=backend, num_warps=None, TM=256, TN=64):
        np.testing.assert_array_equal(out, x.T)


def test_trips_through_shared_memory_are_a_loop():
    """The trips are a loop, so the shader does not grow with them: one store, one load
    and two barriers (five trips unrolled made 10 barriers and twice the WGSL, and
    BlockScaledMatMul's two 8-trip scale broadcasts took lavapipe three minutes)."""
    x = np.zeros((256, 64), np.float32)
    wgsl = tc.compile(transposed, args=(x, x.T.copy(), 256, 64), backend="wgsl").asm["wgsl"]
    assert wgsl.count("workgroupBarrier()") == 2
    assert wgsl.count("for (") == 1
