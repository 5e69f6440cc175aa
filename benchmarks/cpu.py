"""CPU benchmark: the NumPy backend (tilec's interpreter) on vector add of 2^20 float32,
BLOCK=1024, median per launch after warm-up. Goal: under 35 ms on a 2-core machine
(Triton's interpreter takes about 700 ms there). Also times compilation per backend.

    python benchmarks/cpu.py
"""

import os
import platform
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
    device = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    report("CPU: NumPy backend and compile time", device, ["what", "time", "bandwidth"], rows)


if __name__ == "__main__":
    main()
