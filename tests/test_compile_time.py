"""Compile time: how it is measured (``timing.collect``, ``benchmarks/compile_time.py``)."""

from __future__ import annotations

import compiler as tc
from benchmarks import compile_time
from compiler import timing
from examples.vector_add import add


def test_collect_keeps_the_timing_tables_instead_of_printing(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_TIMING", "1")
    monkeypatch.setenv("TILEC_CACHE", "0")
    with timing.collect() as tables:
        tc.compile(add, signature={"x": "*f32", "y": "*f32", "out": "*f32", "n": "i32"},
                   constants={"BLOCK": 256}, backend="numpy")
    assert [t.title for t in tables] == ["add on numpy (4 warps)"]
    rows = tables[0].rows
    assert "frontend" in rows and any(name.endswith("-canonicalize") for name in rows)
    assert 0 < sum(rows.values()) <= tables[0].total
    assert "tilec timing" not in capsys.readouterr().err


def test_compile_time_benchmark_measures_a_kernel(monkeypatch):
    """One case of ``benchmarks/compile_time.py``: its seconds, split into tilec's and
    ptxas', and the PTX it made."""
    monkeypatch.setenv("TILEC_CACHE", "0")
    case = compile_time.matmul_cases(quick=False, backend="ptx")[3]  # 64x32 tiles, 2 warps
    measured = compile_time.measure(case, "ptx", launch=False)
    assert measured.cpu > 0 and measured.wall > 0
    assert 0 < compile_time._assembler(measured.phases) < measured.wall
    assert "lines" in measured.facts and "registers" in measured.facts
    [row, total] = compile_time.rows_of([measured], "ptx")
    assert row[0] == "matmul f16" and "BM=64, BN=32" in row[1] and total[0] == "all 1"
