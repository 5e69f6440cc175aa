"""``tc.testing``: ``do_bench`` on each backend's clock, ``perf_report`` tables, CSV and
plots (matplotlib optional)."""

import csv
import statistics
import sys
import time

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler import testing
from compiler.jit import availability


@pytest.fixture
def runnable(backend):
    if backend == "ptx" and not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    return backend


@tc.kernel
def spin(x, out, n, WORK: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    acc = v
    for _ in range(WORK):
        acc = acc * 0.5 + v * 0.5
    tl.store(out + offs, acc, mask=mask)


def slow_trips(backend: str) -> int:
    """Trips of ``spin``'s loop that make it take milliseconds: many more on a GPU."""
    if backend == "numpy":
        return 2000
    on_cpu = backend == "wgsl" and tc.wgsl_device().adapter.info["adapter_type"] == "CPU"
    return 20_000 if on_cpu else 1_000_000  # lavapipe: ~15 ms, clear of a loaded CPU's noise


def test_do_bench_times_a_sleep_on_the_wall_clock():
    ms = testing.do_bench(lambda: time.sleep(0.003), warmup=5, rep=30, backend="numpy")
    assert 3.0 <= ms < 30.0


def test_do_bench_separates_cheap_from_costly_launches(runnable):
    n = 1024
    x = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)

    def bench(work):
        return testing.do_bench(
            lambda: spin[(n // 128,)](x, out, n, WORK=work, BLOCK=128, backend=runnable),
            warmup=5, rep=40, return_mode="median", backend=runnable)

    cheap, costly = bench(1), bench(slow_trips(runnable))
    np.testing.assert_allclose(out, 1.0)
    assert 0 < cheap < costly


def test_quantiles_and_return_modes():
    calls = []

    def fn():
        calls.append(1)
        time.sleep(0.0005 * (len(calls) % 3))

    lo, mid, hi = testing.do_bench(fn, warmup=1, rep=20, quantiles=[0.2, 0.5, 0.8],
                                   backend="numpy")
    assert lo <= mid <= hi
    every = testing.do_bench(fn, warmup=1, rep=20, return_mode="all", backend="numpy")
    assert isinstance(every, list) and len(every) >= 5
    assert testing.do_bench(fn, rep=5, quantiles=[0.5], backend="numpy") > 0
    with pytest.raises(ValueError, match="return_mode"):
        testing.do_bench(fn, return_mode="average", backend="numpy")


@pytest.mark.parametrize("mode", ["min", "max", "mean", "median"])
def test_summaries_match_numpy(mode, rng):
    times = list(rng.random(37))
    assert testing.summarize(times, None, mode) == pytest.approx(getattr(np, mode)(times))
    qs = [0.0, 0.1, 0.5, 0.93, 1.0]
    np.testing.assert_allclose(testing.summarize(times, qs, mode), np.quantile(times, qs))


def test_the_default_backend_picks_the_clock(monkeypatch):
    monkeypatch.setenv("TILEC_BACKEND", "numpy")
    assert isinstance(testing.clock(testing.resolve_backend(None)), testing.WallClock)


def wgsl_clocks():
    if not availability("wgsl")[0]:
        pytest.skip(f"wgsl: {availability('wgsl')[1]}")
    from backends.wgsl import timing
    device = tc.wgsl_device()
    return timing, device


def test_wgsl_timestamps_bracket_each_call():
    """The markers go on the queue before and after the call, so time the host spends
    between them shows, as it does between two CUDA events. The device writes a marker
    when it gets to it: on lavapipe, a CPU thread that a loaded machine can hold up past
    the call (one CI run timed a first call 0.27 ms), so the median of 5 is checked."""
    timing, device = wgsl_clocks()
    if "timestamp-query" not in device.features:
        pytest.skip("this adapter has no timestamp queries")
    clock = timing.clock()
    assert isinstance(clock, timing.TimestampClock)
    times = clock.times(lambda: time.sleep(0.004), 5)
    assert 3.5 < sorted(times)[2] < 60, times


def test_wgsl_timestamps_time_the_kernels_not_the_host_before_them():
    """A call that launches tilec kernels is timed by the kernels' own passes: the host's
    20 ms before the first launch does not show, the kernels do (two launches of a kernel
    that spins longer: more time). Margins are wide: lavapipe's clock is a loaded CPU's."""
    timing, device = wgsl_clocks()
    if "timestamp-query" not in device.features:
        pytest.skip("this adapter has no timestamp queries")
    import wgpu
    n, work = 4096, slow_trips("wgsl")
    x, out = np.ones(n, np.float32), np.zeros(n, np.float32)
    bx, bo = (tc.wgsl_array(device.create_buffer_with_data(
        data=a, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC), np.float32, (n,))
        for a in (x, out))

    def call(work, launches=1):
        time.sleep(0.02)
        for _ in range(launches):
            spin[(n // 128,)](bx, bo, n, WORK=work, BLOCK=128, backend="wgsl")

    clock = timing.TimestampClock(device)
    call(1)
    call(work)
    clock.sync()
    quick = statistics.median(clock.times(lambda: call(1), 5))
    slow = statistics.median(clock.times(lambda: call(work), 5))
    twice = statistics.median(clock.times(lambda: call(work, 2), 5))
    assert quick < 10, quick  # the sleep is not in it
    assert slow > 2 * quick and twice > 1.25 * slow, (quick, slow, twice)


def test_wgsl_timestamps_span_more_than_one_query_set(monkeypatch):
    timing, device = wgsl_clocks()
    if "timestamp-query" not in device.features:
        pytest.skip("this adapter has no timestamp queries")
    monkeypatch.setattr(timing, "CHUNK", 4)
    times = timing.TimestampClock(device).times(lambda: None, 10)
    assert len(times) == 10 and all(0 <= t < 50 for t in times)


def test_wgsl_fenced_clock_waits_for_the_kernel():
    timing, device = wgsl_clocks()
    clock = timing.FencedClock(device)
    n = 4096
    x = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)

    def launch(work):
        spin[(n // 128,)](x, out, n, WORK=work, BLOCK=128, backend="wgsl")
    trips = slow_trips("wgsl")
    launch(1), launch(trips)  # compiled before timing
    cheap = min(clock.times(lambda: launch(1), 3))
    costly = min(clock.times(lambda: launch(trips), 3))
    assert 0 < cheap < costly


@pytest.mark.gpu
def test_ptx_do_bench_flushes_l2_between_calls():
    if not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    torch = pytest.importorskip("torch")
    from examples.vector_add import add
    n = 1 << 22
    x, y = (torch.rand(n, device="cuda") for _ in range(2))
    out = torch.empty_like(x)
    ms = testing.do_bench(lambda: add[(n // 1024,)](x, y, out, n, BLOCK=1024),
                          backend="ptx", return_mode="median")
    torch.testing.assert_close(out, x + y)
    gbps = 3 * 4 * n / ms / 1e6
    assert 50 < gbps < 6000  # a 48 MiB working set read from memory, not from L2


# ---------------------------------------------------------------- perf_report

def square_bench():
    return testing.Benchmark(
        x_names=["size"], x_vals=[8, 16, 32], line_arg="provider",
        line_vals=["a", "b"], line_names=["A", "B"], styles=[("red", "-"), ("blue", "--")],
        ylabel="units", plot_name="squares", args={"scale": 2})


@testing.perf_report(square_bench())
def squares(size, provider, scale):
    base = size * size * scale if provider == "a" else size * scale
    return base, base - 1, base + 1


def test_perf_report_prints_and_saves_a_table(tmp_path, capsys):
    rows = squares.run(print_data=True, save_path=str(tmp_path / "out"), return_df=True)
    assert rows == [{"size": s, "A": 2.0 * s * s, "B": 2.0 * s} for s in (8, 16, 32)]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "squares:"
    assert printed[1].split() == ["size", "A", "B"]
    assert printed[4].split() == ["32", "2048", "64"]
    with open(tmp_path / "out" / "squares.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["size", "A", "B"]
    assert [[float(v) for v in row] for row in table[1:]] == [
        [s, 2 * s * s, 2 * s] for s in (8, 16, 32)]


def test_perf_report_plots_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    squares.run(save_path=str(tmp_path))
    assert (tmp_path / "squares.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_png_is_skipped_with_a_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    squares.run(save_path=str(tmp_path))
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert (tmp_path / "squares.csv").exists() and not (tmp_path / "squares.png").exists()


def test_several_x_names_and_benchmarks(tmp_path):
    benches = [testing.Benchmark(x_names=["m", "n"], x_vals=[(2, 3), 4], line_arg="op",
                                 line_vals=["+", "*"], line_names=["sum", "product"],
                                 plot_name=f"ops{i}") for i in range(2)]

    @testing.perf_report(benches)
    def ops(m, n, op):
        return m + n if op == "+" else m * n

    results = ops.run(return_df=True)
    assert results[0] == results[1] == [{"m": 2, "n": 3, "sum": 5.0, "product": 6.0},
                                        {"m": 4, "n": 4, "sum": 8.0, "product": 16.0}]


def test_bad_benchmarks_are_reported():
    with pytest.raises(ValueError, match="line_names"):
        testing.Benchmark(x_names=["n"], x_vals=[1], line_arg="p", line_vals=[1, 2],
                          line_names=["one"], plot_name="bad")
    bench = testing.Benchmark(x_names=["m", "n"], x_vals=[(1, 2, 3)], line_arg="p",
                              line_vals=[1], line_names=["one"], plot_name="bad")
    with pytest.raises(ValueError, match="one value for each"):
        testing.perf_report(bench)(lambda m, n, p: 0).run()
    one = testing.Benchmark(x_names=["n"], x_vals=[1], line_arg="p", line_vals=[1],
                            line_names=["one"], plot_name="bad")
    with pytest.raises(ValueError, match="value, min, max"):
        testing.perf_report(one)(lambda n, p: (1, 2)).run()
