"""Arrays besides NumPy's: DLPack producers (CPU memory on numpy/wgsl, CUDA memory on
ptx), PyTorch CPU tensors, and typed wgpu buffers (``tc.wgsl_array``)."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler import device_arrays
from compiler.jit import availability
from compiler.specialize import arg_spec
from examples.vector_add import add


class Producer:
    """Nothing but the DLPack protocol of the array it wraps: a library tilec has no
    code for."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.fixture(params=["numpy", "wgsl"])
def host_backend(request):
    if not availability(request.param)[0]:
        pytest.skip(f"{request.param}: {availability(request.param)[1]}")
    return request.param


def test_dlpack_producers_on_host_backends(host_backend, rng):
    n = 300
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.zeros(n, np.float32)
    add[(tc.cdiv(n, 128),)](Producer(x), Producer(y), Producer(out), n, BLOCK=128,
                            backend=host_backend)
    np.testing.assert_array_equal(out, x + y)  # written through the producer, no copy


def test_the_capsule_is_read_in_place(rng):
    a = rng.integers(0, 9, (4, 6)).astype(np.int16)
    info = device_arrays.describe(Producer(a))
    assert (info.ptr, info.device_type, info.dtype, info.shape, info.contiguous,
            info.forward) == (a.ctypes.data, device_arrays.CPU, "i16", (4, 6), True, True)
    assert arg_spec(Producer(a)) == ("ptr", "i16", a.ctypes.data % 16 == 0)
    assert device_arrays.describe(Producer(a[:, 1:])).ptr == a.ctypes.data + 2
    assert arg_spec(Producer(a[:, ::2]))[:2] == ("ptr", "i16")  # strided views are taken
    with pytest.raises(tc.LaunchError, match="negative strides"):
        arg_spec(Producer(a[:, ::-2]))
    with pytest.raises(tc.LaunchError, match="not supported"):
        arg_spec(Producer(np.zeros(3, np.complex64)))


def test_torch_cpu_tensors_on_host_backends(host_backend):
    torch = pytest.importorskip("torch")
    n = 200
    x, y = torch.rand(n), torch.rand(n)
    out = torch.zeros(n)
    add[(tc.cdiv(n, 128),)](x, y, out, n, BLOCK=128, backend=host_backend)
    assert torch.equal(out, x + y)


@tc.kernel
def bump(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x + offs, tl.load(x + offs, mask=mask) + 1, mask=mask)


@pytest.fixture
def device():
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    return tc.wgsl_device()


def storage(device, data: np.ndarray):
    import wgpu
    return device.create_buffer_with_data(
        data=data, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
        | wgpu.BufferUsage.COPY_DST)


def test_wgsl_array_says_what_a_buffer_holds(device):
    data = np.arange(-100, 156, dtype=np.int32)
    typed = tc.wgsl_array(storage(device, data), tl.int32, 256)
    bump[(2,)](typed, 256, BLOCK=128, backend="wgsl")
    np.testing.assert_array_equal(typed.numpy(), data + 1)
    halves = np.linspace(-2, 2, 128).astype(np.float16)
    typed = tc.wgsl_array(storage(device, halves), np.float16, (2, 64))
    bump[(1,)](typed, 128, BLOCK=128, backend="wgsl")
    np.testing.assert_array_equal(typed.numpy(), (halves + 1).reshape(2, 64))


def test_a_bare_buffer_is_still_float32(device):
    data = np.linspace(0, 1, 128).astype(np.float32)
    buf = storage(device, data)
    bump[(1,)](buf, 128, BLOCK=128, backend="wgsl")
    np.testing.assert_array_equal(tc.wgsl_array(buf, "f32", 128).numpy(), data + 1)


def test_wgsl_array_misuse(device):
    buf = storage(device, np.zeros(64, np.int32))
    with pytest.raises(tc.LaunchError, match="needs 512 bytes"):
        tc.wgsl_array(buf, tl.int32, 128)
    with pytest.raises(tc.LaunchError, match="unknown dtype"):
        tc.wgsl_array(buf, "f31", 4)
    with pytest.raises(tc.LaunchError, match="takes a wgpu.GPUBuffer"):
        tc.wgsl_array(np.zeros(4), tl.int32, 4)
    ck = tc.compile(bump, signature={"x": "*f32", "n": "i32"}, constants={"BLOCK": 64},
                    backend="wgsl")
    with pytest.raises(tc.LaunchError, match="argument 'x': the kernel was compiled for an "
                                          "array of float32, got a tc.wgsl_array of int32"):
        ck[(1,)](tc.wgsl_array(buf, tl.int32, 64), 64)


@pytest.mark.gpu
def test_dlpack_producers_on_ptx(torch_cuda):
    torch = torch_cuda
    n = 5000
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.zeros(n, device="cuda")
    add[(tc.cdiv(n, 1024),)](Producer(x), Producer(y), Producer(out), n, BLOCK=1024,
                             backend="ptx")
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)
    with pytest.raises(tc.LaunchError, match="outside CUDA memory"):
        add[(1,)](Producer(np.zeros(4, np.float32)), x, out, 4, BLOCK=1024, backend="ptx")


@pytest.mark.gpu
def test_jax_arrays_on_ptx(torch_cuda):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("jax sees no GPU")
    n = 3000
    x = jnp.arange(n, dtype=jnp.float32)
    out = torch_cuda.zeros(n, device="cuda")
    add[(tc.cdiv(n, 1024),)](x, x, out, n, BLOCK=1024, backend="ptx")
    torch_cuda.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), 2 * np.arange(n, dtype=np.float32))
