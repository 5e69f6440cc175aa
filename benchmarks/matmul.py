"""GPU benchmark of ``tl.dot``: matrix multiply against cuBLAS (``torch.matmul``) and
Triton's tutorial matmul, and fused attention forward against Triton's tutorial-style
kernel and ``scaled_dot_product_attention``, all in one run; WGSL matmul on the same GPU.

Floors (H100/H200 dense f16 tensor rate ~990 TFLOP/s by datasheet, ~790 measured through
cuBLAS on random data): an f16 4096^3 product is 2 * 4096^3 = 137 GFLOP, so ~0.17 ms at
cuBLAS speed; its operands move 3 * 32 MiB, far under a millisecond of bandwidth, so it is
compute bound. f32 IEEE runs on the CUDA cores (~60 TFLOP/s of FMA), tf32 on tensor cores.
Attention (batch 4, 32 heads, 4096 tokens, head dim D) does 4 * B * H * S^2 * D flops
(half for causal).
Timing: triton.testing.do_bench (CUDA events, warm-up, L2 flushed, median), the
contenders of a table measured in turn for ``ROUNDS`` rounds and each given the median of
its rounds: the H200's clocks drift as it heats (cuBLAS 4096^3 f16 measured 183 us, then
204 us, in one process), and whoever went first alone would have the cool GPU.

    python benchmarks/matmul.py [--quick] [--record]   # a CUDA machine; --record: RESULTS.md
"""

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import triton
import triton.language as ttl
from triton.testing import do_bench

import compiler as tc
from benchmarks.common import arguments, report
from examples import attention as tc_attention
from examples import matmul as tc_matmul
from examples import persistent_matmul as tc_persistent


@triton.jit
def triton_matmul(a, b, c, M, N, K, sam, sbk, scm, BM: ttl.constexpr, BN: ttl.constexpr,
                  BK: ttl.constexpr, GROUP: ttl.constexpr):
    """Triton's tutorial matmul (grouped ordering, masked K loop), f32 accumulate."""
    pid = ttl.program_id(0)
    tiles_m, tiles_n = ttl.cdiv(M, BM), ttl.cdiv(N, BN)
    group = pid // (GROUP * tiles_n)
    first_m = group * GROUP
    rows = min(tiles_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * tiles_n)) % rows
    pn = (pid % (GROUP * tiles_n)) // rows
    rm = pm * BM + ttl.arange(0, BM)
    rn = pn * BN + ttl.arange(0, BN)
    rk = ttl.arange(0, BK)
    acc = ttl.zeros((BM, BN), ttl.float32)
    for k0 in range(0, K, BK):
        x = ttl.load(a + rm[:, None] * sam + (k0 + rk)[None, :],
                     mask=(k0 + rk)[None, :] < K, other=0.0)
        y = ttl.load(b + (k0 + rk)[:, None] * sbk + rn[None, :],
                     mask=(k0 + rk)[:, None] < K, other=0.0)
        acc = ttl.dot(x, y, acc)
    ttl.store(c + rm[:, None] * scm + rn[None, :], acc.to(c.dtype.element_ty),
              mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def triton_attention(q, k, v, out, scale, seq_len, CAUSAL: ttl.constexpr, BM: ttl.constexpr,
                     BN: ttl.constexpr, D: ttl.constexpr):
    """The same online-softmax forward as examples/attention.py, in Triton (``seq_len`` a
    multiple of the blocks): causal, the blocks before the diagonal unmasked, as in
    Triton's tutorial."""
    start = ttl.program_id(0) * BM
    base = ttl.program_id(1) * seq_len * D
    rm, rd = start + ttl.arange(0, BM), ttl.arange(0, D)
    qt = ttl.load(q + base + rm[:, None] * D + rd[None, :])
    m_i = ttl.full((BM,), -float("inf"), ttl.float32)
    l_i = ttl.zeros((BM,), ttl.float32)
    acc = ttl.zeros((BM, D), ttl.float32)
    for n0 in range(0, start if CAUSAL else seq_len, BN):
        m_i, l_i, acc = triton_step(qt, k, v, base, n0, rm, m_i, l_i, acc, scale, False, BN, D)
    if CAUSAL:
        for n0 in range(start, start + BM, BN):
            m_i, l_i, acc = triton_step(qt, k, v, base, n0, rm, m_i, l_i, acc, scale, True,
                                        BN, D)
    ttl.store(out + base + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(ttl.float16))


@triton.jit
def triton_step(qt, k, v, base, n0, rm, m_i, l_i, acc, scale, DIAGONAL: ttl.constexpr,
                BN: ttl.constexpr, D: ttl.constexpr):
    keys, rd = n0 + ttl.arange(0, BN), ttl.arange(0, D)
    kt = ttl.load(k + base + keys[None, :] * D + rd[:, None])
    s = ttl.dot(qt, kt) * scale
    if DIAGONAL:
        s = ttl.where(keys[None, :] <= rm[:, None], s, -float("inf"))
    m_new = ttl.maximum(m_i, ttl.max(s, axis=1))
    p = ttl.exp(s - m_new[:, None])
    alpha = ttl.exp(m_i - m_new)
    l_i = l_i * alpha + ttl.sum(p, axis=1)
    vt = ttl.load(v + base + keys[:, None] * D + rd[None, :])
    return m_new, l_i, acc * alpha[:, None] + ttl.dot(p.to(ttl.float16), vt)


def tflops(flops: float, ms: float) -> str:
    return f"{flops / ms / 1e9:.1f}"


ROUNDS = 5


def in_turn(runs: dict, rep: int) -> dict[str, float]:
    """Each run's median milliseconds over ``ROUNDS`` rounds of all of them in turn."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(ROUNDS):
        for name, fn in runs.items():
            times[name].append(do_bench(fn, warmup=5, rep=rep, return_mode="median"))
    return {name: statistics.median(t) for name, t in times.items()}


def _check(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    err = (got.float() - want.float()).norm() / want.float().norm()
    assert err < 2e-2, f"{what}: relative error {err:.2e}"


def matmul_rows(size: int, tilec_config: dict) -> list[list[str]]:
    """f16 and bf16 (tilec, Triton, cuBLAS), f32 IEEE and tf32 (tilec, cuBLAS)."""
    rows, flops = [], 2.0 * size**3
    for dtype in (torch.float16, torch.bfloat16):
        rows += _half_rows(size, flops, dtype, tilec_config)
    rows += _f32_rows(size, flops, F32_CONFIG)
    return rows


# f32 operands stay in registers (FMAs, or mma.sync for tf32): a tile whose accumulator
# and operands fit 4 warps' registers
F32_CONFIG = {"BM": 128, "BN": 128, "BK": 64, "num_warps": 4}


def _half_rows(size: int, flops: float, dtype, tilec_config: dict) -> list[list[str]]:
    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    c = torch.empty(size, size, device="cuda", dtype=dtype)
    want = a @ b
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    runs = {
        "cuBLAS (torch.matmul)": lambda: torch.matmul(a, b, out=c),
        "triton tutorial": lambda: triton_matmul[(triton.cdiv(size, 128) * triton.cdiv(
            size, 256),)](a, b, c, size, size, size, size, size, size, BM=128, BN=256, BK=64,
            GROUP=8, num_warps=8, num_stages=3),
        "tilec ptx": lambda: tc_matmul.launch(a, b, c, "ptx", **tilec_config),
        "tilec ptx, Triton's tutorial as written (matmul_tutorial)": lambda: tc_matmul.launch(
            a, b, c, "ptx", kernel=tc_matmul.matmul_tutorial, **tilec_config),
        "tilec ptx TMA (tensor descriptors)": lambda: tc_matmul.launch_descriptor(
            a, b, c, "ptx", **tilec_config),
        "tilec ptx persistent (1 program per SM)": lambda: tc_persistent.launch(
            a, b, c, sms, "ptx", **tilec_config),
    }
    for name, fn in runs.items():
        fn()
        _check(c, want, name)
    times = in_turn(runs, rep=40)
    kind = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    return [[f"matmul {size}^3 {kind}, {name}", f"{ms * 1e3:.0f} us", tflops(flops, ms),
             f"{times['cuBLAS (torch.matmul)'] / ms:.1%}"] for name, ms in times.items()]


def _f32_rows(size: int, flops: float, config: dict) -> list[list[str]]:
    a = torch.randn(size, size, device="cuda")
    b = torch.randn(size, size, device="cuda")
    c = torch.empty(size, size, device="cuda")
    rows = []
    for precision, tf32 in (("ieee", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        cublas = do_bench(lambda: torch.matmul(a, b, out=c), return_mode="median")
        run = _f32_launch(a, b, c, size, precision, config)
        run()
        _check(c, a @ b, f"tilec f32 {precision}")
        ms = do_bench(run, warmup=5, rep=50, return_mode="median")
        rows.append([f"matmul {size}^3 f32 {precision}, cuBLAS", f"{cublas * 1e3:.0f} us",
                     tflops(flops, cublas), "100%"])
        rows.append([f"matmul {size}^3 f32 {precision}, tilec ptx", f"{ms * 1e3:.0f} us",
                     tflops(flops, ms), f"{cublas / ms:.1%}"])
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def _f32_launch(a, b, c, size: int, precision: str, config: dict):
    grid = (tc.cdiv(size, config["BM"]) * tc.cdiv(size, config["BN"]),)
    return lambda: tc_matmul.matmul[grid](
        a, b, c, size, size, size, size, size, size, BM=config["BM"], BN=config["BN"],
        BK=config["BK"], GROUP=8, ACTIVATION="", PRECISION=precision, backend="ptx",
        num_warps=config["num_warps"])  # f32 operands stay in registers: 2 stages


def attention_rows(batch: int, heads: int, seq: int, config: dict) -> list[list[str]]:
    return [row for d in (64, 128) for causal in (False, True)
            for row in _attention_case(batch, heads, seq, d, causal, config)]


def _attention_case(batch: int, heads: int, seq: int, d: int, causal: bool,
                    config: dict) -> list[list[str]]:
    q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.float16)
               for _ in range(3))
    out = torch.empty_like(q)
    flops = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    want = sdpa(q, k, v, is_causal=causal)
    def triton_run(bn: int):
        return lambda: triton_attention[(seq // 128, batch * heads)](
            q, k, v, out, 1 / d**0.5, seq, CAUSAL=causal, BM=128, BN=bn, D=d, num_warps=8,
            num_stages=3)

    runs = {
        "sdpa": lambda: sdpa(q, k, v, is_causal=causal),
        "triton": triton_run(64),
        "triton BN 128": triton_run(128),
        "tilec ptx": lambda: tc_attention.launch(q, k, v, out, causal, "ptx", **config),
        "tilec ptx TMA (K, V descriptors)": lambda: tc_attention.launch_descriptor(
            q, k, v, out, causal, "ptx", **config),
        "tilec ptx TMA, BN 128": lambda: tc_attention.launch_descriptor(
            q, k, v, out, causal, "ptx", **{**config, "BN": 128, "num_stages": 2}),
    }
    for name, fn in runs.items():
        out.fill_(float("nan"))
        got = fn()  # sdpa returns its result; the kernels write ``out``
        _check(got if isinstance(got, torch.Tensor) else out, want, f"attention {name}")
    times = in_turn(runs, rep=20)
    kind = "causal" if causal else "full"
    best = min(times["triton"], times["triton BN 128"])  # Triton at its better block
    return [[f"attention B{batch} H{heads} S{seq} D{d} {kind}, {name}", f"{ms * 1e3:.0f} us",
             tflops(flops, ms), f"{best / ms:.1%}"] for name, ms in times.items()]


def wgsl_rows(size: int = 1024) -> list[list[str]]:
    ok, why = tc.backends()["wgsl"]
    if not ok:
        return [[f"matmul {size}^3 f32, tilec wgsl", "unavailable", why, ""]]
    import wgpu

    from backends.wgsl import read_buffer
    from benchmarks.gpu import wgsl_ms
    device = tc.wgsl_device()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size), dtype=np.float32) for _ in range(2))
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    ba, bb = (device.create_buffer_with_data(data=x, usage=usage) for x in (a, b))
    bc = device.create_buffer(size=4 * size * size, usage=usage)
    grid = (tc.cdiv(size, 64) ** 2,)

    def launch():
        tc_matmul.matmul[grid](ba, bb, bc, size, size, size, size, size, size, BM=64, BN=64,
                               BK=16, GROUP=8, ACTIVATION="", PRECISION="ieee",
                               backend="wgsl", num_warps=4)
    launch()
    got = read_buffer(bc, np.float32).reshape(size, size)
    np.testing.assert_allclose(got, a @ b, atol=1e-2 * np.abs(a @ b).max())
    ms = wgsl_ms(device, launch)
    return [[f"matmul {size}^3 f32, tilec wgsl ({why})", f"{ms * 1e3:.0f} us",
             f"{2 * size**3 / ms / 1e6:.0f} GFLOP/s", ""]]


def main() -> None:
    p = arguments(__doc__)
    p.add_argument("--quick", action="store_true", help="smaller sizes")
    p.add_argument("--skip-wgsl", action="store_true")
    p.add_argument("--config", default="128,256,64,8,4",
                   help="tilec matmul BM,BN,BK,warps,stages")
    p.add_argument("--only-matmul", action="store_true")
    args = p.parse_args()
    device = torch.cuda.get_device_name()
    size = 2048 if args.quick else 4096
    config = dict(zip(("BM", "BN", "BK", "num_warps", "num_stages"),
                      map(int, args.config.split(",")), strict=True))
    header = ["what", "median time", "TFLOP/s", "ratio"]
    report(f"GPU: matmul (ratio: of cuBLAS; tilec tiles {args.config})", device, header,
           matmul_rows(size, config), record=args.record)
    if args.only_matmul:
        return
    seq = 1024 if args.quick else 4096
    report("GPU: fused attention forward f16 (ratio: of Triton at its better BN)", device,
           header,
           # Triton's tiles; 4 stages, so that the P V dot runs on into the next iteration
           attention_rows(4, 32, seq, {"BM": 128, "BN": 64, "num_warps": 8, "num_stages": 4}),
           record=args.record)
    if not args.skip_wgsl:
        report("GPU: matmul on WGSL", device, header, wgsl_rows(), record=args.record)


if __name__ == "__main__":
    main()
