"""Persistent matrix multiply: one program per SM (or any fixed count), each walking the
output tiles ``pid, pid + P, pid + 2P, ...`` (``tl.num_programs``) in grouped order, with
the usual K loop inside (its loads pipelined as in ``matmul.py``). The grid no longer
depends on the problem size, and a program's setup is paid once for many tiles.

    python examples/persistent_matmul.py [--backend ptx|wgsl|numpy|auto] [--size M N K]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def persistent_matmul(a, b, c, M, N, K, stride_am, stride_bk, stride_cm,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP: tl.constexpr):
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    in_group = GROUP * tiles_n
    for tile in range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0)):
        first_m = (tile // in_group) * GROUP
        rows_in_group = tl.minimum(tiles_m - first_m, GROUP)
        pm = first_m + (tile % in_group) % rows_in_group
        pn = (tile % in_group) // rows_in_group
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
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * stride_cm + rn[None, :], acc.to(c.dtype),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))


def launch(a, b, c, programs: int, backend: str | None = None, BM: int = 64, BN: int = 64,
           BK: int = 32, num_warps: int = 4, num_stages: int = 2) -> None:
    (M, K), (_, N) = a.shape, b.shape
    persistent_matmul[(programs,)](a, b, c, M, N, K, a.shape[1], b.shape[1], c.shape[1],
                                   BM=BM, BN=BN, BK=BK, GROUP=8, backend=backend,
                                   num_warps=num_warps, num_stages=num_stages)


def main(backend: str | None = None, size: tuple[int, int, int] = (200, 150, 300)) -> None:
    M, N, K = size
    rng = np.random.default_rng()
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    launch(a, b, c, programs=5, backend=backend)  # fewer programs than the 12 tiles
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 2e-3 * np.sqrt(K) * np.abs(want).max() / 8
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0, atol=tol)
    print(f"persistent matmul: {M}x{N}x{K} f16, 5 programs, on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--size", type=int, nargs=3, default=(200, 150, 300))
    args = p.parse_args()
    with reported_errors():
        main(args.backend, tuple(args.size))
