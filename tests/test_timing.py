"""``TILEC_TIMING=1``: a compile-time table on stderr naming every stage; stage texts
printed on demand read the same as texts printed after each pass."""

import pytest

import compiler as tc
from compiler import frontend, pipeline
from compiler.ahead_of_time import _signature_specs
from compiler.source import KernelSource
from examples.vector_add import add

SIG = {"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"}
CODEGEN = {"numpy": ["codegen: print IR with locations"],
           "ptx": ["codegen: print PTX", "codegen: nvJitLink PTX -> cubin"]}


@pytest.mark.parametrize("backend", ["numpy", "ptx"])
def test_timing_table_names_every_stage(backend, monkeypatch, capsys):
    monkeypatch.setenv("TILEC_TIMING", "1")
    monkeypatch.setenv("TILEC_CACHE", "0")
    ck = tc.compile(add, signature=SIG, constants={"BLOCK": 256}, backend=backend)
    err = capsys.readouterr().err
    assert f"tilec timing: add on {backend} (4 warps)" in err
    rows = [line.split("%  ", 1)[1] for line in err.splitlines() if "%  " in line]
    passes = [row.partition("-")[2] for row in rows if row[:2].isdigit()]
    assert [p.partition("{")[0] for p in passes] == [n for n, _ in ck.stages][1:]
    expected = ["frontend", *CODEGEN[backend], "verify IR (summed)", "print IR (summed)",
                "other", "total"]
    assert all(any(row.strip() == name for row in rows) for name in expected), rows
    if backend == "ptx":
        assert "assign-layouts{num-warps=4 vector-bits=128 mma=90 exchange-bytes=98304}" in passes  # sm_90: wgmma


def test_no_table_without_timing(monkeypatch, capsys):
    monkeypatch.delenv("TILEC_TIMING", raising=False)
    monkeypatch.setenv("TILEC_CACHE", "0")
    tc.compile(add, signature=SIG, constants={"BLOCK": 256}, backend="numpy")
    assert "tilec timing" not in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["numpy", "wgsl", "ptx"])
def test_stages_on_demand_match_eager(backend):
    specs = _signature_specs(add, SIG, {"BLOCK": 256})
    lazy, eager = (pipeline.run(frontend.generate(KernelSource.of(add.fn), specs)[0],
                                backend, 4, eager_stages=e) for e in (False, True))
    assert list(lazy.stages) == list(eager.stages)
    assert lazy.stages[-1] == eager.stages[-1] and len(lazy.stages) == len(eager.stages)
    assert {k: v for k, v in lazy.asm.items() if k != "cubin"} == {
        k: v for k, v in eager.asm.items() if k != "cubin"}
