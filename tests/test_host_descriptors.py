"""Host tensor descriptors (``TensorDescriptor``) passed to kernels, as Triton's tutorials
06 (fused attention) and 09 (persistent matmul) pass them: ``desc.load``/``desc.store``
in the kernel on every backend, TMA copies on sm_90, ``isinstance(x, tl.tensor_descriptor)``
telling a descriptor from a pointer, autotuning ``pre_hook``s that set ``block_shape``,
the checks each launch makes of a descriptor's fields, and PyTorch tensors as bases."""

import numpy as np
import pytest

import compiler
import compiler.tile as ct
from compiler import triton
from compiler.jit import availability
from compiler.triton import language as tl
from compiler.triton.tools.tensor_descriptor import TensorDescriptor
from tests.conftest import launch


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Tuning is remembered on disk: each test tunes afresh."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))


@triton.jit
def add_one(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    """dst's block = src's block + 1 (src reads zero past its edges)."""
    row, col = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([row, col], src.load([row, col]) + 1)


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C = A @ B with B given as its transpose (N x K), as tutorial 09 lays it out."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    off_m, off_n = pid_m * BLOCK_M, pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, k])
        b = b_desc.load([off_n, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


def grid2(rows: int, cols: int, bm: int, bn: int) -> tuple[int, int]:
    return (triton.cdiv(rows, bm), triton.cdiv(cols, bn))


def test_copy_through_host_descriptors(backend, rng):
    """The destination is a column slice of a wider array, described larger than the
    source: what lies past the source reads as zero; nothing outside it is written."""
    x = rng.standard_normal((30, 20)).astype(np.float32)
    wide = np.full((37, 40), -5.0, np.float32)
    src = TensorDescriptor.from_tensor(x, [16, 8])
    dst = TensorDescriptor(wide[:, :24], [37, 24], [40, 1], [16, 8])
    if not launch(add_one, grid2(37, 24, 16, 8), src, dst, backend=backend, BM=16, BN=8):
        return
    want = np.ones((37, 24), np.float32)
    want[:30, :20] += x
    np.testing.assert_array_equal(wide[:, :24], want)
    assert (wide[:, 24:] == -5.0).all()


def test_matmul_through_host_descriptors(backend, rng):
    M, N, K, bm, bn, bk = 40, 24, 48, 16, 16, 16
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    bt = np.ascontiguousarray(b.T)
    c = np.zeros((M, N), np.float32)
    descs = (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(bt, [bn, bk]),
             TensorDescriptor.from_tensor(c, [bm, bn]))
    if launch(matmul_tma, grid2(M, N, bm, bn), *descs, M, N, K, backend=backend,
              BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk):
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def _compile_matmul(target: str, M: int = 4096, N: int = 4096, K: int = 4096):
    a, bt, c = (np.zeros(s, np.float16) for s in ((M, K), (N, K), (M, N)))
    descs = (TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(bt, [128, 64]),
             TensorDescriptor.from_tensor(c, [128, 128]))
    return compiler.compile(matmul_tma, backend="ptx", target=target, args=(*descs, M, N, K),
                            constants={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
                            num_warps=8, num_stages=3)


def test_host_descriptor_blocks_are_copied_by_tma_on_sm90():
    ck = _compile_matmul("sm_90")
    ptx, params = ck.asm["ptx"], [p.name for p in ck.metadata.params]
    assert params[:5] == ["a_desc", "a_desc_shape0", "a_desc_shape1", "a_desc_stride0",
                          "a_desc_stride1"]
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor.2d.shared" in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group" in ptx  # C's store
    maps = ck.metadata.extra["tensor_maps"]
    assert {params[m["base"]] for m in maps} == {"a_desc", "b_desc", "c_desc"}
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    older = _compile_matmul("sm_80").asm["ptx"]
    assert "cp.async.bulk.tensor" not in older and "mma.sync" in older


@triton.jit
def _as_descriptor(desc_or_ptr, shape, strides, block_shape):
    """A descriptor argument as it is; a pointer wrapped in one (tutorial 06's way)."""
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.jit
def scale_either(x, y, kinds, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """y = 2x through descriptors made of x and y whatever they are; kinds[0..1] say
    whether each was passed as a descriptor (to both of Triton's classes)."""
    xd = _as_descriptor(x, [M, N], [N, 1], [BM, BN])
    yd = _as_descriptor(y, [M, N], [N, 1], [BM, BN])
    row, col = tl.program_id(0) * BM, tl.program_id(1) * BN
    yd.store([row, col], xd.load([row, col]) * 2)
    is_x = isinstance(x, tl.tensor_descriptor)
    is_y = isinstance(y, (int, tl.core.tensor_descriptor_base))
    tl.store(kinds + tl.arange(0, 2), tl.where(tl.arange(0, 2) == 0, is_x, is_y))


@triton.jit
def scale_by_experimental_names(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Triton 3.3's spelling: ``tl._experimental_make_tensor_descriptor`` and its type."""
    xd = tl._experimental_make_tensor_descriptor(x, shape=[M, N], strides=[N, 1],
                                                 block_shape=[BM, BN])
    yd = tl._experimental_make_tensor_descriptor(y, shape=[M, N], strides=[N, 1],
                                                 block_shape=[BM, BN])
    tl.static_assert(isinstance(yd, tl._experimental_tensor_descriptor))
    row, col = tl.program_id(0) * BM, tl.program_id(1) * BN
    yd.store([row, col], xd.load([row, col]) * 2)


def test_tritons_experimental_descriptor_names(backend, rng):
    x = rng.standard_normal((40, 48)).astype(np.float32)
    y = np.full_like(x, np.nan)
    if launch(scale_by_experimental_names, (3, 2), x, y, 40, 48, backend=backend, BM=16,
              BN=32):
        np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("as_descriptor", [(True, False), (False, True), (False, False)],
                         ids=["x", "y", "neither"])
def test_isinstance_tells_a_descriptor_from_a_pointer(as_descriptor, rng):
    x = rng.standard_normal((24, 40)).astype(np.float32)
    y = np.zeros_like(x)
    kinds = np.full(2, -1, np.int32)
    args = [TensorDescriptor.from_tensor(a, [16, 16]) if d else a
            for a, d in zip((x, y), as_descriptor, strict=True)]
    scale_either[grid2(24, 40, 16, 16)](*args, kinds, 24, 40, BM=16, BN=16, backend="numpy")
    np.testing.assert_array_equal(y, 2 * x)
    assert kinds.tolist() == list(as_descriptor)


def _set_block_shapes(nargs):
    """Tutorial 09's hook: each descriptor's block shape from the config's block sizes."""
    nargs["src"].block_shape = [nargs["BM"], nargs["BN"]]
    nargs["dst"].block_shape = [nargs["BM"], nargs["BN"]]


CONFIGS = [triton.Config({"BM": 16, "BN": 8}, pre_hook=_set_block_shapes),
           triton.Config({"BM": 8, "BN": 32}, pre_hook=_set_block_shapes)]


def test_autotune_pre_hook_sets_the_block_shape_each_trial_compiles_for(rng):
    """The descriptors are made with 1 x 1 blocks, as tutorial 06 makes them: a trial
    compiled before its hook ran would copy one element per program."""
    x = rng.standard_normal((30, 40)).astype(np.float32)
    y = np.zeros_like(x)
    src, dst = TensorDescriptor.from_tensor(x, [1, 1]), TensorDescriptor.from_tensor(y, [1, 1])
    trials = []

    def bench(fn, quantiles):
        y.fill(0)
        fn()
        trials.append((list(src.block_shape), bool((y == x + 1).all())))
        return [1.0 + len(trials)] * len(quantiles)  # the first config is the fastest

    tuned = triton.autotune(configs=CONFIGS, key=["M"], do_bench=bench)(add_one_sized)
    grid = lambda meta: grid2(30, 40, meta["BM"], meta["BN"])
    tuned[grid](src, dst, 30, 40, backend="numpy")
    assert trials == [([16, 8], True), ([8, 32], True)]
    np.testing.assert_array_equal(y, x + 1)
    src.block_shape = dst.block_shape = [1, 1]  # the chosen config's hook runs again
    y.fill(0)
    tuned[grid](src, dst, 30, 40, backend="numpy")
    assert src.block_shape == [16, 8] and (y == x + 1).all()


@triton.jit
def add_one_sized(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """``add_one`` with the sizes an autotuning key names."""
    row, col = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([row, col], src.load([row, col]) + 1)


def test_nan_padding_reads_nan_past_the_edges(backend):
    x = np.ones((10, 12), np.float32)
    y = np.zeros((16, 16), np.float32)
    src = TensorDescriptor.from_tensor(x, [16, 16], padding="nan")
    if launch(add_one, (1, 1), src, TensorDescriptor.from_tensor(y, [16, 16]),
              backend=backend, BM=16, BN=16):
        assert (y[:10, :12] == 2).all()
        inside = np.zeros(y.shape, bool)
        inside[:10, :12] = True
        assert np.isnan(y[~inside]).all()


def test_compiled_kernels_take_descriptors_with_or_without_constexprs(rng):
    x = rng.standard_normal((20, 16)).astype(np.float32)
    y = np.zeros_like(x)
    descs = (TensorDescriptor.from_tensor(x, [8, 16]), TensorDescriptor.from_tensor(y, [8, 16]))
    warm = add_one.warmup(*descs, BM=8, BN=16, grid=(3, 1), backend="numpy")
    warm[(3, 1)](*descs, 8, 16)  # every argument, as Triton's compiled kernels take them
    np.testing.assert_array_equal(y, x + 1)
    ahead = compiler.compile(add_one, backend="numpy", args=descs, constants={"BM": 8, "BN": 16})
    x += 1
    ahead[(3, 1)](*descs)
    np.testing.assert_array_equal(y, x + 1)


# ---------------------------------------------------------------- what a launch refuses

def _copy(src, dst, backend="numpy"):
    add_one[(2, 2)](src, dst, BM=16, BN=16, backend=backend)


def test_fields_changed_after_construction_are_checked_at_launch():
    x, y = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    src, dst = TensorDescriptor.from_tensor(x, [16, 16]), TensorDescriptor.from_tensor(y, [16, 16])
    _copy(src, dst)
    src.strides = [1, 32]
    with pytest.raises(compiler.LaunchError, match=r"argument 'src': a tensor descriptor's last "
                       r"dimension must be contiguous \(stride 1\), got strides \[1, 32\]"):
        _copy(src, dst)
    src.strides = [32, 1]
    dst.block_shape = [16, 12]
    with pytest.raises(compiler.LaunchError, match=r"argument 'dst': block_shape entries must "
                       r"be powers of two, got \[16, 12\]"):
        _copy(src, dst)


def test_a_misaligned_base_is_refused_naming_the_argument():
    memory = np.zeros(32 * 32 + 4, np.float32)
    dst = TensorDescriptor.from_tensor(np.zeros((32, 32), np.float32), [16, 16])
    src = TensorDescriptor.from_tensor(memory[:-4].reshape(32, 32), [16, 16])
    src.base = memory[1:]  # 4 bytes past a 16-byte boundary
    aligned = r"argument 'src': a tensor descriptor's base must be 16-byte aligned"
    with pytest.raises(compiler.LaunchError, match=aligned):
        compiler.compile(add_one, backend="ptx", target="sm_90", args=(src, dst),
                         constants={"BM": 16, "BN": 16})
    with pytest.raises(compiler.LaunchError, match=aligned):
        _copy(src, dst)


def test_a_descriptor_is_refused_where_no_parameter_takes_one():
    a = np.zeros((16, 16), np.float32)
    desc = TensorDescriptor.from_tensor(a, [16, 16])

    @ct.kernel
    def tile_copy(x, y):
        ct.store(y, (0, 0), ct.load(x, (0, 0), (16, 16)))

    with pytest.raises(compiler.LaunchError, match="argument 'x': a tensor descriptor is an "
                       "argument of Triton-style kernels"):
        ct.launch(None, (1,), tile_copy, (desc, a))


# ---------------------------------------------------------------- PyTorch bases

@pytest.mark.parametrize("host_backend", ["numpy", "wgsl"])
def test_torch_tensors_as_descriptor_bases(host_backend):
    torch = pytest.importorskip("torch")
    if host_backend == "wgsl" and not availability("wgsl")[0]:
        pytest.skip("no wgsl")
    weights = torch.randn(40, 32, requires_grad=True)
    x = weights[:, :16]  # strided, and requiring grad: read through its detached self
    y = torch.zeros(40, 16)
    add_one[grid2(40, 16, 16, 8)](TensorDescriptor.from_tensor(x, [16, 8]),
                                  TensorDescriptor.from_tensor(y, [16, 8]), BM=16, BN=8,
                                  backend=host_backend)
    assert torch.equal(y, x.detach() + 1)
