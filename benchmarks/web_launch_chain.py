"""Time per launch of a chain of 100 small launches of an exported kernel in Deno (whose
WebGPU is wgpu): the vector add of examples/vector_add.py on 1,024 float32 elements, each
launch reading what the one before wrote, on GPUBuffers. Two ways: the kernel's launcher
awaited launch by launch (a command buffer and a submission each), and one
``program.run`` of the 100 (``tc.export_program``: one compute pass, one submission).
Two times per launch, each the median of 30 chains after 3 to warm up: the host's (the
launches issued) and to completion (a read of the result after the chain).

    python benchmarks/web_launch_chain.py [--record]     # needs deno (TILEC_DENO)
"""

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import compiler as tc
from benchmarks.common import arguments, report
from examples.vector_add import add
from tests.test_web_export import _deno, run_js

N, BLOCK, LAUNCHES, CHAINS = 1024, 256, 100, 30

SCRIPT = f"""
import {{ program, add }} from "./program.js";
import {{ gpu, read, storage }} from "./harness.js";
const device = await gpu();
const a = storage(device, new Float32Array({N})), b = storage(device, new Float32Array({N}));
const y = storage(device, new Float32Array({N}).fill(1));
const grid = [{N // BLOCK}];
const launches = [];
for (let i = 0; i < {LAUNCHES // 2}; i++) {{
  launches.push([add, grid, a, y, b, {N}], [add, grid, b, y, a, {N}]);
}}
const median = (xs) => xs.slice(3).sort((p, q) => p - q)[(xs.length - 3) >> 1] * 1000 / {LAUNCHES};
async function timed(chain) {{
  const host = [], done = [];
  for (let r = 0; r < {CHAINS} + 3; r++) {{
    const t = performance.now();
    await chain();
    host.push(performance.now() - t);
    await read(device, a, Float32Array);
    done.push(performance.now() - t);
  }}
  return [median(host), median(done)];
}}
const single = await timed(async () => {{ for (const [k, g, ...args] of launches) await k(device, g, ...args); }});
const batched = await timed(() => program.run(device, launches));
const sum = (await read(device, a, Float32Array))[0];
const info = device.adapterInfo ?? {{}};
console.log(JSON.stringify({{ single, batched, sum, adapter: info.description || info.vendor || "" }}));
"""


def main() -> None:
    args = arguments(__doc__).parse_args()
    deno = _deno()
    if deno is None:
        raise SystemExit("no deno: set TILEC_DENO (scripts/test.sh installs it)")
    with tempfile.TemporaryDirectory() as where:
        tc.export_program({"add": (add, "*f32,*f32,*f32,i32", {"BLOCK": BLOCK})},
                          output=Path(where) / "program.js")
        out = json.loads(run_js(deno, Path(where), SCRIPT).splitlines()[-1])
    runs = 2 * (3 + CHAINS) * LAUNCHES // 2 * 2
    if out["sum"] != runs:
        raise SystemExit(f"wrong result: {out['sum']} after {runs} adds of 1")
    report("100 chained launches of an exported kernel in Deno, us per launch",
           f"Deno WebGPU on {out['adapter'] or 'its adapter'}",
           ["way", "host us", "to completion us", "launches per second"],
           [[name, f"{host:.1f}", f"{done:.1f}", f"{1e6 / done:,.0f}"] for name, (host, done)
            in (("launcher, awaited", out["single"]), ("program.run", out["batched"]))],
           record=args.record)


if __name__ == "__main__":
    main()
