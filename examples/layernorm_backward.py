"""Layer normalization, backward (the shape of Triton's tutorial 05): given the forward's
input ``x``, ``weight``, per-row ``mean`` and ``rstd`` (1/std) and the output gradient
``dy``, compute ``dx``, ``dweight`` and ``dbias``.

``dx`` is per row, so one program per row computes it. ``dweight``/``dbias`` sum over
all rows: rather than one atomic add per element, each program adds its row's share into
one of ``GROUPS`` partial rows, row r into partial r % GROUPS, under that partial's spin
lock (``tl.atomic_cas(..., sem="acquire")`` to take it, ``tl.atomic_xchg(..., sem="release")``
to give it back); a second kernel sums the partial rows. Programs of one group take turns,
programs of different groups run side by side.

    python examples/layernorm_backward.py [--backend ptx|wgsl|numpy|auto] [--rows R]
                                          [--cols C] [--groups G]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def layernorm_dx(dx, dy, x, weight, mean, rstd, locks, dw_part, db_part, n_cols,
                 GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    at = row * n_cols + cols
    g = tl.load(dy + at, mask=mask, other=0.0)
    xhat = tl.where(mask, (tl.load(x + at, mask=mask, other=0.0) - tl.load(mean + row))
                    * tl.load(rstd + row), 0.0)
    wg = tl.load(weight + cols, mask=mask, other=0.0) * g
    c1 = tl.sum(xhat * wg, axis=0) / n_cols
    c2 = tl.sum(wg, axis=0) / n_cols
    tl.store(dx + at, (wg - (xhat * c1 + c2)) * tl.load(rstd + row), mask=mask)

    # locks[0:GROUPS] are the spin locks, locks[GROUPS:] say whether a partial row holds
    # data yet (its first owner stores instead of adding to whatever the buffer held)
    group = row % GROUPS
    lock = locks + group
    filled = locks + GROUPS + group
    part = group * n_cols + cols
    dw = g * xhat
    db = g
    while tl.atomic_cas(lock, 0, 1, sem="acquire") == 1:
        pass
    if tl.load(filled) == 0:
        tl.atomic_xchg(filled, 1, sem="relaxed")  # the lock orders it
    else:
        dw += tl.load(dw_part + part, mask=mask)
        db += tl.load(db_part + part, mask=mask)
    tl.store(dw_part + part, dw, mask=mask)
    tl.store(db_part + part, db, mask=mask)
    tl.debug_barrier()  # every thread's stores are done before the lock is given back
    tl.atomic_xchg(lock, 0, sem="release")


@tc.kernel
def sum_partials(dw_part, db_part, dweight, dbias, groups, n_cols, BLOCK_G: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc_w = tl.zeros((BLOCK_G, BLOCK_N), tl.float32)
    acc_b = tl.zeros((BLOCK_G, BLOCK_N), tl.float32)
    for first in range(0, groups, BLOCK_G):
        rows = first + tl.arange(0, BLOCK_G)
        m = (rows[:, None] < groups) & (cols[None, :] < n_cols)
        at = rows[:, None] * n_cols + cols[None, :]
        acc_w += tl.load(dw_part + at, mask=m, other=0.0)
        acc_b += tl.load(db_part + at, mask=m, other=0.0)
    tl.store(dweight + cols, tl.sum(acc_w, axis=0), mask=cols < n_cols)
    tl.store(dbias + cols, tl.sum(acc_b, axis=0), mask=cols < n_cols)


def block_for(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def launch(dy, x, weight, mean, rstd, groups: int = 8, backend: str | None = None):
    """``(dx, dweight, dbias, locks)``; ``locks`` as the first kernel left them."""
    rows, cols = x.shape
    dx = np.zeros_like(x)
    locks = np.zeros(2 * groups, np.int32)
    dw_part = np.zeros((groups, cols), np.float32)
    db_part = np.zeros((groups, cols), np.float32)
    layernorm_dx[(rows,)](dx, dy, x, weight, mean, rstd, locks, dw_part, db_part, cols,
                          GROUPS=groups, BLOCK=block_for(cols), backend=backend)
    dweight, dbias = np.zeros(cols, np.float32), np.zeros(cols, np.float32)
    block_n = 32
    sum_partials[(tc.cdiv(cols, block_n),)](dw_part, db_part, dweight, dbias, groups, cols,
                                            BLOCK_G=min(8, block_for(groups)),
                                            BLOCK_N=block_n, backend=backend)
    return dx, dweight, dbias, locks


def reference(dy, x, weight, mean, rstd):
    """``(dx, dweight, dbias)`` in float64."""
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    wg = weight.astype(np.float64) * dy
    c1 = (xhat * wg).mean(axis=1, keepdims=True)
    c2 = wg.mean(axis=1, keepdims=True)
    dx = (wg - (xhat * c1 + c2)) * rstd[:, None]
    return dx, (dy * xhat).sum(axis=0), dy.astype(np.float64).sum(axis=0)


def main(backend: str | None = None, rows: int = 96, cols: int = 200, groups: int = 8) -> None:
    rng = np.random.default_rng()
    x = (rng.standard_normal((rows, cols)) * 2 + 0.5).astype(np.float32)
    dy = rng.standard_normal((rows, cols)).astype(np.float32)
    weight = rng.standard_normal(cols).astype(np.float32)
    mean = x.astype(np.float64).mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(x.astype(np.float64).var(axis=1) + 1e-5)).astype(np.float32)
    dx, dweight, dbias, locks = launch(dy, x, weight, mean, rstd, groups, backend)
    want_dx, want_dw, want_db = reference(dy, x, weight, mean, rstd)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-4)
    # dweight/dbias add `rows` float32 values in an order the lock decides: tolerances grow
    np.testing.assert_allclose(dweight, want_dw, rtol=1e-4, atol=1e-4 * rows ** 0.5)
    np.testing.assert_allclose(dbias, want_db, rtol=1e-4, atol=1e-4 * rows ** 0.5)
    used = min(rows, groups)
    assert not locks[:groups].any(), f"a lock was left taken: {locks[:groups]}"
    assert (locks[groups:groups + used] == 1).all() and not locks[groups + used:].any()
    print(f"layernorm backward: {rows}x{cols} float32, {groups} lock groups "
          f"on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=96)
    p.add_argument("--cols", type=int, default=200)
    p.add_argument("--groups", type=int, default=8)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.rows, a.cols, a.groups)
