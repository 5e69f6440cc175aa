"""Matrix multiply in cuTile style (``compiler.tile``): C = A @ B with one (tm, tn) tile of
C per block, K in steps of tk through ``ct.mma``. Tiles at the edges are padded with zeros
on load and clipped on store, so any M, N, K work. The kernel text is cuTile's.

    python examples/tile/matmul.py [--backend ptx|wgsl|numpy|auto] [--size M N K]
                                   [--dtype f16|f32|tf32]
"""

import numpy as np

import compiler as tc
import compiler.tile as ct
from compiler.cli import reported_errors, script_parser


@ct.kernel
def matmul(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int],
           tf32: ct.Constant[bool]):
    bidx = ct.bid(0)
    bidy = ct.bid(1)
    num_k = ct.num_tiles(A, axis=1, shape=(tm, tk))
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(num_k):
        a = ct.load(A, index=(bidx, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bidy), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        if tf32:
            a = a.astype(ct.tfloat32)
            b = b.astype(ct.tfloat32)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bidx, bidy), tile=acc.astype(C.dtype))


def main(backend: str | None = None, size: tuple[int, int, int] = (200, 136, 120),
         dtype: str = "f32") -> None:
    m, n, k = size
    rng = np.random.default_rng()
    np_dtype = np.float16 if dtype == "f16" else np.float32
    a = rng.standard_normal((m, k)).astype(np_dtype)
    b = rng.standard_normal((k, n)).astype(np_dtype)
    c = np.full((m, n), np.nan, dtype=np_dtype)
    tm, tn, tk = 64, 64, 32
    grid = (ct.cdiv(m, tm), ct.cdiv(n, tn))
    ct.launch(None, grid, matmul, (a, b, c, tm, tn, tk, dtype == "tf32"), backend=backend)
    want = a.astype(np.float32) @ b.astype(np.float32)
    # f16 inputs round to f16 on store; tf32 rounds the inputs to 10 mantissa bits.
    tol = {"f16": 2e-2, "tf32": 2e-2}.get(dtype, 1e-4) * np.sqrt(k)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=tol, atol=tol)
    print(f"tile/matmul: {m}x{n}x{k} {dtype} on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--size", type=int, nargs=3, default=(200, 136, 120))
    p.add_argument("--dtype", default="f32", choices=["f16", "f32", "tf32"])
    a = p.parse_args()
    with reported_errors():
        main(a.backend, tuple(a.size), a.dtype)
