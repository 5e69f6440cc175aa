"""Compile time per kernel: tilec's own work (frontend, passes, printing the code) and, on
PTX, ptxas (through nvJitLink) assembling it for sm_90; on WGSL with ``--launch`` also the
driver building the shader at the first launch (lavapipe where there is no GPU). The
kernels are the project's examples over the specializations an autotuned program
compiles: attention (``examples/attention.py``) at head dims 64 and 128, in f16 and fp8,
causal or not, tiles of 64 and 128, 4 and 8 warps; matmul (``examples/matmul.py``) over
the tile sizes Triton's matmul tutorial tunes, with sizes and strides divisible by 16 as
a launch on such arrays specializes them. Each is compiled once, cold (no cache); seconds
are wall time (the phases from ``compiler.timing.collect``) and the process's CPU time;
"tilec s" is the wall time less ptxas' (or the driver's).

    python benchmarks/compile_time.py [--backend ptx|wgsl] [--quick] [--launch]
                                      [--passes N] [--record]

``--passes N``: the N slowest phases summed over the kernels, to see where the time goes.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import compiler as tc  # noqa: E402
from benchmarks.common import arguments, report  # noqa: E402
from compiler import timing  # noqa: E402
from examples import attention, matmul  # noqa: E402
from examples.vector_add import add  # noqa: E402


@dataclass(frozen=True)
class Case:
    """One specialization: a kernel, its signature, constexprs and launch options."""

    name: str
    kernel: tc.KernelFunction
    signature: dict[str, str]
    constants: dict
    num_warps: int = 4
    num_stages: int = 2

    def label(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.constants.items())
        return f"{shown}, {self.num_warps} warps, {self.num_stages} stages"


def attention_cases(quick: bool) -> list[Case]:
    """Attention as tutorial 06's forward pass is tuned: tiles (BM, BN) x warps, in f16
    and fp8 (e5m2), both head dims, causal or not; K and V by TMA for f16 on sm_90."""
    tiles = [(128, 128, 4)] if quick else [(64, 64, 4), (128, 64, 4), (128, 128, 4),
                                            (128, 128, 8)]
    cases = []
    for d in ([128] if quick else [64, 128]):
        for dt in ("f16", "fp8e5"):
            sig = {"q": f"*{dt}", "k": f"*{dt}", "v": f"*{dt}", "out": f"*{dt}",
                   "scale": "f32", "seq_len": "i32:16"}
            for bm, bn, warps in tiles:
                for causal in (False, True):
                    consts = {"CAUSAL": causal, "BM": bm, "BN": bn, "D": d}
                    cases.append(Case(f"attention {dt}", attention.attention, sig, consts,
                                      warps))
        if not quick:
            sig = {"q": "*f16", "k": "*f16", "v": "*f16", "out": "*f16", "scale": "f32",
                   "seq_len": "i32:16", "rows": "i32:16"}
            cases += [Case("attention_descriptor f16", attention.attention_descriptor, sig,
                           {"CAUSAL": True, "BM": 128, "BN": bn, "D": d}, 8, stages)
                      for bn, stages in ((64, 4), (128, 2))]
    return cases


def matmul_cases(quick: bool, backend: str) -> list[Case]:
    """Matmul over tutorial 03's tiles: its CUDA configs for PTX, its other ones (the
    tiles it tunes where the target is not CUDA, 8 warps) for WGSL."""
    sig = {"a": "*f16", "b": "*f16", "c": "*f16",
           **{n: "i32:16" for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")}}
    if backend == "ptx":
        tiles = [(128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),
                 (64, 32, 32, 2, 5), (256, 128, 128, 8, 3), (128, 128, 128, 4, 4)]
    else:
        tiles = [(32, 32, 64, 8, 2), (64, 64, 64, 8, 2), (128, 128, 64, 8, 2),
                 (256, 128, 64, 8, 2), (256, 256, 64, 8, 2)]
    if quick:
        tiles = tiles[-2:]
    return [Case("matmul f16", matmul.matmul, sig,
                 {"BM": bm, "BN": bn, "BK": bk, "GROUP": 8, "ACTIVATION": ""}, warps, stages)
            for bm, bn, bk, warps, stages in tiles]


@dataclass
class Measured:
    case: Case
    wall: float
    cpu: float
    phases: dict[str, float]
    facts: str


def measure(case: Case, backend: str, launch: bool) -> Measured:
    """Compile ``case`` once (and on WGSL with ``launch``, run it once on a single tile),
    with the phases of its timing tables."""
    with timing.collect() as tables:
        wall, cpu = time.perf_counter(), time.process_time()
        ck = tc.compile(case.kernel, signature=case.signature, constants=case.constants,
                        backend=backend, num_warps=case.num_warps,
                        num_stages=case.num_stages)
        if launch:
            _launch_matmul(ck, case)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    phases: Counter = Counter()
    for t in tables:
        phases.update(t.rows)
    facts = ""
    if backend == "ptx":
        info = ck.metadata
        facts = (f"{ck.asm['ptx'].count(chr(10)):,} lines, {info.registers} registers"
                 + (f", {info.spills} B spilled" if info.spills else ""))
    return Measured(case, wall, cpu, dict(phases), facts)


def _launch_matmul(ck, case: Case) -> None:
    """One launch of a compiled matmul on one tile: the driver builds the shader."""
    m, n, k = case.constants["BM"], case.constants["BN"], case.constants["BK"]
    a, b = np.ones((m, k), np.float16), np.ones((k, n), np.float16)
    c = np.zeros((m, n), np.float16)
    ck[(1,)](a, b, c, m, n, k, k, n, n)
    assert (c == k).all()


def _warm_up(backend: str, launch: bool) -> None:
    """A first compilation (and launch) of vector add: the imports, and with ``launch``
    the device, are not measured."""
    if launch:
        x = np.ones(1024, np.float32)
        add[(1,)](x, x, x, 1024, BLOCK=1024, backend=backend)
    else:
        tc.compile(add, signature={"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"},
                   constants={"BLOCK": 1024}, backend=backend)


def _assembler(phases: dict[str, float]) -> float:
    return sum(v for name, v in phases.items() if "nvJitLink" in name)


def _driver(phases: dict[str, float]) -> float:
    return sum(v for name, v in phases.items() if name.startswith("driver:"))


def rows_of(results: list[Measured], backend: str) -> list[list[str]]:
    rows = []
    for r in results:
        outside = _assembler(r.phases) + _driver(r.phases)
        rows.append([r.case.name, r.case.label(), f"{r.wall:.2f}", f"{r.cpu:.2f}",
                     f"{r.wall - outside:.2f}",
                     f"{outside:.2f}" if backend == "ptx" or outside else "", r.facts])
    total = [sum(x) for x in zip(*((r.wall, r.cpu, _assembler(r.phases) + _driver(r.phases))
                                   for r in results), strict=True)]
    rows.append([f"all {len(results)}", "", f"{total[0]:.2f}", f"{total[1]:.2f}",
                 f"{total[0] - total[2]:.2f}", f"{total[2]:.2f}", ""])
    return rows


def slowest_phases(results: list[Measured], n: int) -> str:
    """The ``n`` phases with the most seconds over all kernels (pass numbers dropped)."""
    summed: Counter = Counter()
    for r in results:
        for name, seconds in r.phases.items():
            name = name.strip()
            summed[name.split("-", 1)[1] if name[:2].isdigit() else name] += seconds
    return "\n".join(f"{s:9.2f} s  {name}" for name, s in summed.most_common(n))


def main() -> None:
    os.environ.setdefault("TILEC_CACHE", "0")  # time real compilations
    os.environ.setdefault("MESA_SHADER_CACHE_DISABLE", "true")  # and real shader builds
    parser = arguments(__doc__)
    parser.add_argument("--backend", choices=("ptx", "wgsl"), action="append",
                        help="the backends to compile for (default: both)")
    parser.add_argument("--quick", action="store_true", help="a few kernels only")
    parser.add_argument("--launch", action="store_true",
                        help="on wgsl, also launch each matmul once (the driver's build)")
    parser.add_argument("--passes", type=int, default=0, metavar="N",
                        help="print the N slowest phases over all kernels")
    args = parser.parse_args()
    device = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    header = ["kernel", "specialization", "wall s", "CPU s", "tilec s",
              "ptxas s / driver s", "code"]
    for backend in args.backend or ["ptx", "wgsl"]:
        _warm_up(backend, args.launch and backend == "wgsl")
        cases = matmul_cases(args.quick, backend)
        if backend == "ptx":
            cases = attention_cases(args.quick) + cases
        results = [measure(c, backend, args.launch and backend == "wgsl") for c in cases]
        report(f"Compile time on {backend}", device, header, rows_of(results, backend),
               record=args.record)
        if args.passes:
            print(slowest_phases(results, args.passes) + "\n")


if __name__ == "__main__":
    main()
