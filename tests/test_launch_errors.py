"""Launch errors say which argument is wrong, what it is and what would be accepted, in one
style on every backend (``argument 'x': ...``); grids beyond the GPU limits are refused on
numpy too; option values are shown as given (``'4'``)."""

import tracemalloc

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from backends import ptx as ptx_backend
from backends.numpy import kernel as numpy_kernel
from compiler.jit import availability
from compiler.kinfo import Param
from examples.vector_add import add

N = 64
LIST = "argument 'x': expected an array (NumPy, CuPy, PyTorch, wgpu buffer) or a number, got list"
STRIDED = ("argument 'x': a NumPy array of float32 with shape (32, 64) and strides (-4, 128) "
           "has negative strides; pass np.ascontiguousarray(x)")


@pytest.fixture(params=["numpy", "wgsl"])
def backend(request):
    if not availability(request.param)[0]:
        pytest.skip(f"{request.param}: {availability(request.param)[1]}")
    return request.param


def vectors():
    return np.ones(N, np.float32), np.ones(N, np.float32), np.zeros(N, np.float32)


class GradTensor:
    """Stands for a PyTorch CUDA tensor with ``requires_grad``: its interface refuses."""

    dtype, shape = "float32", (N,)

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")


@pytest.mark.parametrize("make_x, message", [
    (lambda: [1.0] * N, LIST),
    (lambda: np.ones((64, 32), np.float32).T[::-1], STRIDED),
    (lambda: np.ones(N, np.complex64), ("argument 'x': complex64 arrays are not supported (got a "
                                       "NumPy array of complex64 with shape (64,)); use one of "
                                       "float16, bfloat16, float32")),
    (GradTensor, ("argument 'x': a GradTensor of float32 with shape (64,) cannot be passed: "
                 "Can't get __cuda_array_interface__")),
])
def test_a_bad_array_is_named(backend, make_x, message):
    _, y, out = vectors()
    with pytest.raises(tc.LaunchError) as e:
        add[(1,)](make_x(), y, out, N, BLOCK=N, backend=backend)
    assert str(e.value).startswith(message)


def test_a_bad_scalar_is_named(backend):
    x, y, out = vectors()
    with pytest.raises(tc.LaunchError, match="^argument 'n': expected an array .* or a number, "
                                             "got str 'ten'$"):
        add[(1,)](x, y, out, "ten", BLOCK=N, backend=backend)


@pytest.mark.parametrize("index, value, message", [
    (1, np.ones(N), ("argument 'y': float64 arrays are not supported on wgsl (WGSL has no "
                    "64-bit floats); use float32 (got a NumPy array of float64 with shape (64,))")),
])
def test_what_wgsl_cannot_hold_is_an_argument_error(index, value, message):
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    args = [*vectors(), N]
    args[index] = value
    with pytest.raises(tc.UnsupportedError) as e:
        add[(1,)](*args, BLOCK=N, backend="wgsl")
    assert str(e.value) == message  # no source location: the kernel is not at fault
    assert e.value.loc is None


@ct.kernel
def ct_copy(a, b):
    ct.store(b, index=(0,), tile=ct.load(a, index=(0,), shape=(16,)))


@pytest.mark.parametrize("a, message", [
    ([1.0] * 16, ("argument 'a': expected an array (NumPy, CuPy, PyTorch, wgpu buffer) or a "
                 "number, got list")),
    (np.zeros((2,) * 6, np.float32), ("argument 'a': a NumPy array of float32 with shape "
     "(2, 2, 2, 2, 2, 2) and strides (128, 64, 32, 16, 8, 4) has 6 dimensions; compiler.tile "
     "kernels take arrays of 1 to 5 dimensions")),
    (np.zeros(16, np.complex64), "argument 'a': complex64 arrays are not supported"),
])
def test_cutile_arrays_are_named(backend, a, message):
    with pytest.raises(tc.LaunchError) as e:
        ct.launch(None, (1,), ct_copy, (a, np.zeros(16, np.float32)), backend=backend)
    assert str(e.value).startswith(message)


def test_backend_checks_share_the_style():
    """Each backend's own check of an argument (a launcher called directly) words it as
    the launch does."""
    backwards = np.zeros(8, np.float32)[::-2]
    want = ("argument 'x': a NumPy array of float32 with shape (4,) and strides (-8,) has "
            "negative strides; pass np.ascontiguousarray(x)")
    messages = [_launcher_message(name, backwards) for name in ("numpy", "wgsl")
                if availability(name)[0]]
    with pytest.raises(tc.LaunchError) as e:  # ptx: its check, without a GPU
        ptx_backend._span(Param("x", "f32", True), backwards)
    assert [*messages, str(e.value)] == [want] * (len(messages) + 1)


def _launcher_message(backend: str, x: np.ndarray) -> str:
    ck = tc.compile(add, signature="*f32, *f32, *f32, i32", constants={"BLOCK": N},
                    backend=backend)
    with pytest.raises(tc.LaunchError) as e:
        ck.launcher((1, 1, 1), [x, np.ones(4, np.float32), np.zeros(4, np.float32), 4])
    return str(e.value)


@pytest.mark.parametrize("put, message", [
    (lambda p: ptx_backend._pointer_put(p, None, 0, list),
     ("argument 'x': the ptx backend takes NumPy arrays and CUDA device arrays (CuPy, PyTorch, "
     "__cuda_array_interface__, DLPack), got list")),
    (lambda p: ptx_backend._numpy(p, np.dtype(np.float32), np.zeros(4)),
     "argument 'x': expected an array of float32, got a NumPy array of float64 with shape (4,)"),
    (lambda p: ptx_backend._scalar_put(Param("n", "i32", False), None, 0, str),
     "argument 'n': expected a scalar of type int32, got str"),
])
def test_ptx_argument_checks(put, message):
    with pytest.raises(tc.LaunchError) as e:
        put(Param("x", "f32", True))
    assert str(e.value) == message


# -- grids -------------------------------------------------------------------------------

@pytest.mark.parametrize("grid", [(2**40,), (1, 65536), (1, 1, 65536)])
def test_numpy_keeps_to_the_gpu_grid_limits(grid):
    x, y, out = vectors()
    with pytest.raises(tc.LaunchError, match=r"is invalid: each size must be positive, x at "
                                             r"most 2\*\*31 - 1, y and z at most 65535"):
        add[grid](x, y, out, N, BLOCK=N, backend="numpy")


class _Stop(Exception):
    pass


def test_a_huge_grid_makes_program_ids_a_batch_at_a_time(monkeypatch):
    """2**24 programs: the ids of all of them at once took 800 MB; a batch's are enough.
    The launch stops after its first batch."""
    def first_batch_only(batch, steps):
        raise _Stop
    x, y, out = vectors()
    add[(1,)](x, y, out, N, BLOCK=N, backend="numpy")  # compiled outside the measurement
    monkeypatch.setattr(numpy_kernel.Batch, "run", first_batch_only)
    tracemalloc.start()
    try:
        with pytest.raises(_Stop):
            add[(2**24,)](x, y, out, N, BLOCK=N, backend="numpy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20, f"{peak / 2**20:.0f} MiB"


# -- options -----------------------------------------------------------------------------

def test_num_warps_is_shown_as_given():
    """As num_stages, the grid and the backend already were: ``'4'``, not ``4``."""
    x, y, out = vectors()
    with pytest.raises(tc.LaunchError, match="^num_warps must be 1, 2, 4, 8, 16 or 32, got '4'$"):
        add[(1,)](x, y, out, N, BLOCK=N, backend="numpy", num_warps="4")


# -- cuTile launches -------------------------------------------------------------------------

@ct.kernel
def scale(a, t: ct.Constant[int]):
    ct.store(a, index=(0, 0), tile=ct.load(a, index=(0, 0), shape=(t, t)) * 2)


def test_ct_launch_args_must_be_a_tuple():
    a = np.ones((32, 32), np.float32)
    with pytest.raises(tc.LaunchError) as e:
        ct.launch(None, (1,), scale, a, backend="numpy")
    assert str(e.value) == ("ct.launch(stream, grid, kernel, args): args must be a tuple of "
                            "scale's arguments (a, t), got a NumPy array of float32 with shape "
                            "(32, 32)")
    ct.launch(None, (1,), scale, (a, 32), backend="numpy")
    np.testing.assert_array_equal(a, 2)


@ct.kernel
def triton_arange(a):
    ct.store(a, index=(0,), tile=tl.arange(0, 16) + ct.arange(16, dtype=ct.int32))


@ct.kernel
def triton_program_id(a):
    ct.store(a, index=(tl.program_id(0),), tile=ct.zeros((16,), dtype=ct.int32))


@ct.kernel
def triton_hint(a):
    ct.store(a, index=(0,), tile=tl.multiple_of(ct.arange(16, dtype=ct.int32), 16))


@ct.kernel
def shared_builtins(a):
    t = ct.load(a, index=(0,), shape=(16,))
    ct.store(a, index=(0,), tile=tl.maximum(tl.exp(t), ct.exp(t)))


TRITON = ("belongs to the Triton-style language (compiler.language, @tc.kernel), not to the "
          "cuTile-style language (compiler.tile, @ct.kernel)")


@pytest.mark.parametrize("kernel, message", [
    (triton_arange, f"tl.arange {TRITON}: use ct.arange(size, *, dtype=None, start=0, step=1)"),
    (triton_program_id, f"tl.program_id {TRITON}: use ct.bid(axis)"),
    (triton_hint, f"tl.multiple_of {TRITON}, which has no multiple_of"),
])
def test_triton_builtins_in_a_ct_kernel(kernel, message):
    """Refused where they would mean something else; ``tl.exp`` is ``ct.exp``, and works."""
    with pytest.raises(tc.CompileError) as e:
        ct.launch(None, (1,), kernel, (np.zeros(16, np.int32),), backend="numpy")
    assert e.value.message == message
    a = np.zeros(16, np.float32)
    ct.launch(None, (1,), shared_builtins, (a,), backend="numpy")
    np.testing.assert_array_equal(a, 1)
