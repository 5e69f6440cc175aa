"""The mma.sync path of ``tl.dot`` (what sm_80 GPUs run) timed on a Hopper GPU: f16 matmul
4096^3 against cuBLAS and against Triton's own mma.sync path (``DISABLE_MMA_V3=1``: its
tutorial kernel without wgmma), in one run.

Hopper would pick wgmma; here the dots are lowered as for sm_80 (``tensor_cores`` is
pinned to 80) and the PTX is assembled for the GPU at hand, in a disk cache of this run's
own, so no mma.sync kernel lands in the user's cache under Hopper's key.
Floors: 137 GFLOP at cuBLAS's rate is ~180 us; mma.sync on Hopper issues at about
two thirds of wgmma's rate, so ~270 us is its ceiling.

    python benchmarks/mma_sync.py    # on a Hopper GPU; appends to RESULTS.md
"""

import os
import sys
import tempfile
from pathlib import Path

os.environ["DISABLE_MMA_V3"] = "1"  # Triton: mma.sync (read when it compiles)
os.environ["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilec-mma-sync-")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

import backends.ptx.target  # noqa: E402
from benchmarks.common import report  # noqa: E402
from benchmarks.matmul import tflops, triton_matmul  # noqa: E402
from examples import matmul as tc_matmul  # noqa: E402

backends.ptx.target.tensor_cores = lambda arch: 80  # the sm_80 lowering, on any GPU

CONFIGS = [(128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (128, 128, 64, 4, 4)]


def rows(size: int = 4096) -> list[list[str]]:
    a, b = (torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty(size, size, device="cuda", dtype=torch.float16)
    want, flops = a @ b, 2.0 * size**3
    runs = {"cuBLAS (torch.matmul)": lambda: torch.matmul(a, b, out=c)}
    for bm, bn, bk, w, s in CONFIGS:
        cfg = f"{bm},{bn},{bk},{w},{s}"
        runs[f"triton tutorial, mma.sync, {cfg}"] = lambda bm=bm, bn=bn, bk=bk, w=w, s=s: (
            triton_matmul[(triton.cdiv(size, bm) * triton.cdiv(size, bn),)](
                a, b, c, size, size, size, size, size, size, BM=bm, BN=bn, BK=bk, GROUP=8,
                num_warps=w, num_stages=s))
        for name, kernel in (("matmul", tc_matmul.matmul),
                             ("matmul_tutorial", tc_matmul.matmul_tutorial)):
            runs[f"tilec {name}, mma.sync, {cfg}"] = lambda k=kernel, bm=bm, bn=bn, bk=bk, \
                w=w, s=s: tc_matmul.launch(a, b, c, "ptx", BM=bm, BN=bn, BK=bk, num_warps=w,
                                           num_stages=s, kernel=k)
    times = {}
    for name, fn in runs.items():
        fn()
        err = ((c.float() - want.float()).norm() / want.float().norm()).item()
        assert err < 2e-2, f"{name}: relative error {err:.2e}"
        times[name] = do_bench(fn, warmup=25, rep=200, return_mode="median")
    cublas = times["cuBLAS (torch.matmul)"]
    return [[f"matmul {size}^3 f16, {name}", f"{ms * 1e3:.0f} us", tflops(flops, ms),
             f"{cublas / ms:.1%}"] for name, ms in times.items()]


if __name__ == "__main__":
    report("GPU: matmul on the mma.sync path (ratio: of cuBLAS; tiles BM,BN,BK,warps,stages)",
           torch.cuda.get_device_name(), ["what", "median time", "TFLOP/s", "ratio"], rows())
