"""Tiles smaller than a program's threads: several threads hold each element (the layout
replicates it). Each element must still be stored once, by its first holder, or an
in-place update read by one replica after another stored it counts twice."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.passes.assign_layouts import AssignLayouts, blocked_layout
from compiler.passes.layouts import owners
from compiler.passes.tile_to_simt import TileToSimt
from tests.conftest import launch
from tests.test_dot_lowering import run_passes


@tc.kernel
def bump(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n)
    tl.store(x + offs, v + 1, mask=offs < n)


@tc.kernel
def bump_scalar(x):
    tl.store(x, tl.load(x) + 1)


@pytest.mark.parametrize("block, num_warps", [(32, 4), (64, 8), (8, 1), (128, 4)])
def test_in_place_update_counts_once(backend, block, num_warps):
    x = np.arange(200, dtype=np.int32)
    if launch(bump, (tc.cdiv(200, block),), x, 200, BLOCK=block, backend=backend,
              num_warps=num_warps):
        np.testing.assert_array_equal(x, np.arange(200) + 1)


def test_scalar_in_place_update_counts_once(backend):
    x = np.array([41], np.int32)
    if launch(bump_scalar, (1,), x, backend=backend, num_warps=4):
        assert x[0] == 42


def test_owners_of_a_replicated_layout():
    """32 elements over 128 threads: threads 32..127 repeat threads 0..31."""
    layout = blocked_layout((32,), 4, 32)
    bits, lanes = owners(layout, (32,))
    assert bits == 0b1100000 and all(lanes)
    assert owners(blocked_layout((1024,), 4, 32), (1024,)) == (0, (True,) * 8)


def test_stores_of_replicated_tiles_are_masked_to_owners():
    ck = bump.compile_for(bump.bind((np.zeros(4, np.int32), 4), {"BLOCK": 32}), "numpy", 4,
                          False)
    simt_text = str(run_passes(ck.asm["tile"], AssignLayouts(4), TileToSimt()))
    assert "arith.constant 96 : i32" in simt_text  # tid & 0b1100000 == 0 owns the element
