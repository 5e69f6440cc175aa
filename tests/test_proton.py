"""``compiler.triton.profiler`` as Triton's persistent-matmul tutorial uses it: launch
metadata (``@triton.jit(launch_metadata=...)`` under ``hook="triton"``), scope metrics,
the hatchet file ``finalize()`` writes, and ``profiler.viewer``'s ``parse`` and
``print_tree``; on the numpy backend, where launches are timed by the wall clock."""

import json
import sys

import numpy as np
import pytest

import compiler
import compiler.jit
import compiler.triton.profiler as proton
from compiler import triton
from compiler.errors import TilecError
from compiler.triton import language as tl
from compiler.triton.profiler import viewer

SEEN = []  # what launch_metadata was given, call by call


def scale_metadata(grid, kernel, args):
    SEEN.append((grid, kernel.name, dict(args)))
    n = args["n"]
    return {"name": f"{kernel.name} [n={n}, B={args['BLOCK']}]", "flops32": 1.0 * n,
            "bytes": 8 * n}


@triton.jit(launch_metadata=scale_metadata)
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, 2.0 * tl.load(x_ptr + offsets, mask=mask), mask=mask)


def scale(x, block=128):
    out = np.empty_like(x)
    scale_kernel[(triton.cdiv(x.size, block),)](x, out, x.size, BLOCK=block, backend="numpy")
    return out


@pytest.fixture
def profiling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    SEEN.clear()
    scale(np.ones(300, np.float32))  # compiled before the profile starts
    yield tmp_path
    proton.finalize()  # whatever a failing test left open
    assert compiler.jit.PROFILE is None


def test_launch_metadata_names_and_measures_launches_under_the_triton_hook(profiling):
    x = np.arange(300, dtype=np.float32)
    with_hook = proton.start("hooked", hook="triton")
    without = proton.start("plain")
    np.testing.assert_array_equal(scale(x), 2 * x)
    scale(x)
    ((grid, name, args), _) = SEEN
    assert grid == (3, 1, 1) and name == "scale_kernel"
    assert args["n"] == 300 and args["BLOCK"] == 128 and args["x_ptr"] is x
    (row,) = proton.report(with_hook)
    assert row["name"] == "scale_kernel [n=300, B=128]" and row["launches"] == 2
    assert row["metrics"] == {"flops32": 600.0, "bytes": 4800}
    (plain,) = proton.report(without)
    assert plain["name"] == "scale_kernel" and plain["metrics"] == {}


def test_scope_metrics_are_added_each_time_the_scope_is_entered(profiling):
    x = np.ones(300, np.float32)
    proton.start("scoped", hook="triton")
    for _ in range(2):
        with proton.scope("blas", {"bytes": 10, "flops16": 1e6}):
            scale(x)
    with proton.scope("torch", {"flops16": 5.0}):  # nothing tilec launches inside
        pass
    proton.enter_scope("manual", metrics={"bytes": 1})
    proton.exit_scope(metrics={"bytes": 2})
    proton.finalize()
    (root,) = json.loads((profiling / "scoped.hatchet").read_text())
    nodes = {n["frame"]["name"]: n for n in root["children"]}
    assert list(nodes) == ["blas", "torch", "manual"]
    blas, kernel = nodes["blas"], nodes["blas"]["children"][0]
    assert kernel["frame"]["name"] == "scale_kernel [n=300, B=128]"
    assert kernel["metrics"]["count"] == 2 and kernel["metrics"]["bytes"] == 2 * 2400
    # a node's metrics include the nodes under it, as proton's do
    assert blas["metrics"] == {"count": 2, "time (ns)": kernel["metrics"]["time (ns)"],
                               "bytes": 20 + 4800, "flops16": 2e6, "flops32": 600.0}
    assert nodes["torch"]["metrics"] == {"count": 0, "time (ns)": 0, "flops16": 5.0}
    assert nodes["manual"]["metrics"]["bytes"] == 3
    # the untimed scopes' work is theirs alone: the root's rate is of timed work
    assert root["frame"]["name"] == "ROOT" and root["metrics"]["count"] == 2
    assert root["metrics"]["flops16"] == 2e6 and root["metrics"]["bytes"] == 20 + 4800


def test_the_hatchet_file_holds_the_times_the_session_measured(profiling):
    x = np.ones(300, np.float32)
    session = proton.start("timed")
    scale(x)
    scale(x)
    (row,) = proton.report(session)
    proton.finalize()
    (root,) = json.loads((profiling / "timed.hatchet").read_text())
    (kernel,) = root["children"]
    assert kernel["frame"]["name"] == "scale_kernel" and kernel["metrics"]["count"] == 2
    assert kernel["metrics"]["time (ns)"] == round(row["total_ms"] * 1e6) > 0


def test_the_viewer_prints_the_tree_with_derived_metrics(profiling, capsys):
    x = np.ones(300, np.float32)
    proton.start("viewed", hook="triton")
    with proton.scope("blas", {"flops16": 3e9, "bytes": 6e6}):
        scale(x)
    with proton.scope("torch", {"flops16": 1.0}):
        pass
    proton.finalize()
    tree, metrics = viewer.parse(["tflop16/s", "gbyte/s", "time/ms", "avg_time/us",
                                  "gflop/s", "count"], "viewed.hatchet")
    blas = tree.children[0]
    ns = blas.metrics["time (ns)"]
    assert viewer.derive(blas, "tflop16/s") == pytest.approx(3e9 / (ns * 1e-9) * 1e-12)
    assert viewer.derive(blas, "gbyte/s") == pytest.approx((6e6 + 2400) / ns)
    assert viewer.derive(blas, "gflop/s") == pytest.approx((3e9 + 300) / ns)
    assert viewer.derive(blas, "time/ms") == pytest.approx(ns * 1e-6)
    assert viewer.derive(tree.children[1], "tflop16/s") is None  # no time: no rate
    viewer.print_tree(tree, metrics)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["tflop16/s", "gbyte/s", "time/ms", "avg_time/us", "gflop/s",
                                "count"]
    assert lines[1].endswith("  ROOT") and lines[2].endswith("    blas")
    assert lines[3].endswith("      scale_kernel [n=300, B=128]")
    assert lines[2].split()[0] == f"{viewer.derive(blas, 'tflop16/s'):.3f}"
    assert lines[4].split() == ["-", "-", "-", "-", "-", "0", "torch"]


def test_the_viewer_refuses_unknown_metrics_and_files_that_are_not_profiles(profiling):
    proton.start("small")
    scale(np.ones(300, np.float32))
    proton.finalize()
    with pytest.raises(TilecError, match="unknown metric 'tflop12/s' .*use time/s"):
        viewer.parse(["tflop12/s"], "small.hatchet")
    assert viewer.parse(["count", "time (ns)"], "small.hatchet")[1] == ["count", "time (ns)"]
    (profiling / "bad.hatchet").write_text('[{"metrics": {}}]')
    with pytest.raises(TilecError, match="not a hatchet profile"):
        viewer.parse(["time/ms"], "bad.hatchet")
    with pytest.raises(TilecError, match="cannot read the profile 'missing.hatchet'"):
        viewer.parse(["time/ms"], "missing.hatchet")


def test_finalize_prints_an_unnamed_session_and_checks_its_format(profiling, capsys):
    proton.start()
    scale(np.ones(300, np.float32))
    with pytest.raises(TilecError, match="output_format must be one of hatchet, text"):
        proton.finalize(output_format="chrome_trace")
    proton.finalize()
    assert "scale_kernel" in capsys.readouterr().out
    assert not list(profiling.glob("*.hatchet"))


def test_metrics_must_be_numbers_and_a_refused_scope_is_not_left_open(profiling):
    session = proton.start("bad")
    with pytest.raises(TilecError, match="scope 'step': metric 'flops' must be a number"), \
            proton.scope("step", {"flops": "many"}):
        pass
    scale(np.ones(300, np.float32))
    assert [r["name"] for r in proton.report(session)] == ["scale_kernel"]


def test_triton_profiler_viewer_is_this_module_under_the_alias(monkeypatch):
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        monkeypatch.delitem(sys.modules, name)
    triton.install_as_triton()
    try:
        import triton.profiler.viewer as aliased
        assert aliased is viewer
    finally:
        triton.uninstall_as_triton()
