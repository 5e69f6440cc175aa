"""Host time per launch of a small cuTile-style kernel: ``ct.launch(stream, grid, kernel,
args)`` and ``kernel[grid](...)`` of the same ``@ct.kernel`` (examples/tile/vector_add.py,
1024 float32 elements, one block), beside tilec's Triton-style vector add
(examples/vector_add.py) launched as ``add[grid](...)``: a cuTile launch should cost what
a Triton-style one does.

Per launch: the median over batches of 1,000 launches (no sync inside a batch: host time,
as a small kernel's launch costs a training loop); and the same launches with the
launcher's call made a no-op, which leaves tilec's own part (the launch key, its lookup,
the runtime arguments) without the driver's or the interpreter's.

Arrays: torch CUDA tensors on ptx; on numpy, torch CPU tensors where torch is installed,
else NumPy arrays (``--numpy`` forces those).

    python benchmarks/launch_overhead_cutile.py [--backend ptx|numpy] [--numpy] [--record]
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

import compiler as tc
import compiler.tile as ct
from benchmarks.common import arguments, report
from examples.tile.vector_add import vector_add
from examples.vector_add import add

N = TILE = 1024
BATCH = 1000


def _arrays(backend: str, use_numpy: bool) -> tuple[list, str, object]:
    """Three arrays of N float32 for ``backend``, what they are, and a device sync."""
    if not use_numpy:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            device = "cuda" if backend == "ptx" else "cpu"
            sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
            return ([torch.randn(N, device=device) for _ in range(3)],
                    f"torch {device} tensors", sync)
    if backend == "ptx":
        sys.exit("the ptx run takes torch CUDA tensors: install torch")
    rng = np.random.default_rng(0)
    return ([rng.standard_normal(N, dtype=np.float32) for _ in range(3)], "NumPy arrays",
            lambda: None)


def _per_launch(fn, sync, batches: int) -> float:
    """Median microseconds per call of ``fn`` over ``batches`` batches of BATCH calls."""
    for _ in range(BATCH // 10):
        fn()
    sync()
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(BATCH):
            fn()
        samples.append((time.perf_counter() - t0) / BATCH)
        sync()
    return statistics.median(samples) * 1e6


def _launches(backend: str, a, b, c) -> dict:
    grid = (ct.cdiv(N, TILE),)
    return {
        "ct.launch(stream, grid, kernel, args)":
            (vector_add, lambda: ct.launch(None, grid, vector_add, (a, b, c, TILE),
                                           backend=backend)),
        "kernel[grid](...), the same @ct.kernel":
            (vector_add, lambda: vector_add[grid](a, b, c, TILE, backend=backend)),
        "add[grid](...), tilec's Triton-style add":
            (add, lambda: add[grid](a, b, c, N, BLOCK=TILE, backend=backend)),
    }


def _without_launcher(kernel, fn, sync, batches: int) -> float:
    """``_per_launch`` with the launcher of each compiled kernel of ``kernel`` a no-op."""
    compiled = [ck for ck in kernel._cache.values() if ck.direct is not None]
    saved = [ck.direct for ck in compiled]
    for ck in compiled:
        ck.direct = lambda grid, args: None
    try:
        return _per_launch(fn, sync, batches)
    finally:
        for ck, direct in zip(compiled, saved, strict=True):
            ck.direct = direct


def rows(backend: str, use_numpy: bool, batches: int) -> tuple[list[list[str]], str]:
    arrays, what, sync = _arrays(backend, use_numpy)
    a, b, c = arrays
    out = []
    for name, (kernel, fn) in _launches(backend, a, b, c).items():
        fn()
        sync()
        expected = np.asarray(a.cpu() if hasattr(a, "cpu") else a) + \
            np.asarray(b.cpu() if hasattr(b, "cpu") else b)
        got = np.asarray(c.cpu() if hasattr(c, "cpu") else c)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        full = _per_launch(fn, sync, batches)
        bare = _without_launcher(kernel, fn, sync, batches)
        out.append([name, f"{full:.1f} us", f"{bare:.1f} us"])
    return out, what


def main() -> None:
    p = arguments(__doc__)
    p.add_argument("--backend", choices=("ptx", "numpy"), default=None,
                   help="default: ptx where it runs, else numpy")
    p.add_argument("--numpy", action="store_true", help="NumPy arrays even where torch is")
    p.add_argument("--batches", type=int, default=None,
                   help="batches of 1,000 launches (default: 20 on ptx, 3 on numpy)")
    args = p.parse_args()
    backend = args.backend or ("ptx" if tc.backends()["ptx"][0] else "numpy")
    batches = args.batches or (20 if backend == "ptx" else 3)
    table, what = rows(backend, args.numpy, batches)
    report(f"Launch overhead, compiler.tile vector add of {N} float32 ({what})",
           f"{backend}: {tc.backends()[backend][1]}",
           ["launch", "host time per launch", "without the launcher's call"], table,
           record=args.record)


if __name__ == "__main__":
    main()
