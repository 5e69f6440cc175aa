"""compiler.tile: errors a user can cause, each a TilecError at the user's line."""

import inspect

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct


@ct.kernel
def wrong_rank(x):
    ct.load(x, (0,), (16, 16))  # a 2-D array: 1 index


@ct.kernel
def runtime_shape(x, n):
    ct.load(x, (0, 0), (n, 16))


@ct.kernel
def not_pow2(x):
    ct.load(x, (0, 0), (16, 12))


@ct.kernel
def store_mismatch(x):
    t = ct.load(x, (0, 0), (16, 16))
    ct.store(x, (0,), t)  # index of 1 entry for a 2-D array


@ct.kernel
def tile_rank_mismatch(x):
    t = ct.load(x, (0, 0), (16, 16))
    ct.store(x, (0, 0), ct.sum(t, axis=0))


@ct.kernel
def int_nan(x):
    ct.load(x, (0, 0), (16, 16), padding_mode=ct.PaddingMode.NAN)


@ct.kernel
def not_an_array(x, n):
    ct.load(n, (0,), (16,))


def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("kernel, args, line, message", [
    (wrong_rank, (), "ct.load(x, (0,)", "an array of rank 2 needs an index of 2 entries, got 1"),
    (runtime_shape, (5,), "(n, 16)", "the tile shape must be constant"),
    (not_pow2, (), "(16, 12)", "tile dimensions must be powers of two, got [16, 12]"),
    (store_mismatch, (), "ct.store(x, (0,)", "needs an index of 2 entries, got 1"),
    (tile_rank_mismatch, (), "ct.store", "a tile of shape [16] does not match the index"),
    (int_nan, (), "NAN", "padding mode NAN needs a float array, got int32"),
    (not_an_array, (3,), "ct.load(n", "ct.load expects an array parameter, got int32"),
])
def test_errors_point_at_the_line(kernel, args, line, message):
    x = np.zeros((32, 32), np.int32 if kernel is int_nan else np.float32)
    with pytest.raises(tc.CompileError) as e:
        kernel[(1,)](x, *args, backend="numpy")
    assert message in e.value.message
    assert e.value.loc.line == _line_of(kernel, line)
    assert e.value.loc.file.endswith("test_cutile_errors.py")


def test_host_misuse():
    with pytest.raises(RuntimeError, match="inside a @ct.kernel"):
        ct.load(np.zeros(4), (0,), (4,))
    with pytest.raises(tc.TilecError, match="ct.launch"):
        wrong_rank(np.zeros((4, 4)))
    with pytest.raises(tc.LaunchError, match="strides"):
        not_pow2[(1,)](np.zeros((32, 32), np.float32)[::-1], backend="numpy")
    with pytest.raises(tc.LaunchError, match="1 to 3 dimensions"):
        not_pow2[(1,)](np.zeros((2, 2, 2, 2), np.float32), backend="numpy")
