"""Row-wise softmax in cuTile style (``compiler.tile``): one block per row loads the whole
row as a (1, tn) tile, padded with -inf past its end (it never wins the max and adds 0 to
the sum), and stores the normalized row; the store drops the padding. The kernel text is
cuTile's.

    python examples/tile/softmax.py [--backend ptx|wgsl|numpy|auto] [--rows R] [--cols C]
"""

import numpy as np

import compiler as tc
import compiler.tile as ct
from compiler.cli import reported_errors, script_parser


@ct.kernel
def softmax(x, y, tn: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, tn), padding_mode=ct.PaddingMode.NEG_INF)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(y, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


def tile_for(n_cols: int) -> int:
    """The tile width: the next power of two holding a whole row."""
    return 1 << max(0, n_cols - 1).bit_length()


def main(backend: str | None = None, rows: int = 300, cols: int = 781) -> None:
    x = np.random.default_rng().standard_normal((rows, cols), dtype=np.float32) * 4
    y = np.full_like(x, np.nan)
    ct.launch(None, (rows,), softmax, (x, y, tile_for(cols)), backend=backend)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    print(f"tile/softmax: {rows}x{cols} float32 on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=300)
    p.add_argument("--cols", type=int, default=781)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.rows, a.cols)
