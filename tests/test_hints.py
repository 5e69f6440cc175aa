"""Hints and scheduling: ``tl.multiple_of``/``max_contiguous``/``max_constancy`` (values
unchanged, ``vec`` of the accesses widened), ``tl.assume``, ``tl.debug_barrier``,
``cache_modifier``/``eviction_policy`` (in the PTX) and ``tl.range(num_stages=...)``."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import scf

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from compiler.jit import availability
from tests.conftest import launch


@tc.kernel
def gather_rows(x, y, starts, BLOCK: tl.constexpr, HINT: tl.constexpr):
    """Each program copies the BLOCK elements from an offset read from memory."""
    pid = tl.program_id(0)
    start = tl.load(starts + pid)
    if HINT:
        start = tl.multiple_of(start, BLOCK)
    offs = tl.max_contiguous(start + tl.arange(0, BLOCK), BLOCK) if HINT else \
        start + tl.arange(0, BLOCK)
    v = tl.load(x + offs, cache_modifier=".cg", eviction_policy="evict_first")
    tl.store(y + pid * BLOCK + tl.arange(0, BLOCK), v * 2, cache_modifier=".wt",
             eviction_policy="evict_last")


@tc.kernel
def strided(x, y, stride, n, BLOCK: tl.constexpr):
    """Runs of 4 equal values (``max_constancy``) and a promise about ``stride``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    group = tl.max_constancy(offs // 4, 4)
    tl.assume(stride > 0)
    v = tl.load(x + group * stride, mask=offs < n, other=-1.0)
    tl.store(y + offs, v, mask=offs < n)


@tc.kernel
def exchange(x, tmp, y, BLOCK: tl.constexpr):
    """Each element goes through global scratch to the thread at the mirrored position:
    the barrier makes the other threads' writes visible."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(tmp + offs, tl.load(x + offs) * 2)
    tl.debug_barrier()
    mirrored = tl.program_id(0) * BLOCK + (BLOCK - 1 - tl.arange(0, BLOCK))
    tl.store(y + offs, tl.load(tmp + mirrored))


@tc.kernel
def row_sums(a, out, K, BK: tl.constexpr, STAGES: tl.constexpr):
    """A K loop whose loads feed a dot (so pipeline-loads prefetches them)."""
    r, rk = tl.arange(0, 16), tl.arange(0, BK)
    acc = tl.zeros((16, 16), tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES, loop_unroll_factor=2):
        x = tl.load(a + r[:, None] * K + k0 + rk[None, :], mask=k0 + rk[None, :] < K,
                    other=0.0)
        acc = tl.dot(x, tl.trans(x), acc)
    tl.store(out + r[:, None] * 16 + r[None, :], acc)


def test_hinted_kernel_values(backend, rng):
    block, progs = 64, 5
    x = rng.standard_normal(block * 8).astype(np.float32)
    starts = (rng.permutation(8)[:progs] * block).astype(np.int32)
    for hint in (False, True):
        y = np.zeros(block * progs, np.float32)
        if not launch(gather_rows, (progs,), x, y, starts, backend=backend, BLOCK=block,
                      HINT=hint):
            return
        want = np.concatenate([x[s:s + block] for s in starts]) * 2
        np.testing.assert_array_equal(y, want)


def test_debug_barrier_exchange(backend, rng):
    block = 512  # 4 elements per thread: the mirrored element is another thread's
    x = rng.standard_normal(2 * block).astype(np.float32)
    tmp, y = np.zeros_like(x), np.zeros_like(x)
    if not launch(exchange, (2,), x, tmp, y, backend=backend, BLOCK=block):
        return
    np.testing.assert_array_equal(y, (x * 2).reshape(2, block)[:, ::-1].ravel())


def test_constancy_assume_values(backend, rng):
    n, stride = 200, 3
    x = rng.standard_normal(n).astype(np.float32)
    y = np.zeros(n, np.float32)
    if not launch(strided, (4,), x, y, stride, n, backend=backend, BLOCK=64):
        return
    np.testing.assert_array_equal(y, x[np.arange(n) // 4 * stride])  # all within n


@tc.kernel
def walk(x, y, n, STOP, BLOCK: tl.constexpr):
    """Hinted pointers carried by a loop that a ``break`` may leave, and stored through
    (the NumPy launch must still copy ``y`` back)."""
    p = x + tl.arange(0, BLOCK)
    q = y + tl.arange(0, BLOCK)
    for i in tl.range(0, n, BLOCK, num_stages=3):
        p = tl.multiple_of(p, 16)
        if i >= STOP:
            break
        tl.store(tl.max_contiguous(q, BLOCK), tl.load(p) + 1)
        p += BLOCK
        q += BLOCK


def test_hinted_carried_pointers(backend):
    x = np.arange(256, dtype=np.float32)
    for stop in (1000, 128):
        y = np.zeros_like(x)
        if not launch(walk, (1,), x, y, 256, stop, backend=backend, BLOCK=64):
            return
        want = np.where(np.arange(256) < min(stop, 256), x + 1, 0)
        np.testing.assert_array_equal(y, want)


def _vecs(kernel, signature, constants) -> list[int]:
    ck = tc.compile(kernel, signature=signature, constants=constants, backend="ptx")
    return [int(v) for v in re.findall(r"vec = (\d+)", dict(ck.stages)["assign-layouts"])]


def test_multiple_of_widens_accesses():
    """An offset loaded from memory: unknown alignment, so one element per access; the
    hint promises multiples of BLOCK, so 128-bit accesses."""
    sig = {"x": "*f32", "y": "*f32", "starts": "*i32"}
    assert _vecs(gather_rows, sig, {"BLOCK": 512, "HINT": False}) == [1, 4]
    assert _vecs(gather_rows, sig, {"BLOCK": 512, "HINT": True}) == [4, 4]


def test_hints_reach_ptx():
    """The facts are gone after tile-to-simt; the PTX uses vector loads."""
    sig = {"x": "*f32", "y": "*f32", "starts": "*i32"}
    ck = tc.compile(gather_rows, signature=sig, constants={"BLOCK": 512, "HINT": True},
                    backend="ptx")
    assert "tile.assume_facts" in dict(ck.stages)["assign-layouts"]
    assert "assume_facts" not in ck.asm["simt"]
    assert "ld.global.cg.v4.f32" in ck.asm["ptx"]  # and the cache modifier


def test_debug_barrier_is_a_barrier():
    """One barrier of the program's threads that orders global memory: ``bar.sync`` on
    PTX, ``storageBarrier`` and ``workgroupBarrier`` on WGSL."""
    sig = {"x": "*f32", "tmp": "*f32", "y": "*f32"}
    ptx = tc.compile(exchange, signature=sig, constants={"BLOCK": 512}, backend="ptx")
    assert ptx.asm["simt"].count("simt.barrier {simt.global_memory}") == 1
    assert ptx.asm["ptx"].count("bar.sync") == 1
    wgsl = tc.compile(exchange, signature=sig, constants={"BLOCK": 512}, backend="wgsl")
    text = wgsl.asm["wgsl"]
    assert text.count("storageBarrier();") == 1 and text.count("workgroupBarrier();") == 1


@tc.kernel
def cached_copy(x, y, CM: tl.constexpr, EV: tl.constexpr, SCM: tl.constexpr):
    o = tl.arange(0, 512)
    v = tl.load(x + o, mask=o < 500, cache_modifier=CM, eviction_policy=EV)
    tl.store(y + o, v, cache_modifier=SCM, eviction_policy=EV)


@pytest.mark.parametrize("dtype", ["*f32", "*f16", "*i1"])
@pytest.mark.parametrize("options, ld, st", [
    (("", "", ""), "ld.global.v4", "st.global.v4"),
    ((".cg", "", ".cs"), "ld.global.cg.v4", "st.global.cs.v4"),
    ((".cv", "", ".wt"), "ld.global.cv.v4", "st.global.wt.v4"),
    (("", "evict_last", ""), "ld.global.L1::evict_last.v4", "st.global.L1::evict_last.v4"),
    ((".ca", "evict_first", ".wb"), "ld.global.ca.v4", "st.global.wb.v4"),  # .cop wins
])
def test_cache_options_in_ptx(options, ld, st, dtype):
    """PTX spells the options (an L1 eviction priority only without a .cop); the cubin
    assembles."""
    consts = dict(zip(("CM", "EV", "SCM"), options, strict=True))
    ck = tc.compile(cached_copy, signature={"x": dtype, "y": dtype}, constants=consts,
                    backend="ptx")
    text = ck.asm["ptx"]
    assert ld in text and st in text and ck.asm["cubin"][:4] == b"\x7fELF"
    # 4 elements per thread (512 over 128 threads): one load and one store
    assert len(re.findall(r"(?:ld|st)\.global\S*", text)) == 2


def _loop_arity(kernel, constants, num_stages) -> list[int]:
    ck = tc.compile(kernel, signature={"a": "*f16", "out": "*f32", "K": "i32"},
                    constants=constants, backend="ptx", num_stages=num_stages)
    module = parse_module(dict(ck.stages)["pipeline-loads"])
    return [len(op.iter_args) for op in module.walk() if isinstance(op, scf.ForOp)]


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_range_num_stages_overrides_launch(stages):
    """The loop prefetches ``STAGES - 1`` iterations whatever the launch's num_stages."""
    for launch_stages in (1, 3):
        arity = _loop_arity(row_sums, {"BK": 16, "STAGES": stages}, launch_stages)
        assert arity == [1 + (stages - 1)]  # acc and the prefetched tiles


def test_range_num_stages_values(backend, rng):
    k = 40
    a = rng.standard_normal((16, k)).astype(np.float16)
    out = np.zeros((16, 16), np.float32)
    if not launch(row_sums, (1,), a, out, k, backend=backend, BK=16, STAGES=3):
        return
    a32 = a.astype(np.float32)
    np.testing.assert_allclose(out, a32 @ a32.T, rtol=1e-3, atol=1e-3)


def test_assume_checked_where_asserts_are(backend):
    """NumPy checks ``tl.assume`` always, the GPU backends with ``debug=True``."""
    if backend == "ptx" and not availability("ptx")[0]:
        pytest.skip("ptx: needs a GPU to run")
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    with pytest.raises(tc.DeviceAssertionError, match=r"tl.assume") as e:
        strided[(1,)](x, y, -1, 64, BLOCK=64, backend=backend, debug=True)
    assert e.value.loc is not None and "tl.assume(stride > 0)" in e.value.loc.text


def _bad(body: str, where: Path) -> str:
    """The message of compiling a kernel whose line 4 is ``body`` (an error at that line)."""
    path = where / "kernel.py"
    path.write_text("import compiler.language as tl\n"
                    "def k(x, n, B: tl.constexpr):\n"
                    "    offs = tl.arange(0, 16)\n"
                    f"    {body}\n")
    spec = importlib.util.spec_from_file_location("hint_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(tc.CompileError) as e:
        tc.compile(tc.kernel(module.k), signature={"x": "*f32", "n": "i32"},
                   constants={"B": 4}, backend="numpy")
    assert e.value.loc is not None and e.value.loc.line == 4
    return str(e.value)


@pytest.mark.parametrize("body, message", [
    ("tl.load(x + offs, cache_modifier='.wb')", "cache_modifier must be one of"),
    ("tl.store(x + offs, 1.0, cache_modifier='.ca')", "cache_modifier must be one of"),
    ("tl.load(x + offs, eviction_policy='evict_later')", "eviction_policy must be one of"),
    ("o = tl.multiple_of(offs, (4, 4))", "needs 1 value"),
    ("o = tl.multiple_of(offs[:, None], 4)", "needs 2 values"),
    ("o = tl.max_contiguous(offs, 0)", "must be positive"),
    ("o = tl.max_constancy(offs, n)", "constexpr integers"),
    ("o = tl.multiple_of(offs.to(tl.float32), 4)", "integers or pointers"),
    ("o = tl.multiple_of(x, 0.5)", "constexpr integers"),
    ("tl.assume(False)", "false constant"),
    ("r = tl.range(0, 4)", "iterable of a for loop"),
    ("for i in tl.range(0, n, num_stages=0): pass", "num_stages must be >= 1"),
    ("for i in tl.range(0, n, num_stages=B + n): pass", "num_stages must be a constexpr"),
    ("for i in tl.range(0, n, unroll=True): pass", "unexpected keywords"),
    ("for i in tl.range(0, n, flatten=n): pass", "flatten must be a constexpr bool"),
    ("for i in range(0, n, num_stages=2): pass", "positional arguments only"),
])
def test_errors(body, message, tmp_path):
    assert message in _bad(body, tmp_path)
