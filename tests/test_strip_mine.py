"""strip-mine: elementwise tiles too large for their threads run as loops over chunks, with
the same results on every backend and generated code whose size does not grow with the
tile (docs/design.md, "Compile time is part of performance")."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch
from tests.shape_kernels import transpose


@tc.kernel
def scaled_add(x, y, out, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0)
    b = tl.load(y + offs, mask=mask, other=1.0)
    tl.store(out + offs, tl.where(a > b, a * alpha, tl.exp(b - a)), mask=mask)


@tc.kernel
def total(x, out, BLOCK: tl.constexpr):
    """A tile the reduction reads: not strip-mined, still right."""
    tl.store(out + tl.program_id(0), tl.sum(tl.load(x + tl.program_id(0) * BLOCK
                                                    + tl.arange(0, BLOCK)), axis=0))


@pytest.mark.parametrize("block", [1 << 14, 1 << 17])
def test_large_tile_matches_numpy(backend, block):
    n = 3 * block - 12345  # a masked tail in the last program
    rng = np.random.default_rng(block)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full(n, np.nan, np.float32)
    if launch(scaled_add, (tc.cdiv(n, block),), x, y, out, n, 0.5, backend=backend,
              BLOCK=block):
        want = np.where(x > y, x * 0.5, np.exp(y - x))
        np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-6)


def test_reduced_large_tile(backend):
    x = np.random.default_rng(0).standard_normal(2 * 16384).astype(np.float32)
    out = np.zeros(2, np.float32)
    if launch(total, (2,), x, out, backend=backend, BLOCK=16384):
        np.testing.assert_allclose(out, x.reshape(2, -1).sum(axis=1), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("backend_name", ["wgsl", "ptx"])
def test_code_size_does_not_grow_with_the_tile(backend_name):
    """4 warps: 2^14 elements are 128 a thread, 2^20 are 8,192: the same loop body."""
    sizes = {}
    for block in (1 << 14, 1 << 20):
        ck = tc.compile(scaled_add, signature="*f32,*f32,*f32,i32,fp32",
                        constants={"BLOCK": block}, backend=backend_name)
        sizes[block] = len(ck.asm[backend_name])
        assert "scf.for" in dict(ck.stages)["strip-mine"]
    assert abs(sizes[1 << 20] - sizes[1 << 14]) < 64, sizes
    assert sizes[1 << 20] < 20_000


@pytest.mark.parametrize("how", ["T", "pointers"])
def test_large_transpose_matches_numpy(backend, how):
    """64x64 at 1 warp, 128 elements a thread: chunks of 32 rows, each transposed."""
    m, n = 100, 150  # masked edges in both directions
    x = np.random.default_rng(1).standard_normal((m, n)).astype(np.float32)
    y = np.full((n, m), np.nan, np.float32)
    if launch(transpose, (tc.cdiv(m, 64), tc.cdiv(n, 64)), x, y, m, n, backend=backend,
              num_warps=1, HOW=how, BM=64, BN=64):
        np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("backend_name", ["wgsl", "ptx"])
def test_transpose_code_size_does_not_grow_with_the_tile(backend_name):
    """4 warps: 128x128 is 128 elements a thread, 512x512 2,048: loops of the same chunk
    body, chunks of 64 and 16 rows (the unrolled 128x128 was 226 KB of WGSL)."""
    sizes = {}
    for block in (128, 512):
        ck = tc.compile(transpose, signature="*f32,*f32,i32,i32",
                        constants={"HOW": "T", "BM": block, "BN": block}, backend=backend_name)
        sizes[block] = len(ck.asm[backend_name])
        assert "tile.trans" in dict(ck.stages)["strip-mine"].split("scf.for")[1]
    assert sizes[512] < 1.25 * sizes[128] and sizes[512] < 100_000, sizes  # 16x the tile
