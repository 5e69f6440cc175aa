"""A flag read with a scalar ``tl.load`` and set with an atomic in the same program, as
Triton's layer-norm backward does (``if tl.load(count) == 0: tl.atomic_xchg(count, 1)``):
every thread of the program must read the value from before the set, or the branch
splits and some threads add a buffer's stale contents."""

import numpy as np

from examples import layernorm_backward as lnb

from .conftest import launch


def test_a_flag_read_then_set_reads_the_same_in_every_thread(backend):
    rows, cols, groups = 48, 100, 8
    rng = np.random.default_rng(3)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    dy = rng.standard_normal((rows, cols)).astype(np.float32)
    weight = rng.standard_normal(cols).astype(np.float32)
    mean = x.mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(x.var(axis=1) + 1e-5)).astype(np.float32)
    dx = np.zeros_like(x)
    locks = np.zeros(2 * groups, np.int32)
    # stale partial rows: the first program of each group must overwrite, not add to, them
    dw_part = np.full((groups, cols), 1e30, np.float32)
    db_part = np.full((groups, cols), 1e30, np.float32)
    if not launch(lnb.layernorm_dx, (rows,), dx, dy, x, weight, mean, rstd, locks, dw_part,
                  db_part, cols, backend=backend, GROUPS=groups, BLOCK=128):
        return
    _, want_dw, want_db = lnb.reference(dy, x, weight, mean, rstd)
    np.testing.assert_allclose(dw_part.sum(axis=0), want_dw, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(db_part.sum(axis=0), want_db, rtol=1e-4, atol=1e-3)
