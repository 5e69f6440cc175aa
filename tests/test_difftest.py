"""Differential testing (scripts/difftest.py) for a few seconds, serially and from threads,
and its parts: the comparison notices a wrong answer, the threads mode launches at once,
the minimizer shrinks, a regression test runs."""

from __future__ import annotations

import importlib.util
import random
import time
from pathlib import Path

import numpy as np
import pytest

from tests import progen

ROOT = Path(__file__).resolve().parent.parent


def difftest():
    spec = importlib.util.spec_from_file_location("difftest", ROOT / "scripts" / "difftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", "0")


def test_backends_agree_on_random_programs(tmp_path):
    backends = progen.available_backends()
    stats = difftest().run_budget(4.0, backends, progen.KINDS, random.randrange(2**31),
                                  wide=not backends, out=tmp_path)
    assert stats["programs"] >= 3 and stats["invalid"] == 0
    assert not stats["mismatches"], stats["mismatches"]


def test_backends_agree_on_random_programs_launched_from_threads(tmp_path):
    backends = progen.available_backends()
    stats = difftest().run_budget(4.0, backends, progen.KINDS, random.randrange(2**31),
                                  wide=not backends, out=tmp_path, threads=4)
    assert stats["programs"] >= 2 and stats["invalid"] == 0  # a cold start takes ~2 s
    assert not stats["mismatches"], stats["mismatches"]


def test_wide_dtypes_are_what_the_backends_hold():
    """--wide adds int64 and float64; with wgsl among the backends only int64, which WGSL
    holds as two 32-bit words (it has no 64-bit floats)."""
    assert not {"int64", "float64"} & set(progen.dtypes_for(["wgsl", "ptx"], wide=False))
    assert {"int64", "float64"} <= set(progen.dtypes_for(["ptx"], wide=True))
    wgsl = set(progen.dtypes_for(["wgsl", "ptx"], wide=True))
    assert "int64" in wgsl and "float64" not in wgsl


@pytest.mark.parametrize("kind", progen.KINDS)
def test_variants_launch_the_same_kernel_with_other_scalars(kind, tmp_path):
    prog = progen.generate(random.Random(11), [kind], progen.dtypes_for([], wide=True))
    others = progen.variants(prog, 6)
    assert others == progen.variants(prog, 6)  # from the program's seed: a test reruns it
    assert {p.source() for p in others} == {prog.source()}
    plans = [progen.launch_plan(p) for p in [prog, *others]]
    assert all(consts == plans[0][1] for _, consts, _ in plans)
    assert len({tuple(a for a in args if isinstance(a, int)) for args, _, _ in plans}) > 1
    for p in others:
        assert progen.run(p, "numpy", tmp_path) is not None


def test_threads_launch_at_once_and_a_mix_up_is_caught(tmp_path, monkeypatch):
    """A stand-in backend answers wrongly whenever another thread is inside a launch too
    (a launch that reads another's arguments): ``check_threads`` catches it, ``check``,
    one launch at a time, does not."""
    real_run, inside = progen.run, []

    def run(prog, backend, directory, perturb=0.0):
        if backend != "racy":
            return real_run(prog, backend, directory, perturb)
        inside.append(prog)
        try:
            time.sleep(0.02)
            out = real_run(prog, "numpy", directory)
            out.flat[-1] += len(inside) > 1
            return out
        finally:
            inside.remove(prog)

    monkeypatch.setattr(progen, "run", run)
    prog = progen.generate(random.Random(5), ["elementwise"], ["int32"])
    assert progen.check(prog, ["racy"], tmp_path) == {}
    problems = progen.check_threads(prog, ["racy"], tmp_path, threads=4)
    assert list(problems) == ["racy"] and "4 threads at once: thread" in problems["racy"]


@pytest.mark.parametrize("kind", progen.KINDS)
def test_every_kind_runs_on_numpy_and_a_wrong_answer_is_caught(kind, tmp_path):
    prog = progen.generate(random.Random(7), [kind], progen.dtypes_for([], wide=True))
    ref = progen.run(prog, "numpy", tmp_path)
    assert progen.disagreement(prog, ref, ref.copy()) is None
    wrong = ref.copy()
    wrong.flat[-1] += 1 if wrong.dtype.kind in "iu" else abs(wrong.flat[-1]) + 1
    assert "first at" in progen.disagreement(prog, ref, wrong)


def test_minimize_keeps_what_still_disagrees(tmp_path, monkeypatch):
    """With a stand-in check that blames any expression using ``tl.exp``, minimizing
    leaves the smallest such expression."""
    prog = progen.Program("elementwise", "float32",
                          ["({} + {})", ["tl.abs({})", ["a"]],
                           ["({} * {})", ["b"], ["tl.exp(tl.minimum({}, 4.0))", ["a"]]]],
                          {"BLOCK": 16, "n": 20}, seed=1)
    monkeypatch.setattr(progen, "check", lambda p, *_a: {"wgsl": "x"}
                        if "tl.exp" in progen.render(p.expr) else {})
    small = progen.minimize(prog, ["wgsl"], tmp_path)
    assert progen.render(small.expr) == "tl.exp(tl.minimum(a, 4.0))"


@pytest.mark.parametrize("threads", [1, 4])
def test_regression_file_runs(tmp_path, threads):
    prog = progen.generate(random.Random(3), ["elementwise"], ["float32"])
    path = progen.regression_test(prog, {"wgsl": "1 of 20 differ"}, tmp_path, threads)
    assert ("threads=4" in path.read_text()) == (threads == 4)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.PROGRAM == prog
    module.test_backends_agree()  # these backends agree on it, so it passes


def test_tolerance_is_exact_for_integers_and_scaled_for_sums():
    ints = progen.Program("reduce", "int32", ["a"], {"N": 64})
    assert progen.tolerance(ints, np.zeros(4, np.int32)) == (0.0, 0.0)
    sums = progen.Program("reduce", "float32", ["a"], {"N": 64})
    _, atol = progen.tolerance(sums, np.full(4, 10.0, np.float32))
    assert atol == pytest.approx(progen.RTOL["float32"] * 8 * 10.0)
