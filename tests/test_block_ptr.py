"""Block pointers (``tl.make_block_ptr``/``tl.advance``) and tensor descriptors on every
backend: boundary checks on ragged edges, padding, loop-carried block pointers in a
matmul, transposed views, 1-D blocks; and the errors at the user's line."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from tests.conftest import launch


@tc.kernel
def copy2d(x, y, M, N, sxm, sxn, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    """y = x block by block, the ragged edges boundary-checked (y is M x N, row-major)."""
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    src = tl.make_block_ptr(x, (M, N), (sxm, sxn), (pm, pn), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(y, (M, N), (N, 1), (pm, pn), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1), padding_option=PAD), boundary_check=(0, 1))


@tc.kernel
def padded(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    """y (BM x BN) = the block at (0, 0) of the M x N matrix x, padded as PAD says."""
    src = tl.make_block_ptr(x, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    out = tl.make_block_ptr(y, (BM, BN), (BN, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(out, tl.load(src, boundary_check=(0, 1), padding_option=PAD))


@tc.kernel
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
    """C = A @ B as in Triton's block-pointer matmul tutorial: ``advance`` along K."""
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    a_bp = tl.make_block_ptr(a, (M, K), (sam, sak), (pm, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b, (K, N), (sbk, sbn), (0, pn), (BK, BN), (0, 1))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        x = tl.load(a_bp, boundary_check=(0, 1))
        y = tl.load(b_bp, boundary_check=(0, 1))
        acc = tl.dot(x, y, acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c, (M, N), (N, 1), (pm, pn), (BM, BN), (1, 0))
    tl.store(c_bp, acc, boundary_check=(0, 1))


@tc.kernel
def desc_copy(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """y = x + 1 through tensor descriptors, one block per program."""
    src = tl.make_tensor_descriptor(x, (M, N), (N, 1), (BM, BN))
    dst = tl.make_tensor_descriptor(y, (M, N), (N, 1), (BM, BN))
    at = (tl.program_id(0) * BM, tl.program_id(1) * BN)
    dst.store(at, src.load(at) + 1.0)


@tc.kernel
def ragged_sum(x, y, n, step, BLOCK: tl.constexpr):
    """y[0:BLOCK] = sum over k of x[k*step : k*step + BLOCK] (1-D, beyond n reads 0),
    the block pointer advanced under a runtime ``if`` in a ``while`` loop."""
    bp = tl.make_block_ptr(x, (n,), (1,), (0,), (BLOCK,), (0,))
    acc = tl.zeros((BLOCK,), tl.float32)
    k = 0
    while k * step < n:
        acc += tl.load(bp, boundary_check=(0,))
        if step > 0:
            bp = tl.advance(bp, (step,))
        k += 1
    tl.store(tl.make_block_ptr(y, (BLOCK,), (1,), (0,), (BLOCK,), (0,)), acc)


def test_copy_ragged_edges(backend, rng):
    m, n, bm, bn = 37, 21, 16, 8
    x = rng.standard_normal((m, n)).astype(np.float32)
    y = np.zeros_like(x)
    grid = (tc.cdiv(m, bm), tc.cdiv(n, bn))
    if launch(copy2d, grid, x, y, m, n, n, 1, backend=backend, BM=bm, BN=bn, PAD="zero"):
        np.testing.assert_array_equal(y, x)


def test_copy_transposed_view(backend, rng):
    """Strides swapped: the block pointer reads x.T without a copy."""
    m, n = 19, 13
    x = rng.standard_normal((n, m)).astype(np.float32)
    y = np.zeros((m, n), np.float32)
    grid = (tc.cdiv(m, 8), tc.cdiv(n, 8))
    if launch(copy2d, grid, x, y, m, n, 1, m, backend=backend, BM=8, BN=8, PAD=""):
        np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_padding(backend, rng, pad):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = np.full((8, 4), 7.0, np.float32)
    if not launch(padded, (1,), x, y, 5, 3, backend=backend, BM=8, BN=4, PAD=pad):
        return
    want = np.full((8, 4), np.nan if pad == "nan" else 0.0, np.float32)
    want[:5, :3] = x
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("trans_b", [False, True], ids=["b", "bT"])
def test_matmul(backend, rng, dtype, trans_b):
    m, n, k = 40, 24, 44
    a = rng.standard_normal((m, k)).astype(dtype)
    b_store = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    b = b_store.T if trans_b else b_store
    sbk, sbn = (1, k) if trans_b else (n, 1)
    c = np.zeros((m, n), np.float32)
    grid = (tc.cdiv(m, 16), tc.cdiv(n, 16))
    if not launch(matmul, grid, a, b_store, c, m, n, k, k, 1, sbk, sbn, backend=backend,
                  BM=16, BN=16, BK=16):
        return
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(c, want, rtol=tol, atol=tol)


def test_descriptor_round_trip(backend, rng):
    m, n = 20, 12
    x = rng.standard_normal((m, n)).astype(np.float32)
    # y is the top-left m x n of a larger buffer: the edges beyond must stay untouched
    big = np.full((m + 8, n), -5.0, np.float32)
    if not launch(desc_copy, (tc.cdiv(m, 8), tc.cdiv(n, 8)), x, big, m, n, backend=backend,
                  BM=8, BN=8):
        return
    np.testing.assert_array_equal(big[:m], x + 1)
    np.testing.assert_array_equal(big[m:], -5.0)


def test_one_dimensional_in_while_and_if(backend, rng):
    n, step, block = 50, 16, 16
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(block, np.float32)
    if not launch(ragged_sum, (1,), x, y, n, step, backend=backend, BLOCK=block):
        return
    want = np.zeros(block)
    for s in range(0, n, step):
        part = x[s:s + block]
        want[:len(part)] += part
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_loop_carries_only_moved_offsets():
    """The matmul's loop carries the accumulator and one offset per block pointer."""
    bound = matmul.bind([np.zeros((4, 4), np.float32)] * 3 + [4] * 7,
                        {"BM": 16, "BN": 16, "BK": 16})
    ir = matmul.compile_for(bound, "numpy", 4, False).asm["tile"]
    loop = next(line for line in ir.splitlines() if "scf.for" in line)
    assert "-> (i32, i32, tensor<16x16xf32>)" in loop, loop
    assert "%a_bp_off1, %b_bp_off0, %acc = scf.for" in loop


# ---------------------------------------------------------------- errors

@tc.kernel
def bad(x, KIND: tl.constexpr):
    if KIND == "rank":
        tl.make_block_ptr(x, (4, 4), (4, 1), (0,), (4, 4), (1, 0))  # ERR rank
    elif KIND == "pow2":
        tl.make_block_ptr(x, (4, 4), (4, 1), (0, 0), (4, 6), (1, 0))  # ERR pow2
    elif KIND == "check":
        tl.load(tl.make_block_ptr(x, (4,), (1,), (0,), (4,), (0,)), boundary_check=(1,))  # ERR check
    elif KIND == "padding":
        bp = tl.make_block_ptr(x, (4,), (1,), (0,), (4,), (0,))
        tl.load(bp, boundary_check=(0,), padding_option="inf")  # ERR padding
    elif KIND == "store_shape":
        bp = tl.make_block_ptr(x, (4, 4), (4, 1), (0, 0), (4, 4), (1, 0))
        tl.store(bp, tl.zeros((4, 2), tl.float32))  # ERR store_shape
    elif KIND == "advance_rank":
        bp = tl.make_block_ptr(x, (4, 4), (4, 1), (0, 0), (4, 4), (1, 0))
        tl.advance(bp, (4,))  # ERR advance_rank
    elif KIND == "desc_rank":
        tl.make_tensor_descriptor(x, (4, 4), (4, 1), (4, 4)).load((0, 0, 0))  # ERR desc_rank
    elif KIND == "mask":
        bp = tl.make_block_ptr(x, (4,), (1,), (0,), (4,), (0,))
        tl.load(bp, mask=tl.arange(0, 4) < 2)  # ERR mask
    elif KIND == "loop_type":
        bp = tl.make_block_ptr(x, (4,), (1,), (0,), (4,), (0,))
        for _ in range(2):  # ERR loop_type
            bp = tl.make_block_ptr(x, (4,), (1,), (0,), (8,), (0,))


ERRORS = [
    ("rank", "offsets has 1 entries but the block has 2 dimensions"),
    ("pow2", "block_shape must hold constexpr powers of two, got [4, 6]"),
    ("check", "boundary_check names dimension 1, but the block has 1 dimension"),
    ("padding", "padding_option must be 'zero' or 'nan', got 'inf'"),
    ("store_shape", "the value is tile<4x2, float32> but the block is [4, 4]"),
    ("advance_rank", "tl.advance: offsets has 1 entries but the block has 2 dimensions"),
    ("desc_rank", "desc.load: offsets has 3 entries"),
    ("mask", "tl.load of a block pointer: mask cannot be used here"),
    ("loop_type", ("'bp' is block pointer <4, float32> before the loop but block pointer "
                   "<8, float32> after an iteration")),
]


@pytest.mark.parametrize("kind,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_point_at_the_line(kind, message):
    with pytest.raises(tc.CompileError) as info:
        bad[(1,)](np.zeros(16, np.float32), KIND=kind, backend="numpy")
    text = str(info.value)
    assert message in text
    assert f"# ERR {kind}" in text  # the failing line is shown, so reported


@tc.kernel
def transposed_view(x, y, M, N, sxm, CHECK: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """y (N x M) = x.T, read through a block pointer over x whose order makes dimension
    0 the contiguous one (loaded with it last, then transposed back)."""
    pn, pm = tl.program_id(0) * BN, tl.program_id(1) * BM
    src = tl.make_block_ptr(x, (N, M), (1, sxm), (pn, pm), (BN, BM), (0, 1))
    dst = tl.make_block_ptr(y, (N, M), (M, 1), (pn, pm), (BN, BM), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=CHECK), boundary_check=(0, 1))


@pytest.mark.parametrize("check", [(), (0,), (1,), (0, 1)])
def test_block_with_dimension_0_contiguous(backend, check):
    m, n = (50, 70) if check == (0, 1) else (64, 96)
    x = np.random.default_rng(len(check)).standard_normal((m, n)).astype(np.float32)
    y = np.full((n, m), np.nan, np.float32)
    if launch(transposed_view, (tc.cdiv(n, 32), tc.cdiv(m, 32)), x, y, m, n, n,
              backend=backend, CHECK=check, BM=32, BN=32):
        np.testing.assert_array_equal(y, x.T)


@tc.kernel
def strided_copy(x, y, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs * stride, mask=offs < n), mask=offs < n)


def test_an_integer_argument_of_1_compiles_as_the_constant():
    """As Triton specializes it: stride 1 makes the loads contiguous (vectorized on PTX);
    any other stride compiles its own kernel, and both give the right answer."""
    x = np.arange(2048, dtype=np.float32)
    for stride in (1, 2, 1):
        y = np.zeros(1024, np.float32)
        strided_copy[(2,)](x, y, 1024, stride, BLOCK=512, backend="numpy")
        np.testing.assert_array_equal(y, x[: 1024 * stride: stride])
    ptx = {s: strided_copy.compile_for(strided_copy.bind((x, y, 1024, s), {"BLOCK": 512}),
                                       "ptx", 4).asm["ptx"] for s in (1, 2)}
    compiled = tc.compile(strided_copy, args=(x, y, 1024, 1, 512), backend="numpy")
    compiled[(2,)](x, y, 1024, 2)  # tc.compile keeps the argument: any stride launches
    np.testing.assert_array_equal(y, x[:2048:2])
    assert "ld.global.v4" in ptx[1] and "ld.global.v4" not in ptx[2]
