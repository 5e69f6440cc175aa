"""A compiled wgsl kernel as an ES module for the web: its WGSL, the facts of its
parameters, and a launcher made by the shared runtime ``tilec-runtime.js``.

Input: a wgsl artifact (``make_artifact``) and its ``KernelInfo``. Output: JavaScript
text. Everything that is the same for every kernel lives in the runtime module, so an
exported module is data plus two lines of code.
"""

from __future__ import annotations

import json
from pathlib import Path

from backends.wgsl import unpack_artifact
from compiler.kinfo import KernelInfo

RUNTIME = Path(__file__).with_name("tilec-runtime.js")
"""The runtime every exported module imports (written beside it by ``tc.export``)."""

_FACTS = ("entry", "features", "params", "uniform", "workgroup_size", "subgroup",
          "subgroup_xor")
"""What the runtime reads of an artifact's facts: the subgroup swaps too, which it makes
where the device was requested with the "subgroups" feature and a probe finds subgroups
that make them exact (``cross_thread.py``); elsewhere shuffles go through workgroup
memory, which every WebGPU device has."""


def template_literal(text: str) -> str:
    """``text`` as a JavaScript template literal, kept readable line by line."""
    escaped = text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
    return f"`{escaped}`"


def _launcher(artifact: str, info: KernelInfo, constants: dict,
              divisibility: dict[str, int]) -> tuple[dict, list[str]]:
    """The facts of one kernel and the lines declaring its launcher, ``const k_NAME``
    (prefixed: a kernel may be named as the runtime's imports or a JavaScript keyword)."""
    return _declared(*unpack_artifact(artifact), info, constants, divisibility)


def _declared(source: str, facts: dict, info: KernelInfo, constants: dict,
              divisibility: dict[str, int]) -> tuple[dict, list[str]]:
    spec_params = [{"name": p.name, "dtype": p.dtype, "written": p.written,
                    **({"divisibility": divisibility[p.name]} if p.name in divisibility
                       else {})} for p in info.params]
    facts = {k: facts[k] for k in _FACTS if k in facts}
    return facts, [
        f"const k_{info.name} = kernel({{",
        f"  name: {json.dumps(info.name)},",
        f"  wgsl: {template_literal(source)},",
        f"  facts: {json.dumps(facts, sort_keys=True)},",
        f"  params: {json.dumps(spec_params)},",
        f"  constants: {json.dumps(constants, default=str)},",
        "});",
        "",
    ]


def module_text(artifact: str, info: KernelInfo, header: list[str], constants: dict,
                divisibility: dict[str, int], runtime: str) -> str:
    """The ES module of one kernel; ``header`` lines open it as comments, ``constants``
    are the constexprs it was compiled for (``launcher.spec.constants`` in JavaScript),
    and ``divisibility`` names the integer parameters exported for multiples of 16."""
    facts, launcher = _launcher(artifact, info, constants, divisibility)
    names = ", ".join(p.name for p in info.params)
    features = ", ".join(facts["features"]) or "none"
    lines = [f"// {h}" if h else "//" for h in header]
    lines += [
        f"// workgroup size: {facts['workgroup_size']}; WebGPU features: {features}",
        "//",
        f"// Use: import {{ {info.name} }} from \"./<this file>\";",
        f"//      await {info.name}(device, grid, {names});",
        "// Arrays are GPUBuffers or typed arrays (uploaded, and read back when written).",
        "",
        f"import {{ kernel }} from {json.dumps(runtime)};",
        "",
        *launcher,
        f"export {{ k_{info.name} as {info.name}, k_{info.name} as default }};",
        "",
    ]
    return "\n".join(lines)


def program_text(kernels: list[tuple], header: list[str], runtime: str) -> str:
    """The ES module of several kernels, each ``(artifact, info, constants,
    divisibility, signature line)``, with their launchers and a ``program`` of them."""
    lines = [f"// {h}" if h else "//" for h in header]
    lines += [
        "//",
        "// Use: import { program, <kernel> } from \"./<this file>\";",
        "//      await <kernel>(device, grid, ...args);   // one launch, as a kernel module's",
        "//      await program.run(device, [[\"<kernel>\", grid, ...args], ...]);",
        "// program.run encodes its launches into one command buffer; arrays are GPUBuffers.",
        "",
        f"import {{ kernel, program as makeProgram }} from {json.dumps(runtime)};",
        "",
    ]
    names = []
    for artifact, info, constants, divisibility, signature in kernels:
        facts, launcher = _launcher(artifact, info, constants, divisibility)
        features = ", ".join(facts["features"]) or "none"
        comment = f"// {signature}; workgroup size {facts['workgroup_size']}; WebGPU " \
            f"features: {features}"
        lines += [comment, *launcher]
        names.append(info.name)
    lines += [_program(names), "",
              f"export {{ program, {', '.join(f'k_{n} as {n}' for n in names)} }};", ""]
    return "\n".join(lines)


def _program(names: list[str]) -> str:
    """The line making the ``program`` of the launchers of ``names``."""
    return f"const program = makeProgram({{ {', '.join(f'{n}: k_{n}' for n in names)} }});"


def graph_text(kernels: list[tuple[str, dict, KernelInfo]], buffers: list[dict],
               launches: list[list], data: str, runtime: str) -> str:
    """The ES module of a captured graph (``tc.export_graph``): ``kernels`` (source,
    facts, info), the ``buffers`` its launches bind (size; ``contents``: where in the
    ``data`` file their bytes are; ``name``), and the ``launches`` (kernel index, grid,
    then each argument: a number, or ``{b, offset, size}`` of a buffer)."""
    lines = [
        (f"// A tc.graph of {len(launches)} launches of {len(kernels)} kernels, exported by "
        "tilec for WebGPU."),
        "//",
        "// Use: import { load } from \"./<this file>\";",
        f"//      const graph = await load(device);   // fetches ./{data} beside this module",
        "//      graph.buffers.NAME (GPUBuffers to write and read), await graph.run();",
        "",
        f"import {{ kernel, program as makeProgram }} from {json.dumps(runtime)};",
        "",
    ]
    names = []
    for source, facts, info in kernels:
        lines += _declared(source, facts, info, {}, {})[1]
        names.append(info.name)
    lines += [
        _program(names),
        f"const KERNELS = [{', '.join(f'k_{n}' for n in names)}];",
        f"const BUFFERS = {json.dumps(buffers)};",
        f"const LAUNCHES = {json.dumps(launches)};",
        "",
        "/** The graph's buffers on `device` (their contents from `source`: bytes, or a URL",
        f" * fetched; default ./{data} beside this module), and `run()` replaying its launches. */",
        "export async function load(device, source) {",
        f"  source ??= new URL({json.dumps('./' + data)}, import.meta.url);",
        "  const bytes = source instanceof Uint8Array ? source",
        "    : new Uint8Array(await (await fetch(source)).arrayBuffer());",
        "  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;",
        "  const made = BUFFERS.map((b) => {",
        "    const buffer = device.createBuffer({ label: b.name ?? undefined, size: b.size, usage });",
        "    if (b.contents) {",
        "      const [at, length] = b.contents;",
        "      device.queue.writeBuffer(buffer, 0, bytes.buffer, bytes.byteOffset + at, length);",
        "    }",
        "    return buffer;",
        "  });",
        "  const launches = LAUNCHES.map(([k, grid, ...args]) => [KERNELS[k], grid, ...args.map(",
        "    (a) => typeof a === \"object\" ? { buffer: made[a.b], offset: a.offset, size: a.size } : a)]);",
        "  const buffers = Object.fromEntries(BUFFERS.map((b, i) => [b.name, made[i]])",
        "    .filter(([name]) => name));",
        "  return { buffers, launches, run: () => program.run(device, launches) };",
        "}",
        "",
        "export { program };",
        "",
    ]
    return "\n".join(lines)
