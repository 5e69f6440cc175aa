"""Triton's tutorials' kernels, the same text under Triton and under tilec, timed in turn in
one process: ``python benchmarks/triton_tutorials.py --tutorials DIR [--only 01,06]``.

DIR holds Triton's tutorial scripts as published (``01-vector-add.py`` ...; they are not
part of this repository). Each script is loaded twice as a module, once with ``triton``
being Triton and once with it being tilec (``compiler.triton``, the alias of ``tilec run
--as-triton``), keeping only its definitions: imports, functions, classes, assignments and
``if`` blocks, not its top-level tests, loops and benchmark calls. ``sys.modules``' triton
entries are switched to the side whose function runs, so either library's lazy imports
find its own modules. Each workload is one shape from the tutorial's own benchmark; its
first calls (compilation, autotuning) are left out of the timing, then each side is timed
with CUDA events around one call at a time after flushing L2 (as ``do_bench``),
alternating Triton and tilec twice: the lower of each side's two medians. Needs a CUDA GPU, torch and Triton.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import math
import os
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("TILEC_BACKEND", "ptx")

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.peers import lower_of_two_medians, print_table

_KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign,
         ast.Try)


def _definitions(path: Path) -> ast.Module:
    """The script without its top-level statements that run things."""
    tree = ast.parse(path.read_text(), str(path))
    tree.body = [s for s in tree.body if isinstance(s, _KEEP)
                 or (isinstance(s, ast.If) and "__name__" not in ast.unparse(s.test))]
    return tree


def _load(path: Path, tag: str):
    spec = importlib.util.spec_from_loader(f"tutorial_{tag}_{path.stem.replace('-', '_')}",
                                           loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    exec(compile(_definitions(path), str(path), "exec"), module.__dict__)  # noqa: S102 - the script is the benchmark's input
    return module


def _triton_entries() -> dict:
    return {k: v for k, v in sys.modules.items() if k == "triton" or k.startswith("triton.")}


class Sides:
    """The ``sys.modules`` triton entries of each side, and a switch between them."""

    def __init__(self):
        import triton  # noqa: F401 - Triton's own, loaded first
        self.entries = {"triton": _triton_entries()}
        self._clear()
        from compiler.triton import install_as_triton
        install_as_triton()
        self.entries["tilec"] = _triton_entries()
        self._clear()
        sys.modules.update(self.entries["triton"])

    @staticmethod
    def _clear() -> None:
        for name in list(_triton_entries()):
            del sys.modules[name]

    @contextlib.contextmanager
    def of(self, side: str):
        self._clear()
        sys.modules.update(self.entries[side])
        try:
            yield
        finally:
            self.entries[side] = _triton_entries()


def _rand(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def w01(m):
    x, y = _rand(1 << 26), _rand(1 << 26)
    return "add 2^26 f32", lambda: m.add(x, y), 3 * 4 * (1 << 26), 0


def w02(m):
    x = _rand(4096, 8192)
    return "softmax 4096x8192 f32", lambda: m.softmax(x), 2 * 4 * x.numel(), 0


def w03(m):
    a, b = _rand(4096, 4096, dtype=torch.float16), _rand(4096, 4096, dtype=torch.float16)
    return "matmul 4096^3 f16", lambda: m.matmul(a, b), 0, 2 * 4096 ** 3


def w04(m):
    x = _rand(1 << 24)
    return ("seeded dropout 2^24 f32", lambda: m.seeded_dropout(x, p=0.5, seed=123),
            2 * 4 * x.numel(), 0)


def w05(m):
    M, N = 4096, 8192
    x, w, b = _rand(M, N, dtype=torch.float16), _rand(N, dtype=torch.float16), \
        _rand(N, dtype=torch.float16)
    return ("layer norm fwd 4096x8192 f16", lambda: m.layer_norm(x, (N,), w, b, 1e-5),
            2 * 2 * M * N, 0)


def w05b(m):
    M, N = 4096, 8192
    x = _rand(M, N, dtype=torch.float16).requires_grad_(True)
    w = _rand(N, dtype=torch.float16).requires_grad_(True)
    b = _rand(N, dtype=torch.float16).requires_grad_(True)
    y = m.layer_norm(x, (N,), w, b, 1e-5)
    dy = torch.randn_like(y)
    return ("layer norm bwd 4096x8192 f16", lambda: y.backward(dy, retain_graph=True),
            3 * 2 * M * N, 0)


def _attention(m, causal: bool, backward: bool):
    Z, H, N, D = 4, 32, 4096, 64
    q, k, v = (_rand(Z, H, N, D, dtype=torch.float16).requires_grad_(backward)
               for _ in range(3))
    scale = 1 / math.sqrt(D)
    flops = 4 * Z * H * N * N * D * (0.5 if causal else 1)
    if not backward:
        return (f"attention fwd Z4 H32 N4096 D64 f16{' causal' if causal else ''}",
                lambda: m.attention(q, k, v, causal, scale, False), 0, flops)
    o = m.attention(q, k, v, causal, scale, False)
    do = torch.randn_like(o)
    return (f"attention bwd Z4 H32 N4096 D64 f16{' causal' if causal else ''}",
            lambda: o.backward(do, retain_graph=True), 0, 2.5 * flops)


def w06(m):
    return _attention(m, False, False)


def w06c(m):
    return _attention(m, True, False)


def w06b(m):
    return _attention(m, True, True)


def w07(m):
    x = torch.rand(1 << 24, device="cuda")
    y = torch.empty_like(x)
    n = x.numel()

    def run():
        m.asin_kernel[(triton_cdiv(n, 1024),)](x, y, n, BLOCK_SIZE=1024)
    return "libdevice asin 2^24 f32", run, 2 * 4 * n, 0


def w08(m):
    sizes = [1024, 512, 256, 128]
    a = [_rand(s, s, dtype=torch.float16) for s in sizes]
    b = [_rand(s, s, dtype=torch.float16) for s in sizes]
    return ("grouped gemm 1024/512/256/128 f16", lambda: m.group_gemm_fn(a, b), 0,
            sum(2 * s ** 3 for s in sizes))


def w09(m):
    a = _rand(8192, 4096, dtype=torch.float16)
    b = _rand(8192, 4096, dtype=torch.float16)
    return ("persistent matmul 8192x8192x4096 f16", lambda: m.matmul_persistent(a, b.T), 0,
            2 * 8192 * 8192 * 4096)


def w11(m):
    x, y = _rand(1 << 24), _rand(1 << 24)
    return "add with PDL 2^24 f32", lambda: m.add(x, y, launch_pdl=True), 3 * 4 * (1 << 24), 0


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


WORKLOADS = {"01": [w01], "02": [w02], "03": [w03], "04": [w04], "05": [w05, w05b],
             "06": [w06, w06c, w06b], "07": [w07], "08": [w08], "09": [w09], "11": [w11]}


def _measure(sides: Sides, path: Path, workload, reps: int) -> dict:
    modules, calls, label = {}, {}, None
    for side in ("triton", "tilec"):
        with sides.of(side):
            modules[side] = _load(path, side)
            label, calls[side], nbytes, flops = workload(modules[side])
            t0 = time.perf_counter()
            for _ in range(2):
                calls[side]()
            torch.cuda.synchronize()
            first = time.perf_counter() - t0
        print(f"  {side}: first two calls {first:.1f} s", flush=True)
    return {"what": label, "bytes": nbytes, "flops": flops,
            **lower_of_two_medians(calls, reps, sides.of)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tutorials", type=Path, required=True)
    p.add_argument("--only", help="comma-separated prefixes, e.g. 01,06")
    p.add_argument("--reps", type=int, default=50)
    args = p.parse_args()
    sides = Sides()
    rows = []
    for prefix, workloads in WORKLOADS.items():
        if args.only and prefix not in args.only.split(","):
            continue
        path = next(iter(sorted(args.tutorials.glob(f"{prefix}-*.py"))), None)
        if path is None:
            print(f"{prefix}: no script in {args.tutorials}")
            continue
        for workload in workloads:
            print(f"{path.name}: {workload.__name__}", flush=True)
            try:
                rows.append(_measure(sides, path, workload, args.reps))
            except Exception:  # noqa: BLE001 - one tutorial's failure is reported, not fatal
                traceback.print_exc(limit=4)
                rows.append({"what": f"{path.stem} {workload.__name__}: failed"})
    print_table(rows, "tutorial kernel", "triton")
    return 0


if __name__ == "__main__":
    sys.exit(main())
