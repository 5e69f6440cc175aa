"""CPU benchmark of the NumPy backend (tilec's interpreter) against plain NumPy doing the
same computation: median wall time per launch after warm-up, each kernel's result checked
against the plain NumPy one first.

    python benchmarks/numpy_backend.py [--repeat N]

Prints a Markdown table (it does not append to RESULTS.md: the before/after tables there
are written by hand). BLAS runs one thread: on a shared 2-core machine a second one spins
against other processes (a 256^3 matmul measured 0.5 ms on one thread, 1 to 16 ms on two).
"""

import argparse
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads its BLAS

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import compiler as tc
import compiler.language as tl
from benchmarks.common import median_seconds
from examples import matmul, softmax
from examples.vector_add import add


@tc.kernel
def block_sum(x, out, n, BLOCK: tl.constexpr):
    """One partial sum per program of BLOCK elements."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + pid, tl.sum(tl.load(x + offs, mask=offs < n, other=0.0), axis=0))


Case = tuple[str, Callable[[], None], Callable[[], None], Callable[[], None]]


def _vector_add(rng: np.random.Generator) -> Case:
    n, block = 1 << 20, 1024
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out, ref = np.empty_like(x), np.empty_like(x)

    def check() -> None:
        np.testing.assert_array_equal(out, ref)
    return ("vector add 2^20 f32 (BLOCK 1024)",
            lambda: add[(n // block,)](x, y, out, n, BLOCK=block, backend="numpy"),
            lambda: np.add(x, y, out=ref), check)


def _softmax(rng: np.random.Generator, cols: int = 1024) -> Case:
    x = rng.standard_normal((1024, cols), dtype=np.float32)
    out = np.empty_like(x)

    def check() -> None:
        np.testing.assert_allclose(out, softmax.reference(x), rtol=1e-5, atol=1e-7)
    tail = "" if cols == 1024 else " (BLOCK 1024, masked tail)"
    return (f"softmax 1024x{cols} f32 rows{tail}",
            lambda: softmax.launch(x, out, backend="numpy"),
            lambda: softmax.reference(x), check)


def _softmax_masked(rng: np.random.Generator) -> Case:
    return _softmax(rng, 1000)


def _matmul(rng: np.random.Generator) -> Case:
    a = rng.standard_normal((256, 256), dtype=np.float32)
    b = rng.standard_normal((256, 256), dtype=np.float32)
    c = np.empty_like(a)

    def check() -> None:
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    return ("matmul 256^3 f32 (tl.dot, 64x64x32 tiles)",
            lambda: matmul.launch(a, b, c, backend="numpy"), lambda: a @ b, check)


def _block_sum(rng: np.random.Generator) -> Case:
    n, block = 1 << 20, 1024
    x = rng.standard_normal(n, dtype=np.float32)
    out = np.empty(n // block, np.float32)

    def check() -> None:
        np.testing.assert_allclose(out, x.reshape(-1, block).sum(1), rtol=1e-4, atol=1e-4)
    return ("sum of 2^20 f32 in blocks of 1024 (tl.sum)",
            lambda: block_sum[(n // block,)](x, out, n, BLOCK=block, backend="numpy"),
            lambda: x.reshape(-1, block).sum(1), check)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=15)
    repeat = p.parse_args().repeat
    rng = np.random.default_rng(0)
    rows = []
    for make in (_vector_add, _softmax, _softmax_masked, _matmul, _block_sum):
        name, tilec, plain, check = make(rng)
        tilec()
        plain()
        check()
        t = median_seconds(tilec, repeat=repeat)
        t_np = median_seconds(plain, repeat=repeat)
        rows.append(f"| {name} | {t * 1e3:.2f} ms | {t_np * 1e3:.2f} ms | {t / t_np:.1f}x |")
    device = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    print(f"NumPy backend vs plain NumPy, {device}, NumPy {np.__version__}\n")
    print("| kernel | tilec numpy | plain NumPy | ratio |\n|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
