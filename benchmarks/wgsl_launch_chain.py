"""Time per launch of a chain of 100 small wgsl launches on tilec's arrays: the vector
add of examples/vector_add.py on 1,024 float32 elements, each launch reading what the one
before wrote (``add(a, y, b)``, then ``add(b, y, a)``, ...).

Two times per launch, each the median over chains: the host's (the 100 launches, no wait:
what a launch-bound program pays) and to completion (the 100 launches and
``tc.synchronize()``; on lavapipe the CPU also runs the kernels, about 30-40 us each).

Launches on tilec's arrays are recorded and submitted together
(backends/wgsl/recorder.py). ``--baseline DIR`` also times the checkout at DIR (main
before recording: one submit per launch) for comparison. Each checkout runs in a
process of its own, which imports tilec from it (``TILEC_CHAIN_ROOT``).

    python benchmarks/wgsl_launch_chain.py [--baseline /path/to/checkout] [--record]
"""

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("TILEC_CHAIN_ROOT", str(ROOT)))

import numpy as np

import compiler as tc
import compiler.language as tl
from examples.vector_add import add

N, BLOCK, LAUNCHES, CHAINS = 1024, 256, 100, 30


def _chain(a, b, y) -> None:
    for i in range(LAUNCHES // 2):
        add[(N // BLOCK,)](a, y, b, N, BLOCK=BLOCK, backend="wgsl")
        add[(N // BLOCK,)](b, y, a, N, BLOCK=BLOCK, backend="wgsl")


def measure() -> dict:
    """Median microseconds per launch over CHAINS chains, host and to completion; and
    whether the chain computed what NumPy does."""
    a, b = tc.zeros(N, tl.float32, "wgsl"), tc.zeros(N, tl.float32, "wgsl")
    y = tc.asarray(np.ones(N, np.float32), "wgsl")
    _chain(a, b, y)  # compiles, and waits for the driver at the first launch
    tc.synchronize("wgsl")
    host, done = [], []
    for _ in range(CHAINS):
        start = time.perf_counter()
        _chain(a, b, y)
        issued = time.perf_counter()
        tc.synchronize("wgsl")
        end = time.perf_counter()
        host.append((issued - start) / LAUNCHES * 1e6)
        done.append((end - start) / LAUNCHES * 1e6)
    right = bool((tc.to_numpy(a) == LAUNCHES * (CHAINS + 1)).all())
    return {"host": statistics.median(host), "done": statistics.median(done), "right": right}


def _in_process_of(root: Path) -> dict:
    """``measure()`` in a new process importing tilec from ``root``."""
    env = {**os.environ, "TILEC_CHAIN_ROOT": str(root)}
    out = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    from benchmarks.common import arguments, report

    p = arguments(__doc__)
    p.add_argument("--baseline", type=Path, help="also time the checkout at this path")
    args = p.parse_args()
    runs = [("recorded, submitted together (this checkout)", ROOT)]
    if args.baseline:
        runs.append((f"one submit per launch ({args.baseline})", args.baseline))
    rows, first = [], None
    for label, root in runs:
        got = _in_process_of(root)
        if not got["right"]:
            sys.exit(f"{label}: the chain computed wrong values")
        first = first or got
        rows.append([label, f"{got['host']:.1f}", f"{got['done']:.1f}",
                     f"{got['host'] / first['host']:.2f}x"])
    device = tc.wgsl_device().adapter.info["device"]
    report(f"wgsl: {LAUNCHES} chained launches of a {N}-element vector add, us per launch",
           device, ["launches", "host", "to completion", "host time vs. the first row"],
           rows, record=args.record)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(measure()))
    else:
        main()
