"""``tc.export(..., target="web")`` and ``tilec export``: exported ES modules run in Deno
(its WebGPU is wgpu; lavapipe here) and are compared with NumPy.

``scripts/test.sh`` installs Deno from the npm registry and sets ``TILEC_DENO``, and with
it ``TILEC_REQUIRE_DENO=1``: then a missing Deno or WebGPU adapter fails these tests
instead of skipping them.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import compiler as tc
from backends.wgsl import set_runtime_dir
from compiler import cli
from examples.histogram import histogram
from examples.softmax import softmax
from examples.vector_add import add
from examples.web import mandelbrot
from tests.conftest import ROOT

HARNESS = Path(__file__).with_name("web") / "harness.js"


def _deno() -> str | None:
    found = os.environ.get("TILEC_DENO") or shutil.which("deno")
    local = ROOT / ".tools" / "node_modules" / ".bin" / "deno"
    return found or (str(local) if local.exists() else None)


@pytest.fixture(scope="module")
def deno() -> str:
    exe = _deno()
    required = os.environ.get("TILEC_REQUIRE_DENO") == "1"
    if exe is None:
        if required:
            pytest.fail("TILEC_REQUIRE_DENO=1 but no deno: set TILEC_DENO")
        pytest.skip("no deno (scripts/test.sh installs it)")
    return exe


def run_js(deno: str, where: Path, script: str, **arrays: np.ndarray) -> str:
    """Run ``script`` as main.js in ``where`` (beside the harness and the exported
    modules), with each array as NAME.bin; returns its standard output."""
    shutil.copyfile(HARNESS, where / "harness.js")
    for name, arr in arrays.items():
        arr.tofile(where / f"{name}.bin")
    (where / "main.js").write_text(script)
    env = dict(os.environ, NO_COLOR="1", DENO_NO_UPDATE_CHECK="1")
    set_runtime_dir(env)  # Deno's wgpu meets Mesa's device-select layer as tilec's does
    done = subprocess.run([deno, "run", "--quiet", f"--allow-read={where}",
                           f"--allow-write={where}", "main.js"], check=False, cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)
    if "no WebGPU adapter" in done.stderr and os.environ.get("TILEC_REQUIRE_DENO") != "1":
        pytest.skip("Deno found no WebGPU adapter")
    assert done.returncode == 0, done.stderr
    assert "error:" not in done.stderr, done.stderr  # no stray lines from the Vulkan stack
    return done.stdout


def result(where: Path, name: str, dtype) -> np.ndarray:
    return np.fromfile(where / f"{name}.out.bin", dtype)


ADD_SIG = "*f32,*f32,*f32,i32"


def test_vector_add_typed_arrays(deno, tmp_path):
    tc.export(add, ADD_SIG, {"BLOCK": 1024}, output=tmp_path / "add.js")
    n = 98_765
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    run_js(deno, tmp_path, f"""
import {{ add }} from "./add.js";
import {{ gpu, load, save }} from "./harness.js";
const device = await gpu();
const x = await load("x", Float32Array), y = await load("y", Float32Array);
const out = new Float32Array({n}).fill(NaN);
await add(device, [Math.ceil({n} / 1024)], x, y, out, {n});
await save("out", out);
""", x=x, y=y)
    np.testing.assert_array_equal(result(tmp_path, "out", np.float32), x + y)


def test_grid_folded_past_65535_programs(deno, tmp_path):
    """70,001 programs: axis 0 is folded into dispatch x and y, as in Python."""
    tc.export(add, ADD_SIG, {"BLOCK": 16}, output=tmp_path / "add.js")
    n = 16 * 70_000 + 3
    x = np.arange(n, dtype=np.float32)
    run_js(deno, tmp_path, f"""
import add from "./add.js";
import {{ gpu, load, save }} from "./harness.js";
const device = await gpu();
const x = await load("x", Float32Array), out = new Float32Array({n});
await add(device, {tc.cdiv(n, 16)}, x, x, out, {n});
await save("out", out);
""", x=x)
    np.testing.assert_array_equal(result(tmp_path, "out", np.float32), 2 * x)


def test_aliased_typed_array(deno, tmp_path):
    """One typed array as input and output: one buffer, its read binding promoted."""
    tc.export(add, ADD_SIG, {"BLOCK": 256}, output=tmp_path / "add.js")
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    run_js(deno, tmp_path, """
import { add } from "./add.js";
import { gpu, load, save } from "./harness.js";
const device = await gpu();
const x = await load("x", Float32Array);
await add(device, [4], x, x, x, 1000);
await save("x", x);
""", x=x)
    np.testing.assert_array_equal(result(tmp_path, "x", np.float32), x + x)


def test_softmax_on_gpu_buffers(deno, tmp_path):
    """GPUBuffers are bound as they are; a second launch on other buffers and another
    width must not reuse the first one's bind group or arguments; a third reads a typed
    array (its upload destroyed after the submission) into a GPUBuffer."""
    tc.export(softmax, "*f32,*f32,i32,i32,i32", {"BLOCK": 1024},
              output=tmp_path / "softmax.js")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((300, 781), dtype=np.float32) * 4
    b = rng.standard_normal((7, 1000), dtype=np.float32)
    run_js(deno, tmp_path, """
import { softmax } from "./softmax.js";
import { gpu, load, read, save, storage } from "./harness.js";
const device = await gpu();
const runs = [["a", 300, 781, true], ["b", 7, 1000, true], ["a", 300, 781, false]];
for (const [name, rows, cols, bound] of runs) {
  const x = bound ? storage(device, await load(name, Float32Array)) : await load(name, Float32Array);
  const out = storage(device, new Float32Array(rows * cols));
  await softmax(device, [rows], x, out, cols, cols, cols);
  await save(`${name}_${bound}`, await read(device, out, Float32Array));
}
""", a=a, b=b)

    def ref(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    for name, x in (("a_true", a), ("b_true", b), ("a_false", a)):
        got = result(tmp_path, name, np.float32).reshape(x.shape)
        np.testing.assert_allclose(got, ref(x), rtol=1e-5, atol=1e-7)


def test_histogram_atomics(deno, tmp_path):
    tc.export(histogram, "*i32,*i32,i32,i32", {"BLOCK": 1024},
              output=tmp_path / "histogram.js")
    n, bins = 100_003, 64
    data = np.random.default_rng(3).integers(-3, bins + 3, n).astype(np.int32)
    run_js(deno, tmp_path, f"""
import {{ histogram }} from "./histogram.js";
import {{ gpu, load, save }} from "./harness.js";
const device = await gpu();
const bins = new Int32Array({bins});
await histogram(device, [{tc.cdiv(n, 1024)}], await load("data", Int32Array), bins,
                {n}, {bins});
await save("bins", bins);
""", data=data)
    inside = data[(data >= 0) & (data < bins)]
    np.testing.assert_array_equal(result(tmp_path, "bins", np.int32),
                                  np.bincount(inside, minlength=bins))


def test_float16_needs_the_feature(deno, tmp_path):
    """f16 arrays as raw bits in a Uint16Array; a device without shader-f16 is refused
    by name before any WebGPU call fails."""
    text = tc.export(add, "*f16,*f16,*f16,i32", {"BLOCK": 128}, output=tmp_path / "add.js")
    assert "WebGPU features: shader-f16" in text
    x = np.linspace(-8, 8, 300).astype(np.float16)
    out = run_js(deno, tmp_path, """
import { add } from "./add.js";
import { errors, gpu, load, save } from "./harness.js";
const x = await load("x", Uint16Array), out = new Uint16Array(300);
const plain = await gpu();
await errors([() => add(plain, [3], x, x, out, 300)]);
await add(await gpu(["shader-f16"]), [3], x, x, out, 300);
await save("out", out);
""", x=x)
    err = json.loads(out.splitlines()[0])
    assert err["name"] == "UnsupportedError" and '"shader-f16"' in err["message"]
    np.testing.assert_array_equal(result(tmp_path, "out", np.float16), x + x)


def test_int64_arrays_and_scalars(deno, tmp_path):
    """int64 arrays are BigInt64Arrays; an int64 scalar is a BigInt or an integer Number,
    passed as two 32-bit words."""
    tc.export(add, "*i64,*i64,*i64,i64", {"BLOCK": 256}, output=tmp_path / "add.js")
    n = 1000
    x, y = np.random.default_rng(4).integers(-2**62, 2**62, (2, n), dtype=np.int64)
    run_js(deno, tmp_path, f"""
import {{ add }} from "./add.js";
import {{ gpu, load, save }} from "./harness.js";
const device = await gpu();
const x = await load("x", BigInt64Array), y = await load("y", BigInt64Array);
const out = new BigInt64Array({n}), part = new BigInt64Array({n});
await add(device, [4], x, y, out, {n}n);
await add(device, [4], x, y, part, 700);
await save("out", out);
await save("part", part);
""", x=x, y=y)
    np.testing.assert_array_equal(result(tmp_path, "out", np.int64), x + y)
    part = result(tmp_path, "part", np.int64)
    np.testing.assert_array_equal(part[:700], (x + y)[:700])
    assert not part[700:].any()


def test_the_pages_render_module(deno, tmp_path):
    """examples/web/render.js, as the page calls it, on the kernel as --export writes it."""
    tc.export(mandelbrot.mandelbrot, mandelbrot.SIGNATURE, mandelbrot.CONSTANTS,
              output=tmp_path / "mandelbrot.js")
    shutil.copyfile(ROOT / "examples" / "web" / "render.js", tmp_path / "render.js")
    run_js(deno, tmp_path, """
import { render, view } from "./render.js";
import { gpu, save } from "./harness.js";
const pixels = await render(await gpu(), 160, 120, view(160, 120, -0.7, 0.2, 1.5), 100);
await save("pixels", pixels);
""")
    want = mandelbrot.reference(160, 120, *mandelbrot.view(160, 120, -0.7, 0.2, 1.5), 100)
    got = result(tmp_path, "pixels", np.int32)
    assert got.shape == want.shape and np.mean(got == want) > 0.99


BAD_CALLS = [
    ("add(device, [1], new Int32Array(4), y, out, 4)",
     "argument x: expected a Float32Array or a GPUBuffer of f32, got Int32Array"),
    ("add(device, [1], x, [1, 2, 3, 4], out, 4)",
     "argument y: expected a Float32Array or a GPUBuffer of f32, got Array"),
    ("add(device, [1], x, y, out)", "add takes 4 arguments (x, y, out, n)"),
    ("add(device, [1], x, y, out, 2.5)", "argument n: expected an integer (i32), got 2.5"),
    ("add(device, [1], x, y, out, 2 ** 31)", "argument n: 2147483648 does not fit in i32"),
    ("add(device, [1], x, y, out, '4')", "argument n: expected a number (i32), got String"),
    ("add(device, [0], x, y, out, 4)", "grid [0] must be 1 to 3 positive integers"),
    ("add(device, [1, 1, 1, 1], x, y, out, 4)", "grid [1,1,1,1] must be 1 to 3"),
    ("add(device, [1, 70000], x, y, out, 4)", "grid [1, 70000, 1] is too large for WebGPU"),
    ("add(null, [1], x, y, out, 4)", "add: the first argument must be a GPUDevice"),
    ("add(device, [1], x, y, uniformOnly, 4)",
     "argument out: the GPUBuffer lacks STORAGE usage"),
    ("add16(device, [1], x, y, out, 20)",
     'argument n: the kernel was exported for multiples of 16 (":16" in its signature)'),
]


def test_bad_arguments_name_the_parameter(deno, tmp_path):
    tc.export(add, ADD_SIG, {"BLOCK": 16}, output=tmp_path / "add.js")
    tc.export(add, "*f32,*f32,*f32,i32:16", {"BLOCK": 16}, output=tmp_path / "add16.js")
    calls = ",\n  ".join(f"() => {call}" for call, _ in BAD_CALLS)
    out = run_js(deno, tmp_path, f"""
import {{ add }} from "./add.js";
import {{ add as add16 }} from "./add16.js";
import {{ errors, gpu }} from "./harness.js";
const device = await gpu();
const x = new Float32Array(4), y = new Float32Array(4), out = new Float32Array(4);
const uniformOnly = device.createBuffer({{ size: 16, usage: GPUBufferUsage.UNIFORM }});
await errors([
  {calls},
  () => add16(device, [1], x, y, out, 32),
]);
""")
    got = [json.loads(line) for line in out.splitlines()]
    assert len(got) == len(BAD_CALLS) + 1
    for (call, want), err in zip(BAD_CALLS, got, strict=False):
        assert err["name"] == "LaunchError" and err["message"].startswith(want), (call, err)
    assert got[-1]["name"] == "none"  # a multiple of 16 launches


def test_cli_writes_module_and_runtime(tmp_path, capsys):
    target = f"{ROOT / 'examples' / 'softmax.py'}:softmax"
    assert cli.main(["export", target, "-s", "*f32,*f32,i32,i32,i32", "-c", "BLOCK=256",
                     "--target", "web", "-o", str(tmp_path / "softmax.js")]) == 0
    text = (tmp_path / "softmax.js").read_text()
    assert (tmp_path / "tilec-runtime.js").read_text() == (
        ROOT / "backends" / "wgsl" / "tilec-runtime.js").read_text()
    assert f"exported by tilec {tc.__version__}" in text
    assert ("signature: softmax(x: *f32, out: *f32, n_cols: i32, x_stride: i32, "
            "out_stride: i32)") in text
    assert "constants: BLOCK=256" in text and "@compute @workgroup_size(128)" in text
    assert 'import { kernel } from "./tilec-runtime.js";' in text
    assert cli.main(["export", target, "-s", "*f32,*f32,i32,i32,i32", "-c", "BLOCK=256"]) == 0
    assert capsys.readouterr().out == text


def test_export_errors():
    with pytest.raises(tc.LaunchError, match="export target 'cuda'"):
        tc.export(add, ADD_SIG, {"BLOCK": 16}, target="cuda")
    with pytest.raises(tc.LaunchError, match="signature lists 2 types for 4"):
        tc.export(add, "*f32,i32", {"BLOCK": 16})
    with pytest.raises(tc.LaunchError, match="constexpr 'BLOCK' needs a value"):
        tc.export(add, ADD_SIG)


def test_wgsl_escaped_in_template_literal():
    from backends.wgsl.web import template_literal
    text = "a `b` ${c} \\d"
    assert template_literal(text) == "`a \\`b\\` \\${c} \\\\d`"


def test_subgroup_variants_chosen_at_load_time(deno, tmp_path):
    """The exported kernel carries its subgroup swaps; the runtime makes them where the
    device has the "subgroups" feature and a probe finds the size (Chrome; Deno's WebGPU
    has no subgroups, so here the swap itself): xor shuffles of masks below the size, and
    every shuffle where subgroups are warps of 32, with the ``enable`` they need."""
    tc.export(softmax, "*f32,*f32,i32,i32,i32", {"BLOCK": 1024}, output=tmp_path / "sm.js")
    out = run_js(deno, tmp_path, """
import { softmax } from "./sm.js";
import { withSubgroups } from "./tilec-runtime.js";
const { wgsl, facts } = softmax.spec;
const masks = Object.values(facts.subgroup_xor).map(([mask]) => mask);
const count = (code, text) => code.split(text).length - 1;
const report = {};
for (const size of [null, 4, 8, 32]) {
  const code = withSubgroups(wgsl, facts, size);
  report[size] = { same: code === wgsl, enable: code.startsWith("enable subgroups;"),
                   xor: count(code, "subgroupShuffleXor("), any: count(code, "subgroupShuffle(") };
}
console.log(JSON.stringify({ masks, report }));
""")
    got = json.loads(out)
    masks = got["masks"]
    assert set(masks) == {1, 2, 4, 8, 16}
    r = got["report"]
    assert r["null"] == {"same": True, "enable": False, "xor": 0, "any": 0}
    for size in (4, 8, 32):
        assert r[str(size)]["enable"] and r[str(size)]["xor"] == sum(m < size for m in masks)
    assert r["32"]["any"] > 0 and r["8"]["any"] == 0
