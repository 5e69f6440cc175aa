"""Matrix multiply with a fused activation: C = act(A @ B), tiled (BM, BN) per program,
K in steps of BK, programs ordered in groups of GROUP rows of tiles so that neighbouring
programs share A and B tiles in the cache (Triton's grouped ordering).

``matmul`` loads through pointers and masks; ``matmul_tutorial`` is the same kernel as
Triton's tutorial writes it (rows wrapped, pointers advanced); ``matmul_descriptor`` is the
same kernel on tensor descriptors (``tl.make_tensor_descriptor``): on Hopper its A and B
tiles are copied by the tensor memory accelerator (TMA), elsewhere it is lowered to
pointers and masks.

    python examples/matmul.py [--backend ptx|wgsl|numpy|auto] [--size M N K] [--dtype f16|f32]
"""

import functools

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.func
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@tc.func
def tile_of(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    """The (row, column) of program ``pid``'s tile in grouped ordering: GROUP rows of
    tiles, walked column by column."""
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    first_m = pid // (GROUP * tiles_n) * GROUP
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP)
    return (first_m + (pid % (GROUP * tiles_n)) % rows_in_group,
            (pid % (GROUP * tiles_n)) // rows_in_group)


@tc.kernel
def matmul(a, b, c, M, N, K, stride_am, stride_bk, stride_cm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
           ACTIVATION: tl.constexpr, PRECISION: tl.constexpr = "ieee"):
    pm, pn = tile_of(tl.program_id(0), M, N, BM, BN, GROUP)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        x = tl.load(a + rm[:, None] * stride_am + ks[None, :],
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * stride_bk + rn[None, :],
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc, input_precision=PRECISION)
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    tl.store(c + rm[:, None] * stride_cm + rn[None, :], acc.to(c.dtype),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tc.kernel
def matmul_tutorial(a, b, c, M, N, K, stride_am, stride_bk, stride_cm,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr,
                    ACTIVATION: tl.constexpr):
    """``matmul`` as Triton's tutorial writes it: rows and columns wrapped by ``% M`` and
    ``% N`` instead of masked, pointers advanced by ``+= BK`` in the loop."""
    pm, pn = tile_of(tl.program_id(0), M, N, BM, BN, GROUP)
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(tl.cdiv(K, BK)):
        x = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * stride_cm + cn[None, :], acc.to(c.dtype),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@tc.kernel
def matmul_descriptor(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr, GROUP: tl.constexpr, ACTIVATION: tl.constexpr):
    pm, pn = tile_of(tl.program_id(0), M, N, BM, BN, GROUP)
    da = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    db = tl.make_tensor_descriptor(b, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    dc = tl.make_tensor_descriptor(c, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(da.load([pm * BM, k0]), db.load([k0, pn * BN]), acc)
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    dc.store([pm * BM, pn * BN], acc.to(c.dtype))


def launch(a: np.ndarray, b: np.ndarray, c: np.ndarray, backend: str | None = None,
           activation: str = "", BM: int = 64, BN: int = 64, BK: int = 32,
           num_warps: int = 4, num_stages: int = 2, kernel=matmul) -> None:
    """``kernel`` (``matmul`` or ``matmul_tutorial``) on ``a``, ``b`` into ``c``."""
    (M, K), (_, N) = a.shape, b.shape
    grid = (tc.cdiv(M, BM) * tc.cdiv(N, BN),)
    kernel[grid](a, b, c, M, N, K, a.shape[1], b.shape[1], c.shape[1], BM=BM, BN=BN, BK=BK,
                 GROUP=8, ACTIVATION=activation, backend=backend, num_warps=num_warps,
                 num_stages=num_stages)


def launch_descriptor(a, b, c, backend: str | None = None, activation: str = "", BM: int = 64,
                      BN: int = 64, BK: int = 64, num_warps: int = 4,
                      num_stages: int = 2) -> None:
    """``matmul_descriptor`` on contiguous row-major ``a``, ``b`` and ``c``."""
    (M, K), (_, N) = a.shape, b.shape
    grid = (tc.cdiv(M, BM) * tc.cdiv(N, BN),)
    matmul_descriptor[grid](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, GROUP=8,
                            ACTIVATION=activation, backend=backend, num_warps=num_warps,
                            num_stages=num_stages)


def reference(a: np.ndarray, b: np.ndarray, activation: str = "") -> np.ndarray:
    c = a.astype(np.float64) @ b.astype(np.float64)
    return np.where(c >= 0, c, 0.01 * c) if activation == "leaky_relu" else c


def main(backend: str | None = None, size: tuple[int, int, int] = (200, 150, 300),
         dtype: str = "f16") -> None:
    M, N, K = size
    rng = np.random.default_rng()
    np_dtype = np.float16 if dtype == "f16" else np.float32
    a = rng.standard_normal((M, K)).astype(np_dtype)
    b = rng.standard_normal((K, N)).astype(np_dtype)
    want = reference(a, b, "leaky_relu")
    # sums of K products: error grows like sqrt(K) units of the output's rounding
    tol = (2e-3 if dtype == "f16" else 1e-5) * np.sqrt(K) * np.abs(want).max() / 8
    tutorial = functools.partial(launch, kernel=matmul_tutorial)
    for name, run in (("matmul", launch), ("matmul_tutorial", tutorial),
                      ("matmul_descriptor", launch_descriptor)):
        c = np.full((M, N), np.nan, np_dtype)
        run(a, b, c, backend, activation="leaky_relu")
        np.testing.assert_allclose(c.astype(np.float64), want, rtol=0, atol=tol)
        print(f"{name}: {M}x{N}x{K} {dtype} + leaky_relu on "
              f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--size", type=int, nargs=3, default=(200, 150, 300))
    p.add_argument("--dtype", default="f16", choices=("f16", "f32"))
    args = p.parse_args()
    with reported_errors():
        main(args.backend, tuple(args.size), args.dtype)
