"""``@tc.autotune`` and ``@tc.heuristics``: the fastest config is chosen per key and
remembered in memory and on disk, written arguments are reset or restored between trials,
pruning and heuristics follow Triton's rules."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability
from tests.conftest import repo_pythonpath
from tests.test_testing import slow_trips


@pytest.fixture
def runnable(backend):
    """The ``backend`` fixture, skipping ptx where no GPU can launch."""
    if backend == "ptx" and not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    return backend


@pytest.fixture(autouse=True)
def cache_root(tmp_path, monkeypatch):
    """A fresh disk cache per test, so no test sees another's tuning."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILEC_CACHE", raising=False)
    monkeypatch.delenv("TILEC_PRINT_AUTOTUNING", raising=False)
    return tmp_path / "cache"


class Counting:
    """``tc.testing.do_bench`` with a count of the configs it timed."""

    def __init__(self, backend):
        self.backend, self.calls = backend, 0

    def __call__(self, fn):
        self.calls += 1
        return tc.testing.do_bench(fn, warmup=5, rep=20, backend=self.backend,
                                   return_mode="median")


def busy_kernel(do_bench=None, work=2000):
    """A copy that loops WORK times over its tile: WORK=1 is the fast config."""
    @tc.autotune(configs=[tc.Config({"BLOCK": 128, "WORK": work}),
                          tc.Config({"BLOCK": 128, "WORK": 1}, num_warps=2)],
                 key=["n"], do_bench=do_bench)
    @tc.kernel
    def busy(x, out, n, BLOCK: tl.constexpr, WORK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x + offs, mask=mask)
        acc = v
        for i in range(WORK):
            acc = tl.maximum(acc, v - i % 2)  # stays v, but no compiler can drop the loop
        tl.store(out + offs, acc, mask=mask)
    return busy


def grid_for(n):
    return lambda meta: (tc.cdiv(n, meta["BLOCK"]),)


def test_picks_the_fastest_config(runnable, rng):
    busy = busy_kernel(work=slow_trips(runnable))
    n = 4096
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    busy[grid_for(n)](x, out, n, backend=runnable)
    np.testing.assert_array_equal(out, x)
    assert busy.best_config == tc.Config({"BLOCK": 128, "WORK": 1}, num_warps=2)
    slow, fast = busy.configs
    assert busy.configs_timings[fast] < busy.configs_timings[slow]


def test_tunes_once_per_key(rng):
    counting = Counting("numpy")
    busy = busy_kernel(counting)
    for n in (300, 300, 500, 300):
        x = rng.standard_normal(n).astype(np.float32)
        out = np.zeros(n, np.float32)
        busy[grid_for(n)](x, out, n, backend="numpy")
        np.testing.assert_array_equal(out, x)
    assert counting.calls == 4  # two configs for n=300, two for n=500
    assert set(busy.caches["numpy"]) == {(300, "float32", "float32"),
                                         (500, "float32", "float32")}


def test_a_dtype_is_part_of_the_key(rng):
    counting = Counting("numpy")
    busy = busy_kernel(counting)
    for dtype in (np.float32, np.int32):
        x = (rng.standard_normal(64) * 100).astype(dtype)
        out = np.zeros(64, dtype)
        busy[grid_for(64)](x, out, 64, backend="numpy")
        np.testing.assert_array_equal(out, x)
    assert counting.calls == 4


@tc.kernel
def increment(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x + offs, tl.load(x + offs, mask=mask) + 1, mask=mask)


# BLOCK >= 32 * num_warps: a smaller tile is replicated over threads, and the WGSL backend
# then lets every replica store (an in-place increment would count several times).
CONFIGS = [tc.Config({"BLOCK": 128}), tc.Config({"BLOCK": 256})]


def test_restore_value_puts_written_arguments_back(runnable):
    tuned = tc.autotune(CONFIGS, key=["n"], restore_value=["x"])(increment)
    x = np.arange(100, dtype=np.int32)
    tuned[grid_for(100)](x, 100, backend=runnable)
    np.testing.assert_array_equal(x, np.arange(100) + 1)  # once, not once per trial


def test_without_restore_value_the_trials_show():
    tuned = tc.autotune(CONFIGS, key=["n"])(increment)
    x = np.arange(100, dtype=np.int32)
    tuned[grid_for(100)](x, 100, backend="numpy")
    assert (x > np.arange(100) + 2).all()


@tc.kernel
def total(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out, tl.sum(tl.load(x + offs, mask=offs < n, other=0), axis=0))


def test_reset_to_zero_before_each_trial_and_the_launch(runnable, rng):
    tuned = tc.autotune(CONFIGS, key=["n"], reset_to_zero=["out"])(total)
    x = rng.integers(-50, 50, 200).astype(np.int32)
    out = np.full(1, 12345, np.int32)
    tuned[grid_for(200)](x, out, 200, backend=runnable)
    assert out[0] == x.sum()


def test_a_config_that_does_not_compile_is_skipped(rng):
    tuned = tc.autotune([tc.Config({"BLOCK": 48}), tc.Config({"BLOCK": 128})],
                        key=["n"], restore_value=["x"])(increment)
    x = np.arange(100, dtype=np.int32)
    tuned[grid_for(100)](x, 100, backend="numpy")
    assert tuned.best_config.kwargs == {"BLOCK": 128}
    assert tuned.configs_timings[tc.Config({"BLOCK": 48})] == float("inf")
    np.testing.assert_array_equal(x, np.arange(100) + 1)


def test_when_no_config_compiles_the_first_error_is_raised():
    tuned = tc.autotune([tc.Config({"BLOCK": 48}), tc.Config({"BLOCK": 24})],
                        key=["n"])(increment)
    with pytest.raises(tc.CompileError, match="power of two"):
        tuned[grid_for(100)](np.zeros(100, np.int32), 100, backend="numpy")


def test_prune_configs_by():
    configs = [tc.Config({"BLOCK": b}) for b in (16, 32, 64, 128, 256)]
    seen = {}

    def early(configs, named, **kwargs):
        seen.update(named, keywords=kwargs)
        return [c for c in configs if c.kwargs["BLOCK"] <= kwargs["n"]]  # 06's way

    def model(x, n, BLOCK, num_warps, num_stages, **_):
        return abs(BLOCK - 32)  # "32 is best", then 16 and 64

    tuned = tc.autotune(configs, key=["n"], restore_value=["x"], prune_configs_by={
        "early_config_prune": early, "perf_model": model, "top_k": 2})(increment)
    x = np.zeros(100, np.int32)
    tuned[grid_for(100)](x, n=100, backend="numpy")
    assert seen["n"] == 100 and seen["x"] is x
    assert seen["keywords"]["n"] == 100  # a keyword of the launch, as Triton passes them
    assert {c.kwargs["BLOCK"] for c in tuned.configs_timings} in ({32, 16}, {32, 64})
    np.testing.assert_array_equal(x, 1)


def test_a_single_config_is_launched_without_tuning():
    counting = Counting("numpy")
    tuned = tc.autotune([tc.Config({"BLOCK": 32})], key=["n"], do_bench=counting)(increment)
    x = np.zeros(50, np.int32)
    tuned[grid_for(50)](x, 50, backend="numpy")
    np.testing.assert_array_equal(x, 1)
    assert counting.calls == 0 and tuned.best_config == tc.Config({"BLOCK": 32})


def test_print_autotuning(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_PRINT_AUTOTUNING", "1")
    tuned = tc.autotune(CONFIGS, key=["n"], restore_value=["x"])(increment)
    tuned[grid_for(100)](np.zeros(100, np.int32), 100, backend="numpy")
    printed = capsys.readouterr().out
    assert "tilec autotuning increment" in printed
    assert str(tuned.best_config) in printed and "benchmarking" in printed


SCRIPT = textwrap.dedent("""
    import numpy as np
    import compiler as tc
    import compiler.language as tl

    timed = []

    def bench(fn):
        timed.append(1)
        return tc.testing.do_bench(fn, warmup=5, rep=20, backend="numpy")

    @tc.autotune(configs=[tc.Config({"BLOCK": 32}), tc.Config({"BLOCK": 64}),
                          tc.Config({"BLOCK": 128})], key=["n"], do_bench=bench,
                 restore_value=["x"])
    @tc.kernel
    def increment(x, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(x + offs, tl.load(x + offs, mask=mask) + 1, mask=mask)

    x = np.zeros(1000, np.int32)
    increment[lambda meta: (tc.cdiv(1000, meta["BLOCK"]),)](x, 1000, backend="numpy")
    assert (x == 1).all()
    print("timed", len(timed), "best", increment.best_config.kwargs["BLOCK"])
""")


def test_the_choice_survives_the_process(tmp_path, cache_root):
    script = tmp_path / "tuned.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": repo_pythonpath(), "TILEC_CACHE_DIR": str(cache_root),
           "TILEC_PRINT_AUTOTUNING": "1"}

    def run():
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, check=False)
        assert r.returncode == 0, r.stderr
        return r.stdout.splitlines()

    first, second = run(), run()
    assert "benchmarking" in first[0] and first[1].startswith("timed 3 best ")
    assert "from the disk cache" in second[0]
    assert second[1] == first[1].replace("timed 3", "timed 0")


def test_a_bad_disk_record_is_retuned(tmp_path, cache_root):
    counting = Counting("numpy")
    tuned = tc.autotune(CONFIGS, key=["n"], restore_value=["x"], do_bench=counting)(increment)
    tuned[grid_for(100)](np.zeros(100, np.int32), 100, backend="numpy")
    (record,) = (cache_root / "autotune").rglob("*.json")
    record.write_text(record.read_text().replace('"index": ', '"index": 1'))
    again = tc.autotune(CONFIGS, key=["n"], restore_value=["x"], do_bench=counting)(increment)
    x = np.zeros(100, np.int32)
    again[grid_for(100)](x, 100, backend="numpy")
    np.testing.assert_array_equal(x, 1)
    assert counting.calls == 4


@tc.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@tc.kernel
def flagged(x, out, flag, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out + offs, tl.load(x + offs) * 2)
    else:
        mask = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=mask) * 2, mask=mask)
    tl.store(flag + tl.program_id(0), EVEN)


@pytest.mark.parametrize("n", [128, 100])
def test_heuristics_set_constexprs(runnable, n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    flag = np.full(2, 7, np.int32)
    flagged[grid_for(n)](x, out, flag, n, BLOCK=64, backend=runnable)
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(flag, int(n % 64 == 0))


def test_autotune_above_heuristics(rng):
    tuned = tc.autotune([tc.Config({"BLOCK": 32}), tc.Config({"BLOCK": 64})],
                        key=["n"], restore_value=["flag"])(flagged)
    x = rng.standard_normal(96).astype(np.float32)
    out = np.zeros(96, np.float32)
    flag = np.full(3, 7, np.int32)
    tuned[grid_for(96)](x, out, flag, 96, backend="numpy")
    np.testing.assert_array_equal(out, 2 * x)
    block = tuned.best_config.kwargs["BLOCK"]
    np.testing.assert_array_equal(flag[:tc.cdiv(96, block)], int(96 % block == 0))


def test_a_key_naming_no_argument_is_a_warning_as_triton_ignores_it():
    with pytest.warns(UserWarning, match="key names 'size', not among its arguments"):
        tuned = tc.autotune(CONFIGS, key=["size", "n"])(increment)
    assert tuned.keys == ["n"]


@tc.kernel
def bump_through(x, n, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n).to(DTYPE)
    tl.store(x + offs, (v + 1).to(tl.int32), mask=offs < n)


def test_configs_the_backend_cannot_run_are_skipped_with_a_note(monkeypatch, capsys):
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    monkeypatch.setenv("TILEC_PRINT_AUTOTUNING", "1")
    wide = tc.Config({"BLOCK": 64, "DTYPE": tl.float64})  # WGSL has no float64
    tuned = tc.autotune([wide, tc.Config({"BLOCK": 32, "DTYPE": tl.float32})],
                        key=["n"], restore_value=["x"])(bump_through)
    x = np.zeros(64, np.int32)
    tuned[grid_for(64)](x, 64, backend="wgsl")
    assert tuned.best_config.kwargs["BLOCK"] == 32
    np.testing.assert_array_equal(x, 1)
    assert "skipped config BLOCK: 64, DTYPE: float64, num_warps: 4, num_stages: 2: Unsupported" \
        in capsys.readouterr().out


def test_misuse_is_reported():
    with pytest.raises(tc.TilecError, match="above @tc.kernel"):
        tc.autotune(CONFIGS, key=["n"])(lambda x, n: None)
    with pytest.raises(tc.TilecError, match="not among its arguments"):
        tc.heuristics({"BLOK": lambda args: 64})(increment)
    tuned = tc.autotune(CONFIGS, key=["n"])(increment)
    with pytest.raises(tc.LaunchError, match="BLOCK is chosen by @tc.autotune"):
        tuned[(1,)](np.zeros(4, np.int32), 4, BLOCK=32, backend="numpy")
    with pytest.raises(tc.TilecError, match="launch it as"):
        tuned(np.zeros(4, np.int32), 4)
