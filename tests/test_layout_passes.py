"""assign-layouts, tile-to-simt and the axis analysis: layouts, vec, verification, and
the per-thread code run in a small NumPy SIMT interpreter for every thread of a program."""

import itertools

import numpy as np
import pytest
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from compiler.context import make_context, parse_module
from compiler.errors import CompileError
from compiler.passes.assign_layouts import AssignLayouts, blocked_layout
from compiler.passes.axis_info import AxisInfoAnalysis
from compiler.passes.layouts import element_ids, elements_per_thread, lane_map, num_threads
from compiler.passes.lower_shapes import shuffle_mask, strides
from compiler.passes.tile_to_simt import TileToSimt
from dialects import simt, tile
from dialects.tile import BlockedLayoutAttr, SliceLayoutAttr
from tests.simt_sim import Program

NP = {"f32": np.float32, "f16": np.float16, "i32": np.int32}


def add_kernel(block: int, dt: str = "f32", aligned: bool = True, n_div: bool = True,
               masked: bool = True) -> str:
    """out = x * y + x + x[1] over offsets pid * block + range, masked by offs < n."""
    P, T = f"!tile.ptr<{dt}>", f"tensor<{block}x{dt}>"
    I, M, PT = f"tensor<{block}xi32>", f"tensor<{block}xi1>", f"tensor<{block}x!tile.ptr<{dt}>>"
    pdiv = " {tile.divisibility = 16 : i32}" if aligned else ""
    ndiv = " {tile.divisibility = 16 : i32}" if n_div else ""
    mask = f" mask %m : {M}" if masked else ""
    other = " other %zs" if masked else ""
    return f"""
func.func @add(%x: {P}{pdiv}, %y: {P}{pdiv}, %o: {P}{pdiv}, %n: i32{ndiv}) {{
  %pid = tile.program_id 0 : i32
  %c = arith.constant {block} : i32
  %s = arith.muli %pid, %c : i32
  %r = tile.range 0, {block} : {I}
  %ss = tile.splat %s : i32 -> {I}
  %offs = arith.addi %ss, %r : {I}
  %ns = tile.splat %n : i32 -> {I}
  %m = tile.cmpi "slt", %offs, %ns : {I} -> {M}
  %zero = arith.constant 0.0 : {dt}
  %zs = tile.splat %zero : {dt} -> {T}
  %xs = tile.splat %x : {P} -> {PT}
  %xp = tile.addptr %xs, %offs : {PT}, {I}
  %ys = tile.splat %y : {P} -> {PT}
  %yp = tile.addptr %ys, %offs : {PT}, {I}
  %a = tile.load %xp{mask}{other} : {PT} -> {T}
  %b = tile.load %yp{mask}{other} : {PT} -> {T}
  %one = arith.constant 1 : i32
  %x1 = tile.addptr %x, %one : {P}, i32
  %s1 = tile.load %x1 : {P} -> {dt}
  %s1s = tile.splat %s1 : {dt} -> {T}
  %ab = arith.mulf %a, %b : {T}
  %e = arith.addf %ab, %a : {T}
  %f = arith.addf %e, %s1s : {T}
  %os = tile.splat %o : {P} -> {PT}
  %op = tile.addptr %os, %offs : {PT}, {I}
  tile.store %op, %f{mask} : {PT}, {T}
  func.return
}}
"""


def run_passes(module: ModuleOp, *passes) -> ModuleOp:
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
        module.verify()
    return module


def laid_out(text: str, num_warps: int = 4, vector_bits: int = 128) -> ModuleOp:
    return run_passes(parse_module(text), AssignLayouts(num_warps, vector_bits))


def lowered(text: str, num_warps: int = 4, vector_bits: int = 128) -> ModuleOp:
    return run_passes(parse_module(text), AssignLayouts(num_warps, vector_bits), TileToSimt(),
                      CanonicalizePass(), CommonSubexpressionElimination())


def ops_of(module: ModuleOp, cls) -> list:
    return [op for op in module.walk() if isinstance(op, cls)]


def vecs(module: ModuleOp, cls) -> list[int]:
    """``vec`` of every tile access (scalar accesses of tile IR have none)."""
    return [op.vec.value.data for op in ops_of(module, cls) if op.vec is not None]


def tensor_layouts(module: ModuleOp) -> set:
    return {r.type.encoding for op in module.walk() for r in op.results
            if isinstance(r.type, TensorType)}


# -- layouts -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape, warps, bits, vbits, spt", [
    ((1024,), 4, 32, 128, 4), ((1024,), 4, 16, 128, 8), ((64,), 4, 32, 128, 1),
    ((4096,), 4, 32, 128, 4), ((256,), 4, 32, 128, 2), ((1024,), 8, 32, 128, 4),
    ((1024,), 4, 32, 32, 1), ((1024,), 4, 16, 32, 2), ((16,), 1, 8, 128, 1),
    ((2048,), 2, 8, 128, 16), ((1024,), 4, 64, 32, 1),
])
def test_layout_1d(shape, warps, bits, vbits, spt):
    layout = blocked_layout(shape, warps, bits, vbits)
    assert (layout.spt, layout.tpw, layout.wpc) == ((spt,), (32,), (warps,))


@pytest.mark.parametrize("shape, warps, expect", [
    ((64, 64), 4, ((1, 4), (2, 16), (4, 1))),
    ((16, 128), 4, ((1, 4), (1, 32), (4, 1))),
    ((1, 1024), 4, ((1, 4), (1, 32), (1, 4))),
    ((128, 2), 4, ((1, 2), (32, 1), (4, 1))),
    ((8, 8), 8, ((1, 1), (4, 8), (2, 4))),
    ((4, 8, 32), 2, ((1, 1, 4), (1, 4, 8), (2, 1, 1))),
])
def test_layout_nd(shape, warps, expect):
    layout = blocked_layout(shape, warps)
    assert (layout.spt, layout.tpw, layout.wpc) == expect
    layout.verify()


def test_vector_add_aligned():
    m = laid_out(add_kernel(1024))
    assert tensor_layouts(m) == {BlockedLayoutAttr([4], [32], [4])}
    assert vecs(m, tile.LoadOp) == [4, 4] and vecs(m, tile.StoreOp) == [4]
    assert len(ops_of(m, tile.LoadOp)) == 3  # and a scalar load, with no vec
    assert ops_of(m, func.FuncOp)[0].attributes["simt.num_warps"] == IntegerAttr(4, 32)


def test_vector_add_unaligned_n():
    """n with no divisibility: the mask may change at any element -> vec 1 when masked."""
    assert vecs(laid_out(add_kernel(1024, n_div=False)), tile.LoadOp) == [1, 1]
    assert vecs(laid_out(add_kernel(1024, n_div=False, masked=False)), tile.LoadOp) == [4, 4]


def test_unaligned_pointers():
    assert vecs(laid_out(add_kernel(1024, aligned=False, masked=False)), tile.LoadOp) == [1, 1]


def test_f16_and_narrow_vectors():
    m = laid_out(add_kernel(1024, "f16"))
    assert tensor_layouts(m) == {BlockedLayoutAttr([8], [32], [4])}
    assert vecs(m, tile.LoadOp) == [8, 8]
    assert vecs(laid_out(add_kernel(1024, "f16"), vector_bits=32), tile.LoadOp) == [2, 2]
    assert vecs(laid_out(add_kernel(1024), vector_bits=32), tile.StoreOp) == [1]


def test_replicated_and_wrapped_blocks():
    small = laid_out(add_kernel(64))
    assert tensor_layouts(small) == {BlockedLayoutAttr([1], [32], [4])}
    assert vecs(small, tile.LoadOp) == [1, 1]
    big = lowered(add_kernel(4096))
    assert [str(op.result.type) for op in ops_of(big, simt.LoadOp)] == [
        "vector<32xf32>", "vector<32xf32>", "f32"]
    assert vecs(big, simt.LoadOp) == [4, 4, 1]


def test_widest_access_sets_the_layout():
    """An f16 load and an f32 store of one shape share the layout of the widest."""
    text = """
func.func @k(%h: !tile.ptr<f16> {tile.divisibility = 16 : i32},
             %f: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 2048 : tensor<2048xi32>
  %hs = tile.splat %h : !tile.ptr<f16> -> tensor<2048x!tile.ptr<f16>>
  %hp = tile.addptr %hs, %r : tensor<2048x!tile.ptr<f16>>, tensor<2048xi32>
  %v = tile.load %hp : tensor<2048x!tile.ptr<f16>> -> tensor<2048xf16>
  %w = arith.extf %v : tensor<2048xf16> to tensor<2048xf32>
  %fs = tile.splat %f : !tile.ptr<f32> -> tensor<2048x!tile.ptr<f32>>
  %fp = tile.addptr %fs, %r : tensor<2048x!tile.ptr<f32>>, tensor<2048xi32>
  tile.store %fp, %w : tensor<2048x!tile.ptr<f32>>, tensor<2048xf32>
  func.return
}
"""
    m = laid_out(text)
    assert tensor_layouts(m) == {BlockedLayoutAttr([4], [32], [4])}
    assert vecs(m, tile.LoadOp) == [4] and vecs(m, tile.StoreOp) == [4]
    lowered(text)


# -- the axis analysis, checked against concrete values -----------------------------------

def _facts(text: str) -> dict[str, object]:
    m = parse_module(text)
    facts = AxisInfoAnalysis(m)
    return {r.name_hint: facts[r] for op in m.walk() for r in op.results if r.name_hint}


def test_axis_info_seeds():
    facts = _facts(add_kernel(1024, "f16"))
    assert facts["r"].contiguity == (1024,) and facts["s"].divisibility == (1024,)
    assert facts["offs"].contiguity == (1024,) and facts["offs"].divisibility == (1024,)
    assert facts["m"].constancy == (16,)
    assert facts["xp"].divisibility == (8,)  # 16-byte aligned f16 pointer: 8 elements
    assert facts["x1"].divisibility == (1,)
    assert _facts(add_kernel(1024, n_div=False))["m"].constancy == (1,)


def _check_claims(info, values: np.ndarray) -> None:
    """Assert the analysis' claims hold on ``values`` (a 1-D array)."""
    c, d, k = info.contiguity[0], info.divisibility[0], info.constancy[0]
    runs = values.reshape(-1, c).astype(np.int64)
    assert (runs - runs[:, :1] == np.arange(c)).all(), ("contiguity", c, values)
    if values.dtype != bool:
        assert (runs[:, 0] % d == 0).all(), ("divisibility", d, values)
    assert (values.reshape(-1, k) == values.reshape(-1, k)[:, :1]).all(), ("constancy", k)


_INT_OPS = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.divsi": lambda a, b: np.trunc(a / b).astype(np.int64),
    "arith.remsi": lambda a, b: a - b * np.trunc(a / b).astype(np.int64),
    "arith.shli": np.left_shift, "arith.shrui": np.right_shift,
    "arith.andi": np.logical_and, "arith.ori": np.logical_or,
}
_CMP = {"slt": np.less, "sge": np.greater_equal, "sgt": np.greater, "sle": np.less_equal}


def _eval_tile(module: ModuleOp, args: list[int], pid: int) -> dict:
    """Values of every integer op of a straight-line tile kernel with scalar args."""
    f = ops_of(module, func.FuncOp)[0]
    env = dict(zip(f.body.blocks[0].args, (np.int64(a) for a in args), strict=True))
    for op in f.body.walk():
        if isinstance(op, tile.RangeOp):
            val = np.arange(op.start.value.data, op.end.value.data)
        elif isinstance(op, tile.SplatOp):
            val = np.full(op.result.type.get_shape(), env[op.value])
        elif isinstance(op, tile.ProgramIdOp):
            val = np.int64(pid)
        elif op.name == "arith.constant":
            val = np.int64(op.value.value.data)
        elif isinstance(op, tile.CmpIOp):
            val = _CMP[op.predicate.data](env[op.lhs], env[op.rhs])
        elif op.name in _INT_OPS:
            val = _INT_OPS[op.name](env[op.operands[0]], env[op.operands[1]])
        else:
            continue
        env[op.results[0]] = val
    return env


def _random_program(rng, block: int) -> tuple[str, list[int]]:
    """Random offset arithmetic on pid * block + range + two divisible args, compared with
    a third; returns the IR and argument values (kept non-negative, as offsets are)."""
    I, M = f"tensor<{block}xi32>", f"tensor<{block}xi1>"
    start = int(rng.choice([0, 8, 64, block, 3]))
    lines = [f"%r = tile.range {start}, {start + block} : {I}",
             "%pid = tile.program_id 0 : i32", f"%cb = arith.constant {block} : i32",
             "%s = arith.muli %pid, %cb : i32", f"%ss = tile.splat %s : i32 -> {I}",
             f"%as = tile.splat %a : i32 -> {I}", f"%bs = tile.splat %b : i32 -> {I}",
             f"%ns = tile.splat %n : i32 -> {I}",
             f"%v0 = arith.addi %ss, %r : {I}", f"%v1 = arith.addi %v0, %as : {I}"]
    cur = 1
    for i in range(int(rng.integers(1, 6))):
        op = str(rng.choice(["addi", "subi", "muli", "divsi", "remsi", "shli", "shrui", "b",
                             "rem_n"]))
        if op == "b":
            lines.append(f"%v{cur + 1} = arith.addi %v{cur}, %bs : {I}")
        elif op == "rem_n":  # Triton's ``offs % N``, N a runtime value
            lines.append(f"%v{cur + 1} = arith.remsi %v{cur}, %ns : {I}")
        else:
            c = {"addi": int(rng.choice([1, 2, 3, 4, 12, 16])), "subi": int(rng.choice([1, 4])),
                 "shli": int(rng.integers(0, 4)), "shrui": int(rng.integers(0, 4))}.get(
                op, 1 << int(rng.integers(0, 5)))
            lines += [f"%k{i} = arith.constant {c} : i32",
                      f"%ks{i} = tile.splat %k{i} : i32 -> {I}",
                      f"%v{cur + 1} = arith.{op} %v{cur}, %ks{i} : {I}"]
        cur += 1
    pred = str(rng.choice(list(_CMP)))
    lines += [f'%m = tile.cmpi "{pred}", %v{cur}, %ns : {I} -> {M}',
              f'%m2 = tile.cmpi "{_swap(pred)}", %ns, %v{cur} : {I} -> {M}',
              f"%m3 = arith.andi %m, %m2 : {M}", "func.return"]
    n_div = rng.random() < 0.7
    div = " {tile.divisibility = 16 : i32}"
    text = (f"func.func @k(%a: i32{div}, %b: i32{div}, %n: i32{div if n_div else ''}) {{\n  "
            + "\n  ".join(lines) + "\n}\n")
    n = int(rng.integers(1, 1 << 22))
    args = [16 * int(rng.integers(1 << 16, 1 << 17)), 16 * int(rng.integers(0, 64)),
            n - n % 16 if n_div else n]
    return text, args


def _swap(pred: str) -> str:
    return {"slt": "sgt", "sge": "sle", "sgt": "slt", "sle": "sge"}[pred]


@pytest.mark.parametrize("seed", range(40))
def test_axis_info_claims_hold(seed):
    rng = np.random.default_rng(seed)
    block = int(rng.choice([16, 64, 256]))
    text, args = _random_program(rng, block)
    m = parse_module(text)
    facts = AxisInfoAnalysis(m)
    for pid in rng.integers(0, 1000, 3):
        env = _eval_tile(m, args, int(pid))
        for value, concrete in env.items():
            if isinstance(value.type, TensorType):
                _check_claims(facts[value], np.asarray(concrete))


def _loop_kernel(step: str) -> str:
    """Pointers to 64 f16s carried by a loop that advances them by ``step``: ``%k64``
    (64 each), ``%kodd`` (an i32 argument) or ``%spread`` (64 times the lane index)."""
    P, PT, I = "!tile.ptr<f16>", "tensor<64x!tile.ptr<f16>>", "tensor<64xi32>"
    div = " {tile.divisibility = 16 : i32}"
    return f"""
func.func @k(%a: {P}{div}, %n: i32{div}, %odd: i32) {{
  %r = tile.range 0, 64 : {I}
  %as = tile.splat %a : {P} -> {PT}
  %p0 = tile.addptr %as, %r : {PT}, {I}
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %k64 = tile.splat %c64 : i32 -> {I}
  %kodd = tile.splat %odd : i32 -> {I}
  %spread = arith.muli %r, %k64 : {I}
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0) -> ({PT}) : i32 {{
    %pn = tile.addptr %p, {step} : {PT}, {I}
    scf.yield %pn : {PT}
  }}
  func.return
}}
"""


@pytest.mark.parametrize("step, contiguity, divisibility", [
    ("%k64", 64, 8),  # ptrs += BLOCK: runs of 64, 16-byte aligned, every iteration
    ("%kodd", 64, 1),  # an unknown step: still runs, of unknown alignment
    ("%spread", 1, 1),  # runs broken after the first iteration: the weakest of all holds
])
def test_axis_info_loop_carried(step, contiguity, divisibility):
    m = parse_module(_loop_kernel(step))
    facts = AxisInfoAnalysis(m)
    loop = ops_of(m, scf.ForOp)[0]
    for v in (loop.body.block.args[1], loop.results[0]):
        assert facts[v].contiguity == (contiguity,)
        assert facts[v].divisibility == (divisibility,)


# -- exactness of the thread -> element mapping -------------------------------------------

def _layouts():
    for shape in [(16,), (64,), (128,), (1024,), (4096,), (8, 8), (64, 64), (2, 512),
                  (128, 4), (1, 1), (4, 8, 32), (2, 2, 2)]:
        for warps, bits in itertools.product((1, 2, 4, 8), (8, 16, 32)):
            yield shape, blocked_layout(shape, warps, bits)
    rng = np.random.default_rng(0)
    for _ in range(60):  # layouts no heuristic would pick, footprints of any size
        rank = int(rng.integers(1, 4))
        shape = tuple(1 << int(rng.integers(0, 6)) for _ in range(rank))
        tpw = [1 << int(b) for b in _split_bits(rng, 5, rank)]
        wpc = [1 << int(b) for b in _split_bits(rng, int(rng.integers(0, 4)), rank)]
        spt = [1 << int(rng.integers(0, 3)) for _ in range(rank)]
        yield shape, BlockedLayoutAttr(spt, tpw, wpc)


def _split_bits(rng, total: int, parts: int) -> list[int]:
    cuts = sorted(rng.integers(0, total + 1, parts - 1))
    return list(np.diff([0, *cuts, total]))


@pytest.mark.parametrize("shape, layout", list(_layouts()))
def test_lane_map_covers_the_tile(shape, layout):
    """Every element of the tile is held by some thread; exactly replication-many times
    (once when the layout fits in the tile, once per thread along a dim smaller than spt);
    spt runs are consecutive and aligned."""
    threads = 32 * int(np.prod(layout.wpc))
    maps = lane_map(layout, shape)
    k = elements_per_thread(layout, shape)
    tid = np.arange(threads)[:, None]
    coords = [np.broadcast_to(dm.thread_part(tid) + np.asarray(dm.lanes)[None, :], (threads, k))
              for dm in maps]
    for c, n in zip(coords, shape, strict=True):
        assert c.shape == (threads, k) and c.min() >= 0 and c.max() < n
    flat = np.ravel_multi_index(coords, shape).ravel()
    counts = np.bincount(flat, minlength=int(np.prod(shape)))
    replication = int(np.prod([max(1, min(s, n) * t * w // n) for n, s, t, w in zip(
        shape, layout.spt, layout.tpw, layout.wpc, strict=True)]))
    assert (counts == replication).all()
    last, spt = coords[-1], layout.spt[-1]
    runs = last.reshape(threads, -1, min(spt, shape[-1]))
    assert (runs - runs[..., :1] == np.arange(runs.shape[-1])).all()
    assert (runs[..., 0] % runs.shape[-1] == 0).all()


def _held(layout, shape) -> list[set]:
    """Per thread, the coordinates it holds (asserting each is held once per thread)."""
    k = elements_per_thread(layout, shape)
    tid = np.arange(num_threads(layout))[:, None]
    coords = np.stack([np.broadcast_to(dm.thread_part(tid) + np.asarray(dm.lanes)[None, :],
                                       (len(tid), k)) for dm in lane_map(layout, shape)], -1)
    held = [set(map(tuple, c.tolist())) for c in coords]
    assert all(len(h) == k for h in held), "a thread holds a coordinate twice"
    return held


def _slices():
    for shape, layout in _layouts():
        for d in range(len(shape) if len(shape) > 1 else 0):
            yield shape, layout, d


@pytest.mark.parametrize("shape, parent, dim", list(_slices()))
def test_slice_holds_the_parents_coordinates(shape, parent, dim):
    """A thread holds, once each, exactly the coordinates of the other dims it holds in
    the parent; a slice of that slice likewise."""
    sliced = SliceLayoutAttr(dim, parent)
    rest = shape[:dim] + shape[dim + 1:]
    project = [{c[:dim] + c[dim + 1:] for c in h} for h in _held(parent, shape)]
    assert _held(sliced, rest) == project
    if len(rest) > 1:
        inner = SliceLayoutAttr(0, sliced)
        assert _held(inner, rest[1:]) == [{c[1:] for c in h} for h in project]


@pytest.mark.parametrize("shape, parent, dim", list(_slices()))
def test_expand_dims_and_broadcast_rename_lanes(shape, parent, dim):
    """Every thread finds the elements of expand_dims (slice -> parent) and of a
    broadcast along ``dim`` (size 1 -> n) at the same lanes: no data moves."""
    one = shape[:dim] + (1,) + shape[dim + 1:]
    out = strides(one)
    src = element_ids(SliceLayoutAttr(dim, parent), shape[:dim] + shape[dim + 1:],
                      out[:dim] + out[dim + 1:])
    assert shuffle_mask(src, element_ids(parent, one, out)) is not None
    wide = [0 if d == dim else w for d, w in enumerate(out)]
    assert shuffle_mask(element_ids(parent, one, out),
                        element_ids(parent, shape, wide)) is not None


# -- SIMT IR, interpreted for every thread -------------------------------------------------

@pytest.mark.parametrize("block, dt, warps, vbits, n_div, masked", [
    (1024, "f32", 4, 128, True, True), (1024, "f32", 4, 128, False, True),
    (64, "f32", 4, 128, False, True), (4096, "f32", 4, 128, True, True),
    (1024, "f16", 4, 128, True, True), (1024, "f16", 8, 32, False, True),
    (256, "f32", 1, 128, True, False), (32, "f16", 2, 128, True, True),
    (128, "f32", 8, 32, True, True),
])
def test_simt_vector_add_runs(block, dt, warps, vbits, n_div, masked):
    rng = np.random.default_rng(block + warps)
    m = lowered(add_kernel(block, dt, n_div=n_div, masked=masked), warps, vbits)
    programs = 3
    n = programs * block if not masked else int(rng.integers(2 * block + 1, 3 * block))
    if n_div and masked:
        n -= n % 16
    x, y = (rng.standard_normal(programs * block).astype(NP[dt]) for _ in range(2))
    full = x * y + x + x[1]
    for pid in range(programs):
        out = np.zeros_like(x)
        Program(m, {"x": x, "y": y, "o": out}, {"n": n}, (pid,)).run()
        want = np.zeros_like(x)
        mine = slice(pid * block, min(n, (pid + 1) * block))
        want[mine] = full[mine]
        np.testing.assert_allclose(out, want, rtol=2e-3 if dt == "f16" else 1e-6)


def test_simt_matches_the_sample_shape():
    """The vector add of the sample: 8 lanes [0..3, 512..515] from thread_id * 4."""
    text = str(lowered(add_kernel(1024)))
    assert "arith.constant dense<[0, 1, 2, 3, 512, 513, 514, 515]> : vector<8xi32>" in text
    assert "simt.thread_id : i32" in text and "tile.addptr" not in text
    assert "tensor<" not in text


def test_2d_elementwise_lowers():
    text = """
func.func @k(%p: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %a: i32, %v: f32) {
  %s = tile.splat %a : i32 -> tensor<64x64xi32>
  %f = tile.splat %v : f32 -> tensor<64x64xf32>
  %c = arith.constant dense<2.0> : tensor<64x64xf32>
  %g = arith.mulf %f, %c : tensor<64x64xf32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<64x64x!tile.ptr<f32>>
  %pp = tile.addptr %ps, %s : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  tile.store %pp, %g : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  func.return
}
"""
    m = lowered(text)
    (store,) = ops_of(m, simt.StoreOp)
    assert store.value.type.get_shape() == (32,) and store.width == 1


def test_locations_survive():
    m = parse_module(add_kernel(1024))
    for line, op in enumerate(ops_of(m, func.FuncOp)[0].body.walk(), 1):
        op.location = FileLineColLoc(StringAttr("k.py"), IntAttr(line), IntAttr(5))
    access_lines = [op.location.line.data for op in ops_of(m, tile.LoadOp | tile.StoreOp)]
    range_line = ops_of(m, tile.RangeOp)[0].location.line.data
    run_passes(m, AssignLayouts(), TileToSimt())
    body = list(ops_of(m, func.FuncOp)[0].body.walk())
    assert not [op for op in body if isinstance(op.location, UnknownLoc)]
    assert [op.location.line.data for op in ops_of(m, simt.LoadOp | simt.StoreOp)] == \
        access_lines
    assert ops_of(m, simt.ThreadIdOp)[0].location.line.data == range_line


def test_untraceable_pointer_is_an_error():
    text = """
func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %c: i1) {
  %r = tile.range 0, 128 : tensor<128xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<128x!tile.ptr<f32>>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<128x!tile.ptr<f32>>
  %cs = tile.splat %c : i1 -> tensor<128xi1>
  %p = tile.select %cs, %xs, %ys : tensor<128xi1>, tensor<128x!tile.ptr<f32>>
  %v = tile.load %p : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  func.return
}
"""
    m = laid_out(text)
    sel = ops_of(m, tile.SelectOp)[0]
    sel.location = FileLineColLoc(StringAttr("k.py"), IntAttr(7), IntAttr(9))
    with pytest.raises(CompileError, match="cannot trace") as err:
        TileToSimt().apply(make_context(), m)
    assert (err.value.loc.file, err.value.loc.line, err.value.loc.col) == ("k.py", 7, 9)
