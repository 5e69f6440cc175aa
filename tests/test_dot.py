"""``tl.dot`` and ``a @ b`` on every backend against NumPy in float64: operand dtypes,
shapes, masked edges, transposed operands, accumulation loops, ``@tc.func``, and the
errors for what a dot cannot be."""

import ml_dtypes
import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability
from tests.conftest import launch


@tc.kernel
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr, PRECISION: tl.constexpr, TRANS_B: tl.constexpr,
           ACC: tl.constexpr):
    """C = A @ B over a grid of (BM, BN) blocks, K in steps of BK, edges masked."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), ACC)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        x = tl.load(a + rm[:, None] * sam + ks[None, :] * sak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K))
        if TRANS_B:  # b holds B transposed: load (BN, BK) and transpose the tile
            yt = tl.load(b + rn[:, None] * sbn + ks[None, :] * sbk,
                         mask=(rn[:, None] < N) & (ks[None, :] < K))
            y = tl.trans(yt)
        else:
            y = tl.load(b + ks[:, None] * sbk + rn[None, :] * sbn,
                        mask=(ks[:, None] < K) & (rn[None, :] < N))
        acc = tl.dot(x, y, acc, input_precision=PRECISION)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tc.func
def _tile_product(x, y):
    return x @ y


@tc.kernel
def one_block(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """One program: C = A @ B with the whole matrices as tiles, through a @tc.func."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    y = tl.load(b + rk[:, None] * N + rn[None, :])
    tl.store(c + rm[:, None] * N + rn[None, :], _tile_product(x, y))


@tc.kernel
def f16_out(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    y = tl.load(b + rk[:, None] * N + rn[None, :])
    tl.store(c + rm[:, None] * N + rn[None, :], tl.dot(x, y, out_dtype=tl.float16))


def _tf32(x: np.ndarray) -> np.ndarray:
    """Round to 10 mantissa bits (ties to even here; random data has no ties)."""
    m, e = np.frexp(x.astype(np.float64))
    return np.ldexp(np.round(m * 2.0**11) / 2.0**11, e)


def _inputs(rng, dtype, shape):
    if dtype == np.int8:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(dtype)


def _check(got, want, dtype, precision="ieee", k=1):
    if dtype == np.int8:
        np.testing.assert_array_equal(got, want.astype(np.int64).astype(np.int32))
        return
    rounding = {"ieee": 2.0**-22, "tf32": 2.0**-11, "tf32x3": 2.0**-20}[precision] \
        if dtype == np.float32 else 2.0**-22
    # sums of k products of the rounded inputs: error ~ sqrt(k) units of the largest term
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * np.sqrt(k) * rounding
                               * max(1.0, np.abs(want).max()) + 1e-6)


def _reference(a, b, precision):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if a.dtype == np.float32 and precision == "tf32":
        a64, b64 = _tf32(a), _tf32(b)
    return a64 @ b64


CASES = [  # dtype, precision, (M, N, K), block (BM, BN, BK)
    (np.float32, "ieee", (16, 16, 16), (16, 16, 16)),
    (np.float32, "ieee", (70, 50, 90), (32, 32, 16)),
    (np.float32, "tf32", (64, 48, 80), (32, 16, 32)),
    (np.float32, "tf32x3", (40, 40, 40), (16, 32, 16)),
    (np.float16, "ieee", (16, 32, 256), (16, 32, 256)),
    (np.float16, "ieee", (100, 70, 130), (64, 32, 32)),
    (np.int8, "ieee", (48, 48, 96), (32, 16, 32)),
    (ml_dtypes.bfloat16, "ieee", (64, 48, 64), (32, 16, 32)),
]


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("dtype,precision,mnk,block", CASES,
                         ids=[f"{np.dtype(c[0]).name}-{c[1]}-{'x'.join(map(str, c[2]))}"
                              for c in CASES])
def test_matmul(backend, rng, dtype, precision, mnk, block, trans_b):
    (M, N, K), (BM, BN, BK) = mnk, block
    a, b = _inputs(rng, dtype, (M, K)), _inputs(rng, dtype, (K, N))
    bt = np.ascontiguousarray(b.T)
    out_dtype = np.int32 if dtype == np.int8 else np.float32
    c = np.full((M, N), -7, out_dtype)
    strides_b = (1, K) if trans_b else (N, 1)
    if launch(matmul, (tc.cdiv(M, BM), tc.cdiv(N, BN)), a, bt if trans_b else b, c, M, N, K,
              K, 1, *strides_b, backend=backend, BM=BM, BN=BN, BK=BK,
              PRECISION=precision, TRANS_B=trans_b, ACC="i32" if dtype == np.int8 else "f32"):
        want = a.astype(np.int64) @ b.astype(np.int64) if dtype == np.int8 \
            else _reference(a, b, precision)
        if dtype == ml_dtypes.bfloat16:
            dtype = np.float16  # compared like f16: exact products, f32 sums
        _check(c, want, dtype, precision, K)


def test_dot_in_func_and_matmul_operator(backend, rng):
    a, b = _inputs(rng, np.float32, (32, 64)), _inputs(rng, np.float32, (64, 16))
    c = np.zeros((32, 16), np.float32)
    if launch(one_block, (1,), a, b, c, backend=backend, M=32, N=16, K=64):
        _check(c, a.astype(np.float64) @ b, np.float32, k=64)


def test_numpy_products_run_on_one_blas_thread(monkeypatch, rng):
    """The NumPy backend's float products run on one BLAS thread (a thread pool's hand-offs
    cost milliseconds a product on a busy machine), and the thread's count is back after."""
    from backends.numpy import dot

    set_threads = dot.blas_threads_setter()
    if set_threads is None:
        pytest.skip("NumPy's BLAS is not the OpenBLAS its wheels bundle")
    seen, products = [], dot._f32_products

    def spy(*args):
        now = set_threads(5)
        set_threads(now)
        seen.append(now)
        return products(*args)

    monkeypatch.setattr(dot, "_f32_products", spy)
    a, b = _inputs(rng, np.float32, (32, 64)), _inputs(rng, np.float32, (64, 16))
    c = np.zeros((32, 16), np.float32)
    before = set_threads(3)
    try:
        launch(one_block, (1,), a, b, c, backend="numpy", M=32, N=16, K=64)
        assert seen == [1] and set_threads(3) == 3
    finally:
        set_threads(before)
    _check(c, a.astype(np.float64) @ b, np.float32, k=64)


def test_f16_accumulator(backend, rng):
    a, b = _inputs(rng, np.float16, (16, 32)), _inputs(rng, np.float16, (32, 16))
    c = np.zeros((16, 16), np.float16)
    if launch(f16_out, (1,), a, b, c, backend=backend, M=16, N=16, K=32):
        want = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c.astype(np.float64), want, atol=2e-2 * np.abs(want).max())


def test_verify_compares_dots_with_k_tolerance(rng):
    backend = "wgsl" if availability("wgsl")[0] else "numpy"
    a, b = _inputs(rng, np.float16, (16, 64)), _inputs(rng, np.float16, (64, 16))
    c = np.zeros((16, 16), np.float32)
    matmul[(1, 1)](a, b, c, 16, 16, 64, 64, 1, 16, 1, BM=16, BN=16, BK=64, PRECISION="ieee",
                   TRANS_B=False, ACC="f32", backend=backend, verify=True)
    ck = tc.compile(matmul, args=(a, b, c, 16, 16, 64, 64, 1, 16, 1, 16, 16, 64, "ieee",
                                  False, "f32"), backend="numpy")
    assert ck.metadata.extra["dot_tolerance"] == pytest.approx(8 * 2.0**-10)


def test_dot_ir_is_visible():
    ck = tc.compile(one_block, signature="*f16,*f16,*f32", constants={"M": 16, "N": 16, "K": 32},
                    backend="numpy")
    assert 'tile.dot' in ck.asm["tile"] and 'precision "ieee"' in ck.asm["tile"]
    assert "tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>" in ck.asm["tile"]


@tc.kernel
def bad_dot(a, b, c, WHAT: tl.constexpr):
    r16, r32 = tl.arange(0, 16), tl.arange(0, 32)
    x = tl.load(a + r16[:, None] * 16 + r16[None, :])
    if WHAT == "mixed":
        y = tl.load(b + r16[:, None] * 16 + r16[None, :]).to(tl.float32)
    elif WHAT == "shape":
        y = tl.load(b + r32[:, None] * 16 + r16[None, :])
    elif WHAT == "small":
        y = tl.load(b + r16[:, None] * 8 + tl.arange(0, 8)[None, :])
    else:
        y = tl.load(b + r16[:, None] * 16 + r16[None, :])
    z = tl.dot(x, y, input_precision="tf32" if WHAT == "precision" else None)
    tl.store(c + r16[:, None] * 16 + r16[None, :], z)


@pytest.mark.parametrize("what,message", [
    ("mixed", "tl.dot operands must have one dtype, got float16 and float32"),
    ("shape", "tl.dot shapes do not match: [16, 16] @ [32, 16]"),
    ("small", "tl.dot needs every dimension to be at least 16, got [16, 8]"),
    ("precision", "tl.dot input_precision='tf32' applies to float32 operands, not float16"),
])
def test_dot_errors_point_at_the_line(what, message):
    with pytest.raises(tc.CompileError) as e:
        tc.compile(bad_dot, signature="*f16,*f16,*f32", constants={"WHAT": what},
                   backend="numpy")
    assert message in str(e.value)
    assert "z = tl.dot(x, y" in str(e.value)  # the offending line, shown


@tc.kernel
def matmul_advancing_pointers(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                              BK: tl.constexpr):
    """Triton's tutorial idiom: pointer tiles built once, advanced by BK each step."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a + rm[:, None] * K + rk[None, :]  # a broadcast tile of pointers
    b_ptrs = b + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs, mask=(k0 + rk)[None, :] < K),
                      tl.load(b_ptrs, mask=(k0 + rk)[:, None] < K))
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


def test_matmul_with_advancing_pointer_tiles(backend, rng):
    a, b = _inputs(rng, np.float16, (32, 72)), _inputs(rng, np.float16, (72, 64))
    c = np.zeros((32, 64), np.float32)
    if launch(matmul_advancing_pointers, (1, 2), a, b, c, 32, 64, 72, backend=backend, BM=32,
              BN=32, BK=16):
        _check(c, a.astype(np.float64) @ b.astype(np.float64), np.float16, k=72)


def test_num_stages_option(backend, rng):
    a, b = _inputs(rng, np.float32, (32, 80)), _inputs(rng, np.float32, (80, 32))
    c = np.zeros((32, 32), np.float32)
    if launch(matmul, (1, 1), a, b, c, 32, 32, 80, 80, 1, 32, 1, backend=backend, BM=32, BN=32,
              BK=16, PRECISION="ieee", TRANS_B=False, ACC="f32", num_stages=3):
        _check(c, a.astype(np.float64) @ b, np.float32, k=80)


def test_num_stages_changes_the_pipelined_loop():
    args = (np.zeros((32, 64), np.float16), np.zeros((64, 32), np.float16),
            np.zeros((32, 32), np.float32), 32, 32, 64, 64, 1, 32, 1, 32, 32, 16, "ieee", False,
            "f32")
    stage = {n: dict(tc.compile(matmul, args=args, backend="wgsl", num_stages=n).stages)[
        "pipeline-loads"] for n in (1, 2, 3)}
    loop = {n: next(line for line in text.splitlines() if "scf.for" in line)
            for n, text in stage.items()}
    assert loop[1].count("iter_args") == 1 and "%" in loop[1]
    # each stage in flight carries one more (a, b) pair of prefetched tiles
    assert loop[2].count("tensor<") + 2 == loop[3].count("tensor<")
    assert loop[1].count("tensor<") + 2 == loop[2].count("tensor<")
    with pytest.raises(tc.LaunchError, match="num_stages"):
        tc.compile(matmul, args=args, backend="wgsl", num_stages=0)
