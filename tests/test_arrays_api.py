"""Arrays on any backend: ``tc.empty``, ``tc.zeros``, ``tc.asarray``, ``tc.to_numpy``,
``tc.synchronize``, and views of one flat array handed to kernels."""

import ctypes
import gc
import subprocess
import sys

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
import compiler.tile as ct
from compiler import dlpack
from compiler.jit import availability
from examples.vector_add import add
from tests.conftest import repo_pythonpath


@pytest.fixture(params=["numpy", "wgsl", pytest.param("ptx", marks=pytest.mark.gpu)])
def backend(request):
    """A backend that runs here (ptx: skipped without a GPU)."""
    ok, why = availability(request.param)
    if not ok:
        pytest.skip(f"{request.param}: {why}")
    return request.param


def _host_dtypes(backend):
    import ml_dtypes
    common = [np.float32, np.float16, np.int32, np.int8, np.uint8, np.bool_, np.int64]
    if backend == "wgsl":  # WGSL has no bfloat16 or float64 (UNSUPPORTED_DTYPES)
        return common
    return [*common, np.float64, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn]


def test_round_trip_of_every_dtype(backend, rng):
    for dtype in _host_dtypes(backend):
        host = (rng.standard_normal((3, 7)) * 20).astype(dtype)  # 21 elements: padded
        a = tc.asarray(host, backend=backend)
        assert a.shape == (3, 7) and a.size == 21
        back = tc.to_numpy(a)
        assert back.dtype == host.dtype and back.shape == (3, 7)
        np.testing.assert_array_equal(back.view(np.uint8), host.view(np.uint8))
        back[0, 0] = 0  # a copy: the array is not changed through it
        assert tc.to_numpy(a).view(np.uint8).tobytes() == host.view(np.uint8).tobytes()


def test_zeros_are_zeros_and_asarray_copies(backend):
    for _ in range(2):  # the second allocation may reuse the first's memory
        a = tc.empty((5, 33), "f16", backend=backend)
        a[...] = 7
        assert (tc.to_numpy(a) == 7).all()
        del a
        gc.collect()
        z = tc.zeros((5, 33), tl.float16, backend=backend)
        assert tc.to_numpy(z).dtype == np.float16 and not tc.to_numpy(z).any()
    host = np.arange(6, dtype=np.int32)
    a = tc.asarray(host, backend=backend)
    host[:] = -1  # asarray copied it, on numpy too
    np.testing.assert_array_equal(tc.to_numpy(a), np.arange(6))


def test_a_launch_takes_them_and_writes_land_in_them(backend, rng):
    n = 1000
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    dx, dy = tc.asarray(x, backend=backend), tc.asarray(y, backend=backend)
    out = tc.zeros(n, np.float32, backend=backend)
    add[(tc.cdiv(n, 256),)](dx, dy, out, n, BLOCK=256, backend=backend)
    tc.synchronize(backend)
    np.testing.assert_array_equal(tc.to_numpy(out), x + y)


@ct.kernel
def _doubled(x, y, TM: ct.Constant[int], TN: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i, 0), shape=(TM, TN))
    ct.store(y, index=(i, 0), tile=(t * 2).astype(y.dtype))


def test_views_of_one_flat_array_go_to_kernels(backend):
    """Parameters in one flat array, each a view at a 256-byte multiple: kernels read and
    write the views, and the flat array holds what they wrote, nothing more."""
    flat = tc.zeros(64 * 5, "f32", backend=backend)
    host = np.arange(64 * 5, dtype=np.float32)
    flat[...] = host
    w = flat[64:128].reshape(8, 8)  # a matrix parameter
    x, out = flat[128:192], flat[192:256]
    add[(1,)](flat[:64], x, out, 64, BLOCK=64, backend=backend)  # reads and writes one buffer
    _doubled[(1,)](w, flat[256:].reshape(8, 8), 8, 8, backend=backend)  # compiler.tile
    want = host.copy()
    want[192:256] = host[:64] + host[128:192]
    want[256:] = host[64:128] * 2
    np.testing.assert_array_equal(tc.to_numpy(flat), want)
    np.testing.assert_array_equal(tc.to_numpy(w), host[64:128].reshape(8, 8))
    np.testing.assert_array_equal(tc.to_numpy(flat.reshape(5, 64)[3]), want[192:256])


def test_views_index_and_assign_as_numpy_does(backend):
    host = np.arange(2 * 3 * 40, dtype=np.float16).reshape(2, 3, 40)
    a = tc.asarray(host, backend=backend)
    for key in [1, (0, 2), slice(1, 2), (1, slice(1, 3)), (1, 2, slice(3, 9)), (0, 1, 5),
                (slice(None), slice(None)), -1, slice(-1, None), slice(5, 2)]:
        np.testing.assert_array_equal(tc.to_numpy(a[key]), host[key])
    for shape in [(6, 40), (-1, 8), (240,), 240, (2, -1)]:
        np.testing.assert_array_equal(tc.to_numpy(a.reshape(shape)), host.reshape(shape))
    assert len(a) == 2 and [v.shape for v in a] == [(3, 40), (3, 40)]
    assert (a.ndim, a.size, a.nbytes, a[0, 1, 3:10].nbytes) == (3, 240, 480, 14)
    a[1, 2, 3:8] = [9, 8, 7, 6, 5]  # an odd number of 2-byte elements at an odd place
    a[0, 0] = -1
    host[1, 2, 3:8] = [9, 8, 7, 6, 5]
    host[0, 0] = -1
    np.testing.assert_array_equal(tc.to_numpy(a), host)


def test_view_misuse_says_what_is_accepted():
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    a = tc.zeros((4, 6), "f32", backend="wgsl")
    for key, message in [(slice(0, 4, 2), "step 2"), ((slice(0, 2), 1), "not contiguous"),
                         ((0, 1, 2), "too many indices"), (4, "out of bounds"),
                         ("x", "integers and slices")]:
        with pytest.raises(tc.LaunchError, match=message):
            a[key]
    for shape in [(5, 5), (-1, 7), (-1, -1)]:
        with pytest.raises(tc.LaunchError, match="reshape"):
            a.reshape(shape)
    with pytest.raises(tc.LaunchError, match="shape"):
        a[0] = np.ones(5)


def test_a_misaligned_view_on_wgsl_says_the_alignment():
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    align = tc.wgsl_device().limits["min-storage-buffer-offset-alignment"]
    step = align // 4  # float32 elements in one alignment
    flat = tc.asarray(np.arange(4 * step, dtype=np.float32), backend="wgsl")
    out = tc.zeros(step, "f32", backend="wgsl")
    with pytest.raises(tc.LaunchError, match=f"argument 'x': .* starts 4 bytes into its "
                                             f"buffer; .* multiples of {align} bytes"):
        add[(1,)](flat[1:step + 1], flat[step:2 * step], out, step, BLOCK=step,
                  backend="wgsl")
    np.testing.assert_array_equal(tc.to_numpy(flat[1:step + 1]), np.arange(1, step + 1))


def test_verify_and_autotune_take_views(monkeypatch, tmp_path):
    """verify=True reads views back; autotuning restores (restore_value) and zeroes
    (reset_to_zero) just the view between its trials."""
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    flat = tc.asarray(np.ones(192, np.float32), backend="wgsl")
    x, y = flat[:64], flat[64:128]
    add[(1,)](x, x, y, 64, BLOCK=64, backend="wgsl", verify=True)
    np.testing.assert_array_equal(tc.to_numpy(y), 2 * np.ones(64))
    grid = lambda meta: (tc.cdiv(64, meta["BLOCK"]),)
    configs = [tc.Config({"BLOCK": 32}), tc.Config({"BLOCK": 64})]
    twice = lambda fn: (fn(), fn(), 1.0)[-1]
    for option, want in [("restore_value", 3), ("reset_to_zero", 1)]:
        monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / option))  # no result on disk
        tuned = tc.autotune(configs, key=["n"], do_bench=twice, **{option: ["out"]})(add)
        tuned[grid](x, y, y, 64, backend="wgsl")  # y += x, after four trials
        np.testing.assert_array_equal(tc.to_numpy(flat), np.r_[np.ones(64), want * np.ones(64),
                                                               np.ones(64)])


def test_the_default_backend_makes_them(monkeypatch):
    monkeypatch.setenv("TILEC_BACKEND", "numpy")
    assert type(tc.empty(3, "i32")) is np.ndarray
    if availability("wgsl")[0]:
        try:
            tc.set_backend("wgsl")
            assert type(tc.zeros(3, "i32")).__name__ == "WgslArray"
            assert type(tc.asarray(np.ones(2, np.float32))).__name__ == "WgslArray"
        finally:
            tc.set_backend(None)


def test_errors_are_tilec_errors():
    with pytest.raises(tc.LaunchError, match="unknown dtype 'f31'"):
        tc.empty(3, "f31", backend="numpy")
    with pytest.raises(tc.LaunchError, match="shape must be"):
        tc.zeros((2, -1), "f32", backend="numpy")
    with pytest.raises(tc.LaunchError, match="complex64 arrays are not supported"):
        tc.asarray(np.zeros(2, np.complex64), backend="numpy")
    with pytest.raises(tc.LaunchError, match="tc.to_numpy takes"):
        tc.to_numpy([1, 2])
    with pytest.raises(tc.LaunchError, match="unknown backend"):
        tc.synchronize("cuda")
    if availability("wgsl")[0]:
        with pytest.raises(tc.UnsupportedError, match="float64 arrays are not supported on "
                                                      "wgsl"):
            tc.asarray(np.ones(2), backend="wgsl")
    if not availability("ptx")[0]:
        with pytest.raises(tc.BackendUnavailableError, match="'ptx' is not available"):
            tc.empty(4, "f32", backend="ptx")


def test_synchronize_and_move_between_backends(backend):
    a = tc.asarray(np.arange(5, dtype=np.int32), backend="numpy")
    b = tc.asarray(a, backend=backend)
    c = tc.asarray(b, backend="numpy")
    tc.synchronize(backend)
    np.testing.assert_array_equal(c, np.arange(5))


def test_numpy_arrays_export_dlpack():
    a = tc.zeros(6, "f32", backend="numpy")
    view = np.from_dlpack(a)
    a[2] = 3
    assert view[2] == 3  # the same memory


class _Exported:
    """Host memory exported through ``dlpack.capsule``, as ``DeviceArray`` exports its own."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **_options):
        return dlpack.capsule(self.a.ctypes.data, (1, 0), "i16", self.a.shape, self)

    def __dlpack_device__(self):
        return (1, 0)


def test_the_dlpack_producer_lends_without_copies_and_releases():
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    held = dlpack.live()
    view = np.from_dlpack(_Exported(a))
    assert view.ctypes.data == a.ctypes.data and view.shape == (3, 4)
    np.testing.assert_array_equal(view, a)
    assert dlpack.live() == held + 1
    del view  # the consumer calls the deleter
    gc.collect()
    assert dlpack.live() == held
    capsule = _Exported(a).__dlpack__()
    assert dlpack.live() == held + 1
    del capsule  # no consumer took it: released when it goes
    assert dlpack.live() == held


def test_import_compiler_stays_light():
    code = ("import sys, compiler as tc; tc.zeros(3, 'f32', backend='numpy'); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'wgpu', 'cuda', 'xdsl'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": repo_pythonpath()}, check=True).stdout
    assert out.strip() == "[]"


# -- ptx, on a GPU -------------------------------------------------------------------------

@pytest.fixture
def ptx():
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    return "ptx"


def _free_bytes():
    from backends.ptx.memory import _current, _device
    with _current(_device()) as driver:
        return int(driver.cuMemGetInfo()[1])


@pytest.mark.gpu
def test_ptx_memory_is_freed_with_the_last_view(ptx):
    size = 1 << 30
    before = _free_bytes()
    a = tc.empty(size // 4, "f32", backend=ptx)
    view = a[10:20]
    del a
    gc.collect()
    assert _free_bytes() <= before - size  # the view holds it
    del view
    gc.collect()
    assert _free_bytes() >= before - (64 << 20)


@pytest.mark.gpu
def test_ptx_arrays_in_torch_without_copies(ptx):
    torch = pytest.importorskip("torch")
    flat = tc.asarray(np.arange(128, dtype=np.float32), backend=ptx)
    view = flat[64:].reshape(8, 8)
    t = torch.from_dlpack(view)
    assert t.device.type == "cuda" and t.shape == (8, 8) and t.data_ptr() == view.ptr
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tc.to_numpy(flat)[64:], 2 * np.arange(64, 128))
    bf = tc.asarray(np.ones(4, "float32").astype(tl.bfloat16.numpy), backend=ptx)
    assert torch.from_dlpack(bf).dtype == torch.bfloat16
    assert torch.as_tensor(flat, device="cuda").data_ptr() == flat.ptr  # the CUDA interface


@pytest.mark.gpu
def test_ptx_arrays_of_bfloat16_and_fp8_launch(ptx):
    import ml_dtypes

    from compiler.specialize import arg_spec
    for dtype in [ml_dtypes.bfloat16, np.float16]:
        host = np.arange(16 * 8, dtype=np.float32).reshape(16, 8).astype(dtype)
        out = tc.empty((16, 8), dtype, backend=ptx)
        _doubled[(2,)](tc.asarray(host, backend=ptx), out, 8, 8, backend=ptx)
        np.testing.assert_array_equal(tc.to_numpy(out), (host.astype(np.float32) * 2)
                                      .astype(dtype))
    x = tc.asarray(np.arange(64, dtype=np.float32).astype(ml_dtypes.bfloat16), backend=ptx)
    out = tc.empty(64, "bf16", backend=ptx)
    add[(1,)](x, x, out, 64, BLOCK=64, backend=ptx)  # a Triton-style kernel
    np.testing.assert_array_equal(tc.to_numpy(out).astype(np.float32), 2 * np.arange(64))
    fp8 = tc.asarray(np.ones(8, np.float32).astype(ml_dtypes.float8_e4m3fn), backend=ptx)
    assert arg_spec(fp8) == ("ptr", "fp8e4nv", True)  # its interface says only "|V1"


# -- ptx bookkeeping, on a stand-in for the CUDA driver ------------------------------------

class _Driver:
    """The driver calls ``backends.ptx.memory`` makes, over host memory: allocations are
    filled with 0xAB (as stale device memory might be), and contexts are a stack."""

    class CUresult:
        CUDA_SUCCESS = 0

    class CUevent_flags:
        CU_EVENT_DISABLE_TIMING = 2

    def __init__(self):
        self.blocks, self.stack, self.freed, self.calls = {}, [], [], []

    def cuInit(self, _flags):
        return (0,)

    def cuCtxGetDevice(self):
        return (1, None)  # no current context: the first GPU

    def cuDeviceGet(self, ordinal):
        return (0, ordinal)

    def cuDevicePrimaryCtxRetain(self, handle):
        return (0, f"context {handle}")

    def cuCtxPushCurrent(self, context):
        self.stack.append(context)
        return (0,)

    def cuCtxPopCurrent(self):
        return (0, self.stack.pop())

    def cuMemAlloc(self, nbytes):
        block = ctypes.create_string_buffer(b"\xab" * nbytes, nbytes)
        self.blocks[ctypes.addressof(block)] = block
        return (0, ctypes.addressof(block))

    def cuMemFree(self, ptr):
        assert self.stack == ["context 0"]
        self.freed.append(ptr)
        return (0,)

    def cuMemsetD8(self, ptr, value, n):
        self._current()
        ctypes.memset(ptr, value, n)
        return (0,)

    def cuMemcpyHtoD(self, dst, src, n):
        self._current()
        ctypes.memmove(dst, src, n)
        return (0,)

    cuMemcpyDtoH = cuMemcpyHtoD

    def cuEventCreate(self, flags):
        self.calls.append(("create", flags))
        return (0, "event")

    def cuEventRecord(self, event, stream):
        self.calls.append(("record", event, stream))
        return (0,)

    def cuStreamWaitEvent(self, stream, event, flags):
        self.calls.append(("wait", stream, event))
        return (0,)

    def cuEventDestroy(self, event):
        self.calls.append(("destroy", event))
        return (0,)

    def _current(self):
        assert self.stack, "a driver call without a current context"


@pytest.fixture
def driver(monkeypatch):
    import backends.ptx
    import backends.ptx.memory
    availability("ptx")  # the real answer cached first: the stand-in must not give it
    fake = _Driver()
    monkeypatch.setattr(backends.ptx, "_driver", lambda: fake)
    monkeypatch.setattr(backends.ptx.memory, "_driver", lambda: fake)
    monkeypatch.setattr(backends.ptx.memory, "_DEVICES", {})
    return fake


def test_ptx_arrays_on_a_stand_in_driver(driver):
    import ml_dtypes

    from backends.ptx import _pointer_put
    from backends.ptx.memory import empty, from_host
    from compiler import device_arrays
    from compiler.arrays import host_array
    from compiler.kinfo import Param
    from compiler.specialize import arg_spec
    host = np.arange(24, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(4, 6)
    a = from_host(host)
    np.testing.assert_array_equal(a.numpy(), host)
    assert not empty((5,), tl.int8, True).numpy().any()  # zeroed over the stale bytes
    row = a[2]
    assert row.ptr == a.ptr + 2 * 6 * 2 and row.shape == (6,)
    cai = row.__cuda_array_interface__
    assert (cai["data"][0], cai["typestr"], cai["shape"]) == (row.ptr, "|V2", (6,))
    info = device_arrays.describe(row)
    assert (info.ptr, info.device_type, info.dtype, info.shape) == \
        (row.ptr, device_arrays.CUDA, "bf16", (6,))
    assert driver.calls == []  # the legacy stream's consumers wait for it anyway
    device_arrays.describe(row, stream=7)  # a consumer on stream 7 waits for its work
    assert driver.calls == [("create", 2), ("record", "event", 0), ("wait", 7, "event"),
                            ("destroy", "event")]
    row[1:3] = [-1, -2]
    host[2, 1:3] = [-1, -2]
    np.testing.assert_array_equal(a.numpy(), host)
    assert arg_spec(a)[:2] == ("ptr", "bf16") and host_array(a).dtype == tl.bfloat16
    slot = ctypes.c_uint64()
    put = _pointer_put(Param("w", "bf16", is_ptr=True), slot, 0, type(row))
    put(row)
    assert slot.value == row.ptr  # what a launch passes
    with pytest.raises(tc.LaunchError, match="argument 'w': expected an array of bfloat16"):
        put(empty((2,), tl.float16, False))
    assert arg_spec(empty((4,), tl.float8e5, False))[:2] == ("ptr", "fp8e5")  # says "|V1"
    ptr = a.ptr
    del a
    gc.collect()
    assert ptr not in driver.freed  # ``row`` still holds it
    del row, info
    gc.collect()
    assert ptr in driver.freed and driver.stack == []
