"""Hopper's warpgroup MMA: ``pipeline-loads`` stages a dot's operands 128-byte swizzled
(A's rows permuted for the ``#tile.mma`` warps), ``assign-layouts`` picks ``#tile.mma<version
= 3>`` for it, ``tile-to-simt`` gives ``simt.wgmma``; whole lowered kernels run in the SIMT
simulator, whose wgmma reads shared memory through descriptors as the PTX ISA defines them
(canonical K-major A and N-major B layouts, the swizzle applied to address bits), against
``np.matmul``; and the sm_90a PTX of ``examples.matmul`` on a GPU."""

import re
from typing import ClassVar

import numpy as np
import pytest
from xdsl.rewriter import InsertPoint

import compiler as tc
import compiler.language as tl
from compiler.context import parse_module
from compiler.jit import availability
from compiler.passes import pipeliners
from dialects.tile.async_copy import swizzled_row
from examples import attention
from examples import matmul as example
from tests.test_dot_mma import MmaProgram, simulate_attention

SIGNATURE = "*f16,*f16,*f16" + ",i32:16" * 6


def _swizzle(byte: np.ndarray) -> np.ndarray:
    """The 128-byte swizzle: address bits 4-6 XOR bits 7-9."""
    return byte ^ (((byte >> 7) & 7) << 4)


def _from_fragments(frags: np.ndarray) -> np.ndarray:
    """The 64 x 16 A of a warpgroup from its threads' register fragments: lane ``l`` of
    warp ``w`` holds rows ``16 w + l / 4 + {0, 8}``, columns ``2 (l % 4) + {0, 1} + {0, 8}``
    (``mma.sync``'s m16k16 A order: row pair, then the second 8 columns)."""
    a = np.empty((64, 16), frags.dtype)
    t, e = np.arange(128)[:, None], np.arange(8)[None, :]
    rows = 16 * (t // 32) + t % 32 // 4 + 8 * (e % 4 // 2)
    cols = 2 * (t % 4) + e % 2 + 8 * (e // 4)
    a[rows, cols] = frags
    return a


class WgmmaProgram(MmaProgram):
    """The simulator plus ``simt.wgmma``: per warpgroup, A (64 x 16, K-major: row ``i`` at
    ``(i / 8) a_sbo + (i % 8) 128`` bytes) and B (16 x n, N-major: ``(j / 64) b_lbo + (k /
    8) b_sbo + (k % 8) 128 + (j % 64) 2``, or ``b_k_major`` as A: ``(j / 8) b_sbo + (j %
    8) 128 + 2 k``) read through the swizzle, D in ``mma.sync``'s
    fragments stacked over n. It checks that landed copies were fenced for the async proxy,
    that nothing is written where a wgmma of an unfinished group reads (nor copied where
    another warpgroup's finished one read, before a barrier), and that every group is
    waited for."""

    def run(self) -> None:
        self.groups_wg: list[list] = []
        self.open_wg: list = []
        self.settled: list = []  # reads of finished wgmmas not yet followed by a barrier
        self.unready: list[set] = []  # per committed group, and the open one last
        self.open_results: set = set()
        super().run()
        assert not self.groups_wg and not self.open_wg, "wgmma groups never waited for"

    def reading(self, op) -> None:
        """No op but a later wgmma accumulating into it (or a loop carrying it on) reads a
        wgmma's result before a wait covers its group; a shuffle of it (registers renamed:
        a running-on dot's lanes) is as unready as it."""
        if op.name == "scf.yield":
            return
        if op.name == "vector.shuffle":
            for group in (*self.unready, self.open_results):
                if any(v in group for v in op.operands):
                    group.update(op.results)
            return
        reads = [op.c] if op.name == "simt.wgmma" else []
        unready = set().union(self.open_results, *self.unready)
        assert not any(v in unready for v in op.operands if v not in reads), \
            f"{op.name} reads a wgmma result before waiting for it"

    def _unread(self, buffer, elements) -> None:
        for group in [*self.groups_wg, self.open_wg]:
            for read_buffer, read, _ in group:
                assert read_buffer is not buffer or not np.isin(elements, read).any(), \
                    "shared memory rewritten while a wgmma may read it"

    def _unsettled(self, buffer, index: np.ndarray) -> None:
        """A copy into what a finished wgmma of another warpgroup read comes after a
        barrier that follows the wait: the threads of one warpgroup run ahead of the
        other's wait (this simulator runs them in step, so it checks the order)."""
        group_of = np.broadcast_to(np.arange(self.threads)[:, None] // 128, index.shape)
        for read_buffer, read, g in self.settled:
            others = index[group_of != g] if read_buffer is buffer else index[:0]
            assert not np.isin(others, read).any(), \
                "shared memory copied into before a barrier after another warpgroup's wait"

    def writes(self, buffer, elements) -> None:
        self._unread(buffer, elements)
        super().writes(buffer, elements)

    def _copy_issued(self, op, buf, index, *rest):
        """A copy may land any time from its issue: not where a wgmma may still read."""
        self._unread(op.buffer, np.asarray(index).ravel())
        self._unsettled(op.buffer, np.broadcast_to(index, (self.threads, np.shape(index)[1])))
        return MmaProgram._cp_async(self, op, buf, index, *rest)

    def _wgmma(self, op, *_):
        a, b, c = (self.env[v] for v in (op.a, op.b, op.c))
        c = np.broadcast_to(c, (self.threads, c.shape[1])).astype(np.float64)
        assert getattr(self, "fenced", True), "wgmma reads copies not fenced for it"
        i, kk, j = np.arange(64)[:, None], np.arange(16)[None, :], np.arange(op.n)[None, :]
        out = c.copy()
        for g in range(self.threads // 128):
            group = slice(128 * g, 128 * g + 128)
            b0 = 2 * self._uniform(op.b_index, group)
            if op.b_k_major is not None:  # n x 16 as A is: column j of B is row j there
                b_at = _swizzle(b0 + j // 8 * op.b_sbo.value.data + j % 8 * 128
                                + 2 * kk.T) // 2
            else:
                b_at = _swizzle(b0 + j // 64 * op.b_lbo.value.data
                                + kk.T // 8 * op.b_sbo.value.data + kk.T % 8 * 128
                                + j % 64 * 2) // 2
            self._read(op.b, b_at, g)
            if op.a_index is None:
                a_tile = _from_fragments(np.broadcast_to(a, (self.threads, 8))[group])
            else:
                a_at = _swizzle(2 * self._uniform(op.a_index, group) + i // 8 * op.a_sbo.value.data
                                + i % 8 * 128 + 2 * kk) // 2
                self._read(op.a, a_at, g)
                a_tile = a[a_at]
            d = a_tile.astype(np.float64) @ b[b_at].astype(np.float64)
            t = np.arange(128)[:, None]
            e = np.arange(op.n // 2)[None, :]
            rows = 16 * (t // 32) + t % 32 // 4 + 8 * (e % 4 // 2)
            cols = 8 * (e // 4) + 2 * (t % 4) + e % 2
            out[group] += d[rows, cols]
        self.open_results.add(op.result)
        return out

    def _uniform(self, index, group: slice) -> int:
        """A descriptor's start: the same in every thread of the warpgroup."""
        start = np.broadcast_to(self.env[index], (self.threads, 1))[group]
        assert (start == start[0]).all(), "descriptors differ in a warpgroup"
        return int(start[0, 0])

    def _read(self, buffer, at: np.ndarray, group: int) -> None:
        self.reads(buffer, at.ravel())
        self.open_wg.append((buffer, at.ravel(), group))

    def _wgmma_commit(self, op):
        self.groups_wg.append(self.open_wg)
        self.open_wg = []
        self.unready.append(self.open_results)
        self.open_results = set()

    def _wgmma_wait(self, op):
        keep = op.pending.value.data
        done = self.groups_wg[:len(self.groups_wg) - keep] if keep else self.groups_wg
        self.settled += [read for group in done for read in group]
        self.groups_wg = self.groups_wg[len(self.groups_wg) - keep:] if keep else []
        self.unready = self.unready[len(self.unready) - keep:] if keep else []

    def _landed(self, op):
        self.fenced = False
        return MmaProgram._wait(self, op)

    def _fence(self, op):
        self.fenced = True

    def _barrier(self, op):
        self.settled = []
        return MmaProgram._barrier(self, op)

    HANDLERS: ClassVar = {**MmaProgram.HANDLERS, "simt.wgmma": _wgmma,
                          "simt.wgmma_commit": _wgmma_commit,
                          "simt.wgmma_wait": _wgmma_wait, "simt.cp_async_wait": _landed,
                          "simt.cp_async": _copy_issued,
                          "simt.fence_proxy_async": _fence, "simt.barrier": _barrier}


@pytest.mark.parametrize("warps", [4, 8])
def test_swizzled_rows_are_a_permutation_giving_each_warp_its_rows(warps):
    rows = 32 * warps
    stored = [swizzled_row(r, warps) for r in range(rows)]
    assert sorted(stored) == list(range(rows))
    for r in range(rows):  # the wgmma row it lands on belongs to the warp holding row r
        w = r // 8 % warps
        assert stored[r] % 64 // 16 == w % 4 and stored[r] // 64 % (warps // 4) == w // 4


def _simulate(m, n, k, bm, bn, bk, num_warps, stages=3, seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    c = np.zeros((m, n), np.float16)
    scalars = dict(zip(["M", "N", "K", "stride_am", "stride_bk", "stride_cm"],
                       [m, n, k, k, n, n]))
    ck = tc.compile(example.matmul, backend="ptx", signature=SIGNATURE, num_warps=num_warps,
                    num_stages=stages,
                    constants={"BM": bm, "BN": bn, "BK": bk, "GROUP": 8, "ACTIVATION": ""})
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    module = parse_module(text)
    grid = (tc.cdiv(m, bm) * tc.cdiv(n, bn),)
    for pid in range(grid[0]):
        WgmmaProgram(module, {"a": a.ravel(), "b": b.ravel(), "c": c.reshape(-1)}, scalars,
                     (pid,), grid).run()
    return c, example.reference(a, b), text


@pytest.mark.parametrize("m, n, k, bm, bn, bk, num_warps, stages", [
    (64, 64, 64, 64, 64, 64, 4, 3),  # one wgmma m64n64 per k step
    (144, 160, 192, 128, 128, 64, 4, 3),  # two m16 tiles a warp; masked edges of M and N
    (128, 256, 128, 128, 256, 64, 8, 3),  # two warpgroups, n256
    (64, 64, 256, 64, 64, 128, 4, 3),  # K in two atoms
    (128, 256, 448, 128, 256, 64, 8, 4),  # 3 iterations ahead, ring wrapping twice
])
def test_matmul_on_wgmma_simulated(m, n, k, bm, bn, bk, num_warps, stages):
    """The dot runs on into the next iteration; its stage is refilled after its wait."""
    out, want, text = _simulate(m, n, k, bm, bn, bk, num_warps, stages)
    assert "simt.wgmma " in text and "simt.ldmatrix" not in text
    wait = text.index("simt.wgmma_wait 1")
    barrier = text.index("simt.barrier", wait)
    assert barrier < text.index("simt.cp_async ", barrier) < text.index("scf.yield", wait)
    assert "#tile.mma<version = 3" not in text  # the SIMT stage holds no tiles
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=0,
                               atol=2.0**-10 * np.abs(want).max())


def test_the_simulator_needs_a_barrier_before_refilling_what_another_warpgroup_read(
        monkeypatch):
    """Without the barrier after the running dot's wait, one warpgroup's copies could land
    in the stage the other's wgmma still reads: the simulator, which runs every thread in
    step, checks the order and fails the refill."""
    monkeypatch.setattr(pipeliners.RefillAfterDotPipeliner, "_refill_point",
                        lambda self, top: InsertPoint.after(self.dot))
    with pytest.raises(AssertionError, match="before a barrier after another warpgroup"):
        _simulate(128, 256, 448, 128, 256, 64, 8, 4)


@tc.kernel
def two_dots(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One dot only adds into its accumulator, the other's result is used in the loop."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    total = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + rk
        x = tl.load(a + rm[:, None] * K + ks[None, :])
        y = tl.load(b + ks[:, None] * BN + rn[None, :])
        acc = tl.dot(x, y, acc)
        x2 = tl.load(a + rm[:, None] * K + ks[None, :])
        y2 = tl.load(b + ks[:, None] * BN + rn[None, :])
        total += tl.dot(x2, y2) * 0.5
    tl.store(c + rm[:, None] * BN + rn[None, :], (acc + total).to(c.dtype))


def _simulated_blocks_of_64(kernel, a: np.ndarray, b: np.ndarray) -> tuple[str, np.ndarray]:
    """``kernel(a, b, c, K)`` compiled for blocks of 64 (3 stages) and run in the
    simulator: its SIMT text and ``c``."""
    c = np.zeros((64, 64), np.float16)
    ck = tc.compile(kernel, backend="ptx", signature="*f16,*f16,*f16,i32:16",
                    num_stages=3, constants={"BM": 64, "BN": 64, "BK": 64})
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    WgmmaProgram(parse_module(text), {"a": a.ravel(), "b": b.ravel(), "c": c.reshape(-1)},
                 {"K": a.shape[1]}).run()
    return text, c


def test_a_dot_used_in_its_loop_keeps_every_dot_synchronous():
    """The loop's stages ring has no slack then: the accumulating dot waits for its
    wgmmas too (the simulator fails a copy landing where a running wgmma reads)."""
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((64, 192), (192, 64)))
    text, c = _simulated_blocks_of_64(two_dots, a, b)
    assert text.count("simt.wgmma ") == 8 and "simt.wgmma_wait 1" not in text
    want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64))
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-9 * np.abs(want).max())


@tc.kernel
def b_outside(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A copied into stages in the loop, B loaded once before it."""
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    y = tl.load(b + rk[:, None] * BN + rn[None, :])
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        acc = tl.dot(tl.load(a + rm[:, None] * K + (k0 + rk)[None, :]), y, acc)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(c.dtype))


def test_a_staged_in_the_loop_and_b_in_registers_on_wgmma():
    """A's stages are written for wgmma (rows permuted for its warps) though B is no stage
    of the loop: wgmma reads B from the buffer it is stored into once, before the loop;
    the dot waits for its wgmmas (B's buffer is not a stage)."""
    rng = np.random.default_rng(6)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((64, 192), (64, 64)))
    text, c = _simulated_blocks_of_64(b_outside, a, b)
    assert "simt.cp_async " in text and "simt.wgmma " in text and "simt.ldmatrix" not in text
    assert "simt.wgmma_wait 1" not in text
    want = sum(a[:, k:k + 64].astype(np.float64) @ b.astype(np.float64) for k in (0, 64, 128))
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-9 * np.abs(want).max())


@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_wgmma_simulated(causal):
    """Operands in registers (Q, K^T, P, V) stored swizzled into the dots' own buffers:
    both dots of the online softmax on wgmma, the scores' layout meeting row reductions."""
    text = simulate_attention(causal, "sm_90", WgmmaProgram)
    # two loops: the blocks before the diagonal then the diagonal (causal), or the whole
    # blocks then the partial last one
    assert text.count("simt.wgmma ") == 8 * 2 and "simt.mma" not in text  # 2 dots x 4


def test_wgmma_ptx_for_sm_90a_and_mma_sync_for_sm_80():
    args = {"signature": SIGNATURE, "num_stages": 3,
            "constants": {"BM": 128, "BN": 128, "BK": 64, "GROUP": 8, "ACTIVATION": ""}}
    hopper = tc.compile(example.matmul, backend="ptx", target="sm_90", **args)
    ptx = hopper.asm["ptx"]
    assert ".target sm_90a" in ptx and ".align 1024" in ptx
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 2 * 4
    assert "fence.proxy.async.shared::cta" in ptx and "wgmma.wait_group.sync.aligned 0" in ptx
    assert "#tile.mma<version = 3, warps = [4, 1]>" in dict(hopper.stages)["assign-layouts"]
    assert hopper.metadata.extra["shared"] == 3 * 2 * (128 * 64 + 64 * 128)  # no padding
    ampere = tc.compile(example.matmul, backend="ptx", target="sm_80", **args).asm["ptx"]
    assert "wgmma" not in ampere and "mma.sync.aligned.m16n8k16" in ampere


def test_attention_wgmma_groups_issue_back_to_back():
    """In attention's sm_90a PTX each group of wgmmas is fenced once and issued with
    nothing between (their operands computed first: ptxas fences again after a register
    write between two); the scores start from scale-d 0 (no zeroed registers); Q, defined
    before the loop, is read from shared memory and P from registers; the P V dot adds into
    ``acc * alpha`` (no second accumulator)."""
    ck = tc.compile(attention.attention_descriptor, backend="ptx", target="sm_90",
                    num_warps=8, num_stages=3,
                    signature="*f16,*f16,*f16,*f16,fp32,i32,i32",
                    constants={"CAUSAL": False, "BM": 128, "BN": 64, "D": 64})
    lines = [line.strip() for line in ck.asm["ptx"].splitlines()]
    fences = [i for i, line in enumerate(lines) if line == "wgmma.fence.sync.aligned;"]
    assert len(fences) == 4  # two dots in each loop: the whole blocks, the partial last
    for i in fences:
        group = lines[i + 1:i + 5]
        assert all(line.startswith("wgmma.mma_async") for line in group)
        assert lines[i + 5] == "wgmma.commit_group.sync.aligned;"
    for first, second in (fences[:2], fences[2:]):
        scores, pv = (re.sub(r"\{%f[^}]*\}, ", "", lines[i + 1]) for i in (first, second))
        assert re.search(r"f16 %rd\d+, %rd\d+, 0, 1, 1, 0, 0;$", scores)  # A, B descriptors
        assert re.search(r"f16 \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, 1, 1, 1, 1;$", pv)
        assert "mov.f32" not in "\n".join(lines[second - 32:second])  # acc taken in place
    tile_ir = next(ir for name, ir in ck.stages if name == "cse")
    pv_dot = [line for line in tile_ir.splitlines() if "tile.dot" in line][1]
    assert f"{pv_dot.split(', ')[2].split()[0]} = arith.mulf" in tile_ir


@pytest.mark.parametrize("d", [64, 128])
def test_attention_pv_dot_runs_on_into_the_next_iteration(d):
    """With 4 stages the P V dot is not waited for in its iteration: the next one's scores
    dot waits for both (wait_group 0, then again before the rescale, a no-op there). The
    rescale ``acc * alpha`` writes the accumulator's registers in place, the wgmmas
    write them too, and the loop hands them on with no copy (which would wait for the
    wgmmas); the loop's end waits for the last group."""
    ck = tc.compile(attention.attention_descriptor, backend="ptx", target="sm_90",
                    num_warps=8, num_stages=4,
                    signature="*f16,*f16,*f16,*f16,fp32,i32,i32",
                    constants={"CAUSAL": False, "BM": 128, "BN": 64, "D": d})
    lines = [line.strip().rstrip(";") for line in ck.asm["ptx"].splitlines()]
    commits = [i for i, line in enumerate(lines) if line == "wgmma.commit_group.sync.aligned"]
    assert len(commits) == 4  # the scores and the P V dot of each loop
    for scores, pv in (commits[:2], commits[2:]):
        assert lines[scores + 1] == "wgmma.wait_group.sync.aligned 0"
        assert lines[pv + 1] == "wgmma.wait_group.sync.aligned 1"
        acc = re.findall(r"%f\d+", lines[pv - 1].split("}")[0])
        assert len(acc) == d // 2
        rescale = [i for i, line in enumerate(lines[scores:pv]) if re.fullmatch(
            r"mul\.rn\.f32 (%f\d+), \1, %f\d+", line)]
        assert len(rescale) == d // 2 and {lines[scores + i].split()[1].rstrip(",")
                                           for i in rescale} == set(acc)
        assert lines[scores + rescale[0] - 1] == "wgmma.wait_group.sync.aligned 0"
        back = next(i for i in range(pv, len(lines)) if lines[i].startswith("bra.uni"))
        assert not any(line.split()[1].rstrip(",") in acc for line in lines[pv + 2:back]
                       if line.startswith("mov"))
        assert lines[back + 2] == "wgmma.wait_group.sync.aligned 0"


def test_two_pipelined_loops_share_their_stages():
    """Attention pipelines two loops (before the diagonal, then the diagonal; or the whole
    blocks, then the partial last one): place-shared puts the second loop's stages and
    barriers over the first's."""
    shared = [tc.compile(attention.attention_descriptor, backend="ptx", target="sm_90",
                         num_warps=8, num_stages=3,
                         signature="*f16,*f16,*f16,*f16,fp32,i32,i32",
                         constants={"CAUSAL": causal, "BM": 128, "BN": 128, "D": 64}
                         ).metadata.extra["shared"] for causal in (False, True)]
    stages, q = 3 * 2 * 128 * 64 * 2, 128 * 64 * 2
    # (the causal one also converts its row indices for the coalesced output store)
    assert all(stages + q <= s < stages + q + 1024 for s in shared)


def test_dots_wgmma_cannot_do_keep_mma_sync_on_sm_90():
    """BK = 32 is half a 128-byte atom: padded stages and ldmatrix, as on sm_80."""
    ck = tc.compile(example.matmul, backend="ptx", target="sm_90", signature=SIGNATURE,
                    constants={"BM": 128, "BN": 128, "BK": 32, "GROUP": 8, "ACTIVATION": ""})
    assert "wgmma" not in ck.asm["ptx"] and "ldmatrix" in ck.asm["ptx"]


@pytest.mark.parametrize("stages", [1, 2])
def test_a_dot_past_sm80s_staging_stays_on_tensor_cores_on_sm_90(stages):
    """128x256x128 f16 (96 KiB of operands, BatchMatMul's tiles) is past sm_80's staging
    budget but within Hopper's: wgmma, from stages or (one stage) from registers stored
    into its buffer, in a block's 227 KiB of shared memory, not FMAs."""
    ck = tc.compile(example.matmul, backend="ptx", target="sm_90", signature=SIGNATURE,
                    num_warps=8, num_stages=stages,
                    constants={"BM": 128, "BN": 256, "BK": 128, "GROUP": 8, "ACTIVATION": ""})
    ptx = ck.asm["ptx"]
    assert "wgmma.mma_async" in ptx and "fma.rn.f32" not in ptx
    assert ck.metadata.extra["shared"] <= 227 * 1024


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16])
@pytest.mark.parametrize("size, config", [((300, 200, 260), (128, 128, 64, 4, 3)),
                                          ((512, 512, 512), (128, 256, 64, 8, 3)),
                                          ((256, 384, 320), (64, 128, 128, 4, 2))])
def test_matmul_on_wgmma_gpu(dtype, size, config):
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    m, n, k = size
    bm, bn, bk, warps, stages = config
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n)))
    c = np.zeros((m, n), dtype)
    example.launch(a, b, c, backend="ptx", BM=bm, BN=bn, BK=bk, num_warps=warps,
                   num_stages=stages)
    want = example.reference(a, b)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-9 * np.abs(want).max())


@pytest.mark.gpu
def test_bf16_torch_matmul_on_wgmma_gpu():
    """bf16 CUDA tensors (their array interface says only "2 bytes": the tensor's dtype
    tells bfloat16) through the wgmma path."""
    torch = pytest.importorskip("torch")
    ok, why = availability("ptx")
    if not ok or not torch.cuda.is_available():
        pytest.skip(f"ptx: {why}")
    a, b = (torch.randn(256, 256, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    c = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16)
    example.launch(a, b, c, backend="ptx", BM=128, BN=128, BK=64, num_warps=4, num_stages=3)
    want = a.double() @ b.double()
    assert ((c.double() - want).abs().max() / want.abs().max()).item() < 2.0**-7


@tc.kernel
def dot_and_divide(a, b, c, x, y, q, K, N, BLOCK: tl.constexpr):
    """A wgmma dot (64 x 64, k in a loop) and an elementwise division, in one kernel."""
    r = tl.arange(0, 64)
    acc = tl.zeros((64, 64), tl.float32)
    for k0 in range(0, K, 64):
        at = tl.load(a + r[:, None] * K + k0 + r[None, :])
        bt = tl.load(b + (k0 + r[:, None]) * 64 + r[None, :])
        acc = tl.dot(at, bt, acc)
    tl.store(c + r[:, None] * 64 + r[None, :], acc)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < N
    tl.store(q + i, tl.load(x + i, mask=m, other=1.0) / tl.load(y + i, mask=m, other=1.0),
             mask=m)


DIVIDE_SIGNATURE = "*fp16,*fp16,*fp32,*fp32,*fp32,*fp32,i32,i32"


def test_a_division_beside_wgmma_is_inline():
    """ptxas calls a slow path for ``div.rn.f32`` and then serializes every wgmma of the
    kernel: beside a wgmma the division is inline (f64 Newton steps), in no other kernel."""
    ptx = tc.compile(dot_and_divide, backend="ptx", target="sm_90", num_warps=4,
                     signature=DIVIDE_SIGNATURE, constants={"BLOCK": 1024}).asm["ptx"]
    assert "wgmma.mma_async" in ptx and "div.rn.f32" not in ptx
    assert "rcp.approx.ftz.f64" in ptx and "cvt.rn.f32.f64" in ptx
    ampere = tc.compile(dot_and_divide, backend="ptx", target="sm_80", num_warps=4,
                        signature=DIVIDE_SIGNATURE, constants={"BLOCK": 1024}).asm["ptx"]
    assert "div.rn.f32" in ampere and "rcp.approx.ftz.f64" not in ampere


def _division_cases() -> tuple[np.ndarray, np.ndarray]:
    """Random bit patterns (every exponent, subnormals, infinities, NaNs), the special
    values against each other, and quotients exactly halfway between two subnormals."""
    rng = np.random.default_rng(11)
    x, y = (rng.integers(0, 2**32, 60_000, dtype=np.uint64).astype(np.uint32)
            .view(np.float32) for _ in range(2))
    tiny = np.float32(2.0**-149)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -3.0, tiny, -tiny,
                        np.finfo(np.float32).max, np.finfo(np.float32).tiny, 0.5], np.float32)
    sx, sy = (v.ravel() for v in np.meshgrid(special, special))
    odd = (2 * np.arange(1, 2000) + 1).astype(np.float32) * tiny
    halves = np.resize(np.array([2.0, -2.0, 4.0, 8.0], np.float32), odd.size)
    return np.concatenate([x, sx, odd]), np.concatenate([y, sy, halves])


@pytest.mark.gpu
def test_a_division_beside_wgmma_is_correctly_rounded_gpu():
    ok, why = availability("ptx")
    if not ok:
        pytest.skip(f"ptx: {why}")
    x, y = _division_cases()
    n, k = x.size, 128
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((64, k), (k, 64)))
    c, q = np.zeros((64, 64), np.float32), np.zeros(n, np.float32)
    dot_and_divide[(tc.cdiv(n, 1024),)](a, b, c, x, y, q, k, n, BLOCK=1024, backend="ptx")
    with np.errstate(all="ignore"):
        want = x / y
    both_nan = np.isnan(q) & np.isnan(want)
    wrong = ~both_nan & (q.view(np.uint32) != want.view(np.uint32))
    assert not wrong.any(), (x[wrong][:5], y[wrong][:5], q[wrong][:5], want[wrong][:5])
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3,
                               atol=1e-3)

