"""The compiler API, the launch path, caches, dumps and the command line."""

import gc
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from examples.vector_add import add
from tests.conftest import repo_pythonpath

ROOT = Path(__file__).resolve().parent.parent
SIG = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}


def run_py(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, check=False,
                          text=True, env={**os.environ, "PYTHONPATH": repo_pythonpath(), **env})


@pytest.mark.parametrize("backend", ["numpy", "wgsl", "ptx"])
def test_compile_api(backend):
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 1024}, backend=backend)
    assert "tile.load" in ck.asm["tile"] and "func.func @add" in ck.asm["tile"]
    names = [name for name, _ in ck.stages]
    assert names[:3] == ["frontend", "canonicalize", "cse"]
    assert ck.metadata.backend == backend and ck.metadata.num_warps == 4
    assert [p.name for p in ck.metadata.params] == ["x", "y", "out", "n"]
    assert [p.written for p in ck.metadata.params] == [False, False, True, False]
    if backend == "ptx":
        assert "tile-to-simt" in names and "simt-to-ptx" in names
        assert ".entry add(" in ck.asm["ptx"] and "ld.global.v4.f32" not in ck.asm["ptx"]
        # n divisible by 16: whole groups of 4 share a mask value, so 128-bit accesses
        aligned = tc.compile(add, signature={**SIG, "n": "i32:16"}, constants={"BLOCK": 1024},
                             backend=backend)
        assert "ld.global.v4.f32" in aligned.asm["ptx"] and "st.global.v4.f32" in aligned.asm["ptx"]
    if backend == "wgsl":
        assert "@compute" in ck.asm["wgsl"]


@pytest.mark.parametrize("collecting", [True, False])
def test_compiling_pauses_the_garbage_collector_and_restores_it(monkeypatch, tmp_path,
                                                                collecting):
    from compiler import frontend
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))  # compile, not a disk-cache hit
    generate, seen = frontend.generate, []
    monkeypatch.setattr(frontend, "generate",
                        lambda *a: seen.append(gc.isenabled()) or generate(*a))

    @tc.kernel
    def bad(x, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, BLOCK), undefined)  # noqa: F821

    (gc.enable if collecting else gc.disable)()
    try:
        tc.compile(add, signature=SIG, constants={"BLOCK": 64}, backend="numpy")
        assert seen == [False] and gc.isenabled() == collecting
        with pytest.raises(tc.CompileError):
            tc.compile(bad, signature={"x": "*f32"}, constants={"BLOCK": 64}, backend="numpy")
        assert seen == [False, False] and gc.isenabled() == collecting
    finally:
        gc.enable()


def test_signature_string_and_triton_spellings():
    ck = tc.compile(add, signature="*fp32, *fp32, *fp32, i32", constants={"BLOCK": 256},
                    backend="numpy")
    assert [p.dtype for p in ck.metadata.params] == ["f32", "f32", "f32", "i32"]


def test_compiled_kernel_launches_and_checks_dtypes():
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 128}, backend="numpy")
    x, y = np.arange(300, dtype=np.float32), np.ones(300, dtype=np.float32)
    out = np.zeros(300, dtype=np.float32)
    ck[(3,)](x, y, out, 300)
    np.testing.assert_array_equal(out, x + 1)
    with pytest.raises(tc.LaunchError, match="argument 'x': the kernel was compiled for an "
                                             "array of float32, got a NumPy array of float64"):
        ck[(3,)](x.astype(np.float64), y, out, 300)
    # a strided view passes; one of the same dtype whose strides are negative does not
    ck[(1,)](x[::2], y[::2], out[::2], 100)
    with pytest.raises(tc.LaunchError, match="negative strides"):
        ck[(1,)](x[::-2], y[::2], out[::2], 100)


@pytest.mark.parametrize("bad,match", [
    (lambda x, o: add[(1,)](x, x, o, BLOCK=64, backend="numpy"), "missing argument"),
    (lambda x, o: add[(0,)](x, x, o, 10, BLOCK=64, backend="numpy"), "must be positive"),
    (lambda x, o: add[(-2, 1)](x, x, o, 10, BLOCK=64, backend="numpy"), "must be positive"),
    (lambda x, o: add[(1,)](x[::-2], x[::2], o[::2], 10, BLOCK=64, backend="numpy"),
     "negative strides"),
    (lambda x, o: add[(1,)](x, x, o, 10, 64, 3, backend="numpy"), "takes 5 arguments"),
    (lambda x, o: add[(1,)](x, x, o, 10, BLOCK=64, backend="cuda"), "unknown backend"),
    (lambda x, o: add[(1,)](x, x, o, 10, BLOCK=64, backend="numpy", num_warps=3),
     "num_warps"),
    (lambda x, o: add[(1,)](x, x, o, "ten", BLOCK=64, backend="numpy"),
     "argument 'n': expected an array .* or a number, got str 'ten'"),
])
def test_launch_errors(bad, match):
    x = np.zeros(64, dtype=np.float32)
    with pytest.raises(tc.LaunchError, match=match):
        bad(x, np.zeros(64, dtype=np.float32))


def test_grid_lambda_sees_constexprs():
    n = 1000
    x, y = np.ones(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    add[lambda meta: (tc.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=256, backend="numpy")
    np.testing.assert_array_equal(out, 2)


def test_kernel_is_not_callable_directly():
    with pytest.raises(tc.TilecError, match="launch it as"):
        add(1, 2, 3, 4, 5)


@tc.kernel
def unmasked_copy(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs))


def test_out_of_bounds_is_reported():
    x = np.zeros(10, dtype=np.float32)
    with pytest.raises(tc.OutOfBoundsError, match="x") as info:
        unmasked_copy[(1,)](x, np.zeros(64, dtype=np.float32), BLOCK=64, backend="numpy")
    assert "test_api.py" in str(info.value)


def test_verify_passes_and_catches_mismatch(monkeypatch):
    n = 500
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    backend = "wgsl" if tc.backends()["wgsl"][0] else "numpy"
    add[(2,)](x, y, out, n, BLOCK=256, backend=backend, verify=True)
    np.testing.assert_allclose(out, x + y)
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 256}, backend="numpy")

    def wrong(grid, args):
        args[2][:] = -1.0
    ck._launcher = wrong
    with pytest.raises(tc.VerificationError, match=r"out\[0\] = -1.0"):
        ck.launch((2, 1, 1), [x, y, out, n], verify=True)


def test_dump_ir_to_directory(tmp_path):
    tc.compile(add, signature=SIG, constants={"BLOCK": 64}, backend="wgsl",
               dump_ir=str(tmp_path))
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[0] == "00-frontend.mlir" and "01-canonicalize.mlir" in files
    assert any("tile-to-simt" in f for f in files) and files[-1].endswith(".wgsl")


def test_dump_ir_env_for_jit_launch(tmp_path):
    code = ("import numpy as np; from examples.vector_add import add;"
            "x = np.ones(70, dtype=np.float32);"
            "add[(1,)](x, x, x, 70, BLOCK=128, backend='numpy')")
    r = run_py(code, TILEC_DUMP_IR="1", TILEC_CACHE="0")
    assert r.returncode == 0, r.stderr
    assert "IR after 00-frontend" in r.stderr and "IR after 02-cse" in r.stderr


def test_disk_cache_hit_does_not_import_xdsl(tmp_path):
    code = ("import sys, numpy as np; from examples.vector_add import add;"
            "x = np.ones(70, dtype=np.float32); o = np.zeros(70, dtype=np.float32);"
            "add[(1,)](x, x, o, 70, BLOCK=128, backend='numpy');"
            "assert (o == 2).all();"
            "print('xdsl' in sys.modules, any(m.startswith('xdsl') for m in sys.modules))")
    env = {"TILEC_CACHE_DIR": str(tmp_path)}
    first = run_py(code, **env)
    assert first.returncode == 0, first.stderr
    assert list(tmp_path.rglob("*.json"))
    second = run_py(code.replace("backend='numpy'", "backend='wgsl'"), **env)
    assert second.returncode == 0, second.stderr
    third = run_py(code.replace("backend='numpy'", "backend='wgsl'"), **env)
    assert third.stdout.strip() == "False False", third.stdout + third.stderr


def test_backends_and_auto(monkeypatch):
    info = tc.backends()
    assert set(info) == {"ptx", "wgsl", "numpy"}
    assert info["numpy"][0] and all(isinstance(why, str) and why for _, why in info.values())
    monkeypatch.setenv("TILEC_BACKEND", "numpy")
    from compiler.jit import resolve_backend
    assert resolve_backend(None) == "numpy"
    tc.set_backend("wgsl" if info["wgsl"][0] else "numpy")
    try:
        assert resolve_backend(None) == ("wgsl" if info["wgsl"][0] else "numpy")
    finally:
        tc.set_backend(None)
    expected = next(b for b in ("ptx", "wgsl", "numpy") if info[b][0])
    assert resolve_backend("auto") == expected


def test_cli_compile_backends_and_opt(tmp_path):
    tilec = [sys.executable, "-m", "compiler.cli"]
    env = {**os.environ, "PYTHONPATH": repo_pythonpath()}
    r = subprocess.run(tilec + ["compile", "examples/vector_add.py:add", "-s",
                                "*f32,*f32,*f32,i32", "-c", "BLOCK=1024", "--backend", "ptx"],
                       cwd=ROOT, capture_output=True, check=False, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert ".visible .entry add" in r.stdout
    out = tmp_path / "k.wgsl"
    r = subprocess.run(tilec + ["compile", "examples/vector_add.py:add", "-s",
                                "*f32,*f32,*f32,i32", "-c", "BLOCK=256", "--backend", "wgsl",
                                "--emit", "simt", "-o", str(out)],
                       cwd=ROOT, capture_output=True, check=False, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "simt.load" in out.read_text()
    r = subprocess.run(tilec + ["backends"], cwd=ROOT, capture_output=True, check=False, text=True, env=env)
    assert r.returncode == 0 and "numpy" in r.stdout and "auto" in r.stdout
    tile_ir = tmp_path / "k.mlir"
    subprocess.run(tilec + ["compile", "examples/vector_add.py:add", "-s",
                            "*f32,*f32,*f32,i32", "-c", "BLOCK=256", "--backend", "numpy",
                            "-o", str(tile_ir)], cwd=ROOT, check=True, env=env)
    r = subprocess.run(tilec + ["opt", str(tile_ir), "-p", "assign-layouts,tile-to-simt"],
                       cwd=ROOT, capture_output=True, check=False, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "simt.thread_id" in r.stdout


EXAMPLES = ["vector_add", "fused_activation", "masked_shift", "histogram", "softmax",
            "layernorm", "cumsum", "matmul", "persistent_matmul", "attention", "tile/vector_add",
            "tile/layernorm", "tile/transpose", "tile/softmax", "tile/matmul",
            "dropout", "rotary", "topk_routing", "triton_port", "quantize", "grouped_matmul",
            "web/mandelbrot"]


def test_cli_reports_compile_errors_without_traceback():
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "compile",
                        "tests/bad_kernels.py:load_int", "-s", "*f32,i32", "-c", "BLOCK=64",
                        "--backend", "numpy"], cwd=ROOT, capture_output=True, check=False, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert r.returncode == 1
    assert "tests/bad_kernels.py:" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
def test_examples_run(example, backend):
    r = subprocess.run([sys.executable, f"examples/{example}.py", "--backend", backend],
                       cwd=ROOT, capture_output=True, check=False, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout


@pytest.mark.gpu
@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_run_on_ptx(example):
    if not tc.backends()["ptx"][0]:
        pytest.skip(tc.backends()["ptx"][1])
    r = subprocess.run([sys.executable, f"examples/{example}.py", "--backend", "ptx"],
                       cwd=ROOT, capture_output=True, check=False, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout


def test_cli_run_example():
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "run", "examples/vector_add.py",
                        "--backend", "numpy"], cwd=ROOT, capture_output=True, check=False, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()})
    assert r.returncode == 0, r.stderr
    assert "on numpy: OK" in r.stdout
