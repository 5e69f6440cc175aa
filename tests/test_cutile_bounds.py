"""compiler.tile: an index whose tile lies wholly outside its array reads the padding and
writes nothing, as any tile partly past the edge is padded on load and clipped on store;
with debug=True it is an OutOfBoundsError on the NumPy backend, at the line of the
ct.load/ct.store. The GPU backends do not check (no trace in the code they get)."""

import inspect

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct


@ct.kernel
def shifted_copy(x, y, SHIFT: ct.Constant[int], TILE: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.load(x, index=(bid + SHIFT,), shape=(TILE,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(bid,), tile=t)


@ct.kernel
def store_past(x, y, TILE: ct.Constant[int]):
    bid = ct.bid(0)
    t = ct.load(x, index=(bid,), shape=(TILE,))
    ct.store(y, index=(bid * 2,), tile=t)


@ct.kernel
def block_2d(x, y, TM: ct.Constant[int], TN: ct.Constant[int]):
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, (i, j), (TM, TN), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, (i, j), t + 1.0)


def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _raises_at(kernel, text: str, call) -> str:
    with pytest.raises(tc.OutOfBoundsError) as e:
        call()
    assert e.value.loc.line == _line_of(kernel, text)
    assert e.value.loc.file.endswith("test_cutile_bounds.py")
    return e.value.message


def test_load_past_the_end(rng):
    x, y = rng.random(100, dtype=np.float32), np.zeros(256, np.float32)
    msg = _raises_at(shifted_copy, "ct.load", lambda: shifted_copy[(4,)](
        x, y, SHIFT=0, TILE=64, backend="numpy", debug=True))  # tiles 2, 3 past 100
    assert msg == ("out-of-bounds load of x: tile index (2,) with tile shape (64,) lies "
                   "outside the array of shape (100,) in program (2, 0, 0)")


def test_negative_index():
    x, y = np.ones(100, np.float32), np.zeros(100, np.float32)
    msg = _raises_at(shifted_copy, "ct.load", lambda: shifted_copy[(2,)](
        x, y, SHIFT=-1, TILE=64, backend="numpy", debug=True))
    assert "tile index (-1,)" in msg and "program (0, 0, 0)" in msg


def test_store_past_the_end(rng):
    x, y = rng.random(128, dtype=np.float32), np.zeros(128, np.float32)
    msg = _raises_at(store_past, "ct.store", lambda: store_past[(2,)](
        x, y, TILE=64, backend="numpy", debug=True))
    assert msg == ("out-of-bounds store of y: tile index (2,) with tile shape (64,) lies "
                   "outside the array of shape (128,) in program (1, 0, 0)")


def test_2d_names_the_dimension_outside(rng):
    x, y = rng.random((40, 70), dtype=np.float32), np.zeros((40, 70), np.float32)
    msg = _raises_at(block_2d, "ct.load", lambda: block_2d[(3, 4)](
        x, y, TM=16, TN=32, backend="numpy", debug=True))  # column tile 3 is outside
    assert msg == ("out-of-bounds load of x: tile index (0, 3) with tile shape (16, 32) "
                   "lies outside the array of shape (40, 70) in program (0, 3, 0)")


def test_partly_past_the_edge_pads_and_clips(rng):
    """Tile 1 covers 64..127 of 100 elements: loaded with zeros, stored clipped."""
    x = rng.random(100, dtype=np.float32)
    store = np.full(128, -1.0, np.float32)
    y = store[:100]
    shifted_copy[(2,)](x, y, SHIFT=0, TILE=64, backend="numpy")
    np.testing.assert_array_equal(y, x)
    assert (store[100:] == -1.0).all()
    x2, y2 = rng.random((40, 70), dtype=np.float32), np.zeros((40, 70), np.float32)
    block_2d[(3, 3)](x2, y2, TM=16, TN=32, backend="numpy", verify=True)
    np.testing.assert_allclose(y2, x2 + 1.0, rtol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
def test_wholly_outside_reads_padding_and_writes_nothing(backend, rng):
    """Without debug=True a program whose tiles are past the end does nothing harmful: its
    load reads the padding, its store is dropped (as FFT's extra programs rely on)."""
    if not tc.backends()[backend][0]:
        pytest.skip(tc.backends()[backend][1])
    x, y = rng.random(100, dtype=np.float32), np.full(256, -1.0, np.float32)
    shifted_copy[(4,)](x, y, SHIFT=0, TILE=64, backend=backend)
    np.testing.assert_array_equal(y[:100], x)
    assert not y[100:256].any()
    x2, y2 = rng.random(128, dtype=np.float32), np.zeros(128, np.float32)
    store_past[(2,)](x2, y2, TILE=64, backend=backend)  # program 1's tile 2 is outside
    np.testing.assert_array_equal(y2[:64], x2[:64])
    assert not y2[64:].any()


def test_compiled_without_debug_there_is_no_check():
    x = np.zeros((40, 70), np.float32)
    ck = tc.compile(block_2d, args=(x, x, 16, 32), backend="numpy")
    assert not any("check_tile_index" in ir for _, ir in ck.stages)


def test_verify_reports_it_too(rng):
    x, y = rng.random(100, dtype=np.float32), np.zeros(256, np.float32)
    with pytest.raises(tc.OutOfBoundsError, match="tile index"):
        shifted_copy[(4,)](x, y, SHIFT=0, TILE=64, backend="numpy", verify=True, debug=True)


@pytest.mark.parametrize("backend", ["ptx", "wgsl"])
def test_gpu_code_has_no_trace_of_the_check(backend):
    x = np.zeros((40, 70), np.float32)
    ck = tc.compile(block_2d, args=(x, x, 16, 32), backend=backend, debug=True)
    names = [name for name, _ in ck.stages]
    dropped = names.index("strip-debug")  # with the other debugging ops
    lowered = names.index("tile-to-simt")  # views left for TMA meanwhile get checks there
    assert all("tile.check_tile_index" in ir for _, ir in ck.stages[1:dropped])
    assert "tile.check_tile_index" not in ck.stages[dropped][1]
    assert not any("check_tile_index" in ir for _, ir in ck.stages[lowered:])
    assert "check_tile_index" not in ck.asm[backend]


@pytest.mark.gpu
def test_ptx_verify_partly_past_the_edge(rng):
    if not tc.backends()["ptx"][0]:
        pytest.skip(tc.backends()["ptx"][1])
    x, y = rng.random((40, 70), dtype=np.float32), np.zeros((40, 70), np.float32)
    block_2d[(3, 3)](x, y, TM=16, TN=32, backend="ptx", verify=True)
    np.testing.assert_allclose(y, x + 1.0, rtol=1e-6)
    x1, y1 = rng.random(100, dtype=np.float32), np.full(256, -1.0, np.float32)
    shifted_copy[(4,)](x1, y1, SHIFT=0, TILE=64, backend="ptx", verify=True)  # tiles 2, 3
    np.testing.assert_array_equal(y1[:100], x1)  # outside: padding, as NumPy reads it
    assert not y1[100:].any()


def test_verify_and_debug_together_are_refused_on_a_gpu_backend(rng):
    """A debug build's launch writes its records, not a comparison: asking for both is an
    error rather than a launch that skips verification."""
    if not tc.backends()["wgsl"][0]:
        pytest.skip(tc.backends()["wgsl"][1])
    x, y = rng.random(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(tc.LaunchError, match="verify=True and debug=True"):
        shifted_copy[(1,)](x, y, SHIFT=0, TILE=64, backend="wgsl", verify=True, debug=True)
