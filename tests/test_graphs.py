"""``tc.graph``: launches captured once (none runs) and replayed on what their arrays hold
then, their scalars as captured; a CUDA graph on ptx, a recording on numpy and wgsl. And
what a capture refuses: what would happen once, at capture, instead of on each replay."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability
from examples.vector_add import add

N = 1000


@pytest.fixture(params=["numpy", "wgsl", pytest.param("ptx", marks=pytest.mark.gpu)])
def on(request):
    if not availability(request.param)[0]:
        pytest.skip(f"{request.param}: {availability(request.param)[1]}")
    return request.param


@tc.kernel
def scale(x, out, factor, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * factor, mask=offs < n)


@tc.kernel
def bump(counter, n):
    tl.store(counter, tl.load(counter) + n)


def _add(x, y, out, backend, n=N):
    add[(tc.cdiv(n, 256),)](x, y, out, n, BLOCK=256, backend=backend)


def _arrays(on):
    rng = np.random.default_rng(0)
    x, y = (tc.asarray(rng.standard_normal(N).astype(np.float32), on) for _ in range(2))
    return x, y, tc.empty(N, tl.float32, on), tc.empty(N, tl.float32, on)


def test_replays_run_the_chain_on_new_inputs_in_place(on):
    """out = ((x + y) + y) * 3, the last in place; the first replay after the capture,
    which ran nothing, then again on new inputs copied into the same arrays."""
    x, y, tmp, out = _arrays(on)
    out[...] = np.nan
    with tc.graph(on) as g:
        _add(x, y, tmp, on)
        _add(tmp, y, out, on)
        scale[(tc.cdiv(N, 256),)](out, out, 3.0, N, BLOCK=256, backend=on)
    assert np.isnan(tc.to_numpy(out)).all()
    rng = np.random.default_rng(1)
    for _ in range(2):
        hx, hy = rng.standard_normal((2, N)).astype(np.float32)
        x[...], y[...], out[...] = hx, hy, np.nan
        g.replay()
        tc.synchronize(on)
        np.testing.assert_allclose(tc.to_numpy(out), ((hx + hy) + hy) * 3, rtol=1e-6)


def test_scalars_are_those_of_the_capture_and_device_state_moves_on(on):
    """A launch of scalars and a counter only: each replay adds what was captured."""
    counter = tc.zeros(1, tl.int32, on)
    with tc.graph(on) as g:
        bump[(1,)](counter, 5, backend=on, num_warps=1)
        bump[(1,)](counter, 2, backend=on, num_warps=1)
    for _ in range(3):
        g.replay()
    assert tc.to_numpy(counter)[0] == 21


def test_two_captures_in_turn_each_replay_their_own_launches(on):
    """Each tc.graph is a capture of its own (on ptx a CUDA graph of its own): the second
    neither replays the first's launches nor disturbs its replays."""
    counter = tc.zeros(1, tl.int32, on)
    with tc.graph(on) as first:
        bump[(1,)](counter, 1, backend=on, num_warps=1)
    with tc.graph(on) as second:
        bump[(1,)](counter, 100, backend=on, num_warps=1)
    for g in (second, first, second, first, first):
        g.replay()
    assert tc.to_numpy(counter)[0] == 203


def test_an_array_made_inside_the_capture_stays_for_the_replays(on):
    x, y, _, out = _arrays(on)
    with tc.graph(on) as g:
        tmp = tc.zeros(N, tl.float32, on)
        _add(x, y, tmp, on)
        _add(tmp, tmp, out, on)
    del tmp
    g.replay()
    want = (tc.to_numpy(x) + tc.to_numpy(y)) * 2
    np.testing.assert_allclose(tc.to_numpy(out), want, rtol=1e-6)


def test_a_capture_refuses_what_would_happen_once(on):
    x, y, tmp, out = _arrays(on)
    with tc.graph(on) as g:
        if on != "numpy":  # numpy's arrays are NumPy's own: copies into them are NumPy's
            with pytest.raises(tc.LaunchError, match="copying into an array inside a "
                                                     "tc.graph capture would happen once"):
                x[...] = 1.0
        with pytest.raises(tc.LaunchError, match="tc.to_numpy inside a tc.graph capture"):
            tc.to_numpy(out)
        with pytest.raises(tc.LaunchError, match="tc.synchronize inside a tc.graph capture"):
            tc.synchronize(on)
        with pytest.raises(tc.LaunchError, match="captures do not nest"), tc.graph(on):
            pass
        with pytest.raises(tc.LaunchError, match="cannot replay inside its own capture"):
            g.replay()
        if on != "numpy":  # numpy checks as it runs: its debug launches replay as any
            with pytest.raises(tc.LaunchError, match="debug=True reads results back"):
                add[(4,)](x, y, tmp, N, BLOCK=256, backend=on, debug=True)
        _add(x, y, out, on)
    assert len(g.launches) == 1  # the refused launch was not taken
    with pytest.raises(tc.LaunchError, match="captured already; capture again into a new"), g:
        pass
    with tc.graph(on):
        _add(x, y, tmp, on)
        with pytest.raises(tc.LaunchError, match="cannot replay inside another's capture"):
            g.replay()


def test_verify_is_refused_too():
    x = np.ones(N, np.float32)
    with tc.graph("numpy"), pytest.raises(tc.LaunchError, match="verify=True reads"):
        add[(4,)](x, x, x, N, BLOCK=256, backend="numpy", verify=True)


def test_a_graph_replays_only_once_captured_whole():
    g = tc.graph("numpy")
    with pytest.raises(tc.LaunchError, match="nothing captured yet"):
        g.replay()
    x = np.ones(N, np.float32)
    with pytest.raises(ZeroDivisionError), g:
        _add(x, x, x, "numpy")
        1 / 0  # noqa: B018 - an exception leaves the block
    with pytest.raises(tc.LaunchError, match="capture failed"):
        g.replay()
    np.testing.assert_array_equal(x, 1)  # the capture ran nothing


def test_launches_on_another_backend_or_with_host_arrays_are_refused():
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    host = np.ones(N, np.float32)
    x = tc.asarray(host, "wgsl")
    with tc.graph("wgsl") as g:
        with pytest.raises(tc.LaunchError, match="a numpy launch inside a tc.graph capture "
                                                 "on wgsl"):
            _add(host, host, host, "numpy")
        with pytest.raises(tc.LaunchError, match="cannot take NumPy arrays"):
            _add(x, host, x, "wgsl")
    assert g.launches == []


def test_other_threads_launch_as_usual_during_a_capture():
    import threading

    x, out = np.ones(N, np.float32), np.zeros(N, np.float32)
    with tc.graph("numpy") as g:
        worker = threading.Thread(target=_add, args=(x, x, out, "numpy"))
        worker.start()
        worker.join()
    np.testing.assert_array_equal(out, 2)
    assert g.launches == []


@pytest.mark.gpu
def test_ptx_capture_refuses_numpy_arrays():
    if not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    host = np.ones(N, np.float32)
    x = tc.asarray(host, "ptx")
    with tc.graph("ptx") as g:
        with pytest.raises(tc.LaunchError, match="argument 'y' is a NumPy array"):
            _add(x, host, x, "ptx")
        _add(x, x, x, "ptx")
    g.replay()
    g.replay()
    np.testing.assert_array_equal(tc.to_numpy(x), 4)
