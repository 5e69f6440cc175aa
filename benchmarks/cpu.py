"""CPU benchmark: the NumPy backend (tilec's interpreter) on vector add of 2^20 float32
(BLOCK=1024) and softmax of 1024x1000 float32, median per launch after warm-up, beside
the same computation in plain NumPy (goal: within 5x; Triton's interpreter takes about
700 ms for the vector add here). Also times compilation per backend, and
the first WGSL launch of one very large tile in a fresh process (lavapipe when there is no
GPU; Mesa's shader cache off), which used to be the driver compiling an unrolled shader
(133 s at 131,072 elements; goal: 3 s), and the compilation of a one-warp 128x64 f32
transpose for PTX (27 s in ptxas when it moved through shared memory in three trips).

    python benchmarks/cpu.py [--record]    # --record appends the table to RESULTS.md
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
from benchmarks.common import arguments, median_seconds, report  # noqa: E402
from examples import softmax as softmax_example  # noqa: E402
from examples.vector_add import add  # noqa: E402
from tests.shape_kernels import transpose  # noqa: E402


def numpy_rows() -> list[list[str]]:
    """The NumPy backend beside the same computation in plain NumPy (goal: within 5x)."""
    n, block = 1 << 20, 1024
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    t = median_seconds(lambda: add[(tc.cdiv(n, block),)](x, y, out, n, BLOCK=block,
                                                          backend="numpy"))
    np.testing.assert_array_equal(out, x + y)
    plain = median_seconds(lambda: np.add(x, y, out=out))
    rows, m = [], rng.standard_normal((1024, 1000), dtype=np.float32)
    sm_out = np.empty_like(m)
    t_sm = median_seconds(lambda: softmax_example.launch(m, sm_out, backend="numpy"))
    np.testing.assert_allclose(sm_out, softmax_example.reference(m), rtol=1e-5, atol=1e-7)
    plain_sm = median_seconds(lambda: softmax_example.reference(m))
    for what, ours, theirs in (("vector add 2^20 f32", t, plain),
                               ("softmax 1024x1000 f32", t_sm, plain_sm)):
        rows += [[f"numpy backend, {what}, per launch", f"{ours * 1e3:.2f} ms",
                  f"{ours / theirs:.1f}x"],
                 [f"plain NumPy, {what}", f"{theirs * 1e3:.2f} ms", "1.0x"]]
    return rows


def main() -> None:
    args = arguments(__doc__).parse_args()
    rows = numpy_rows()
    sig = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}
    for backend in ("numpy", "wgsl", "ptx"):
        t0 = time.perf_counter()
        tc.compile(add, signature=sig, constants={"BLOCK": 1024}, backend=backend)
        rows.append([f"compile vector add for {backend}", f"{(time.perf_counter() - t0) * 1e3:.0f} ms",
                     ""])
    t0 = time.perf_counter()  # a layout conversion of 8,192 elements in one warp
    tc.compile(transpose, signature="*f32,*f32,i32,i32", constants={"HOW": "T", "BM": 128,
               "BN": 64}, backend="ptx", num_warps=1)
    rows.append(["compile a 128x64 f32 transpose, one warp, for ptx",
                 f"{(time.perf_counter() - t0) * 1e3:.0f} ms", ""])
    rows += [[f"first WGSL launch, vector add of one {block:,}-element tile, fresh process",
              f"{_first_launch(block):.2f} s", ""] for block in (1 << 16, 1 << 17)]
    device = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    report("CPU: NumPy backend and compile time", device, ["what", "time", "of plain NumPy"],
           rows, record=args.record)


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
