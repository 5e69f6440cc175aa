"""Layer normalization in cuTile style (``compiler.tile``), forward and backward.

Forward: one block per row normalizes it to zero mean and unit variance, scales by ``w``
and shifts by ``b``, and keeps the row's mean and 1/std for the backward pass. Backward:
``groups`` blocks stride over the rows, each writing dX for its rows and its partial sums
of dW and dB into one row of a (groups, N) buffer; a second kernel sums those columns.
One (1, tn) tile holds a whole row. The kernel text is cuTile's.

    python examples/tile/layernorm.py [--backend ptx|wgsl|numpy|auto] [--rows R] [--cols C]
"""

import numpy as np

import compiler as tc
import compiler.tile as ct
from compiler.cli import reported_errors, script_parser


@ct.kernel
def layernorm_fwd(X, W, B, Y, Mean, Rstd, eps, tn: ct.Constant[int]):
    row = ct.bid(0)
    n = X.shape[1]
    x = ct.load(X, index=(row, 0), shape=(1, tn), padding_mode=ct.PaddingMode.ZERO)
    mean = ct.sum(x, axis=1) / n
    # the padding past the row is not part of it: keep it out of the variance
    xc = ct.where(ct.arange(tn, dtype=ct.int32) < n, x - mean, 0.0)
    rstd = ct.rsqrt(ct.sum(xc * xc, axis=1) / n + eps)
    w = ct.load(W, index=(0,), shape=(tn,), padding_mode=ct.PaddingMode.ZERO)
    b = ct.load(B, index=(0,), shape=(tn,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(Y, index=(row, 0), tile=xc * rstd * w + b)
    ct.store(Mean, index=(row,), tile=mean)
    ct.store(Rstd, index=(row,), tile=rstd)


@ct.kernel
def layernorm_bwd_dx(DY, X, W, Mean, Rstd, DX, DW_part, DB_part, tn: ct.Constant[int]):
    bid = ct.bid(0)
    m, n = X.shape[0], X.shape[1]
    in_row = ct.arange(tn, dtype=ct.int32) < n
    w = ct.load(W, index=(0,), shape=(tn,), padding_mode=ct.PaddingMode.ZERO)
    dw = ct.zeros((1, tn), dtype=ct.float32)
    db = ct.zeros((1, tn), dtype=ct.float32)
    for row in range(bid, m, ct.num_blocks(0)):
        x = ct.load(X, index=(row, 0), shape=(1, tn), padding_mode=ct.PaddingMode.ZERO)
        dy = ct.load(DY, index=(row, 0), shape=(1, tn), padding_mode=ct.PaddingMode.ZERO)
        mean = ct.load(Mean, index=(row,), shape=(1,))
        rstd = ct.load(Rstd, index=(row,), shape=(1,))
        xhat = ct.where(in_row, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = ct.sum(xhat * wdy, axis=1) / n
        c2 = ct.sum(wdy, axis=1) / n
        ct.store(DX, index=(row, 0), tile=(wdy - (xhat * c1 + c2)) * rstd)
        dw += dy * xhat
        db += dy
    ct.store(DW_part, index=(bid, 0), tile=dw)
    ct.store(DB_part, index=(bid, 0), tile=db)


@ct.kernel
def layernorm_bwd_dwdb(DW_part, DB_part, DW, DB, groups: ct.Constant[int],
                       tn: ct.Constant[int]):
    bid = ct.bid(0)
    dw = ct.load(DW_part, index=(0, bid), shape=(groups, tn), padding_mode=ct.PaddingMode.ZERO)
    db = ct.load(DB_part, index=(0, bid), shape=(groups, tn), padding_mode=ct.PaddingMode.ZERO)
    ct.store(DW, index=(bid,), tile=ct.sum(dw, axis=0))
    ct.store(DB, index=(bid,), tile=ct.sum(db, axis=0))


def tile_for(n_cols: int) -> int:
    """The tile width: the next power of two holding a whole row."""
    return 1 << max(0, n_cols - 1).bit_length()


def forward(x, w, b, eps: float = 1e-5, backend: str | None = None):
    rows, cols = x.shape
    y = np.empty_like(x)
    mean, rstd = np.empty(rows, np.float32), np.empty(rows, np.float32)
    ct.launch(None, (rows,), layernorm_fwd, (x, w, b, y, mean, rstd, eps, tile_for(cols)),
              backend=backend)
    return y, mean, rstd


def backward(dy, x, w, mean, rstd, groups: int = 16, backend: str | None = None):
    cols = x.shape[1]
    dx = np.empty_like(x)
    dw_part, db_part = np.empty((2, groups, cols), np.float32)
    ct.launch(None, (groups,), layernorm_bwd_dx,
              (dy, x, w, mean, rstd, dx, dw_part, db_part, tile_for(cols)), backend=backend)
    dw, db = np.empty(cols, np.float32), np.empty(cols, np.float32)
    tn = 128
    ct.launch(None, (ct.cdiv(cols, tn),), layernorm_bwd_dwdb,
              (dw_part, db_part, dw, db, groups, tn), backend=backend)
    return dx, dw, db


def reference(dy, x, w, b, eps: float = 1e-5):
    """Forward outputs and gradients in float64."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    wdy = w * dy
    dx = (wdy - xhat * (xhat * wdy).mean(axis=1, keepdims=True)
          - wdy.mean(axis=1, keepdims=True)) * rstd
    return xhat * w + b, mean[:, 0], rstd[:, 0], dx, (dy * xhat).sum(0), dy.sum(0)


def main(backend: str | None = None, rows: int = 200, cols: int = 1000) -> None:
    rng = np.random.default_rng()
    x = (rng.standard_normal((rows, cols)) * 3 + 1).astype(np.float32)
    w, b = rng.standard_normal((2, cols)).astype(np.float32)
    dy = rng.standard_normal((rows, cols)).astype(np.float32)
    y, mean, rstd = forward(x, w, b, backend=backend)
    dx, dw, db = backward(dy, x, w, mean, rstd, backend=backend)
    for got, want in zip((y, mean, rstd, dx, dw, db), reference(dy, x, w, b), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    print(f"tile/layernorm: {rows}x{cols} float32 forward and backward on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=200)
    p.add_argument("--cols", type=int, default=1000)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.rows, a.cols)
