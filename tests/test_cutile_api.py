"""compiler.tile as a package with cuda.tile's public names and modules: cuTile's kernel
hints with ct.ByTarget, kernel.replace_hints, compiler.tile.tune.exhaustive_search,
ct.compiler_timeout, the helpers samples import from private modules, the exception
names, and dtype arguments given as NumPy's or PyTorch's dtypes."""

import sys
import types
from typing import Annotated

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from compiler.jit import availability
from tests.conftest import launch

# cuda.tile's __all__ (cuTile 1.6): a kernel written for it finds each name here
CUDA_TILE_NAMES = [
    "launch", "ByTarget", "MemoryOrder", "MemoryScope", "PaddingMode", "RoundingMode", "DType",
    "bfloat16", "bool_", "float4_e2m1fn", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
    "float8_e5m3fnu", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "tfloat32", "uint8", "uint16", "uint32", "uint64", "TileCompilerExecutionError",
    "TileCompilerTimeoutError", "TileError", "TileInternalError", "TileRecursionError",
    "TileStaticAssertionError", "TileStaticEvalError", "TileSyntaxError", "TileTypeError",
    "TileUnsupportedFeatureError", "TileValueError", "Array", "ArrayAnnotation", "Constant",
    "ConstantAnnotation", "IndexedWithInt64", "ListAnnotation", "Scalar", "ScalarInt64",
    "Slice", "Tile", "TiledView", "abs", "add", "arange", "argmax", "argmin", "assert_",
    "assume_divisible_by", "astile", "astype", "atan2", "atomic_add", "atomic_and",
    "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
    "bitwise_and", "bitwise_lshift", "bitwise_not", "bitwise_or", "bitwise_rshift",
    "bitwise_xor", "bid", "bitcast", "broadcast_to", "cat", "cdiv", "ceil", "cos", "cosh",
    "cumprod", "cumsum", "divmod", "ensure_constant", "equal", "exp", "exp2", "expand_dims",
    "extract", "floor", "floordiv", "full", "gather", "greater", "greater_equal", "insert",
    "less", "less_equal", "load", "load_advanced_indexing", "log", "log2", "matmul", "max",
    "maximum", "min", "minimum", "mma", "mma_scaled", "mod", "mul", "negative", "isnan",
    "not_equal", "num_blocks", "num_tiles", "ones", "pack_to_bytes", "permute", "pow",
    "printf", "print", "prod", "reduce", "reshape", "rsqrt", "scan", "scatter", "sin", "sinh",
    "sqrt", "static_assert", "static_eval", "static_iter", "store", "store_advanced_indexing",
    "sub", "sum", "tan", "tanh", "transpose", "truediv", "unpack_from_bytes", "where", "zeros",
    "grid_dependency_control_wait", "grid_dependency_control_launch_dependents",
    "compiler_timeout", "tune", "function", "kernel", "compilation",
]


def test_every_cuda_tile_name_is_here():
    missing = [n for n in CUDA_TILE_NAMES if not hasattr(ct, n)]
    assert not missing


def test_modules_samples_import():
    """``from cuda.tile.X import Y`` in cuTile's samples ports to ``compiler.tile.X``."""
    from compiler.tile import RoundingMode as RMd
    from compiler.tile._bytecode.version import BytecodeVersion
    from compiler.tile._cext import dev_features_enabled, get_compute_capability
    from compiler.tile._compile import _get_max_supported_bytecode_version
    from compiler.tile.tune import Measurement, TuningResult, exhaustive_search
    assert RMd.APPROX is ct.RoundingMode.APPROX
    assert _get_max_supported_bytecode_version("/tmp") >= BytecodeVersion.V_13_3
    assert BytecodeVersion.V_13_3.as_string() == "13.3"
    assert dev_features_enabled() is False
    assert exhaustive_search is ct.tune.exhaustive_search and Measurement and TuningResult
    major, minor = get_compute_capability()
    if availability("ptx")[0]:
        assert major >= 8 and minor >= 0
    else:  # the architecture tilec's PTX compiles for without a GPU
        assert (major, minor) == (9, 0)


def test_compilation_module_refuses_with_a_reason():
    from compiler.tile import compilation
    with pytest.raises(tc.UnsupportedError, match=r"ct.compilation.export_kernel is cuTile's "
                                                  r"ahead-of-time export.*tc.compile"):
        compilation.export_kernel(copy, [], "out.cubin")


def test_exception_names_are_tilecs():
    assert ct.TileError is tc.TilecError and ct.TileTypeError is tc.CompileError
    assert ct.TileUnsupportedFeatureError is tc.UnsupportedError
    with pytest.raises(ct.TileError):
        ct.launch(None, (1,), copy, [np.zeros(8, np.float32)] * 2, backend="numpy")


@ct.kernel
def copy(x, y, T: ct.Constant[int] = 8):
    ct.store(y, (ct.bid(0),), ct.load(x, (ct.bid(0),), (T,)))


@ct.kernel
def annotated(x: ct.Array, y: Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(0,))],
              n: ct.ScalarInt64, T: ct.Constant):
    ct.static_assert(T == 8)  # a bare ct.Constant is a compile-time parameter too
    ct.store(y, (0,), ct.load(x, (0,), (T,)) + n)


def test_cutile_annotations():
    x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    ct.launch(None, (1,), annotated, (x, y, 3, 8), backend="numpy")
    np.testing.assert_array_equal(y, x + 3)


# ---------------------------------------------------------------- hints


def test_by_target_resolves_per_architecture():
    k = ct.kernel(copy.fn, num_ctas=ct.ByTarget(sm_100=2), occupancy=ct.ByTarget(
        sm_90=4, default=1), opt_level=2)
    assert k.hints("sm_100") == {"num_ctas": 2, "occupancy": 1, "opt_level": 2,
                                 "num_worker_warps": None}
    assert k.hints("sm_90")["num_ctas"] is None  # the hint's default where unspecified
    assert k.hints("sm_90")["occupancy"] == 4
    assert set(k.hints()) == {"num_ctas", "occupancy", "opt_level", "num_worker_warps"}
    assert repr(ct.ByTarget(sm_100=2, default=1)) == "ByTarget(sm_100=2, default=1)"
    assert ct.ByTarget(sm_100=2) == ct.ByTarget(sm_100=2) != ct.ByTarget(sm_90=2)


def test_replace_hints_makes_a_kernel_that_computes_the_same(rng):
    tuned = ct.kernel(occupancy=2)(copy.fn).replace_hints(num_ctas=ct.ByTarget(sm_90=2),
                                                         num_worker_warps=8)
    assert tuned.hints("sm_90") == {"num_ctas": 2, "occupancy": 2, "opt_level": 3,
                                    "num_worker_warps": 8}
    x, y = rng.random(24, dtype=np.float32), np.zeros(24, np.float32)
    ct.launch(None, (3,), tuned, (x, y), backend="numpy", programmatic_dependent_launch=True)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("hints, message", [
    ({"num_ctas": 3}, "num_ctas must be None, a power of two from 1 to 16"),
    ({"occupancy": ct.ByTarget(sm_90=40)}, "occupancy must be None, 1 to 32"),
    ({"num_worker_warps": 2}, "num_worker_warps must be None, 4 or 8"),
    ({"opt_level": 5}, "opt_level must be None, 0 to 3"),
    ({"num_warps": 4}, "unknown option(s) num_warps"),
])
def test_bad_hints(hints, message):
    with pytest.raises(tc.LaunchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ct.kernel(copy.fn, **hints)


def test_by_target_keys_are_architectures():
    with pytest.raises(tc.LaunchError, match="'hopper' is not a GPU architecture"):
        ct.ByTarget(hopper=2)


def test_compiler_timeout(rng):
    x, y = rng.random(8, dtype=np.float32), np.zeros(8, np.float32)
    with ct.compiler_timeout(10):
        ct.launch(None, (1,), copy, (x, y), backend="numpy")
    np.testing.assert_array_equal(y, x)
    with pytest.raises(tc.LaunchError, match="positive number of seconds"), \
            ct.compiler_timeout(0):
        pass


# ---------------------------------------------------------------- tune


@ct.kernel
def scale(x, y, T: ct.Constant[int]):
    ct.store(y, (ct.bid(0),), ct.load(x, (ct.bid(0),), (T,)) * 2)


def test_exhaustive_search(backend, rng, capsys):
    """Every config is launched with fresh arguments from ``args_fn`` and timed; a config
    that does not compile is a failure with its error, and the result names the
    fastest success."""
    if backend == "ptx" and not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    n = 256
    x = rng.random(n, dtype=np.float32)
    outs = []

    def args(cfg):
        outs.append(np.zeros(n, np.float32))
        return x, outs[-1], cfg["T"]
    space = [{"T": 64}, {"T": 48}, {"T": 128}]  # 48: not a power of two
    result = ct.tune.exhaustive_search(
        space, None, lambda cfg: (ct.cdiv(n, cfg["T"]),), scale, args,
        lambda cfg: {"num_ctas": ct.ByTarget(sm_100=2)}, backend=backend)
    assert [m.config for m in result.successes] == [{"T": 64}, {"T": 128}]
    assert result.best in result.successes
    assert result.best.mean_us == min(m.mean_us for m in result.successes)
    assert all(m.num_samples >= 5 and m.error_margin_us >= 0 for m in result.successes)
    (cfg, kind, message), = result.failures
    assert cfg == {"T": 48} and kind is tc.CompileError and "powers of two" in message
    assert len(outs) >= 2 * 6 and all((o == 2 * x).all() for o in outs if o.any())
    printed = capsys.readouterr().out
    assert printed.startswith("2 succeeded, 1 failed") and "* {'T'" in printed


def test_exhaustive_search_kernel_per_config_and_errors(rng):
    x = rng.random(64, dtype=np.float32)
    chosen = []

    def pick(cfg):
        chosen.append(cfg)
        return scale
    result = ct.tune.exhaustive_search([1, 2], None, lambda cfg: (1,), pick,
                                       lambda cfg: (x, np.zeros(64, np.float32), 64),
                                       quiet=True, backend="numpy")
    assert chosen == [1, 2] and len(result.successes) == 2
    with pytest.raises(tc.LaunchError, match="the search space is empty"):
        ct.tune.exhaustive_search([], None, None, scale, None, backend="numpy")
    with pytest.raises(tc.LaunchError, match="no configuration ran; the first, 1, failed "
                                             "with LaunchError: a launch took"):
        ct.tune.exhaustive_search([1], None, lambda cfg: (1,), scale,
                                  lambda cfg: (x, np.zeros(64, np.float32), 64),
                                  single_run_timeout_sec=1e-12, quiet=True, backend="numpy")


# ---------------------------------------------------------------- dtypes


class _TorchDtype:
    """A stand-in for ``torch.dtype`` (PyTorch is not installed here): what the frontend
    reads of one is its class and its ``str``, ``torch.<name>``."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"

    __repr__ = __str__


@pytest.fixture
def torch(monkeypatch):
    fake = types.ModuleType("torch")
    fake.dtype = _TorchDtype
    for name in ("int32", "float16", "bfloat16", "float32", "bool", "uint16",
                 "float8_e8m0fnu"):
        setattr(fake, name, _TorchDtype(name))
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def kernel_of(src: str, **names):
    """A ``@ct.kernel`` defined by ``exec`` of ``src`` (a ``def k``), with ``ct``, ``np``
    and ``names`` in its globals: many small kernels, one an error case each."""
    namespace = {"ct": ct, "np": np, **names}
    exec(compile(src, "<kernel>", "exec"), namespace)  # noqa: S102 - kernels from text
    return ct.kernel(namespace["k"], source=src)


FOREIGN = """
def k(x, out, T: ct.Constant[int]):
    i = ct.arange(T, dtype=torch.int32) + ct.full((T,), 1, dtype=np.int32)
    h = ct.full((T,), 0.5, dtype=torch.float16) + ct.zeros((T,), F16)
    b = ct.load(x, (0,), (T,)).astype(torch.float16).astype(np.float32)
    ct.store(out, (0, 0), ct.cat((i.astype(torch.float32).reshape((1, T)),
                                  (h.astype(ct.float32) + b).reshape((1, T))), 0))
"""


def test_torch_and_numpy_dtypes(backend, torch, rng):
    x = rng.random(16, dtype=np.float32)
    out = np.zeros((2, 16), np.float32)
    k = kernel_of(FOREIGN, torch=torch, F16=np.dtype("float16"))
    if launch(k, (1,), x, out, backend=backend, T=16):
        np.testing.assert_array_equal(out[0], np.arange(16) + 1)
        np.testing.assert_array_equal(out[1], 0.5 + x.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("body, message", [
    ("ct.arange(8, dtype=ct.float4_e2m1fn)",
     "ct.arange: ct.float4_e2m1fn: tilec has no 4-bit floats"),
    ("ct.full((8,), 1, torch.float8_e8m0fnu)",
     "ct.full: tilec has no dtype for torch.float8_e8m0fnu"),
    ("ct.zeros((8,), 'f33')", ("ct.zeros: expected a dtype such as ct.float32 (or "
                               "torch.float32, np.float32), got 'f33'")),
])
def test_dtypes_tilec_lacks(torch, body, message):
    k = kernel_of(f"def k(x):\n    t = {body}\n", torch=torch)
    with pytest.raises(tc.CompileError) as e:
        ct.launch(None, (1,), k, (np.zeros(8, np.float32),), backend="numpy")
    assert e.value.message == message
    with pytest.raises(tc.UnsupportedError, match="e8m0"):
        ct.float8_e8m0fnu(1.0)


def test_install_as_cutile_aliases_every_module_and_undoes_it(monkeypatch):
    for name in [m for m in sys.modules if m == "cuda.tile" or m.startswith("cuda.tile.")]:
        monkeypatch.delitem(sys.modules, name)
    ct.install_as_cutile()
    try:
        import cuda.tile
        import cuda.tile as aliased
        from cuda.tile.tune import exhaustive_search
        assert aliased is ct and cuda.tile is ct
        assert exhaustive_search is ct.tune.exhaustive_search
        assert sys.modules["cuda.tile._cext"] is sys.modules["compiler.tile._cext"]
    finally:
        ct.uninstall_as_cutile()
    assert not [m for m in sys.modules if m == "cuda.tile" or m.startswith("cuda.tile.")]
    assert getattr(sys.modules.get("cuda"), "tile", None) is None


def test_install_as_cutile_refuses_when_cuda_tile_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.tile", types.ModuleType("cuda.tile"))
    with pytest.raises(tc.TilecError, match="cuda.tile is already imported"):
        ct.install_as_cutile()


@ct.kernel
def _tiled_matmul(a, b, c, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    acc = ct.full((tm, tn), 0.0, dtype=ct.float32)
    for k in range(ct.cdiv(a.shape[1], tk)):
        acc = ct.mma(ct.load(a, index=(ct.bid(0), k), shape=(tm, tk)),
                     ct.load(b, index=(k, ct.bid(1)), shape=(tk, tn)), acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


@ct.kernel
def _doubled(x, TILE: ct.Constant[int]):
    ct.store(x, index=(ct.bid(0),), tile=ct.load(x, index=(ct.bid(0),), shape=(TILE,)) * 2)


@pytest.mark.parametrize(("tm", "tn", "warps"), [(128, 256, 8), (128, 128, 4), (64, 64, 4)])
def test_cutile_kernels_get_warps_for_their_accumulator(tm, tn, warps):
    """cuTile names no threads: a 128 x 256 f32 accumulator on 4 warps spilled (256
    registers a thread), so the compiler gives a warp per 4,096 accumulator elements."""
    a, b = np.ones((128, 64), np.float16), np.ones((64, 256), np.float16)
    c = np.zeros((128, 256), np.float32)
    ck = _tiled_matmul.warmup(a, b, c, tm, tn, 64, grid=(1, 1), backend="numpy")
    assert ck.metadata.num_warps == warps
    chosen = _tiled_matmul.warmup(a, b, c, tm, tn, 64, grid=(1, 1), backend="numpy",
                                  num_warps=2)
    assert chosen.metadata.num_warps == 2  # a launch that names warps keeps them


@pytest.mark.parametrize(("tile", "warps"), [(1024, 4), (4096, 4), (8192, 8), (16384, 8)])
def test_cutile_kernels_without_dots_get_a_warp_per_1024_elements(tile, warps):
    x = np.ones(1 << 14, np.float32)
    assert _doubled.warmup(x, tile, grid=(1,), backend="numpy").metadata.num_warps == warps


@pytest.mark.parametrize(("tk", "stages"), [(64, 4), (128, 2)])
def test_cutile_dot_kernels_get_the_stages_shared_memory_holds(tk, stages):
    """On sm_90, 85% of 227 KiB: four 48 KiB stages of 128x64 and 64x256 f16 tiles, two of
    the 96 KiB ones a K of 128 makes."""
    a, b = np.ones((128, 256), np.float16), np.ones((256, 256), np.float16)
    c = np.zeros((128, 256), np.float32)
    ck = tc.compile(_tiled_matmul, args=(a, b, c, 128, 256, tk), backend="ptx", target="sm_90")
    assert (ck.metadata.num_warps, ck.metadata.num_stages) == (8, stages)
    assert ck.metadata.shared >= stages * (128 + 256) * tk * 2
    on_cpu = tc.compile(_tiled_matmul, args=(a, b, c, 128, 256, tk), backend="numpy")
    assert on_cpu.metadata.num_stages == 2


@ct.kernel
def _two_dots(q, k, v, out, TM: ct.Constant[int], TN: ct.Constant[int], D: ct.Constant[int]):
    acc = ct.full((TM, D), 0.0, dtype=ct.float32)
    qt = ct.load(q, index=(ct.bid(0), 0), shape=(TM, D))
    for j in range(ct.cdiv(k.shape[0], TN)):
        s = ct.mma(qt, ct.transpose(ct.load(k, index=(j, 0), shape=(TN, D))),
                   ct.full((TM, TN), 0.0, dtype=ct.float32))
        acc = ct.mma(s.astype(ct.float16), ct.load(v, index=(j, 0), shape=(TN, D)), acc)
    ct.store(out, index=(ct.bid(0), 0), tile=acc)


@pytest.mark.parametrize(("tm", "warps"), [(128, 8), (64, 4)])
def test_cutile_dots_of_one_loop_count_together_for_warps(tm, warps):
    """Attention's loop holds S = Q K^T and acc += P V at once: 128x128 + 128x64 f32 is
    24,576 elements, 8 warps (4 spilled)."""
    q = np.ones((128, 64), np.float16)
    out = np.zeros((128, 64), np.float32)
    ck = _two_dots.warmup(q, q, q, out, tm, 128, 64, grid=(1,), backend="numpy")
    assert ck.metadata.num_warps == warps
