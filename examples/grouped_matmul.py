"""Grouped matrix multiply: C_g = A_g @ B_g for several (M_g, N_g, K_g) in one launch, a
fixed number of programs walking the output tiles of every group in turn (the grouped-GEMM
tutorial's static scheduling on the device: program ``p`` takes tiles ``p, p + P, ...``
counted across the groups).

Triton's tutorial passes a table of each group's matrix addresses and turns them into
pointers (``tl.pointer_type``), which tilec runs on ptx alone (WGSL has no addresses, and
NumPy follows one only into the launch's own arrays). So that it runs on every backend,
here each operand's matrices are packed one after another in one array and the table holds
their element offsets (``pack``), as well as each group's sizes.

    python examples/grouped_matmul.py [--backend ptx|wgsl|numpy|auto]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def grouped_matmul(a, b, c, starts, sizes, groups, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    """``starts[3 g : 3 g + 3]``: where group ``g``'s A, B and C begin in ``a``, ``b``,
    ``c`` (row-major, M x K, K x N, M x N); ``sizes[3 g : 3 g + 3]``: its M, N, K."""
    tile = tl.program_id(0)
    first = 0  # the first tile of group g, counted across the groups
    for g in range(groups):
        m, n, k = tl.load(sizes + 3 * g), tl.load(sizes + 3 * g + 1), tl.load(sizes + 3 * g + 2)
        tiles_n = tl.cdiv(n, BN)
        tiles = tl.cdiv(m, BM) * tiles_n
        while tile >= first and tile < first + tiles:
            a_g, b_g = a + tl.load(starts + 3 * g), b + tl.load(starts + 3 * g + 1)
            rm = (tile - first) // tiles_n * BM + tl.arange(0, BM)
            rn = (tile - first) % tiles_n * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), tl.float32)
            for k0 in range(0, k, BK):
                ks = k0 + rk
                x = tl.load(a_g + rm[:, None] * k + ks[None, :],
                            mask=(rm[:, None] < m) & (ks[None, :] < k), other=0.0)
                y = tl.load(b_g + ks[:, None] * n + rn[None, :],
                            mask=(ks[:, None] < k) & (rn[None, :] < n), other=0.0)
                acc = tl.dot(x, y, acc)
            tl.store(c + tl.load(starts + 3 * g + 2) + rm[:, None] * n + rn[None, :],
                     acc.to(c.dtype.element_ty), mask=(rm[:, None] < m) & (rn[None, :] < n))
            tile += tl.num_programs(0)
        first += tiles


def pack(matrices: list[np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """The matrices one after another in one flat array, and where each begins."""
    starts = np.cumsum([0] + [x.size for x in matrices[:-1]]).tolist()
    return np.concatenate([x.ravel() for x in matrices]), starts


def launch(As: list[np.ndarray], Bs: list[np.ndarray], programs: int,
           backend: str | None = None, BM: int = 64, BN: int = 64, BK: int = 32,
           num_warps: int = 4) -> list[np.ndarray]:
    """``[A @ B for A, B in zip(As, Bs)]`` in one launch of ``programs`` programs."""
    Cs = [np.full((x.shape[0], y.shape[1]), np.nan, x.dtype) for x, y in zip(As, Bs, strict=True)]
    (a, sa), (b, sb), (c, sc) = pack(As), pack(Bs), pack(Cs)
    starts = np.array([sa, sb, sc], np.int32).T.ravel().copy()
    sizes = np.array([(x.shape[0], y.shape[1], x.shape[1]) for x, y in zip(As, Bs, strict=True)],
                     np.int32).ravel()
    grouped_matmul[(programs,)](a, b, c, starts, sizes, len(As), BM=BM, BN=BN, BK=BK,
                                backend=backend, num_warps=num_warps)
    return [c[s:s + x.size].reshape(x.shape) for s, x in zip(sc, Cs, strict=True)]


def main(backend: str | None = None) -> None:
    rng = np.random.default_rng()
    shapes = [(128, 96, 64), (70, 130, 40), (200, 64, 100), (33, 17, 5)]  # M, N, K
    As = [rng.standard_normal((m, k)).astype(np.float16) for m, _, k in shapes]
    Bs = [rng.standard_normal((k, n)).astype(np.float16) for _, n, k in shapes]
    for got, x, y in zip(launch(As, Bs, programs=7, backend=backend), As, Bs, strict=True):
        want = x.astype(np.float64) @ y.astype(np.float64)
        tol = 2e-3 * np.sqrt(x.shape[1]) * np.abs(want).max() / 8
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=tol)
    print(f"grouped matmul: {len(shapes)} groups of f16, 7 programs, on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    with reported_errors():
        main(p.parse_args().backend)
