"""``compiler.triton``: Triton's host API on tilec. Each test is written the way a Triton
program is (``import ... as triton``, ``tl``, ``kernel[grid](..., BLOCK_SIZE=...)``,
``triton.Config``), with NumPy arrays, and checks what Triton's name promises."""

import importlib
import os
import subprocess
import sys
import textwrap
import time
import types

import numpy as np
import pytest

import compiler
import compiler.jit
import compiler.triton.profiler as proton
from compiler import triton
from compiler.jit import availability
from compiler.triton import language as tl
from compiler.triton.runtime import driver as runtime_driver
from compiler.triton.tools.tensor_descriptor import TensorDescriptor
from tests.conftest import repo_pythonpath


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Tuning is remembered on disk: each test tunes afresh."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILEC_BACKEND", raising=False)
    yield
    compiler.set_backend(None)


def launchable(backend):
    """Whether ``backend`` runs kernels here (ptx without a GPU compiles only)."""
    return backend != "ptx" or availability("ptx")[0]


# ---------------------------------------------------------------- the kernels

@triton.jit
def scaled(x, alpha):
    """A jitted helper, called (inlined) from a kernel, as Triton code does."""
    return x * alpha


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    # each program owns one block of BLOCK_SIZE consecutive elements
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_range = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=in_range)
    y = tl.load(y_ptr + offsets, mask=in_range)
    tl.store(out_ptr + offsets, scaled(x, alpha) + y, mask=in_range)


def axpy(alpha, x, y, backend, block=256):
    """The host wrapper, with a grid computed from the launch's meta-parameters."""
    out = np.empty_like(x)
    n_elements = out.size
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    axpy_kernel[grid](x, y, out, n_elements, alpha, BLOCK_SIZE=block, backend=backend)
    return out


def vectors(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)


# ---------------------------------------------------------------- names

def test_the_top_level_names_are_tilecs():
    assert triton.language is compiler.language
    assert triton.cdiv is compiler.cdiv  # also callable inside kernels, as tc.cdiv is
    assert triton.CompilationError is compiler.CompileError
    assert issubclass(triton.OutOfResources, compiler.TilecError)
    assert triton.runtime.errors.OutOfResources is triton.OutOfResources
    assert triton.Config is compiler.Config
    for name in ("jit", "autotune", "heuristics", "next_power_of_2", "testing", "runtime",
                 "tools", "JITFunction", "KernelInterface", "Autotuner", "Heuristics"):
        assert hasattr(triton, name), name
    assert triton.runtime.jit.jit is triton.jit
    assert triton.runtime.autotuner.autotune is triton.autotune
    assert triton.runtime.autotuner.Config is triton.Config


def test_the_language_is_tilecs_under_tritons_module_names():
    from compiler.triton.language import core
    from compiler.triton.language import math as tl_math
    from compiler.triton.language.extra import libdevice
    from compiler.triton.language.extra.cuda import libdevice as cuda_libdevice
    from compiler.triton.language.extra.libdevice import rsqrt
    assert tl is compiler.language and core is compiler.language
    assert libdevice is compiler.language.extra.libdevice is cuda_libdevice
    assert tl.extra.cuda.libdevice is libdevice
    assert rsqrt is compiler.language.rsqrt and tl_math is compiler.language.math


@pytest.mark.parametrize("n, want", [(0, 0), (1, 1), (2, 2), (3, 4), (1000, 1024),
                                     (1024, 1024), (1025, 2048), (2**40 + 1, 2**41)])
def test_next_power_of_2(n, want):
    assert triton.next_power_of_2(n) == want


@triton.jit
def padded_copy(x_ptr, out_ptr, n, N: tl.constexpr):
    BLOCK: tl.constexpr = triton.next_power_of_2(N)  # Python, while compiling
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_next_power_of_2_runs_at_compile_time_in_a_kernel():
    x = np.arange(5, dtype=np.float32)
    out = np.zeros_like(x)
    padded_copy[(1,)](x, out, 5, N=5, backend="numpy")
    np.testing.assert_array_equal(out, x)


@triton.jit
def power_of_runtime_value(x_ptr, n):
    tl.store(x_ptr, triton.next_power_of_2(n))


def test_a_constexpr_function_of_a_runtime_value_is_an_error():
    with pytest.raises(compiler.CompileError, match="next_power_of_2.. runs at compile time"):
        power_of_runtime_value[(1,)](np.zeros(1, np.int32), 5, backend="numpy")


@triton.constexpr_function
def rows_per_program(n):
    return max(1, 64 // n)


@triton.jit
def fill_rows(out_ptr, N: tl.constexpr):
    R: tl.constexpr = rows_per_program(N)
    tl.store(out_ptr + tl.arange(0, R), tl.full([R], N, tl.int32))


def test_a_users_constexpr_function_runs_at_compile_time():
    out = np.zeros(8, np.int32)
    fill_rows[(1,)](out, N=16, backend="numpy")
    np.testing.assert_array_equal(out, [16, 16, 16, 16, 0, 0, 0, 0])


def test_params_describe_each_parameter_as_tritons_do():
    params = axpy_kernel.params
    assert [(p.num, p.name, p.is_constexpr) for p in params] == [
        (0, "x_ptr", False), (1, "y_ptr", False), (2, "out_ptr", False),
        (3, "n_elements", False), (4, "alpha", False), (5, "BLOCK_SIZE", True)]
    assert not any(p.has_default for p in params)


@triton.jit
def old_view(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(out_ptr + tl.arange(0, 8), tl.sum(tl.view(x, 2, 4), axis=1).reshape(2)
             .broadcast_to(4, 2).view(8))


def test_view_is_a_reshape():
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    old_view[(1,)](x, out, backend="numpy")
    np.testing.assert_array_equal(out, np.tile(x.reshape(2, 4).sum(1), 4))


def test_version_compares_as_a_recent_triton():
    version = pytest.importorskip("packaging.version")
    v = version.parse(triton.__version__)
    assert v >= version.parse("3.0.0") and v.release == (3, 4, 0)
    assert v.local == f"tilec.{compiler.__version__}"


# ---------------------------------------------------------------- launching

def test_a_jitted_kernel_launches_with_a_meta_grid(backend):
    x, y = vectors()
    if not launchable(backend):  # ptx without a GPU: the same kernel compiles and assembles
        ck = compiler.compile(axpy_kernel, args=(x, y, x, x.size, 2.0, 256), backend="ptx")
        assert ck.asm["cubin"][:4] == b"\x7fELF"
        return
    triton.testing.assert_close(axpy(2.0, x, y, backend), 2 * x + y, atol=1e-6)


def test_libdevice_functions_in_a_kernel():
    from compiler.triton.language.extra import libdevice

    @triton.jit
    def activation(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offs, mask=offs < n)
        y = libdevice.tanh(x) + tl.extra.cuda.libdevice.rsqrt(x * x + 1.0)
        tl.store(out_ptr + offs, y, mask=offs < n)

    x, _ = vectors(300)
    out = np.empty_like(x)
    activation[(triton.cdiv(x.size, 128),)](x, out, x.size, BLOCK_SIZE=128, backend="numpy")
    triton.testing.assert_close(out, np.tanh(x) + 1 / np.sqrt(x * x + 1), atol=1e-6)


def test_jit_takes_tritons_options():
    @triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=[0], noinline=True,
                repr=lambda meta: "copy", launch_metadata=None, debug=False)
    def copy(src, dst, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.arange(0, BLOCK_SIZE)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)

    assert isinstance(copy, triton.JITFunction) and isinstance(copy, compiler.KernelFunction)
    assert copy.do_not_specialize == ["n"] and copy.do_not_specialize_on_alignment == ["src"]
    assert "def copy" in copy.src
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    copy[(1,)](src, dst, 8, BLOCK_SIZE=8, backend="numpy")
    np.testing.assert_array_equal(dst, src)
    with pytest.raises(compiler.TilecError, match="'m' is not one of its parameters"):
        triton.jit(do_not_specialize=["m"])(copy.fn)


def test_jit_debug_turns_device_asserts_on_for_its_launches():
    """On wgsl a device assert runs only under ``debug=True``: ``@triton.jit(debug=True)``
    makes that its launches' default, as Triton's option does."""
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")

    def positive(x_ptr, BLOCK_SIZE: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, BLOCK_SIZE))
        tl.device_assert(x > 0, "x must be positive")

    x = -np.ones(32, np.float32)
    triton.jit(positive)[(1,)](x, BLOCK_SIZE=32, backend="wgsl")  # no check, no error
    with pytest.raises(compiler.DeviceAssertionError, match="x must be positive"):
        triton.jit(debug=True)(positive)[(1,)](x, BLOCK_SIZE=32, backend="wgsl")


def test_kernels_autotuners_and_heuristics_are_kernel_interfaces():
    tuned = triton.autotune([triton.Config({"BLOCK_SIZE": 64})], key=["n_elements"])(
        axpy_kernel)
    assert isinstance(axpy_kernel, triton.KernelInterface)
    assert isinstance(tuned, triton.KernelInterface)


# ---------------------------------------------------------------- autotuning

def recording_hooks():
    """A pre-hook that notes the block size of each trial, and a post-hook."""
    seen, posts, resets = [], [], []

    def pre_hook(args, reset_only=False):
        (resets if reset_only else seen).append(args["BLOCK_SIZE"])

    def post_hook(args, exception):
        posts.append((args["BLOCK_SIZE"], exception))
    return seen, posts, resets, pre_hook, post_hook


def test_autotune_with_triton_configs_hooks_and_do_bench(backend):
    """Triton's ``do_bench(fn, quantiles)`` times each trial (the median, its first value,
    decides); the hooks see every trial's arguments and config."""
    if not launchable(backend):
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    seen, posts, resets, pre_hook, post_hook = recording_hooks()

    def bench(fn, quantiles):
        fn()
        fast = seen[-1] == 512  # the configs' "times": BLOCK_SIZE=512 wins
        return [1.0 if fast else 3.0, 0.5, 4.0]

    tuned = triton.autotune(
        configs=[triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
                 triton.Config({"BLOCK_SIZE": 512}, num_warps=8, num_stages=3)],
        key=["n_elements"], pre_hook=pre_hook, post_hook=post_hook, do_bench=bench,
    )(axpy_kernel)
    x, y = vectors(2000)
    out = np.empty_like(x)
    grid = lambda meta: (triton.cdiv(x.size, meta["BLOCK_SIZE"]),)
    tuned[grid](x, y, out, x.size, 0.5, backend=backend)
    triton.testing.assert_close(out, 0.5 * x + y, atol=1e-6)
    assert tuned.best_config == triton.Config({"BLOCK_SIZE": 512}, num_warps=8, num_stages=3)
    assert sorted(seen) == [128, 512] and sorted(posts) == [(128, None), (512, None)]
    assert resets == [512]  # once after tuning, with the chosen config


def test_autotune_skips_a_config_out_of_resources():
    """A config the device cannot hold (Triton's ``OutOfResources``) is not chosen."""
    seen, _, _, pre_hook, _ = recording_hooks()

    def bench(fn, quantiles):
        fn()
        if seen[-1] == 1024:
            raise triton.OutOfResources("needs 300,000 bytes of shared memory")
        return [2.0, 2.0, 2.0]

    tuned = triton.autotune([triton.Config({"BLOCK_SIZE": 1024}),
                             triton.Config({"BLOCK_SIZE": 256})],
                            key=["n_elements"], pre_hook=pre_hook, do_bench=bench)(axpy_kernel)
    x, y = vectors()
    out = np.empty_like(x)
    tuned[lambda meta: (triton.cdiv(x.size, meta["BLOCK_SIZE"]),)](x, y, out, x.size, 1.0,
                                                                   backend="numpy")
    assert tuned.best_config.kwargs == {"BLOCK_SIZE": 256}
    assert tuned.configs_timings[triton.Config({"BLOCK_SIZE": 1024})] == float("inf")
    triton.testing.assert_close(out, x + y, atol=1e-6)


class PresetAutotuner(triton.runtime.autotuner.Autotuner):
    """A project's own autotuner, written against Triton's class: the constructor takes
    Triton's arguments, and ``run`` puts a known-good config in ``cache`` under Triton's key
    (the key arguments' values, then the arrays' dtypes) before tuning could start."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs):
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, **kwargs)
        self.preset = {}
        self.runs = 0

    def run(self, *args, **kwargs):
        self.runs += 1
        named = dict(zip(self.arg_names, args))
        key = (*(named[k] for k in self.keys),
               *(str(v.dtype) for v in named.values() if hasattr(v, "dtype")))
        if key in self.preset and key not in self.cache:
            self.cache[key] = self.preset[key]
        return super().run(*args, **kwargs)


def test_a_subclass_of_triton_autotuner_chooses_through_its_run(monkeypatch):
    """Its ``cache`` holds the default backend's choices (Triton code names no backend)."""
    monkeypatch.setenv("TILEC_BACKEND", "numpy")

    def never(fn, quantiles):
        raise AssertionError("a preset key must not be tuned")

    configs = [triton.Config({"BLOCK_SIZE": 64}), triton.Config({"BLOCK_SIZE": 256})]
    tuned = PresetAutotuner(axpy_kernel, axpy_kernel.arg_names, configs, ["n_elements"],
                            None, None, pre_hook=None, post_hook=None, prune_configs_by=None,
                            warmup=None, rep=None, use_cuda_graph=False, do_bench=never)
    assert tuned.keys == ["n_elements"] and not tuned.user_defined_pre_hook
    x, y = vectors(1000)
    tuned.preset[(1000, "float32", "float32", "float32")] = configs[1]
    doubled = triton.heuristics({"alpha": lambda args: 2.0})(tuned)  # wrappers call its run
    grid = lambda meta: (triton.cdiv(x.size, meta["BLOCK_SIZE"]),)
    out, out2 = np.empty_like(x), np.empty_like(x)
    tuned[grid](x, y, out, x.size, 2.0)
    doubled[grid](x, y, out2, x.size)
    triton.testing.assert_close(out, 2 * x + y, atol=1e-5)
    triton.testing.assert_close(out2, 2 * x + y, atol=1e-5)
    assert tuned.runs == 2 and tuned.best_config == configs[1]


def test_autotuner_warmup_compiles_every_config_without_launching():
    tuned = triton.autotune([triton.Config({"BLOCK_SIZE": 64}),
                             triton.Config({"BLOCK_SIZE": 256}, num_warps=8)],
                            key=["n_elements"])(axpy_kernel)
    x, y = vectors(500)
    out = np.zeros_like(x)
    compiled = tuned.warmup(x, y, out, x.size, 2.0, grid=(4,), backend="numpy")
    assert [ck.metadata.num_warps for ck in compiled] == [4, 8]
    assert tuned.run(x, y, out, x.size, 2.0, grid=(4,), warmup=True, backend="numpy")
    assert not out.any() and tuned.best_config is None


def test_config_keeps_num_ctas_and_maxnreg_without_launching_them():
    c = triton.Config({"BLOCK_SIZE": 256}, num_warps=8, num_stages=3, num_ctas=2, maxnreg=128)
    assert c.all_kwargs() == {"BLOCK_SIZE": 256, "num_warps": 8, "num_stages": 3,
                              "num_ctas": 2, "maxnreg": 128}
    assert c != triton.Config({"BLOCK_SIZE": 256}, num_warps=8, num_stages=3)
    assert "num_ctas=2" in repr(c) and "maxnreg: 128" in str(c)
    tuned = triton.autotune([c], key=[])(axpy_kernel)  # one config: launched, not timed
    x, y = vectors()
    out = np.empty_like(x)
    tuned[lambda meta: (triton.cdiv(x.size, meta["BLOCK_SIZE"]),)](x, y, out, x.size, 3.0,
                                                                   backend="numpy")
    triton.testing.assert_close(out, 3 * x + y, atol=1e-5)


def test_autotune_without_configs_uses_a_default_one():
    @triton.autotune(configs=[], key=["n"])
    @triton.jit
    def fill(out_ptr, n, BLOCK_SIZE: tl.constexpr = 64):
        offs = tl.arange(0, BLOCK_SIZE)
        tl.store(out_ptr + offs, tl.full((BLOCK_SIZE,), 7.0, tl.float32), mask=offs < n)

    out = np.zeros(64, np.float32)
    fill[(1,)](out, 64, backend="numpy")
    assert fill.best_config == triton.Config({}) and (out == 7).all()


def test_heuristics_compute_a_block_size():
    @triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_elements"])})
    @triton.jit
    def negate(x_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offs = tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        tl.store(x_ptr + offs, -tl.load(x_ptr + offs, mask=mask), mask=mask)

    x = np.arange(100, dtype=np.float32)
    negate[(1,)](x, x.size, backend="numpy")
    np.testing.assert_array_equal(x, -np.arange(100, dtype=np.float32))


# ---------------------------------------------------------------- testing

def test_assert_close_follows_tritons_tolerances():
    x = np.linspace(0, 1, 50, dtype=np.float32)
    triton.testing.assert_close(x, x + 0.009)  # atol 1e-2 by default
    with pytest.raises(AssertionError):
        triton.testing.assert_close(x, x + 0.02)
    triton.testing.assert_close(x, x * 1.05, atol=0, rtol=lambda dtype: 0.1)  # per dtype
    triton.testing.assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError, match="sums: 1.0 is not close to 2.0"):
        triton.testing.assert_close(1.0, 2.0, err_msg="sums:")
    with pytest.raises(compiler.TilecError, match="compares arrays and numbers"):
        triton.testing.assert_close(object(), 1.0)


def test_do_bench_takes_grad_to_none_and_quantiles():
    class Param:
        grad = "stale"

    params = [Param(), Param()]
    grads_seen = []
    low, mid, high = triton.testing.do_bench(
        lambda: grads_seen.append([p.grad for p in params]), warmup=1, rep=2,
        grad_to_none=params, quantiles=[0.2, 0.5, 0.8], backend="numpy")
    assert low <= mid <= high
    assert grads_seen[-1] == [None, None] and all(p.grad is None for p in params)
    assert isinstance(triton.testing.do_bench(lambda: None, warmup=1, rep=2,
                                              return_mode="median", backend="numpy"), float)


def test_do_bench_cudagraph_is_do_bench_off_ptx():
    compiler.set_backend("numpy")
    ms = triton.testing.do_bench_cudagraph(lambda: time.sleep(0.002), rep=10)
    assert 1.5 < ms < 50


@pytest.mark.gpu
def test_do_bench_cudagraph_replays_a_graph_on_ptx():
    torch = pytest.importorskip("torch")
    if not availability("ptx")[0] or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU and PyTorch with CUDA")
    compiler.set_backend("ptx")
    x, y = (torch.randn(1 << 16, device="cuda") for _ in range(2))
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 1024),)
    ms = triton.testing.do_bench_cudagraph(
        lambda: axpy_kernel[grid](x, y, out, x.numel(), 2.0, BLOCK_SIZE=1024), rep=5)
    assert 0 < ms < 5
    triton.testing.assert_close(out, 2 * x + y, atol=1e-5)


def test_perf_report_takes_tritons_benchmark(tmp_path, capsys):
    @triton.testing.perf_report(triton.testing.Benchmark(
        x_names=["size"], x_vals=[256, 1024], line_arg="provider", line_vals=["tilec"],
        line_names=["tilec"], plot_name="axpy", args={}, color="blue", ylabel="ms"))
    def bench(size, provider):
        x, y = vectors(size)
        return triton.testing.do_bench(lambda: axpy(2.0, x, y, "numpy"), warmup=1, rep=2,
                                       backend="numpy")

    rows = bench.run(print_data=True, return_df=True)
    assert [r["size"] for r in rows] == [256, 1024] and all(r["tilec"] > 0 for r in rows)
    assert "axpy:" in capsys.readouterr().out


# ---------------------------------------------------------------- runtime.driver

@pytest.mark.parametrize("name, target", [("numpy", "cpu"), ("wgsl", "cpu"),
                                          pytest.param("ptx", "cuda", marks=pytest.mark.gpu)])
def test_the_active_driver_answers_for_the_default_backend(name, target):
    if not availability(name)[0]:
        pytest.skip(f"{name}: {availability(name)[1]}")
    compiler.set_backend(name)
    active = triton.runtime.driver.active
    got = active.get_current_target()
    assert got.backend == target and got.warp_size == 32 and got.arch
    props = active.utils.get_device_properties(active.get_current_device())
    assert props["warpSize"] == 32 and props["max_num_regs"] == 65536
    assert props["multiprocessor_count"] >= 1 and props["max_shared_mem"] >= 16384
    assert active.get_current_device() == 0 and active.get_current_stream() == 0
    assert active.get_benchmarker() is triton.testing.do_bench
    assert runtime_driver is triton.runtime.driver  # ``from triton.runtime import driver``


def test_ptx_device_properties_come_from_the_cuda_driver(monkeypatch):
    """On ptx the properties are the CUDA driver's attributes, under Triton's names."""
    driver_module = sys.modules["compiler.triton.runtime.driver"]  # ``.driver`` is the object
    asked = []

    class Device:
        def __init__(self, ordinal=None):
            asked.append(ordinal)

        def attribute(self, name):
            return {"MULTIPROCESSOR_COUNT": 132, "WARP_SIZE": 32}.get(name, len(name))

    fake_ptx = types.SimpleNamespace(Device=Device, device_arch=lambda: "sm_90")
    monkeypatch.setattr(driver_module, "resolve_backend", lambda name: "ptx")
    monkeypatch.setattr(driver_module, "backend_module", lambda name: fake_ptx)
    active = triton.runtime.driver.active
    props = active.utils.get_device_properties(types.SimpleNamespace(index=1))
    assert props["multiprocessor_count"] == 132 and props["warpSize"] == 32
    assert props["max_shared_mem"] == len("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    assert set(props) >= {"max_num_regs", "sm_clock_rate", "mem_clock_rate", "mem_bus_width"}
    assert asked == [1]
    assert active.get_current_target() == driver_module.GPUTarget("cuda", 90, 32)


def test_get_active_torch_device(monkeypatch):
    """PyTorch's CPU device off ptx; without PyTorch, an error that says so."""
    compiler.set_backend("numpy")
    fake = types.ModuleType("torch")
    fake.device = lambda kind, index=None: (kind, index)
    fake.cuda = types.SimpleNamespace(is_available=lambda: True, current_device=lambda: 0)
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert triton.runtime.driver.active.get_active_torch_device() == ("cpu", None)
    monkeypatch.setitem(sys.modules, "torch", None)  # as if not installed
    with pytest.raises(compiler.BackendUnavailableError, match="PyTorch is not installed"):
        triton.runtime.driver.active.get_active_torch_device()


def test_set_active_and_reset_active():
    driver = triton.runtime.driver
    mock = types.SimpleNamespace(get_current_target=lambda: "mock")
    driver.set_active(mock)
    try:
        assert driver.active.get_current_target() == "mock"
    finally:
        driver.reset_active()
    assert driver.active is driver.default


# ---------------------------------------------------------------- tensor descriptors

def test_tensor_descriptor_from_an_array():
    a = np.zeros((64, 48), np.float32)
    desc = TensorDescriptor.from_tensor(a, [16, 32])
    assert desc.shape == [64, 48] and desc.strides == [48, 1] and desc.padding == "zero"
    assert desc.base is a and desc.block_shape == [16, 32]
    for block, why in (([16, 24], "powers of two"), ([16], "one entry per dimension")):
        with pytest.raises(compiler.LaunchError, match=why):
            TensorDescriptor.from_tensor(a, block)
    with pytest.raises(compiler.LaunchError, match="must be contiguous"):
        TensorDescriptor(a, [48, 64], [1, 48], [16, 16])
    with pytest.raises(compiler.LaunchError, match="multiples of 16 bytes"):
        TensorDescriptor.from_tensor(np.zeros((8, 3), np.float32), [8, 4])
    with pytest.raises(compiler.LaunchError, match="floating-point"):
        TensorDescriptor.from_tensor(np.zeros((8, 8), np.int32), [8, 8], padding="nan")


# ---------------------------------------------------------------- the profiler

@pytest.fixture
def profiling():
    yield proton
    proton.finalize()  # whatever a failing test left open
    assert compiler.jit.PROFILE is None


def test_the_profiler_records_launches_by_kernel_and_scope(profiling, capsys, tmp_path,
                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    x, y = vectors(512)
    axpy(1.0, x, y, "numpy")  # compiled before the profile starts
    assert compiler.jit.PROFILE is None
    session = proton.start("axpy_profile", hook="triton")
    assert compiler.jit.PROFILE is not None
    with proton.scope("forward"):
        axpy(1.0, x, y, "numpy")
        axpy(2.0, x, y, "numpy")

    @proton.scope("backward")
    def backward():
        axpy(3.0, x, y, "numpy")
    backward()
    proton.enter_scope("update")
    axpy(4.0, x, y, "numpy")
    proton.exit_scope()
    proton.deactivate(session)
    axpy(5.0, x, y, "numpy")  # not recorded
    assert compiler.jit.PROFILE is None
    proton.activate(session)
    axpy(6.0, x, y, "numpy")
    rows = {r["name"]: r for r in proton.report(session)}
    assert {n: r["launches"] for n, r in rows.items()} == {
        "forward/axpy_kernel": 2, "backward/axpy_kernel": 1, "update/axpy_kernel": 1,
        "axpy_kernel": 1}
    forward = rows["forward/axpy_kernel"]
    assert forward["total_ms"] > 0 and forward["mean_ms"] == pytest.approx(
        forward["total_ms"] / 2)
    proton.finalize(output_format="text")
    assert compiler.jit.PROFILE is None
    assert capsys.readouterr().out == ""  # a named session is written, not printed
    table = (tmp_path / "axpy_profile.txt").read_text()
    assert "forward/axpy_kernel" in table and "mean ms" in table
    with pytest.raises(compiler.TilecError, match="no profile session"):
        proton.report(session)


def test_the_profiler_times_launches_on_each_backend(backend, profiling):
    if not launchable(backend):
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    x, y = vectors(512)
    axpy(1.0, x, y, backend)
    proton.start()
    for alpha in (1.0, 2.0):
        out = axpy(alpha, x, y, backend)
    (row,) = proton.report()
    assert row["name"] == "axpy_kernel" and row["launches"] == 2 and row["total_ms"] > 0
    triton.testing.assert_close(out, 2 * x + y, atol=1e-6)


def test_a_profiled_launch_inside_do_bench_leaves_the_kernels_timing(profiling):
    """``do_bench`` on wgsl times a call by its kernels' GPU timestamps; a profile that
    times the same launch must not take them over (the call would then be timed from
    marker passes around it, 20 ms of host sleep included)."""
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    if "timestamp-query" not in compiler.wgsl_device().features:
        pytest.skip("this adapter has no timestamp queries")
    x, y = vectors(512)

    def call():
        time.sleep(0.02)
        axpy(1.0, x, y, "wgsl")
    call()
    proton.start()
    ms = triton.testing.do_bench(call, warmup=1, rep=1, return_mode="min", backend="wgsl")
    assert ms < 15, ms
    assert proton.report()[0]["launches"] >= 3


# ---------------------------------------------------------------- triton as an alias

def test_install_as_triton_aliases_every_module_and_undoes_it(monkeypatch):
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        monkeypatch.delitem(sys.modules, name)
    triton.install_as_triton()
    try:
        aliased = importlib.import_module("triton")
        import triton.language as aliased_tl
        from triton.language.extra.libdevice import tanh
        from triton.runtime import driver
        from triton.tools.tensor_descriptor import TensorDescriptor as Aliased
        assert aliased is triton and aliased_tl is compiler.language
        assert tanh is compiler.language.tanh and driver is triton.runtime.driver
        assert Aliased is TensorDescriptor
        assert sys.modules["triton.profiler"] is proton
        from triton.backends import backends
        from triton.compiler import CompiledKernel
        from triton.runtime.autotuner import OutOfResources
        from triton.runtime.cache import triton_key
        assert OutOfResources is compiler.errors.OutOfResources
        assert triton_key().startswith("tilec-")
        assert CompiledKernel is compiler.jit.CompiledKernel
        assert [name for name, b in backends.items() if b.driver.is_active()] == ["tilec"]
        with pytest.raises(ModuleNotFoundError):  # Triton's internals are not here
            importlib.import_module("triton._C.libtriton.ir")
    finally:
        triton.uninstall_as_triton()
    assert not [m for m in sys.modules if m == "triton" or m.startswith("triton.")]


def test_install_as_triton_refuses_when_triton_is_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", types.ModuleType("triton"))
    with pytest.raises(compiler.TilecError, match="triton is already imported"):
        triton.install_as_triton()


def test_an_unmodified_triton_script_runs_after_the_alias(tmp_path):
    script = tmp_path / "tutorial.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import triton
        import triton.language as tl
        from triton.language.extra import libdevice

        @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 64}),
                                  triton.Config({"BLOCK_SIZE": 128}, num_warps=2)],
                         key=["n"])
        @triton.jit
        def softplus(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
            offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            x = tl.load(x_ptr + offs, mask=offs < n)
            tl.store(out_ptr + offs, libdevice.log(1.0 + tl.exp(x)), mask=offs < n)

        x = np.linspace(-3, 3, 300, dtype=np.float32)
        out = np.empty_like(x)
        softplus[lambda meta: (triton.cdiv(x.size, meta["BLOCK_SIZE"]),)](x, out, x.size)
        triton.testing.assert_close(out, np.log1p(np.exp(x)), atol=1e-5)
        print("tl is tilec's:", tl.__name__, triton.runtime.driver.active.get_current_target())
    """))
    run = ("import runpy, sys, compiler.triton; compiler.triton.install_as_triton(); "
           "runpy.run_path(sys.argv[1], run_name='__main__')")
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_BACKEND": "numpy",
           "TILEC_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", run, str(script)], check=False, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "tl is tilec's: compiler.language" in r.stdout and "'cpu'" in r.stdout


def test_pytorch_sees_triton_through_the_alias(tmp_path):
    """PyTorch imports Triton's backend and compiler modules once ``import triton`` works
    (``torch.compiler.disable`` loads dynamo), and ``torch.library.wrap_triton`` launches
    through ``JITFunction.params``; annotations may name ``tl.tensor``."""
    pytest.importorskip("torch")
    script = tmp_path / "wrapped.py"
    script.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def bump(x, n, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(x + o, tl.load(x + o, mask=o < n) + 1, mask=o < n)

        @triton.jit
        def twice(v: tl.tensor) -> tl.tensor:
            return v * 2

        @torch.compiler.disable
        def run(x):
            torch.library.wrap_triton(bump)[(1,)](x, x.numel(), BLOCK=8)
            return x

        print("sum", float(run(torch.zeros(6)).sum()))
    """))
    run = ("import runpy, sys, compiler.triton; compiler.triton.install_as_triton(); "
           "runpy.run_path(sys.argv[1], run_name='__main__')")
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_BACKEND": "numpy",
           "TILEC_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", run, str(script)], check=False, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "sum 6.0" in r.stdout
