"""``compiler.cublas``: finding libcublasLt (here, with no GPU), the checks of a product's
arguments (before cuBLAS is called), and on a GPU (``gpu``) products against NumPy for
every element type, on PyTorch's current stream, profiled, and through Triton's
``triton._C.libtriton.nvidia.cublas``."""

import importlib
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import compiler
import compiler.triton.profiler as proton
from compiler import cublas
from compiler.errors import BackendUnavailableError, LaunchError

# ---------------------------------------------------------------- finding the library


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """A process that has loaded no cuBLAS, with no toolkit and nothing on the linker's
    path: only what a test puts under ``tmp_path`` is found."""
    monkeypatch.setattr(cublas, "_mapped_files", list)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site-packages")])
    monkeypatch.setattr(cublas, "CUDA_DEFAULT", str(tmp_path / "cuda"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(cublas.ctypes.util, "find_library", lambda name: None)
    return tmp_path


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def test_without_cublas_the_error_says_where_it_looked_and_what_to_install(nowhere):
    assert cublas.candidates() == []
    with pytest.raises(BackendUnavailableError) as e:
        cublas.open_library(cublas.candidates())
    message = str(e.value)
    for where in ("libcublasLt.so", "nvidia-cublas", "CUDA_HOME", "/usr/local/cuda"):
        assert where in message


def test_the_pip_package_the_toolkit_and_a_loaded_library_are_found_in_that_order(
        nowhere, monkeypatch):
    toolkit = touch(nowhere / "toolkit" / "lib64" / "libcublasLt.so.12")
    wheel = touch(nowhere / "site-packages" / "nvidia" / "cublas" / "lib" / "libcublasLt.so.12")
    wheel13 = touch(nowhere / "site-packages" / "nvidia" / "cu13" / "lib" / "libcublasLt.so.13")
    os.symlink(wheel, wheel.parent / "libcublasLt.so")  # the same file twice: tried once
    monkeypatch.setenv("CUDA_HOME", str(nowhere / "toolkit"))
    assert cublas.candidates() == [str(wheel.parent / "libcublasLt.so"), str(wheel13),
                                   str(toolkit)]
    loaded = touch(nowhere / "torch" / "lib" / "libcublasLt.so.12.8")
    monkeypatch.setattr(cublas, "_mapped_files", lambda: ["/usr/lib/libc.so.6", str(loaded)])
    assert cublas.candidates()[0] == str(loaded)
    monkeypatch.setattr(cublas.ctypes.util, "find_library", lambda name: "libcublasLt.so.12")
    assert cublas.candidates()[-1] == "libcublasLt.so.12"


def test_a_file_that_does_not_load_is_reported_with_why(nowhere):
    touch(nowhere / "cuda" / "lib64" / "libcublasLt.so.12")  # not a library
    with pytest.raises(BackendUnavailableError, match="could not be loaded .*libcublasLt.so.12"):
        cublas.open_library(cublas.candidates())


# ---------------------------------------------------------------- the arguments

class DeviceArray:
    """A device array as ``__cuda_array_interface__`` shows it, at address 0 (so nothing
    asks the driver where it is)."""

    def __init__(self, shape, typestr="<f2", strides=None):
        self.shape, self.dtype = shape, np.dtype(typestr)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0, False),
                                         "strides": strides, "version": 3}


def check(a, b, c):
    mats = [cublas.matrix(n, v) for n, v in zip("abc", (a, b, c))]
    cublas.check_product(*mats, (a, b, c))


def test_a_product_of_supported_types_and_shapes_passes_the_checks():
    for operand, result in [("<f2", "<f2"), ("<f2", "<f4"), ("<f4", "<f4")]:
        check(DeviceArray((6, 4), operand), DeviceArray((5, 4), operand),
              DeviceArray((6, 5), result))
    padded = DeviceArray((6, 4), strides=(16, 2))  # rows 8 elements apart
    assert cublas.matrix("a", padded).ld == 8
    check(padded, DeviceArray((5, 4)), DeviceArray((6, 5)))


@pytest.mark.parametrize("a, b, c, error", [
    (np.zeros((6, 4), np.float16), DeviceArray((5, 4)), DeviceArray((6, 5)),
     "argument 'a': expected a CUDA array .*got a NumPy array"),
    (DeviceArray((6, 4)), DeviceArray((5, 3)), DeviceArray((6, 5)),
     r"c = a @ b.T with a \(M, K\), b \(N, K\) and c \(M, N\); got a \(6, 4\), b \(5, 3\)"),
    (DeviceArray((6, 4)), DeviceArray((5, 4)), DeviceArray((5, 6)), r"c \(5, 6\)"),
    (DeviceArray((6, 0)), DeviceArray((5, 0)), DeviceArray((6, 5)), "empty product"),
    (DeviceArray((24,)), DeviceArray((5, 4)), DeviceArray((6, 5)),
     "argument 'a': expected a 2-D array"),
    (DeviceArray((6, 4), strides=(2, 12)), DeviceArray((5, 4)), DeviceArray((6, 5)),
     "argument 'a': .* is not row-major .*; pass a contiguous copy of a"),
    (DeviceArray((6, 4)), DeviceArray((5, 4), "<f4"), DeviceArray((6, 5)),
     "argument 'b': its dtype float32 differs from a's \\(float16\\)"),
    (DeviceArray((6, 4), "|i1"), DeviceArray((5, 4), "|i1"), DeviceArray((6, 5), "|i1"),
     ("argument 'a': cuBLASLt products here take operands of float16, bfloat16, float32, "
      "float8e4nv; got .* of int8")),
    (DeviceArray((6, 4), "<f4"), DeviceArray((5, 4), "<f4"), DeviceArray((6, 5), "<f2"),
     "argument 'c': a product of float32 operands is stored as float32; got .* of float16"),
    (DeviceArray((6, 4), "<c8"), DeviceArray((5, 4)), DeviceArray((6, 5)),
     "complex64 arrays are not supported"),
])
def test_a_product_cublas_cannot_compute_is_refused_naming_the_argument(a, b, c, error):
    with pytest.raises(LaunchError, match=error):
        check(a, b, c)


def test_a_pytorch_tensor_off_the_gpu_is_refused():
    torch = pytest.importorskip("torch")
    with pytest.raises(LaunchError, match=r"argument 'b': .*PyTorch tensor .* is not on a "
                                          r"CUDA device; pass b.cuda\(\)"):
        cublas.matrix("b", torch.zeros(4, 4))


def test_the_workspace_must_be_a_cuda_array():
    with pytest.raises(LaunchError, match="argument 'workspace': expected a CUDA array"):
        cublas.CublasLt(np.zeros(1 << 20, np.uint8))


def test_triton_reaches_cublas_as_libtriton_nvidia_and_has_no_amd(monkeypatch):
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        monkeypatch.delitem(sys.modules, name)
    compiler.triton.install_as_triton()
    try:
        from triton._C.libtriton import nvidia
        assert nvidia.cublas.CublasLt is cublas.CublasLt
        assert sys.modules["triton._C.libtriton.nvidia.cublas"] is nvidia.cublas
        with pytest.raises(ImportError, match="amd"):
            importlib.import_module("triton._C.libtriton.amd")
    finally:
        compiler.triton.uninstall_as_triton()


# ---------------------------------------------------------------- on a GPU

@pytest.fixture
def blas(torch_cuda):
    return cublas.CublasLt(torch_cuda.empty(32 << 20, dtype=torch_cuda.uint8, device="cuda"))


NUMPY = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
         "float8_e4m3fn": ml_dtypes.float8_e4m3fn}


def operands(torch, dtype, m=96, n=80, k=72, high=3, seed=0):
    """Integer-valued operands, so f32 sums are exact and a result is its exact value
    rounded once to its type; and that exact product."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(-high, high + 1, (m, k)), rng.integers(-high, high + 1, (n, k))
    as_torch = lambda x: torch.tensor(x, dtype=torch.float32, device="cuda").to(
        getattr(torch, dtype))
    return as_torch(a), as_torch(b), a @ b.T


def result(torch, c):
    return c.to(torch.float32).cpu().numpy()


@pytest.mark.gpu
@pytest.mark.parametrize("operand, out", [
    ("float16", "float16"), ("float16", "float32"), ("bfloat16", "bfloat16"),
    ("bfloat16", "float32"), ("float32", "float32")])
def test_products_match_numpy(torch_cuda, blas, operand, out):
    torch = torch_cuda
    a, b, exact = operands(torch, operand)
    c = torch.empty(exact.shape, dtype=getattr(torch, out), device="cuda")
    blas.matmul(a, b, c)
    torch.cuda.synchronize()
    want = exact.astype(NUMPY[out]).astype(np.float32)
    np.testing.assert_array_equal(result(torch, c), want)


@pytest.mark.gpu
@pytest.mark.parametrize("out", ["float8_e4m3fn", "float16", "bfloat16", "float32"])
def test_fp8_products_match_numpy(torch_cuda, blas, out):
    torch = torch_cuda
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("cuBLASLt's fp8 products need sm_89 or newer")
    a, b, exact = operands(torch, "float8_e4m3fn", m=64, n=48, k=32, high=2)
    c = torch.empty(exact.shape, dtype=getattr(torch, out), device="cuda")
    blas.matmul(a, b, c)
    torch.cuda.synchronize()
    want = exact.astype(NUMPY[out]).astype(np.float32)
    # e4m3 keeps 3 bits: a sum between two of its values may round either way (1/8)
    tolerance = {"rtol": 0.125} if out == "float8_e4m3fn" else {"rtol": 0}
    np.testing.assert_allclose(result(torch, c), want, **tolerance)


@pytest.mark.gpu
def test_padded_rows_and_cuda_array_interface_arrays(torch_cuda, blas):
    torch = torch_cuda
    a, b, exact = operands(torch, "float16")
    wide = torch.zeros(a.shape[0], a.shape[1] + 8, dtype=a.dtype, device="cuda")
    wide[:, :a.shape[1]] = a

    class Interface:  # only the CUDA array interface: no data_ptr, no torch type
        def __init__(self, t):
            self.shape, self.dtype = tuple(t.shape), np.float16
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    c = torch.empty(exact.shape, dtype=torch.float16, device="cuda")
    blas.matmul(Interface(wide[:, :a.shape[1]]), Interface(b), Interface(c))
    torch.cuda.synchronize()
    np.testing.assert_array_equal(result(torch, c), exact.astype(np.float32))


@pytest.mark.gpu
def test_a_product_goes_on_torchs_current_stream_so_a_cuda_graph_captures_it(torch_cuda,
                                                                              blas):
    torch = torch_cuda
    a, b, exact = operands(torch, "float16")
    c = torch.zeros(exact.shape, dtype=torch.float16, device="cuda")
    blas.matmul(a, b, c)  # the heuristic is asked before the capture
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        blas.matmul(a, b, c)  # on the legacy default stream this would break the capture
    c.zero_()
    graph.replay()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(result(torch, c), exact.astype(np.float32))


@pytest.mark.gpu
def test_a_profile_times_products_under_their_scope(torch_cuda, blas):
    torch = torch_cuda
    a, b, exact = operands(torch, "float16")
    c = torch.empty(exact.shape, dtype=torch.float16, device="cuda")
    proton.start()
    try:
        with proton.scope("cuBLAS", {"flops16": 2.0 * exact.size * a.shape[1]}):
            blas.matmul(a, b, c)
            blas.matmul(a, b, c)
        (row,) = proton.report()
    finally:
        proton.finalize()
    assert row["name"] == "cuBLAS/cublasLt_matmul" and row["launches"] == 2
    assert row["total_ms"] > 0


@pytest.mark.gpu
def test_triton_s_cublas_is_this_one(torch_cuda, monkeypatch):
    torch = torch_cuda
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        monkeypatch.delitem(sys.modules, name)
    compiler.triton.install_as_triton()
    try:
        from triton._C.libtriton import nvidia
        blas = nvidia.cublas.CublasLt(torch.empty(1 << 20, dtype=torch.uint8, device="cuda"))
        a, b, exact = operands(torch, "float16")
        c = torch.empty(exact.shape, dtype=torch.float16, device="cuda")
        blas.matmul(a, b, c)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(result(torch, c), exact.astype(np.float32))
    finally:
        compiler.triton.uninstall_as_triton()
