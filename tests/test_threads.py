"""Launches from many Python threads at once: each must see only its own arguments.

Every thread launches the same kernel with its own arrays and its own scalar, so an
argument mixed up between threads shows as a wrong result. Each thread also races the
others to the first launch of a new specialization, which must compile it once.
"""

import threading

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl

from .conftest import launch

THREADS = 8
N = 1000


@tc.kernel
def axpy(x, y, out, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x_ = tl.load(x + offs, mask=mask)
    tl.store(out + offs, a * x_ + tl.load(y + offs, mask=mask), mask=mask)


def _in_threads(work, count: int = THREADS) -> list:
    """Run ``work(thread_index)`` in ``count`` threads started together; their errors."""
    errors: list = []
    start = threading.Barrier(count)

    def run(t: int) -> None:
        try:
            start.wait()
            work(t)
        except Exception as e:  # noqa: BLE001 - reported by the test, not lost in a thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def _distinct_scalars(backend: str, launches: int, block: int) -> tuple[int, list]:
    wrong = [0]

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        for i in range(launches):
            x = rng.random(N, dtype=np.float32)
            y = rng.random(N, dtype=np.float32)
            out = np.full(N, np.nan, np.float32)
            a = float(t * 1000 + i)  # no two launches share a scalar
            if not launch(axpy, (tc.cdiv(N, block),), x, y, out, a, N, backend=backend,
                          BLOCK=block):
                return
            if not np.array_equal(out, np.float32(a) * x + y):
                wrong[0] += 1

    errors = _in_threads(work)
    return wrong[0], errors


def test_threads_never_see_each_others_arguments(backend):
    wrong, errors = _distinct_scalars(backend, 400, 256)
    assert not errors, errors
    assert wrong == 0, f"{wrong} of {THREADS * 400} launches computed with another's arguments"


def test_threads_racing_to_a_new_specialization_compile_it_once(backend):
    before = len(axpy._cache)
    wrong, errors = _distinct_scalars(backend, 3, 128)  # BLOCK=128: new to this process
    assert not errors, errors
    assert wrong == 0
    assert len(axpy._cache) == before + 1


def test_wgsl_device_buffers_from_threads():
    from compiler.jit import availability
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    import wgpu

    from backends.wgsl import read_buffer
    device = tc.wgsl_device()
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    wrong = [0]

    def work(t: int) -> None:
        rng = np.random.default_rng(100 + t)
        x = rng.random(N, dtype=np.float32)
        y = rng.random(N, dtype=np.float32)
        bufs = [device.create_buffer_with_data(data=v, usage=usage) for v in (x, y, y)]
        for i in range(200):
            a = float(t * 1000 + i)
            axpy[(tc.cdiv(N, 256),)](*(tc.wgsl_array(b, np.float32, (N,)) for b in bufs), a,
                                     N, BLOCK=256, backend="wgsl")
            if not np.array_equal(read_buffer(bufs[2], np.float32), np.float32(a) * x + y):
                wrong[0] += 1

    errors = _in_threads(work)
    assert not errors, errors
    assert wrong[0] == 0
