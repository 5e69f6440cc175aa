"""Matrix transpose in cuTile style (``compiler.tile``): each block loads one (tm, tn) tile
of X at tile index (i, j) and stores its transpose at (j, i) in Y. Edge tiles are padded on
load and clipped on store, so any shape works. The kernel text is cuTile's.

    python examples/tile/transpose.py [--backend ptx|wgsl|numpy|auto] [--size M N]
"""

import numpy as np

import compiler as tc
import compiler.tile as ct
from compiler.cli import reported_errors, script_parser


@ct.kernel
def transpose(x, y, tm: ct.Constant[int], tn: ct.Constant[int]):
    bidx = ct.bid(0)
    bidy = ct.bid(1)
    tile = ct.load(x, index=(bidx, bidy), shape=(tm, tn))
    ct.store(y, index=(bidy, bidx), tile=ct.transpose(tile))


def main(backend: str | None = None, size: tuple[int, int] = (300, 200)) -> None:
    m, n = size
    x = np.random.default_rng().standard_normal((m, n), dtype=np.float32)
    y = np.full((n, m), np.nan, dtype=np.float32)
    tm, tn = 32, 64
    ct.launch(None, (ct.cdiv(m, tm), ct.cdiv(n, tn)), transpose, (x, y, tm, tn),
              backend=backend)
    np.testing.assert_array_equal(y, x.T)
    print(f"tile/transpose: {m}x{n} float32 on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--size", type=int, nargs=2, default=(300, 200))
    a = p.parse_args()
    with reported_errors():
        main(a.backend, tuple(a.size))
