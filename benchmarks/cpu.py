"""CPU benchmark: the NumPy backend (tilec's interpreter) on vector add of 2^20 float32,
BLOCK=1024, median per launch after warm-up. Goal: under 35 ms on a 2-core machine
(Triton's interpreter takes about 700 ms there). Also times compilation per backend, and
the first WGSL launch of one very large tile in a fresh process (lavapipe when there is no
GPU; Mesa's shader cache off), which used to be the driver compiling an unrolled shader
(133 s at 131,072 elements). Goal: 3 s.

    python benchmarks/cpu.py
"""

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TILEC_CACHE", "0")  # time real compilations

import compiler as tc  # noqa: E402
from benchmarks.common import median_seconds, report  # noqa: E402
from examples.vector_add import add  # noqa: E402


def main() -> None:
    n, block = 1 << 20, 1024
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    grid = (tc.cdiv(n, block),)
    t = median_seconds(lambda: add[grid](x, y, out, n, BLOCK=block, backend="numpy"))
    np.testing.assert_array_equal(out, x + y)
    rows = [["numpy backend, vector add 2^20 f32, per launch", f"{t * 1e3:.1f} ms",
             f"{3 * 4 * n / t / 1e9:.2f} GB/s"]]
    sig = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}
    for backend in ("numpy", "wgsl", "ptx"):
        t0 = time.perf_counter()
        tc.compile(add, signature=sig, constants={"BLOCK": block}, backend=backend)
        rows.append([f"compile vector add for {backend}", f"{(time.perf_counter() - t0) * 1e3:.0f} ms",
                     ""])
    rows += [[f"first WGSL launch, vector add of one {block:,}-element tile, fresh process",
              f"{_first_launch(block):.2f} s", ""] for block in (1 << 16, 1 << 17)]
    device = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    report("CPU: NumPy backend and compile time", device, ["what", "time", "bandwidth"], rows)


_FIRST_LAUNCH = """
import time, numpy as np, compiler as tc
from examples.vector_add import add
n = {block} + 77
x = np.ones(n, np.float32); out = np.zeros_like(x)
t = time.perf_counter()
add[(tc.cdiv(n, {block}),)](x, x, out, n, BLOCK={block}, backend="wgsl")
print(time.perf_counter() - t)
assert (out == 2).all()
"""


def _first_launch(block: int) -> float:
    """Seconds of the first launch (compile, shader build, run) in a new process."""
    env = {**os.environ, "TILEC_CACHE": "0", "MESA_SHADER_CACHE_DISABLE": "true",
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    done = subprocess.run([sys.executable, "-c", _FIRST_LAUNCH.format(block=block)],
                          env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


if __name__ == "__main__":
    main()
