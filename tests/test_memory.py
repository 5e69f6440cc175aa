"""Memory: many launches of one kernel hold no memory per launch, and specializations
cost a bounded amount each, all of it owned by the kernel's own caches.

RSS is read from /proc (Linux). Limits, measured on CPython 3.11 with xDSL 0.74:
10,000 launches grew RSS by under 0.1 MB (limit 8 MB); a specialization of a small
kernel on numpy holds about 60 KB (limit 200 KB each, 60 MB for 300), and all but a few
percent of the objects it made go when the kernel's caches are cleared."""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability
from examples.vector_add import add

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

LAUNCHES = 10_000
LAUNCH_GROWTH_MB = 8
SPECIALIZATIONS = 300
PER_SPECIALIZATION_KB = 200


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))  # the default setup: cache on
    monkeypatch.delenv("TILEC_CACHE", raising=False)


@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
def test_launches_do_not_grow_memory(backend):
    if backend == "wgsl" and not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    n = 256
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    for i in range(200):  # warm every cache on the launch path first (n = 1 compiles
        add[(2,)](x, y, out, i % n, BLOCK=128, backend=backend)  # its own kernel)
    add[(2,)](x, y, out, n, BLOCK=128, backend=backend)
    before = rss_mb()
    for i in range(LAUNCHES):
        add[(2,)](x, y, out, i % n, BLOCK=128, backend=backend)
    grown = rss_mb() - before
    np.testing.assert_array_equal(out, x + y)  # the last launch wrote n - 1 elements
    assert grown < LAUNCH_GROWTH_MB, f"{LAUNCHES} launches grew RSS by {grown:.1f} MB"


@tc.kernel
def scale(x, out, n, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * S, mask=offs < n)


def test_specializations_cost_a_bounded_amount_each():
    n = 100
    x, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    scale[(1,)](x, out, n, S=-1, BLOCK=128, backend="numpy")
    before, blocks = rss_mb(), sys.getallocatedblocks()
    for s in range(SPECIALIZATIONS):
        scale[(1,)](x, out, n, S=s, BLOCK=128, backend="numpy")
        assert out[3] == 3 * s
    grown = rss_mb() - before
    held = sys.getallocatedblocks() - blocks
    scale._cache.clear()  # what outlives the kernel's own caches would be a leak
    scale._launches.clear()
    gc.collect()
    leaked = sys.getallocatedblocks() - blocks
    limit = SPECIALIZATIONS * PER_SPECIALIZATION_KB / 1024
    assert grown < limit, f"{SPECIALIZATIONS} specializations grew RSS by {grown:.1f} MB"
    assert leaked < held / 20, f"{leaked} of {held} objects outlived the kernel's caches"
