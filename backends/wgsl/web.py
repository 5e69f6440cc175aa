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

_FACTS = ("entry", "features", "params", "uniform", "workgroup_size")
"""What the runtime reads of an artifact's facts; subgroup swaps stay out: shuffles go
through workgroup memory, which every WebGPU device has."""


def template_literal(text: str) -> str:
    """``text`` as a JavaScript template literal, kept readable line by line."""
    escaped = text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
    return f"`{escaped}`"


def module_text(artifact: str, info: KernelInfo, header: list[str], constants: dict,
                divisibility: dict[str, int], runtime: str) -> str:
    """The ES module of one kernel; ``header`` lines open it as comments, ``constants``
    are the constexprs it was compiled for (``launcher.spec.constants`` in JavaScript),
    and ``divisibility`` names the integer parameters exported for multiples of 16."""
    source, facts = unpack_artifact(artifact)
    spec_params = [{"name": p.name, "dtype": p.dtype, "written": p.written,
                    **({"divisibility": divisibility[p.name]} if p.name in divisibility
                       else {})} for p in info.params]
    facts = {k: facts[k] for k in _FACTS}
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
        f"const WGSL = {template_literal(source)};",
        "",
        "const launch = kernel({",
        f"  name: {json.dumps(info.name)},",
        "  wgsl: WGSL,",
        f"  facts: {json.dumps(facts, sort_keys=True)},",
        f"  params: {json.dumps(spec_params)},",
        f"  constants: {json.dumps(constants, default=str)},",
        "});",
        "",
        f"export {{ launch as {info.name}, launch as default }};",
        "",
    ]
    return "\n".join(lines)
