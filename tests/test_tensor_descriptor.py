"""Triton tensor descriptors as array views: ``desc.load``/``desc.store`` at element
offsets that are not multiples of the block, or negative, on every backend; a descriptor
matmul over K; the tile IR they make, and the i64 descriptor that keeps the pointer path."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch


@tc.kernel
def shift(x, y, M, N, di, dj, ei, ej, BM: tl.constexpr, BN: tl.constexpr):
    """y's block at (pm + ei, pn + ej) = x's block at (pm + di, pn + dj), as y's dtype."""
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    src = tl.make_tensor_descriptor(x, (M, N), (N, 1), (BM, BN))
    dst = tl.make_tensor_descriptor(y, (M, N), (N, 1), (BM, BN))
    dst.store((pm + ei, pn + ej), src.load((pm + di, pn + dj)))


@tc.kernel
def constant_offsets(x, y, z, M, N, I: tl.constexpr, J: tl.constexpr, FILL: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr):
    """y (BM x BN) = x's block at the constant (I, J); FILL (a scalar) written to the
    block of z (BM x BN) at (-I, -J)."""
    src = tl.make_tensor_descriptor(x, (M, N), (N, 1), (BM, BN))
    tl.make_tensor_descriptor(y, (BM, BN), (BN, 1), (BM, BN)).store((0, 0), src.load((I, J)))
    tl.make_tensor_descriptor(z, (BM, BN), (BN, 1), (BM, BN)).store((-I, -J), FILL)


@tc.kernel
def wide_shape(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """y = x + 1 through descriptors whose shape is i64: the pointer-and-mask path."""
    m, n = M.to(tl.int64), N.to(tl.int64)
    at = (tl.program_id(0) * BM, tl.program_id(1) * BN)
    src = tl.make_tensor_descriptor(x, (m, n), (n, 1), (BM, BN))
    dst = tl.make_tensor_descriptor(y, (m, n), (n, 1), (BM, BN))
    dst.store(at, src.load(at) + 1.0)


@tc.kernel
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B (row-major), every block read and written through a descriptor."""
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    a_desc = tl.make_tensor_descriptor(a, (M, K), (K, 1), (BM, BK))
    b_desc = tl.make_tensor_descriptor(b, (K, N), (N, 1), (BK, BN))
    c_desc = tl.make_tensor_descriptor(c, (M, N), (N, 1), (BM, BN))
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load((pm, k)), b_desc.load((k, pn)), acc)
    c_desc.store((pm, pn), acc)


def window(x: np.ndarray, i: int, j: int, bm: int, bn: int, fill=0) -> np.ndarray:
    """The bm x bn block of x at element (i, j), ``fill`` outside x."""
    out = np.full((bm, bn), fill, x.dtype)
    r0, r1 = max(i, 0), min(i + bm, x.shape[0])
    c0, c1 = max(j, 0), min(j + bn, x.shape[1])
    if r0 < r1 and c0 < c1:
        out[r0 - i:r1 - i, c0 - j:c1 - j] = x[r0:r1, c0:c1]
    return out


def put(y: np.ndarray, block: np.ndarray, i: int, j: int) -> None:
    """Write ``block`` at element (i, j) of y, dropping what falls outside."""
    bm, bn = block.shape
    r0, r1 = max(i, 0), min(i + bm, y.shape[0])
    c0, c1 = max(j, 0), min(j + bn, y.shape[1])
    if r0 < r1 and c0 < c1:
        y[r0:r1, c0:c1] = block[r0 - i:r1 - i, c0 - j:c1 - j]


@pytest.mark.parametrize("di,dj,ei,ej", [(3, -5, 0, 0), (-7, 2, 5, -3), (-40, 9, -2, 11)],
                         ids=["load", "both", "far"])
def test_unaligned_and_negative_offsets(backend, rng, di, dj, ei, ej):
    m, n, bm, bn = 37, 21, 16, 8
    x = rng.standard_normal((m, n)).astype(np.float32)
    y = np.full((m, n), -9.0, np.float16)  # stored as f16: the tile is converted
    grid = (tc.cdiv(m, bm), tc.cdiv(n, bn))
    if not launch(shift, grid, x, y, m, n, di, dj, ei, ej, backend=backend, BM=bm, BN=bn):
        return
    want = np.full((m, n), -9.0, np.float16)
    for pi in range(grid[0]):
        for pj in range(grid[1]):
            pm, pn = pi * bm, pj * bn
            put(want, window(x, pm + di, pn + dj, bm, bn).astype(np.float16),
                pm + ei, pn + ej)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("i,j", [(5, 3), (-6, -1)])
def test_constant_offsets_and_scalar_store(backend, rng, i, j):
    m, n, bm, bn = 12, 10, 8, 8
    x = rng.standard_normal((m, n)).astype(np.float32)
    y, z = np.zeros((bm, bn), np.float32), np.zeros((bm, bn), np.float32)
    if not launch(constant_offsets, (1,), x, y, z, m, n, backend=backend, I=i, J=j,
                  FILL=2.5, BM=bm, BN=bn):
        return
    np.testing.assert_array_equal(y, window(x, i, j, bm, bn))
    want = np.zeros((bm, bn), np.float32)
    put(want, np.full((bm, bn), 2.5, np.float32), -i, -j)
    np.testing.assert_array_equal(z, want)


def test_i64_shape_keeps_pointer_path(backend, rng):
    m, n = 20, 12
    x = rng.standard_normal((m, n)).astype(np.float32)
    y = np.zeros_like(x)
    grid = (tc.cdiv(m, 8), tc.cdiv(n, 8))
    if launch(wide_shape, grid, x, y, m, n, backend=backend, BM=8, BN=8):
        np.testing.assert_array_equal(y, x + 1)
    ir = tile_ir(wide_shape, [x, y, m, n], {"BM": 8, "BN": 8})
    assert "tile.make_view" not in ir and "tile.load" in ir


def tile_ir(kernel, args, constexprs) -> str:
    bound = kernel.bind(args, constexprs)
    return kernel.compile_for(bound, "numpy", 4, False).asm["tile"]


def test_descriptor_accesses_are_element_views():
    x = np.zeros((8, 8), np.float32)
    ir = tile_ir(shift, [x, x, 8, 8, 0, 0, 0, 0], {"BM": 8, "BN": 8})
    assert ir.count("tile.make_view") == 2
    load = next(line for line in ir.splitlines() if "tile.view_load" in line)
    store = next(line for line in ir.splitlines() if "tile.view_store" in line)
    assert 'padding "zero" elements' in load, load
    assert " elements :" in store, store
    assert "tile.load" not in ir and "tile.store" not in ir


def run_matmul(backend, rng, m, n, k):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    grid = (tc.cdiv(m, 64), tc.cdiv(n, 64))
    if not launch(matmul, grid, a, b, c, m, n, k, backend=backend, BM=64, BN=64, BK=32):
        return
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("backend", ["numpy", "wgsl"], indirect=True)
def test_matmul_ragged(backend, rng):
    run_matmul(backend, rng, 100, 72, 80)


@pytest.mark.gpu
def test_matmul_ragged_ptx(rng):
    run_matmul("ptx", rng, 200, 136, 176)


def test_matmul_assembles_for_sm90():
    ck = tc.compile(matmul, signature={"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32",
                                       "N": "i32", "K": "i32"},
                    constants={"BM": 64, "BN": 64, "BK": 32}, backend="ptx", target="sm_90")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert "tile.view_load" in ck.asm["tile"]


@tc.kernel
def bad_store(x):
    desc = tl.make_tensor_descriptor(x, (4, 4), (4, 1), (4, 4))
    desc.store((1, -1), tl.zeros((4, 2), tl.float32))  # ERR here


def test_store_shape_error_points_at_the_line():
    with pytest.raises(tc.CompileError) as info:
        bad_store[(1,)](np.zeros(16, np.float32), backend="numpy")
    text = str(info.value)
    assert "desc.store: the value is tile<4x2, float32> but the block is [4, 4]" in text
    assert "# ERR here" in text
