"""Vector add in cuTile style (``compiler.tile``): whole tiles by tile index, no pointer
arithmetic or masks. The kernel text is cuTile's: it runs under ``import cuda.tile as ct``.

    python examples/tile/vector_add.py [--backend ptx|wgsl|numpy|auto] [--n N]
"""

import numpy as np

import compiler as tc
import compiler.tile as ct
from compiler.cli import reported_errors, script_parser


@ct.kernel
def vector_add(a, b, c, tile_size: ct.Constant[int]):
    bid = ct.bid(0)
    a_tile = ct.load(a, index=(bid,), shape=(tile_size,))
    b_tile = ct.load(b, index=(bid,), shape=(tile_size,))
    ct.store(c, index=(bid,), tile=a_tile + b_tile)


def main(backend: str | None = None, n: int = 98_765) -> None:
    rng = np.random.default_rng()
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.full(n, np.nan, dtype=np.float32)
    tile = 1024
    ct.launch(None, (ct.cdiv(n, tile),), vector_add, (a, b, c, tile), backend=backend)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    print(f"tile/vector_add: {n} elements on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--n", type=int, default=98_765)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.n)
