"""The first launch in a fresh process, tilec (PTX) against Triton: vector add of 2^20
float32 on torch tensors, the library imported and the kernel compiled (cold: empty
cache directories) or loaded from the disk cache (warm: the same directories again), then
launched and synchronized. torch and its CUDA context are set up before the clock
starts, since both libraries need them alike. Median of 5 processes each. Python's
bytecode is written, to a cache of the run, by one untimed process of each library first,
as installing a package does: the H200 machine sets PYTHONDONTWRITEBYTECODE, which made
every measured process compile both libraries' sources again (0.67 s of tilec's 1.4 s).

    python benchmarks/first_launch.py [--record]   # a CUDA machine; --record: into RESULTS.md
    python benchmarks/first_launch.py --profile   # cProfile of tilec's warm first launch
"""

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import arguments, report

_SCRIPT = """
import time
import torch
x = torch.ones(1 << 20, device="cuda")
out = torch.empty_like(x)
torch.cuda.synchronize()
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
{launch}
torch.cuda.synchronize()
t2 = time.perf_counter()
assert bool((out == 2).all())
print(t1 - t0, t2 - t1)
"""

_TRITON_ADD = """import triton
import triton.language as tl

@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)
"""

LIBRARIES = {
    "tilec ptx": ("import compiler as tc\nfrom examples.vector_add import add",
                  "add[(1024,)](x, x, out, x.numel(), BLOCK=1024, backend='ptx')"),
    "triton": (_TRITON_ADD, "add[(1024,)](x, x, out, x.numel(), BLOCK=1024)"),
}
PROCESSES = 5


def _env(cache: Path, bytecode: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "TILEC_CACHE_DIR": str(cache / "tilec"),
            "TRITON_CACHE_DIR": str(cache / "triton"), "PYTHONPYCACHEPREFIX": str(bytecode),
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                          if p)}


def _run(script: Path, cache: Path) -> tuple[float, float]:
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=_env(cache, script.parent / "bytecode"), check=True, cwd=ROOT)
    imports, launch = map(float, done.stdout.split())
    return imports, launch


def rows() -> list[list[str]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (imports, launch) in LIBRARIES.items():
            script = Path(tmp) / f"first_{name.split()[0]}.py"
            script.write_text(_SCRIPT.format(imports=imports, launch=launch))
            _run(script, Path(tmp) / f"untimed-{name.split()[0]}")  # writes the bytecode
            cold, warm, imported = [], [], []
            for i in range(PROCESSES):
                cache = Path(tmp) / f"cache-{name.split()[0]}-{i}"
                t_import, t_cold = _run(script, cache)
                cold.append(t_cold)
                imported.append(t_import)
                warm.append(_run(script, cache)[1])
            med = statistics.median
            out += [[f"first launch, cold disk cache, {name}", f"{med(cold) * 1e3:.0f} ms"],
                    [f"first launch, warm disk cache, {name}", f"{med(warm) * 1e3:.0f} ms"],
                    [f"import, {name}", f"{med(imported) * 1e3:.0f} ms"]]
    return out


def profile() -> None:
    """cProfile of tilec's warm first launch: where its milliseconds go."""
    imports, launch = LIBRARIES["tilec ptx"]
    profiled = (f"{imports}\nimport cProfile, pstats\nt1 = time.perf_counter()\n"
                f"cProfile.run({launch!r}, '/tmp/first.prof')\n"
                "pstats.Stats('/tmp/first.prof').sort_stats('cumtime').print_stats(25)")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "first_tilec.py"
        script.write_text(_SCRIPT.format(imports=imports, launch=launch))
        _run(script, Path(tmp))
        script.write_text(_SCRIPT.format(imports=profiled, launch=""))
        subprocess.run([sys.executable, str(script)], env=_env(Path(tmp), Path(tmp) / "bytecode"),
                       cwd=ROOT, check=False)


if __name__ == "__main__":
    parser = arguments(__doc__)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile of tilec's warm first launch (no table)")
    args = parser.parse_args()
    if args.profile:
        profile()
    else:
        import torch
        report("GPU: first launch in a fresh process", torch.cuda.get_device_name(),
               ["what", "time"], rows(), record=args.record)
