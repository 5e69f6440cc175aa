"""The mma.sync path of ``tl.dot`` (what sm_80 GPUs run) timed on a Hopper GPU: f16 matmul
4096^3 against cuBLAS and against Triton's own mma.sync path (``DISABLE_MMA_V3=1``: its
tutorial kernel without wgmma), in one run.

Hopper would pick wgmma; here the dots are lowered as for sm_80 (``tensor_cores`` is
pinned to 80) and the PTX is assembled for the GPU at hand, in a disk cache of this run's
own, so no mma.sync kernel lands in the user's cache under Hopper's key.
Floors: 137 GFLOP at cuBLAS's rate is ~180 us. The mma.sync ceiling is measured in the
same run (``peak``): a CUDA C kernel (CuPy's NVRTC) whose warps issue nothing but
``mma.sync.m16n8k16`` f16 -> f32 on registers, eight independent accumulators each, so
no memory, address or dependency stall lowers it.

    python benchmarks/mma_sync.py [--record]   # on a Hopper GPU; --record appends to RESULTS.md
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
from benchmarks.common import arguments, report  # noqa: E402
from benchmarks.matmul import tflops, triton_matmul  # noqa: E402
from examples import matmul as tc_matmul  # noqa: E402

backends.ptx.target.tensor_cores = lambda arch: 80  # the sm_80 lowering, on any GPU

CONFIGS = [(128, 128, 64, 4, 3), (128, 256, 64, 8, 3), (128, 128, 64, 4, 4)]


_PEAK = r"""
extern "C" __global__ void peak(float* out, int iters) {
    unsigned a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = 0x3c003c00u ^ (threadIdx.x << i);
    for (int i = 0; i < 2; ++i) b[i] = 0x3c003c00u ^ (threadIdx.x >> i);
    float c[8][4] = {};
    for (int it = 0; it < iters; ++it) {
        #pragma unroll
        for (int k = 0; k < 8; ++k)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    float s = 0.f;
    for (int k = 0; k < 8; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


_FED = r"""
// mma.sync fed by ldmatrix from 128-byte-swizzled shared memory, as in a 128x128 block
// of 4 warps (64x64 each), BK 64: no global memory. A and B are [row][k], 64 k a row.
__device__ unsigned at(unsigned base, int row, int k) {
    return base + row * 128 + (((k >> 3) ^ (row & 7)) << 4);
}
extern "C" __global__ void fed(float* out, int iters) {
    __shared__ __align__(128) unsigned short tiles[2][128 * 64];
    for (int i = threadIdx.x; i < 2 * 128 * 64; i += blockDim.x)
        (&tiles[0][0])[i] = 0x3c00 ^ (i & 0xff);
    __syncthreads();
    unsigned a_base = (unsigned)__cvta_generic_to_shared(tiles[0]);
    unsigned b_base = (unsigned)__cvta_generic_to_shared(tiles[1]);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int wm = (warp >> 1) * 64, wn = (warp & 1) * 64;
    int lrow = (lane & 7) + ((lane >> 3) & 1) * 8, lk = (lane >> 4) * 8;
    float c[4][8][4] = {};
    for (int it = 0; it < iters; ++it) {
        unsigned flip = (it & 7) << 4;  // other chunks each time: no load leaves the loop
        #pragma unroll
        for (int k = 0; k < 64; k += 16) {
            unsigned a[4][4], b[8][2];
            #pragma unroll
            for (int m = 0; m < 4; ++m)
                asm("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(a[m][0]), "=r"(a[m][1]), "=r"(a[m][2]), "=r"(a[m][3])
                             : "r"(at(a_base, wm + m * 16 + lrow, k + lk) ^ flip));
            #pragma unroll
            for (int n = 0; n < 4; ++n)
                asm("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(b[2 * n][0]), "=r"(b[2 * n + 1][0]),
                               "=r"(b[2 * n][1]), "=r"(b[2 * n + 1][1])
                             : "r"(at(b_base, wn + n * 16 + lrow, k + lk) ^ flip));
            #pragma unroll
            for (int m = 0; m < 4; ++m)
                #pragma unroll
                for (int n = 0; n < 8; ++n)
                    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                                 : "+f"(c[m][n][0]), "+f"(c[m][n][1]), "+f"(c[m][n][2]),
                                   "+f"(c[m][n][3])
                                 : "r"(a[m][0]), "r"(a[m][1]), "r"(a[m][2]), "r"(a[m][3]),
                                   "r"(b[n][0]), "r"(b[n][1]));
        }
    }
    float s = 0.f;
    for (int m = 0; m < 4; ++m)
        for (int n = 0; n < 8; ++n) s += c[m][n][0] + c[m][n][1] + c[m][n][2] + c[m][n][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


def peak(cublas: float) -> list[list[str]]:
    """mma.sync's issue-rate ceiling: TFLOP/s of register-only m16n8k16 at 4 and 8 warps
    a block, 4 blocks an SM, and its ratio to ``cublas`` TFLOP/s."""
    import cupy

    kernel = cupy.RawKernel(_PEAK, "peak")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    iters, found = 4096, []
    for warps in (4, 8):
        blocks, threads = 4 * sms, 32 * warps
        out = cupy.empty(blocks * threads, cupy.float32)
        run = lambda b=blocks, t=threads, o=out: kernel((b,), (t,), (o, cupy.int32(iters)))  # noqa: E731
        ms = do_bench(run, warmup=5, rep=100, return_mode="median")
        flops = 2.0 * 16 * 8 * 16 * 8 * iters * blocks * warps
        rate = flops / ms / 1e9
        what = f"mma.sync m16n8k16 ceiling, registers only, {warps} warps x {blocks} blocks"
        found.append([what, f"{ms * 1e3:.0f} us", f"{rate:.1f}",
                     f"{rate / cublas:.1%}"])
    fed = cupy.RawKernel(_FED, "fed")
    for per_sm in (1, 2, 3):  # 32 KB of shared memory a block, 128 registers of accumulators
        blocks, iters = per_sm * sms, 2048
        out = cupy.empty(blocks * 128, cupy.float32)
        run = lambda b=blocks, o=out, n=iters: fed((b,), (128,), (o, cupy.int32(n)))  # noqa: E731
        ms = do_bench(run, warmup=5, rep=100, return_mode="median")
        rate = 2.0 * 128 * 128 * 64 * iters * blocks / ms / 1e9
        what = (f"mma.sync fed by ldmatrix (swizzled), 128x128 blocks of 4 warps, BK 64, "
                f"{per_sm} a SM, no global memory")
        found.append([what, f"{ms * 1e3:.0f} us", f"{rate:.1f}",
                      f"{rate / cublas:.1%}"])
    return found


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
    record = arguments(__doc__).parse_args().record
    table = rows()
    report("GPU: matmul on the mma.sync path (ratio: of cuBLAS; tiles BM,BN,BK,warps,stages)",
           torch.cuda.get_device_name(), ["what", "median time", "TFLOP/s", "ratio"],
           table + peak(float(table[0][2])), record=record)
