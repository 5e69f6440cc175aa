"""``carry-sums`` on a loop whose advanced offsets nothing reads after it: the loop's
result becomes the scalar sum as its carried value does (a result left a tile gave WGSL
a tile-typed variable holding a scalar: FlagGems' softmax backward, int64 offsets)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import scf

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from tests.conftest import launch


@tc.kernel
def row_sums(X, Y, M, N, TILE_M: tl.constexpr, TILE_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * TILE_M + tl.arange(0, TILE_M)
    cols = tl.arange(0, TILE_N)
    offsets = rows[:, None] * N + cols
    total = tl.zeros([TILE_M, TILE_N], dtype=tl.float32)
    for _ in range(0, N, TILE_N):
        total += tl.load(X + offsets, mask=(rows[:, None] < M) & (cols < N), other=0.0)
        cols += TILE_N
        offsets += TILE_N
    tl.store(Y + rows, tl.sum(total, 1), mask=rows < M)


def test_offsets_advanced_in_a_loop_and_dropped_after_it(backend):
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    y = np.zeros(64, np.float32)
    if launch(row_sums, (4,), x, y, 64, 32, backend=backend, TILE_M=16, TILE_N=4):
        np.testing.assert_array_equal(y, x.sum(axis=1))


def test_the_loops_results_have_its_carried_types():
    x, y = np.zeros((64, 32), np.float32), np.zeros(64, np.float32)
    ck = tc.compile(row_sums, backend="wgsl", args=(x, y, 64, 32),
                    constants={"TILE_M": 16, "TILE_N": 4})
    module = parse_module(dict(ck.stages)["carry-sums"])
    loop = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    assert [r.type for r in loop.results] == [a.type for a in loop.iter_args]
    assert "i64" in [str(r.type) for r in loop.results]
