"""``tc.export_program``: several kernels in one ES module with one runtime, and a
``program`` whose ``run(device, launches)`` encodes a sequence of launches into one command
buffer (one compute pass, each launch's scalars in its own slot of a uniform arena), run in
Deno (its WebGPU is wgpu; lavapipe here) against NumPy."""

import json

import numpy as np
import pytest

import compiler as tc
from examples.softmax import softmax
from examples.vector_add import add
from tests.test_web_export import deno, result, run_js  # noqa: F401 - deno is a fixture

ADD = (add, "*f32,*f32,*f32,i32", {"BLOCK": 256})
SOFTMAX = (softmax, "*f32,*f32,i32,i32,i32", {"BLOCK": 1024})

# Counts the submissions of the device the script makes (patched on its queue).
COUNTED = """
const device = await gpu();
let submits = 0;
const submit = device.queue.submit.bind(device.queue);
device.queue.submit = (buffers) => { submits += 1; return submit(buffers); };
"""


def test_program_of_two_kernels_is_one_submission(deno, tmp_path):  # noqa: F811
    """Forty launches of two kernels, the same kernel twice under two names with other
    constants, each reading what the one before wrote: the results of running them one
    by one, from one submission."""
    tc.export_program({"add": ADD, "add_wide": (add, ADD[1], {"BLOCK": 1024}),
                       "softmax": SOFTMAX}, output=tmp_path / "program.js")
    rows, cols = 30, 700
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal((rows, cols), dtype=np.float32) / 4 for _ in range(2))
    out = run_js(deno, tmp_path, f"""
import {{ program, add, add_wide }} from "./program.js";
import {{ gpu, load, read, save, storage }} from "./harness.js";
{COUNTED}
const n = {rows * cols};
const x = storage(device, await load("x", Float32Array));
const y = storage(device, await load("y", Float32Array));
const out = storage(device, new Float32Array(n));
const launches = [];
for (let i = 0; i < 20; i++) {{
  launches.push(i % 2 ? [add, [Math.ceil(n / 256)], x, y, x, n]
                      : ["add_wide", [Math.ceil(n / 1024)], x, y, x, n]);
}}
launches.push(["softmax", [{rows}], x, out, {cols}, {cols}, {cols}]);
for (let i = 0; i < 19; i++) launches.push([add_wide, [Math.ceil(n / 1024)], out, out, out, n]);
await program.run(device, launches);
console.log(JSON.stringify({{ submits }}));
await save("out", await read(device, out, Float32Array));
""", x=x, y=y)
    assert json.loads(out.splitlines()[0]) == {"submits": 1}
    z = x + 20 * y
    e = np.exp(z - z.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True) * 2.0 ** 19
    got = result(tmp_path, "out", np.float32).reshape(rows, cols)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_program_launch_errors_submit_nothing(deno, tmp_path):  # noqa: F811
    """A bad launch fails the whole run before anything is encoded, its error naming the
    launch (and the kernel, and the argument) as a single launch's does."""
    tc.export_program({"add": ADD, "softmax": SOFTMAX}, output=tmp_path / "program.js")
    tc.export(*ADD, output=tmp_path / "add.js")
    out = run_js(deno, tmp_path, f"""
import {{ program, add }} from "./program.js";
import {{ add as other }} from "./add.js";
import {{ errors, gpu, storage }} from "./harness.js";
{COUNTED}
const b = storage(device, new Float32Array(64));
const ok = [add, [1], b, b, b, 64];
await errors([
  () => program.run(device, [ok, [add, [1], b, new Float32Array(64), b, 64]]),
  () => program.run(device, [ok, ok, ["add", [1], b, b, b]]),
  () => program.run(device, [["mul", [1], b, b, b, 64]]),
  () => program.run(device, [[other, [1], b, b, b, 64]]),
  () => program.run(device, [["softmax", [0], b, b, 8, 8, 8]]),
  () => program.run(device, [ok, ["add", [1], b, b, b, 1.5]]),
  () => program.run({{}}, [ok]),
  () => program.run(device, ok),
  () => program.run(device, "add"),
  () => program.run(device, []),
]);
console.log(JSON.stringify({{ submits }}));
""")
    got = [json.loads(line) for line in out.splitlines()]
    wants = [
        ("LaunchError", ("launch 1 (add): argument y: program.run takes GPUBuffers (or "
                         "{ buffer, offset, size }), got Float32Array")),
        ("LaunchError", "launch 2 (add): add takes 4 arguments (x, y, out, n)"),
        ("LaunchError", ('launch 0: expected [kernel, grid, ...args] with a kernel of this '
                        'program (add, softmax), got "mul"')),
        ("LaunchError", ("launch 0 (add): expected [kernel, grid, ...args] with a kernel of "
                        "this program")),
        ("LaunchError", "launch 0 (softmax): grid [0] must be 1 to 3 positive integers"),
        ("LaunchError", "launch 1 (add): argument n: expected an integer (i32), got 1.5"),
        ("LaunchError", "program.run: the first argument must be a GPUDevice"),
        ("LaunchError", "launch 0: expected [kernel, grid, ...args], got Function"),
        ("LaunchError", "program.run: launches must be an array"),
        ("none", ""),
    ]
    assert len(got) == len(wants) + 1
    for (name, start), err in zip(wants, got, strict=False):
        assert err["name"] == name and err["message"].startswith(start), (start, err)
    assert got[-1] == {"submits": 0}


def test_program_keeps_aliasing_and_the_module_says_how(deno, tmp_path):  # noqa: F811
    """One buffer as input and output of a launch (its read binding promoted, as a single
    launch's), and the module's text: one import of the runtime, each kernel's signature
    and constants in a comment, the program and the launchers exported."""
    text = tc.export_program({"add": ADD}, output=tmp_path / "program.js")
    assert text.count("tilec-runtime.js") == 1 and "export { program, k_add as add };" in text
    assert "// add: add(x: *f32, y: *f32, out: *f32, n: i32), constants: BLOCK=256" in text
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    run_js(deno, tmp_path, """
import { program } from "./program.js";
import { gpu, load, read, save, storage } from "./harness.js";
const device = await gpu();
const x = storage(device, await load("x", Float32Array));
await program.run(device, [["add", [4], x, x, x, 1000], ["add", [4], x, x, x, 1000]]);
await save("x", await read(device, x, Float32Array));
""", x=x)
    np.testing.assert_array_equal(result(tmp_path, "x", np.float32), 4 * x)


def test_export_program_errors():
    with pytest.raises(tc.LaunchError, match="at least one kernel"):
        tc.export_program({})
    with pytest.raises(tc.LaunchError, match="'a b' must be an identifier"):
        tc.export_program({"a b": ADD})
    with pytest.raises(tc.LaunchError, match="'add' must be an identifier naming"):
        tc.export_program({"add": add})
    with pytest.raises(tc.LaunchError, match="export target 'cuda'"):
        tc.export_program({"add": ADD}, target="cuda")


def test_aliased_ranges_merge_and_overlaps_are_refused(deno, tmp_path):  # noqa: F811
    """A range of a buffer bound twice where the kernel writes it is one binding (WebGPU,
    as Chrome checks, forbids two writable bindings of one range; the shader variant names
    one); two other ranges that overlap, one written, are a LaunchError; read-only
    bindings of one buffer stay apart."""
    tc.export_program({"add": ADD}, output=tmp_path / "program.js")
    out = run_js(deno, tmp_path, """
import { program, add } from "./program.js";
import { errors, gpu, read, save, storage } from "./harness.js";
const device = await gpu();
const data = new Float32Array(128).map((_, i) => i);
const b = storage(device, data), c = storage(device, new Float32Array(64));
const head = { buffer: b, offset: 0, size: 256 };
await add(device, [1], head, head, { buffer: b, offset: 0, size: 256 }, 64);
await program.run(device, [[add, [1], b, { buffer: b, offset: 256, size: 256 }, c, 64]]);
await save("b", await read(device, b, Float32Array));
await save("c", await read(device, c, Float32Array));
await errors([
  () => program.run(device, [[add, [1], head, c, { buffer: b, offset: 0, size: 512 }, 64]]),
]);
""")
    b = np.arange(128, dtype=np.float32)
    b[:64] *= 2
    np.testing.assert_array_equal(result(tmp_path, "b", np.float32), b)
    np.testing.assert_array_equal(result(tmp_path, "c", np.float32), b[:64] + b[64:])
    err = json.loads(out.splitlines()[-1])
    assert err["name"] == "LaunchError" and err["message"].startswith(
        "launch 0 (add): arguments x and out overlap in one GPUBuffer that the kernel writes")


def test_one_kernel_in_two_modules_is_one_pipeline(deno, tmp_path):  # noqa: F811
    """The runtime caches pipelines per device by their WGSL and bindings: the same kernel
    exported in a program and alone is compiled once; another of its shader variants
    (a binding read_write where one buffer is read and written) is another pipeline."""
    tc.export_program({"add": ADD}, output=tmp_path / "program.js")
    tc.export(*ADD, output=tmp_path / "add.js")
    out = run_js(deno, tmp_path, """
import { program } from "./program.js";
import { add } from "./add.js";
import { gpu, read, storage } from "./harness.js";
const device = await gpu();
let made = 0;
const create = device.createComputePipeline.bind(device);
device.createComputePipeline = (d) => { made += 1; return create(d); };
const x = storage(device, new Float32Array(64).fill(1)), y = storage(device, new Float32Array(64));
await program.run(device, [["add", [1], x, x, y, 64]]);
await add(device, [1], x, x, y, 64);
const first = made;
await add(device, [1], x, y, y, 64);
console.log(JSON.stringify({ first, then: made, y: (await read(device, y, Float32Array))[0] }));
""")
    assert json.loads(out) == {"first": 1, "then": 2, "y": 3.0}


def test_a_buffer_added_to_itself_atomically(deno, tmp_path):  # noqa: F811
    """One buffer as an atomic's target and a plain load's source: the variant declares
    the merged binding atomic and loads through an atomicLoad (as the Python runtime)."""
    from tests.test_inplace_aliasing import added_to_itself
    tc.export_program({"twice": (added_to_itself, "*f32,*f32,i32", {"BLOCK": 16})},
                      output=tmp_path / "program.js")
    x = np.arange(10, dtype=np.float32) - 4.5
    run_js(deno, tmp_path, """
import { program } from "./program.js";
import { gpu, load, read, save, storage } from "./harness.js";
const device = await gpu();
const x = storage(device, await load("x", Float32Array));
await program.run(device, [["twice", [1], x, x, 10]]);
await save("x", await read(device, x, Float32Array));
""", x=x)
    np.testing.assert_array_equal(result(tmp_path, "x", np.float32), 2 * x)
