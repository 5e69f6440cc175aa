"""Pieces of Triton's language that real kernels lean on: 0-d tiles (Triton's scalars,
``tl.full((), eps, tl.float32)``), ``x.cast(dtype)`` beside ``x.to(dtype)``, and 32 warps
a program (Triton allows up to 32)."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability

from .conftest import launch


@tc.kernel
def centered(X, Y, n, eps_value, BLOCK: tl.constexpr):
    eps = tl.full((), eps_value, tl.float32)  # a 0-d tile: a scalar
    total = tl.zeros([], dtype=tl.float32)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + cols, mask=cols < n, other=0.0)
    total += tl.sum(x, axis=0)
    mean = total / n
    halves = (x - mean).cast(tl.float16)
    tl.store(Y + cols, halves.cast(tl.float32) / tl.sqrt(eps + 1.0), mask=cols < n)


def _expected(x: np.ndarray, eps: float) -> np.ndarray:
    mean = np.float32(x.sum(dtype=np.float32) / np.float32(len(x)))
    return (x - mean).astype(np.float16).astype(np.float32) / np.sqrt(np.float32(eps + 1.0))


@pytest.mark.parametrize("num_warps", [4, 32])
def test_zero_d_tiles_and_cast(backend, num_warps):
    x = np.linspace(-3, 5, 1000, dtype=np.float32)
    y = np.zeros_like(x)
    if launch(centered, (1,), x, y, len(x), 0.25, backend=backend, num_warps=num_warps,
              BLOCK=1024):
        np.testing.assert_allclose(y, _expected(x, 0.25), rtol=1e-3, atol=1e-3)


def test_zero_d_tile_is_a_scalar_in_the_ir():
    ck = tc.compile(centered, signature="*f32,*f32,i32,f32", constants={"BLOCK": 64},
                    backend="numpy")
    assert "tensor<f32>" not in ck.asm["tile"]  # no 0-d tensors: plain f32 values


def test_thirty_two_warps_is_the_most():
    x = np.zeros(8, np.float32)
    with pytest.raises(tc.LaunchError, match=r"1, 2, 4, 8, 16 or 32, got 64"):
        centered[(1,)](x, x, 8, 0.1, BLOCK=8, num_warps=64, backend="numpy")
    with pytest.raises(tc.LaunchError, match=r"got '4'"):
        centered[(1,)](x, x, 8, 0.1, BLOCK=8, num_warps="4", backend="numpy")


@tc.kernel
def row_softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def test_warmup_compiles_without_launching_and_the_result_launches_with_every_argument():
    if not availability("wgsl")[0]:
        pytest.skip("wgsl unavailable")
    x = np.random.default_rng(0).standard_normal((37, 100)).astype(np.float32)
    y = np.full_like(x, np.nan)
    k = row_softmax.warmup(y, x, 100, 100, 37, 100, BLOCK_SIZE=128, num_stages=3,
                           num_warps=8, grid=(1,), backend="wgsl")
    assert np.isnan(y).all()  # nothing ran
    assert (k.metadata.num_warps, k.metadata.num_stages) == (8, 3)
    assert k.metadata.shared > 0 and k.n_spills == 0
    assert k.n_regs == 24 + 2 * 128 // 256  # an estimate on wgsl: 2 words a thread, doubled
    k._init_handles()
    k[(5, 1, 1)](y, x, 100, 100, 37, 100, 128, 3)  # constexprs too, as Triton launches them
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(tc.LaunchError, match=r"compiled with argument 6 = 128 .*got 256"):
        k[(5,)](y, x, 100, 100, 37, 100, 256, 3)


@pytest.mark.parametrize(("block", "num_warps", "regs"), [(8192, 8, 88), (1024, 4, 40),
                                                          (1 << 16, 4, 255)])
def test_cpu_backends_estimate_registers_so_occupancy_arithmetic_runs(block, num_warps, regs):
    """Triton's tutorials size persistent grids by ``65536 // (n_regs * 32 * num_warps)``:
    on numpy the estimate is twice the words a thread would hold of the widest tile, plus
    24, and shared memory what a reduction would use (0s divided by zero)."""
    x = np.zeros((2, block), np.float32)
    k = row_softmax.warmup(x, x, block, block, 2, block, BLOCK_SIZE=block, num_stages=2,
                           num_warps=num_warps, grid=(1,), backend="numpy")
    assert k.n_regs == regs
    assert k.metadata.shared == 4 * num_warps  # a word a warp for each f32 reduction
    assert 65536 // (k.n_regs * 32 * num_warps) >= 1 and 232448 // k.metadata.shared >= 1


def test_ptx_reports_registers_and_spills():
    k = tc.compile(row_softmax, args=(np.zeros(4, np.float32), np.zeros(4, np.float32), 2, 2,
                                      2, 2, 128, 2), backend="ptx", num_warps=4)
    assert 8 <= k.n_regs <= 255 and k.n_spills == 0
    assert k.metadata.num_stages == 2 and k.metadata.shared >= 0


@tc.kernel
def running_sum(X, Y, n, BLOCK: tl.constexpr, WS: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in tl.range(0, n, BLOCK, warp_specialize=WS, flatten=True,
                          disallow_acc_multi_buffer=True, disable_licm=False):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < n, other=0.0)
    tl.store(Y + tl.arange(0, BLOCK), acc)


def test_tl_range_takes_tritons_scheduling_hints(backend):
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(32, np.float32)
    if launch(running_sum, (1,), x, y, 100, backend=backend, BLOCK=32, WS=True):
        np.testing.assert_array_equal(y, np.pad(x, (0, 28)).reshape(-1, 32).sum(axis=0))


def test_tl_range_hints_must_be_constexpr_bools():
    x = np.zeros(8, np.float32)
    with pytest.raises(tc.CompileError, match="warp_specialize must be a constexpr bool"):
        running_sum[(1,)](x, x, 8, BLOCK=8, WS="yes", backend="numpy")


@tc.kernel
def decayed(X, Y, n, s, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m_i = tl.zeros((BLOCK,), tl.float32)
    for _ in range(2):  # loop-carried: a float64 s would change m_i's type
        m_i = m_i * s + tl.load(X + offs, mask=offs < n, other=0.0)
    tl.store(Y + offs, m_i, mask=offs < n)


def test_a_numpy_float64_scalar_is_a_python_float(backend):
    x = np.arange(10, dtype=np.float32)
    y = np.zeros_like(x)
    scale = 1.0 / np.sqrt(16.0)  # np.float64, as ported attention code computes it
    assert decayed.specialize(decayed.bind((x, y, 10, scale, 16), {}))[3].dtype == tl.float32
    if launch(decayed, (1,), x, y, 10, scale, backend=backend, BLOCK=16):
        np.testing.assert_array_equal(y, x * np.float32(0.25) + x)


@tc.kernel
def dependent_add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.extra.cuda.gdc_wait()  # programmatic dependent launch (tutorial 11's idiom)
    a = tl.load(x + offs, mask=mask)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(out + offs, a + tl.load(y + offs, mask=mask), mask=mask)


def test_tritons_launch_options_are_taken(backend):
    import compiler.triton  # noqa: F401 - gives tl.extra.cuda its Triton names
    x, y = np.arange(100, dtype=np.float32), np.ones(100, np.float32)
    out = np.zeros_like(x)
    if launch(dependent_add, (4,), x, y, out, 100, backend=backend, BLOCK=32, num_ctas=1,
              launch_pdl=True, maxnreg=128, enable_fp_fusion=False, waves_per_eu=2,
              matrix_instr_nonkdim=16, kpack=2, extern_libs={"libdevice": "unread.bc"}):
        np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize("options, error, match", [
    ({"num_ctas": 2}, tc.UnsupportedError, "thread-block clusters"),
    ({"num_ctas": 0}, tc.LaunchError, "num_ctas must be a positive integer"),
    ({"launch_pdl": "yes"}, tc.LaunchError, "launch_pdl must be True or False"),
    ({"maxnreg": 1000}, tc.LaunchError, "maxnreg must be None or 1 to 255"),
    ({"extern_libs": "libdevice.bc"}, tc.LaunchError, "extern_libs must be a dict"),
])
def test_launch_options_are_checked(options, error, match):
    x = np.zeros(8, np.float32)
    with pytest.raises(error, match=match):
        centered[(1,)](x, x, 8, 0.1, BLOCK=8, backend="numpy", **options)


@tc.kernel
def masked_scores(S, Y, n, BLOCK: tl.constexpr):
    """A mask's fill as attention kernels write it: a float32 literal past float16's range,
    which a load's ``other`` and a store's value convert as a cast does (to -inf)."""
    cols = tl.arange(0, BLOCK)
    s = tl.load(S + cols, mask=cols < n, other=-1e9)
    tl.store(Y + cols, s)
    tl.store(Y + BLOCK + cols, 1e9, mask=cols < 1)


def test_literals_a_load_or_store_casts_overflow_to_infinity(backend):
    s = np.linspace(-2, 2, 5, dtype=np.float16)
    y = np.zeros(16 + 1, np.float16)
    if launch(masked_scores, (1,), s, y, len(s), backend=backend, BLOCK=8):
        np.testing.assert_array_equal(y[:5], s)
        assert np.isneginf(y[5:8]).all() and np.isposinf(y[8]) and (y[9:] == 0).all()


@tc.kernel
def clipped_slope(X, Y, n, BLOCK: tl.constexpr):
    """Numbers bound to names, then a tile's methods on them: activation helpers write
    ``zero = 0.0`` and ``zero.to(x.dtype)``."""
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + cols, mask=cols < n, other=0.0)
    zero = 0.0
    slope = 0.01 + 0.0
    one = 1
    y = tl.where(x >= 0, x, slope.to(x.dtype) * x) + zero.to(x.dtype)
    tl.store(Y + cols, tl.minimum(y, one.to(x.dtype)), mask=cols < n)
    tl.static_assert(zero.dtype == tl.float32 and one.dtype == tl.int32)


def test_numbers_bound_to_names_take_a_tiles_methods(backend):
    x = np.linspace(-4, 4, 13, dtype=np.float16)
    y = np.zeros_like(x)
    if launch(clipped_slope, (1,), x, y, len(x), backend=backend, BLOCK=16):
        slope = x * np.float16(0.01)
        np.testing.assert_array_equal(y, np.minimum(np.where(x >= 0, x, slope), 1))


@tl.constexpr
def accumulator_of(dt):
    """A compile-time helper as libraries write one: ``@tl.constexpr`` over a function."""
    return tl.float32 if dt.is_fp16() or dt.is_bf16() else dt


@tc.func
def lowest(dt):
    """A dtype reaches a helper as Triton's constexpr: ``.value`` is the dtype."""
    if dt.value.is_floating():
        return float("-inf")
    return 0


@tc.kernel
def running_total(X, Y, Z, n, BLOCK: tl.constexpr):
    """Triton's dtype questions as methods, ``tl.constexpr(expr)``, ``x.numel`` and
    ``if ptr:`` (an array passed, or None)."""
    cols = tl.arange(0, BLOCK)
    acc: tl.constexpr = accumulator_of(X.dtype.element_ty)
    tl.static_assert(acc.is_floating() and not acc.is_int() and acc.primitive_bitwidth == 32)
    x = tl.load(X + cols, mask=cols < n, other=lowest(X.dtype.element_ty))
    tl.static_assert(x.numel == BLOCK)
    if tl.constexpr(X.dtype.element_ty == tl.float16):
        x = x * 1.0
    if Y:
        tl.store(Y + cols, tl.cumsum(x.to(acc), 0), mask=cols < n)
    if Z:
        tl.store(Z + cols, x, mask=cols < n)


def test_dtype_questions_constexpr_helpers_and_pointer_conditions(backend):
    x = np.arange(1, 9, dtype=np.float16)
    y = np.zeros(8, np.float32)
    if launch(running_total, (1,), x, y, None, 8, backend=backend, BLOCK=8):
        np.testing.assert_array_equal(y, np.cumsum(x.astype(np.float32)))


@tc.heuristics({"BLOCK": lambda a: 1 << (a["n"] - 1).bit_length(), "num_warps": lambda a: 2})
@tc.kernel
def plus_one(X, Y, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.store(Y + cols, tl.load(X + cols, mask=cols < n) + 1, mask=cols < n)


def test_heuristics_may_choose_launch_options(backend):
    x = np.arange(5, dtype=np.float32)
    y = np.zeros_like(x)
    if backend == "ptx" and not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    plus_one[(1,)](x, y, 5, backend=backend)
    np.testing.assert_array_equal(y, x + 1)


@tc.kernel
def doubled_block(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """A block pointer's ``.dtype.element_ty``, as flash-linear-attention kernels cast."""
    px = tl.make_block_ptr(X, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    py = tl.make_block_ptr(Y, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    x = tl.load(px, boundary_check=(0, 1)).to(tl.float32)
    tl.store(py, (x * 2).to(py.dtype.element_ty), boundary_check=(0, 1))


def test_block_pointer_dtype(backend):
    x = np.arange(12, dtype=np.float16).reshape(3, 4)
    y = np.zeros_like(x)
    if launch(doubled_block, (1,), x, y, 3, 4, backend=backend, BM=4, BN=4):
        np.testing.assert_array_equal(y, 2 * x)


def test_tritons_standard_module_and_its_log2():
    from compiler.triton.language import standard
    assert standard.zeros_like is tl.zeros_like and standard._log2(64) == 6
