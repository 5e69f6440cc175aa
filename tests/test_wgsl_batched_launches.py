"""wgsl launches on tilec's arrays are recorded and submitted together
(``backends/wgsl/recorder.py``): what each launch computes, and the order of launches,
host copies and reads, stay those of launches submitted one by one."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.errors import LaunchError
from compiler.jit import availability
from examples.vector_add import add

from .conftest import repo_pythonpath
from .test_threads import _in_threads

N = 300  # not a multiple of the block: masked tails
BLOCK = 128


@pytest.fixture(autouse=True)
def _wgsl():
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    tc.synchronize("wgsl")


@tc.kernel
def axpy(x, y, out, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, a * tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask),
             mask=mask)


def _axpy(x, y, out, a, n=N):
    axpy[(tc.cdiv(n, BLOCK),)](x, y, out, a, n, BLOCK=BLOCK, backend="wgsl")


def _add(x, y, out, n=N):
    add[(tc.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, backend="wgsl")


def _host(seed: int, n: int = N) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _factors(count: int) -> list[float]:
    """A scalar per launch, no two alike: a launch given another's shows."""
    return [0.5 + 0.25 * (i % 7) - 0.125 * i for i in range(count)]


def _chain(x, y, factors, sync=False):
    """x = a * x + y in place, for each a; synchronized after each launch where ``sync``."""
    for a in factors:
        _axpy(x, y, x, a)
        if sync:
            tc.synchronize("wgsl")


def _numpy_chain(x: np.ndarray, y: np.ndarray, factors) -> np.ndarray:
    for a in factors:
        x = np.float32(a) * x + y
    return x


@pytest.fixture
def submits(monkeypatch):
    """How many command buffer submits the wgsl queue has seen (``read_buffer`` submits
    its copy too)."""
    queue_type = type(tc.wgsl_device().queue)
    real, count = queue_type.submit, [0]

    def counted(self, buffers):
        count[0] += 1
        return real(self, buffers)

    monkeypatch.setattr(queue_type, "submit", counted)
    return count


def _warm() -> None:
    """Compile and first-launch (which waits for the driver) what the tests count submits
    of: ``_chain``'s in-place axpy and an add into a third array."""
    x, y = tc.zeros(N, tl.float32, "wgsl"), tc.zeros(N, tl.float32, "wgsl")
    _axpy(x, y, x, 1.0)
    _add(x, y, tc.empty(N, tl.float32, "wgsl"))
    tc.synchronize("wgsl")


def test_launches_on_device_arrays_wait_for_a_read(submits):
    _warm()
    hx, hy = _host(0), _host(1)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    before = submits[0]
    _chain(x, y, _factors(20))
    assert submits[0] == before, "a launch on tilec's arrays was submitted on its own"
    got = tc.to_numpy(x)
    assert submits[0] > before
    np.testing.assert_allclose(got, _numpy_chain(hx, hy, _factors(20)), rtol=1e-5, atol=1e-5)


def test_batched_chain_equals_the_chain_submitted_launch_by_launch():
    hx, hy = _host(2), _host(3)
    batched, single, y = tc.asarray(hx, "wgsl"), tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    _chain(batched, y, _factors(40))
    _chain(single, y, _factors(40), sync=True)
    np.testing.assert_array_equal(tc.to_numpy(batched), tc.to_numpy(single))


def test_a_recording_holds_at_most_LAUNCHES(monkeypatch, submits):
    from backends.wgsl import recorder
    _warm()
    monkeypatch.setattr(recorder, "LAUNCHES", 4)
    hx, hy = _host(4), _host(5)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    before = submits[0]
    _chain(x, y, _factors(10))
    assert submits[0] - before == 2  # after the 4th and the 8th
    np.testing.assert_allclose(tc.to_numpy(x), _numpy_chain(hx, hy, _factors(10)),
                               rtol=1e-5, atol=1e-5)


def test_a_full_uniform_arena_is_submitted_and_slots_are_not_reused(monkeypatch, submits):
    from backends.wgsl import recorder
    _warm()
    rec = recorder.recorder(tc.wgsl_device())
    slot = -(-32 // rec.align) * rec.align  # axpy's uniform: 7 words, 32 bytes
    monkeypatch.setattr(recorder, "ARENA", 3 * slot)
    hx, hy = _host(6), _host(7)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    before = submits[0]
    _chain(x, y, _factors(10))
    assert submits[0] - before == 3  # before the 4th, 7th and 10th
    np.testing.assert_allclose(tc.to_numpy(x), _numpy_chain(hx, hy, _factors(10)),
                               rtol=1e-5, atol=1e-5)


def test_a_launch_reads_what_the_pending_one_wrote_through_views():
    """Three views of one buffer (at 256-byte offsets, which every device binds): each
    launch reads what the one before wrote, the last in place."""
    n = 64
    h = _host(8, n)
    whole = tc.zeros(3 * n, tl.float32, "wgsl")
    a, b, c = whole[0:n], whole[n:2 * n], whole[2 * n:3 * n]
    a[...] = h
    _add(a, a, b, n)  # b = 2h
    _add(b, a, c, n)  # c = 3h
    _add(c, b, a, n)  # a = 5h, over what the first two read
    _add(a, a, a, n)  # a = 10h, in place
    got = tc.to_numpy(whole).reshape(3, n)
    np.testing.assert_allclose(got, [10 * h, 2 * h, 3 * h], rtol=1e-6)


def test_host_copies_between_pending_launches_come_in_order():
    h1, h2, hy = _host(9), _host(10), _host(11)
    x, y = tc.asarray(h1, "wgsl"), tc.asarray(hy, "wgsl")
    outs = [tc.empty(N, tl.float32, "wgsl") for _ in range(3)]
    _add(x, y, outs[0])
    x[...] = h2
    _add(x, y, outs[1])
    x[3:6] = -1.0  # a copy of part of the array: its ends' words read back first
    _add(x, y, outs[2])
    h3 = h2.copy()
    h3[3:6] = -1.0
    for out, hx in zip(outs, (h1, h2, h3), strict=True):
        np.testing.assert_array_equal(tc.to_numpy(out), hx + hy)


def test_numpy_arguments_between_pending_launches():
    hx, hy = _host(12), _host(13)
    x, y, t = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl"), tc.empty(N, tl.float32, "wgsl")
    _add(x, y, t)  # pending
    host_out = np.full(N, np.nan, np.float32)
    _add(t, hy, host_out)  # reads the pending launch's result, copied back at once
    np.testing.assert_array_equal(host_out, (hx + hy) + hy)
    _add(t, t, t)  # pending again, after the NumPy launch
    np.testing.assert_array_equal(tc.to_numpy(t), 2 * (hx + hy))


def test_reads_in_the_middle_of_a_chain():
    hx, hy = _host(14), _host(15)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    factors = _factors(12)
    _chain(x, y, factors[:5])
    np.testing.assert_allclose(tc.to_numpy(x), _numpy_chain(hx, hy, factors[:5]),
                               rtol=1e-5, atol=1e-5)
    assert tc.to_numpy(x[7:9]).shape == (2,)  # a view's read
    _chain(x, y, factors[5:])
    np.testing.assert_allclose(tc.to_numpy(x), _numpy_chain(hx, hy, factors),
                               rtol=1e-5, atol=1e-5)


def test_arrays_freed_and_made_again_and_more_than_a_kernel_keeps():
    """A launch on arrays seen before skips their checks and reuses their bind group
    (``runtime.Plan``): a new array whose buffer has a freed one's id, views at other
    places of one buffer, and more sets of arrays than a kernel keeps plans for each get
    their own."""
    from backends.wgsl.runtime import Kernel
    hy = _host(30)
    y, out = tc.asarray(hy, "wgsl"), tc.empty(N, tl.float32, "wgsl")
    for seed in range(8):  # freed at once: CPython hands the same ids out again
        hx = _host(31 + seed)
        _add(tc.asarray(hx, "wgsl"), y, out)
        np.testing.assert_array_equal(tc.to_numpy(out), hx + hy)
    kept = [tc.asarray(_host(40 + i), "wgsl") for i in range(Kernel.PLANS + 4)]
    outs = [tc.empty(N, tl.float32, "wgsl") for _ in kept]
    for _ in range(2):  # the second round's first plans were dropped
        for x, o in zip(kept, outs, strict=True):
            _add(x, y, o)
    for i, o in enumerate(outs):
        np.testing.assert_array_equal(tc.to_numpy(o), _host(40 + i) + hy)
    whole = tc.asarray(_host(50, 3 * 64), "wgsl")
    for i in range(3):
        view = whole[64 * i:64 * (i + 1)]
        _add(view, view, out, 64)
        np.testing.assert_array_equal(tc.to_numpy(out[:64]), 2 * _host(50, 3 * 64)[64 * i:][:64])


def test_a_bad_launch_raises_at_once_and_the_pending_ones_still_run():
    hx, hy = _host(16), _host(17)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    _chain(x, y, _factors(3))
    with pytest.raises(LaunchError, match="too large for WGSL"):
        axpy[(3, 2**17)](x, y, x, 1.0, N, BLOCK=BLOCK, backend="wgsl")
    if tc.wgsl_device().limits["min-storage-buffer-offset-alignment"] > 4:
        with pytest.raises(LaunchError, match="starts 4 bytes into its buffer"):
            _axpy(x[1:], y[1:], x[1:], 1.0, n=N - 1)
    _chain(x, y, _factors(5)[3:])
    np.testing.assert_allclose(tc.to_numpy(x), _numpy_chain(hx, hy, _factors(5)),
                               rtol=1e-5, atol=1e-5)


def test_verify_and_debug_launches_between_pending_ones():
    hx, hy = _host(18), _host(19)
    x, y, t = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl"), tc.empty(N, tl.float32, "wgsl")
    out = tc.empty(N, tl.float32, "wgsl")
    _add(x, y, t)
    add[(tc.cdiv(N, BLOCK),)](t, y, out, N, BLOCK=BLOCK, backend="wgsl", verify=True)
    _add(out, y, t)
    add[(tc.cdiv(N, BLOCK),)](t, y, out, N, BLOCK=BLOCK, backend="wgsl", debug=True)
    np.testing.assert_array_equal(tc.to_numpy(out), (((hx + hy) + hy) + hy) + hy)


def test_a_wgpu_buffer_launch_is_submitted_with_those_before_it():
    """A raw buffer's owner reads it through wgpu, which tilec does not see."""
    import wgpu
    device = tc.wgsl_device()
    hx, hy = _host(20), _host(21)
    x, y, t = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl"), tc.empty(N, tl.float32, "wgsl")
    raw = device.create_buffer(size=4 * N, usage=wgpu.BufferUsage.STORAGE
                               | wgpu.BufferUsage.COPY_SRC)
    _add(x, y, t)  # pending
    _add(t, y, tc.wgsl_array(raw, np.float32, N))
    got = np.frombuffer(device.queue.read_buffer(raw), np.float32)
    np.testing.assert_array_equal(got, (hx + hy) + hy)


def test_a_read_on_one_thread_sees_the_launches_of_another():
    hx, hy = _host(22), _host(23)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    recorded = threading.Event()
    worker = threading.Thread(target=lambda: (_chain(x, y, _factors(6)), recorded.set()))
    worker.start()
    worker.join()
    assert recorded.is_set()
    np.testing.assert_allclose(tc.to_numpy(x), _numpy_chain(hx, hy, _factors(6)),
                               rtol=1e-5, atol=1e-5)


def test_threads_recording_at_once_keep_their_own_arguments():
    wrong = []

    def work(t: int) -> None:
        hx, hy = _host(100 + t), _host(200 + t)
        x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
        factors = [a + t for a in _factors(30)]
        _chain(x, y, factors)
        if not np.allclose(tc.to_numpy(x), _numpy_chain(hx, hy, factors), rtol=1e-5,
                           atol=1e-5):
            wrong.append(t)

    errors = _in_threads(work, 4)
    assert not errors, errors
    assert not wrong, f"threads {wrong} computed with other arguments"


def test_graph_replays_are_recorded_and_right(submits):
    _warm()
    hy = _host(24)
    x, y, out = tc.zeros(N, tl.float32, "wgsl"), tc.asarray(hy, "wgsl"), \
        tc.empty(N, tl.float32, "wgsl")
    with tc.graph("wgsl") as g:
        _chain(x, y, _factors(4))
        _add(x, y, out)
    for seed in (25, 26):
        hx = _host(seed)
        x[...] = hx
        before = submits[0]
        g.replay()
        assert submits[0] == before
        np.testing.assert_allclose(tc.to_numpy(out), _numpy_chain(hx, hy, _factors(4)) + hy,
                                   rtol=1e-5, atol=1e-5)


def test_do_bench_times_recorded_launches():
    from compiler.testing import do_bench
    hx, hy = _host(27), _host(28)
    x, y = tc.asarray(hx, "wgsl"), tc.asarray(hy, "wgsl")
    _chain(x, y, _factors(3))  # pending when the timing starts
    ms = do_bench(lambda: _axpy(x, y, x, 1.0), warmup=1, rep=2, backend="wgsl")
    assert ms > 0
    tc.to_numpy(x)


def test_the_recording_is_submitted_at_exit():
    """A program that ends with launches recorded has them submitted: the check, made an
    exit handler before tilec is imported, runs after tilec's."""
    script = """
import atexit
def check():
    from backends.wgsl import recorder
    print("recorded at exit:", sum(r.launches for r in recorder._RECORDERS.values()))
atexit.register(check)
import numpy as np
import compiler as tc
from examples.vector_add import add
x = tc.asarray(np.ones(300, np.float32), "wgsl")
for _ in range(3):
    add[(3,)](x, x, x, 300, BLOCK=128, backend="wgsl")
from backends.wgsl import recorder
print("recorded:", sum(r.launches for r in recorder._RECORDERS.values()))
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": repo_pythonpath()},
                       check=True)
    assert r.stdout.split("\n")[:2] == ["recorded: 2", "recorded at exit: 0"], r.stdout
