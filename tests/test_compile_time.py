"""Compile time: what keeps a compilation short (fp8 dot operands transposed after their
conversion, not as bytes), and how it is measured (``timing.collect``,
``benchmarks/compile_time.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from backends.numpy import run as numpy_run
from benchmarks import compile_time
from compiler import timing
from compiler.context import make_context, parse_module
from compiler.passes.lower_fp8 import LowerFp8
from dialects import tile
from dialects.tile import element_type
from examples.vector_add import add

ml_dtypes = pytest.importorskip("ml_dtypes")

FP8 = {"fp8e4nv": ml_dtypes.float8_e4m3fn, "fp8e5": ml_dtypes.float8_e5m2}


@tc.kernel
def dot_bt(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``a @ b.T`` with B read transposed, as attention's ``q @ k.T``."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    x = tl.load(a + rm[:, None] * BK + rk[None, :])
    y = tl.load(b + rn[:, None] * BK + rk[None, :])
    tl.store(c + rm[:, None] * BN + rn[None, :], tl.dot(x, y.T))


def _signature(d: str) -> dict[str, str]:
    return {"a": f"*{d}", "b": f"*{d}", "c": "*f32"}


@pytest.mark.parametrize("d", FP8)
def test_lower_fp8_transposes_a_dot_b_after_converting_it(d):
    """Natively (PTX on sm_90), ``dot(x, y.T)`` of fp8 converts ``y`` to f16 and transposes
    the f16 tile, which wgmma reads K-major at no cost, not the fp8 bytes; the product
    (run by the NumPy backend on the lowered IR) is the exact one."""
    consts = {"BM": 32, "BN": 16, "BK": 32}
    ck = tc.compile(dot_bt, signature=_signature(d), constants=consts, backend="numpy")
    module = parse_module(ck.stages[-1][1])
    LowerFp8(native=1).apply(make_context(), module)
    module.verify()
    transposed = [str(element_type(op.src.type)) for op in module.walk()
                  if isinstance(op, tile.TransOp)]
    assert transposed == ["f16"]
    rng = np.random.default_rng(3)
    small = np.array([0, 0.25, -0.5, 1, -1.5, 2, 3, -4], np.float32)  # exact sums in f32
    a = rng.choice(small, (32, 32)).astype(FP8[d])
    b = rng.choice(small, (16, 32)).astype(FP8[d])
    c = np.zeros((32, 16), np.float32)
    numpy_run(module, ck.metadata, (1,), [a, b, c])
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32).T)


def test_ptx_moves_no_fp8_byte_through_shared_memory_for_a_transposed_b():
    """The byte-wise transpose (a shared-memory store and load per byte, an address
    register each) was most of the PTX and of ptxas' time in tutorial 06's fp8 forward."""
    ck = tc.compile(dot_bt, signature=_signature("fp8e5"),
                    constants={"BM": 64, "BN": 64, "BK": 64}, backend="ptx")
    ptx = ck.asm["ptx"]
    assert "wgmma.mma_async" in ptx
    assert "ld.shared.u8" not in ptx and "st.shared.u8" not in ptx


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
