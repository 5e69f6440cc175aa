"""Layer norm over the last axis, forward and backward, for the GPT's (B*T, C)
activations.

The forward is ``examples.layernorm``'s kernel (one program a row, saving each row's mean
and 1/std). The backward is deterministic, with no atomics: each program takes consecutive rows, a
tile of ``BLOCK_R`` at a time, adds their ``dx`` into the residual stream's gradient (or
stores it) and keeps its rows' share of ``dweight`` and ``dbias`` in registers, written
as one partial row each; a second kernel sums the partial rows into the parameter
gradients (``+=``, as every parameter gradient here accumulates).
"""

from __future__ import annotations

import compiler as tc
import compiler.language as tl
from examples.gpt.shapes import expect, pow2, rows, size
from examples.layernorm import layernorm as layernorm_kernel

EPS = 1e-5


@tc.kernel
def layernorm_backward_kernel(dy, x, weight, mean, rstd, dx, partial, n_rows, n_cols, iters,
                              BLOCK_R: tl.constexpr, BLOCK: tl.constexpr,
                              ACCUMULATE: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    in_row = cols < n_cols
    w = tl.load(weight + cols, mask=in_row, other=0.0).to(tl.float32)[None, :]
    dw = tl.zeros((BLOCK_R, BLOCK), tl.float32)
    db = tl.zeros((BLOCK_R, BLOCK), tl.float32)
    # ``iters`` tiles of BLOCK_R rows; the same trip count in every program (rows past
    # the end masked), so the NumPy backend runs all programs at once
    for i in range(iters):
        rows = (pid * iters + i) * BLOCK_R + tl.arange(0, BLOCK_R)
        live = rows < n_rows
        mask = live[:, None] & in_row[None, :]
        at = rows[:, None] * n_cols + cols[None, :]
        g = tl.load(dy + at, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(rstd + rows, mask=live, other=0.0)[:, None]
        mu = tl.load(mean + rows, mask=live, other=0.0)[:, None]
        xhat = tl.where(mask, (tl.load(x + at, mask=mask, other=0.0).to(tl.float32) - mu) * r,
                        0.0)
        wg = w * g
        c1 = tl.sum(xhat * wg, axis=1)[:, None] / n_cols
        c2 = tl.sum(wg, axis=1)[:, None] / n_cols
        d = (wg - (xhat * c1 + c2)) * r
        if ACCUMULATE:
            d += tl.load(dx + at, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx + at, d.to(dx.dtype), mask=mask)
        dw += g * xhat
        db += g
    tl.store(partial + pid * 2 * n_cols + cols, tl.sum(dw, axis=0), mask=in_row)
    tl.store(partial + (pid * 2 + 1) * n_cols + cols, tl.sum(db, axis=0), mask=in_row)


@tc.kernel
def add_partials_kernel(partial, dweight, dbias, groups, n_cols, BLOCK_G: tl.constexpr,
                        BLOCK_N: tl.constexpr):
    """``dweight += partial[:, 0].sum(0)``, ``dbias += partial[:, 1].sum(0)`` for
    ``partial`` (groups, 2, n_cols)."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc_w = tl.zeros((BLOCK_G, BLOCK_N), tl.float32)
    acc_b = tl.zeros((BLOCK_G, BLOCK_N), tl.float32)
    for first in range(0, groups, BLOCK_G):
        g = first + tl.arange(0, BLOCK_G)
        m = (g[:, None] < groups) & (cols[None, :] < n_cols)
        at = g[:, None] * 2 * n_cols + cols[None, :]
        acc_w += tl.load(partial + at, mask=m, other=0.0)
        acc_b += tl.load(partial + n_cols + at, mask=m, other=0.0)
    m = cols < n_cols
    tl.store(dweight + cols, (tl.load(dweight + cols, mask=m, other=0.0)
                              + tl.sum(acc_w, axis=0)).to(dweight.dtype), mask=m)
    tl.store(dbias + cols, (tl.load(dbias + cols, mask=m, other=0.0)
                            + tl.sum(acc_b, axis=0)).to(dbias.dtype), mask=m)


def layernorm_forward(x, weight, bias, out, mean, rstd, backend: str | None = None,
                      num_warps: int = 4) -> None:
    """``out`` = ``x`` normalized over its last axis, times ``weight`` plus ``bias``;
    ``mean`` and ``rstd`` get each row's mean and 1/std."""
    C = x.shape[-1]
    n = rows(x, C)
    expect("out", out, (n, C))
    for name, a, shape in (("weight", weight, (C,)), ("bias", bias, (C,)),
                           ("mean", mean, (n,)), ("rstd", rstd, (n,))):
        expect(name, a, shape)
    layernorm_kernel[(n,)](x, weight, bias, out, mean, rstd, C, EPS, BLOCK=pow2(C),
                           backend=backend, num_warps=num_warps)


def _tiling(n_rows: int, rows_per_program: int, block_rows: int) -> tuple[int, int, int]:
    """(tile height, tiles a program, programs)."""
    block_rows = min(block_rows, pow2(rows_per_program))
    iters = tc.cdiv(rows_per_program, block_rows)
    return block_rows, iters, tc.cdiv(n_rows, block_rows * iters)


def backward_scratch(n_rows: int, n_cols: int, rows_per_program: int = 32,
                     block_rows: int = 4) -> int:
    """How many float32 elements ``layernorm_backward``'s ``scratch`` needs."""
    return _tiling(n_rows, rows_per_program, block_rows)[2] * 2 * n_cols


def layernorm_backward(dy, x, weight, mean, rstd, dx, dweight, dbias, scratch,
                       accumulate: bool = False, backend: str | None = None,
                       rows_per_program: int = 32, block_rows: int = 4,
                       num_warps: int = 4) -> None:
    """``dx`` (``+=`` when ``accumulate``), ``dweight += ``, ``dbias += `` of the layer
    norm that made ``out`` from ``x``, given ``dy`` = d loss / d out. Each program takes
    about ``rows_per_program`` rows, ``block_rows`` at a time; ``scratch`` holds at least
    ``backward_scratch(rows, C, rows_per_program, block_rows)`` float32 elements."""
    C = x.shape[-1]
    n = rows(x, C)
    for name, a, shape in (("dy", dy, (n, C)), ("dx", dx, (n, C)), ("weight", weight, (C,)),
                           ("mean", mean, (n,)), ("rstd", rstd, (n,)),
                           ("dweight", dweight, (C,)), ("dbias", dbias, (C,))):
        expect(name, a, shape)
    block_r, iters, groups = _tiling(n, rows_per_program, block_rows)
    if size(scratch) < groups * 2 * C:
        raise tc.LaunchError(f"scratch must hold at least {groups * 2 * C} elements, got "
                             f"{size(scratch)}")
    layernorm_backward_kernel[(groups,)](dy, x, weight, mean, rstd, dx, scratch, n, C, iters,
                                         BLOCK_R=block_r, BLOCK=pow2(C),
                                         ACCUMULATE=accumulate, backend=backend,
                                         num_warps=num_warps)
    block_n = min(64, pow2(C))
    add_partials_kernel[(tc.cdiv(C, block_n),)](scratch, dweight, dbias, groups, C,
                                                BLOCK_G=min(16, pow2(groups)),
                                                BLOCK_N=block_n, backend=backend,
                                                num_warps=num_warps)
