"""One array passed as two arguments of a launch, read through one and written through
the other (an in-place backward writing dx into dy's buffer). On WGSL both name one
binding of the launch's shader variant, which must then be declared as the written one
needs: packed words written in part, or an atomic's buffer, are atomic there, and the
reads through the other name become atomic loads."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import compiler as tc
import compiler.language as tl
from tests.conftest import launch


@tc.kernel
def every_other_doubled(dy, dx, n, BLOCK: tl.constexpr):
    """dy read first, dx written at every other element: each store writes half a word."""
    cols = 2 * tl.arange(0, BLOCK)
    tl.store(dx + cols, tl.load(dy + cols, mask=cols < n) * 2.0, mask=cols < n)


def test_bfloat16_written_in_place(backend):
    dy = np.linspace(-3, 3, 13).astype(ml_dtypes.bfloat16)
    want = dy.copy()
    want[::2] = (dy[::2].astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
    if launch(every_other_doubled, (1,), dy, dy, len(dy), backend=backend, BLOCK=8):
        np.testing.assert_array_equal(dy, want)


@tc.kernel
def added_to_itself(out, x, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    tl.atomic_add(out + cols, tl.load(x + cols, mask=cols < n), mask=cols < n)


def test_atomic_add_of_an_array_to_itself(backend):
    x = np.arange(10, dtype=np.float32) - 4.5
    want = 2 * x
    if launch(added_to_itself, (1,), x, x, len(x), backend=backend, BLOCK=16):
        np.testing.assert_array_equal(x, want)
