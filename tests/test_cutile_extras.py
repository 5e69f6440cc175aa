"""compiler.tile's compile-time helpers, tiled views, advanced indexing and atomics with
cuTile's memory orders, on every backend (ptx without a GPU: compiled and assembled); and
the cuTile names tilec does not implement yet, each a CompileError that says so."""

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct
from tests.conftest import launch
from tests.test_cutile_api import kernel_of


@ct.function
def _twice(t):
    return t * 2


@ct.kernel
def compile_time(x, out, n, T: ct.Constant[int]):
    t = ct.load(x, (0,), (T,))
    parts = (t, t + 1, _twice(t))
    acc = ct.zeros((T,), ct.float32)
    for p in ct.static_iter(parts):  # the body once per tile
        acc = acc + p
    ct.static_assert(t.ndim == 1, "a 1-D tile")
    big = ct.static_eval(acc if ct.ensure_constant(T) > 4 else t)
    m = ct.assume_divisible_by(n, 8)
    ct.assert_(big >= 0, "never negative")
    ct.grid_dependency_control_wait()
    ct.store(out, (0,), big + m)
    ct.grid_dependency_control_launch_dependents()


def test_compile_time_helpers(backend, rng):
    x = rng.random(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    if launch(compile_time, (1,), x, out, 24, backend=backend, T=16):
        np.testing.assert_allclose(out, 4 * x + 1 + 24, rtol=1e-6)


@ct.kernel
def asserting(x):
    ct.assert_(ct.load(x, (0,), (8,)) > 0, "x must be positive")


def test_assert_fails_the_launch():
    with pytest.raises(tc.DeviceAssertionError, match="x must be positive"):
        ct.launch(None, (1,), asserting, (-np.ones(8, np.float32),), backend="numpy")


@ct.kernel
def views(x, y, counts, TM: ct.Constant[int], TN: ct.Constant[int]):
    src = x.tiled_view((TM, TN), padding_mode=ct.PaddingMode.ZERO)
    dst = y.tiled_view((TM, TN))
    i, j = ct.bid(0), ct.bid(1)
    dst.store((i, j), src.load((i, j)) + ct.full((1, TN), 1.0, src.dtype))
    ct.store(counts, (0,), ct.full((2,), src.num_tiles(1) * 10 + dst.tile_shape[0],
                                   ct.int32))


def test_tiled_views(backend, rng):
    x = rng.random((20, 24), dtype=np.float32)
    y, counts = np.zeros_like(x), np.zeros(2, np.int32)
    if launch(views, (3, 3), x, y, counts, backend=backend, TM=8, TN=8):
        np.testing.assert_array_equal(y, x + 1)
        np.testing.assert_array_equal(counts, [3 * 10 + 8] * 2)


@ct.kernel
def advanced(x, rows, y, T: ct.Constant[int]):
    r = ct.load(rows, (0,), (T,))
    got = ct.load_advanced_indexing(x, (r, ct.Slice(ct.bid(0) * 4, 8)),
                                    padding_mode=ct.PaddingMode.NEG_INF)
    ct.store_advanced_indexing(y, (ct.Slice(2, 8), r), ct.transpose(got))


def test_advanced_indexing(backend, rng):
    """Rows picked by an index tile, columns by a Slice; outside the array reads the
    padding (here -inf) and is not written."""
    x = rng.random((6, 10), dtype=np.float32)
    rows = np.array([5, 0, 7, 2, 2, 1, 3, 4], np.int32)  # 7: outside
    y = np.zeros((12, 6), np.float32)
    if launch(advanced, (1,), x, rows, y, backend=backend, T=8):
        want = np.full((8, 8), -np.inf, np.float32)
        inside = rows < 6
        want[inside] = x[rows[inside]][:, :8]
        expect = np.zeros_like(y)
        for k, r in enumerate(rows):
            if r < 6:
                expect[2:10, r] = want[k]
        np.testing.assert_array_equal(y, expect)


@ct.kernel
def ordered(counts, bits, olds, T: ct.Constant[int]):
    i = ct.arange(T, dtype=ct.int32)
    ct.atomic_add(counts, i % 4, 1, memory_order=ct.MemoryOrder.RELAXED,
                  memory_scope=ct.MemoryScope.BLOCK)
    ct.atomic_or(bits, i % 2, ct.bitwise_lshift(1, i), memory_order=ct.MemoryOrder.RELEASE)
    ct.atomic_and(bits, 2, ~ct.bitwise_lshift(1, i % 8), memory_scope=ct.MemoryScope.SYS)
    ct.atomic_xor(bits, 3, ct.bitwise_lshift(1, i), memory_order=ct.MemoryOrder.ACQUIRE)
    old = ct.atomic_cas(counts, i + 2, 99, 7, memory_order=ct.MemoryOrder.ACQ_REL)
    ct.store(olds, (0,), old)


def test_atomics_with_memory_order(backend):
    """Memory orders and scopes reach the atomics; atomic_and/or/xor on arrays; a CAS at
    an index outside the array returns ``expected``, as cuTile's does."""
    counts = np.zeros(6, np.int32)
    bits = np.array([0, 0, -1, 0], np.int32)
    olds = np.zeros(8, np.int32)
    if launch(ordered, (1,), counts, bits, olds, backend=backend, T=8):
        np.testing.assert_array_equal(counts, [2, 2, 2, 2, 0, 0])
        np.testing.assert_array_equal(bits, [0b01010101, 0b10101010, ~0xFF, 0xFF])
        np.testing.assert_array_equal(olds, [2, 2, 0, 0, 99, 99, 99, 99])


# ---------------------------------------------------------------- not supported yet

def _kernel(body: str):
    """A kernel of ``body``, after ``t = ct.load(x, ...)``."""
    return kernel_of(f"def k(x):\n    t = ct.load(x, (0,), (8,))\n    {body}\n")


@pytest.mark.parametrize("body, message", [
    ("ct.printf('%f', t)", ("ct.printf is not supported by tilec yet: print tiles with "
                            "tl.device_print(prefix, *tiles), which ct kernels take")),
    ("ct.print(t)", "ct.print is not supported by tilec yet"),
    ("ct.pack_to_bytes(t)", "ct.pack_to_bytes is not supported by tilec yet"),
    ("x.slice(0, 0, 4)", "arr.slice is not supported by tilec yet"),
    ("x.get_raw_memory()", "arr.get_raw_memory is not supported by tilec yet"),
    ("x.tiled_view(4, traversal_steps=2)", ("arr.tiled_view: traversal_steps 2 other than "
                                            "the tile shape (overlapping or spaced tiles)")),
    ("ct.load(x, (0,), (8,), padding_mode=ct.PaddingMode.NEG_ZERO)",
     "padding mode NEG_ZERO is not supported by tilec yet"),
    ("ct.mma_scaled(t, t, t, t, t)", ("ct.mma_scaled: x must be a 2-D tile (tilec has no "
                                      "batched form)")),
    ("ct.atomic_add(x, 0, 1.0, memory_order=ct.MemoryOrder.WEAK)",
     ("ct.atomic_add: memory_order must be ct.MemoryOrder.RELAXED, ACQUIRE, RELEASE or "
      "ACQ_REL, got <MemoryOrder.WEAK: 'weak'>")),
    ("ct.static_assert(t.ndim == 2, t.ndim)", "static assertion failed: 1"),
    ("ct.ensure_constant(ct.bid(0))", ("ct.ensure_constant: its argument is a runtime "
                                       "int32, not a compile-time constant")),
    ("ct.extract(t, (2,), (4,))", "ct.extract: index 2 at dimension 0 is outside [0, 2)"),
])
def test_not_supported_yet(body, message):
    with pytest.raises(tc.CompileError) as e:
        ct.launch(None, (1,), _kernel(body), (np.zeros(8, np.float32),), backend="numpy")
    assert message in e.value.message
