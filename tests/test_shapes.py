"""2-D and 3-D tiles end to end: shape builtins and broadcasting on numpy, wgsl and ptx
(the `backend` fixture), the same kernels lowered to SIMT IR and run for every thread in
the NumPy simulator (all layouts, shared-memory conversions included), the layouts
assign-layouts picks, and the frontend's errors."""

import re

import numpy as np
import pytest
from xdsl.dialects import vector
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

import compiler as tc
import compiler.language as tl
from compiler import frontend
from compiler.context import make_context
from compiler.passes.assign_layouts import AssignLayouts
from compiler.passes.tile_to_simt import TileToSimt
from dialects import simt, tile
from dialects.tile import SliceLayoutAttr
from tests import shape_kernels as SK
from tests.conftest import launch
from tests.simt_sim import run_grid

DTYPES = [np.float32, np.float16, np.int32]


def _data(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-1000, 1000, shape).astype(dtype)


# -- the cases: (kernel, grid, args, constexprs, expected outputs by argument index) ------

def case_copy(rng, dtype, M=37, N=50, BM=32, BN=64):
    x = _data(rng, (M, N + 3), dtype)  # rows padded: a stride other than the width
    y = np.full((M, N + 5), 7, dtype)
    want = y.copy()
    want[:, :N] = x[:, :N] * 3
    return SK.copy2d, (tc.cdiv(M, BM), tc.cdiv(N, BN)), (x, y, M, N, N + 3, N + 5), \
        {"BM": BM, "BN": BN}, {1: want}


def case_outer(rng, op, M=37, N=50, BM=16, BN=32):
    a, b = _data(rng, M, np.float32), _data(rng, N, np.float32)
    want = {"add": a[:, None] + b[None, :], "mul": a[:, None] * b[None, :],
            "where": np.where(np.arange(M)[:, None] >= np.arange(N)[None, :], a[:, None],
                              b[None, :])}[op]
    return SK.outer, (tc.cdiv(M, BM), tc.cdiv(N, BN)), (a, b, np.zeros((M, N), np.float32),
                                                         M, N), \
        {"OP": op, "BM": BM, "BN": BN}, {2: want}


def case_transpose(rng, how, dtype=np.float32, M=37, N=50, BM=16, BN=32):
    x = _data(rng, (M, N), dtype)
    return SK.transpose, (tc.cdiv(M, BM), tc.cdiv(N, BN)), (x, np.zeros((N, M), dtype), M, N), \
        {"HOW": how, "BM": BM, "BN": BN}, {1: x.T}


def case_shape_ops(rng, n=1000, BM=8, BN=16):
    x = _data(rng, n, np.float32)
    blocks = tc.cdiv(n, BM * BN)
    xp = np.zeros(blocks * BM * BN, np.float32)
    xp[:n] = x
    tiles = xp.reshape(blocks, BM, BN)
    want = (tiles + np.arange(BM)[None, :, None] * 1000 + tiles[:, :1, :]).reshape(-1)[:n]
    return SK.shape_ops, (blocks,), (x, np.zeros(n, np.float32), n), {"BM": BM, "BN": BN}, \
        {1: want}


def case_cube(rng, dtype=np.int32, A=5, B=6, C=7, BA=4, BB=4, BC=4):
    x = _data(rng, (A, B, C), dtype)
    want = (x + np.arange(A, dtype=dtype)[:, None, None]).transpose(2, 0, 1)
    return SK.cube, (tc.cdiv(A, BA), tc.cdiv(B, BB), tc.cdiv(C, BC)), \
        (x, np.zeros((C, A, B), dtype), A, B, C), {"BA": BA, "BB": BB, "BC": BC}, {1: want}


def case_accumulate(rng, M=37, N=50, BM=16, BN=64):
    x = _data(rng, (M, N), np.float32)
    return SK.accumulate, (tc.cdiv(M, BM),), (x, np.zeros((M, N), np.float32), M, N), \
        {"BM": BM, "BN": BN}, {1: x + 0.5}


def case_pairwise(rng, n=37, BLOCK=64):
    x = _data(rng, n, np.float32)
    return SK.pairwise, (1,), (x, np.zeros((n, n), np.float32), n), {"BLOCK": BLOCK}, \
        {1: x[:, None] - x[None, :]}


def case_broadcast3d(rng, A=5, B=9, C=17, BA=4, BB=8, BC=16):
    xa, yb, zc = (rng.integers(0, 9, k).astype(np.int32) for k in (A, B, C))
    want = xa[:, None, None] * 100 + yb[None, :, None] * 10 + zc[None, None, :]
    return SK.broadcast3d, (tc.cdiv(A, BA), tc.cdiv(B, BB), tc.cdiv(C, BC)), \
        (xa, yb, zc, np.zeros((A, B, C), np.int32), A, B, C), \
        {"BA": BA, "BB": BB, "BC": BC}, {3: want}


def case_plane_sum(rng, BA=2, BB=2, BC=32):
    x = _data(rng, (BA, BB, BC), np.float32)
    return SK.plane_sum, (1,), (x, np.zeros((1, BB, BC), np.float32)), \
        {"BA": BA, "BB": BB, "BC": BC}, {1: x.sum(0, keepdims=True)}


def case_row_center(rng, M=37, N=50, BM=16, BN=64):
    x = _data(rng, (M, N), np.float32)
    mean = x.mean(axis=1)
    want = np.concatenate([(x - mean[:, None]).reshape(-1), mean])
    return SK.row_center, (tc.cdiv(M, BM),), (x, np.zeros(M * N + M, np.float32), M, N), \
        {"BM": BM, "BN": BN}, {1: want}


def case_matmul(rng, M=37, N=29, K=45, BM=16, BN=16, BK=8):
    a, b = _data(rng, (M, K), np.float32), _data(rng, (K, N), np.float32)
    return SK.matmul, (tc.cdiv(M, BM), tc.cdiv(N, BN)), \
        (a, b, np.zeros((M, N), np.float32), M, N, K), {"BM": BM, "BN": BN, "BK": BK}, \
        {2: a @ b}


def case_subscripts(rng, n=32):
    x = _data(rng, n, np.float32)
    want = np.concatenate([((x[None, :] + x[:, None]) * 2 + x[None, :]).reshape(-1), 2 * x])
    return SK.subscripts, (1,), (x, np.zeros(n * n + n, np.float32)), {"BLOCK": n}, {1: want}


CASES = {
    **{f"copy-{np.dtype(d).name}": (case_copy, (d,)) for d in DTYPES},
    **{f"outer-{op}": (case_outer, (op,)) for op in ("add", "mul", "where")},
    **{f"transpose-{how}": (case_transpose, (how,))
       for how in ("T", "trans", "permute", "pointers")},
    "transpose-f16": (case_transpose, ("T", np.float16)),
    "transpose-big": (case_transpose, ("T", np.float32, 150, 100, 128, 64)),  # 3 trips
    "transpose-i32": (case_transpose, ("trans", np.int32)),
    "shape-ops": (case_shape_ops, ()), "cube": (case_cube, ()),
    "cube-f32": (case_cube, (np.float32,)), "accumulate": (case_accumulate, ()),
    "pairwise": (case_pairwise, ()), "broadcast3d": (case_broadcast3d, ()),
    "plane-sum": (case_plane_sum, ()), "plane-sum-big": (case_plane_sum, (8, 16, 32)),
    "row-center": (case_row_center, ()), "matmul": (case_matmul, ()),
    "subscripts": (case_subscripts, ()),
}


def _check(args, want, dtype_of=None) -> None:
    for i, expected in want.items():
        got = args[i]
        if got.dtype == np.float16:
            np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)
        elif got.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("name", sorted(CASES))
def test_backends(backend, rng, name, num_warps):
    make, extra = CASES[name]
    kernel, grid, args, constexprs, want = make(rng, *extra)
    if launch(kernel, grid, *args, backend=backend, num_warps=num_warps, **constexprs):
        _check(args, want)


# -- the same kernels in SIMT IR, every thread simulated ----------------------------------

def lowered(kernel, args, constexprs, num_warps: int, vector_bits: int):
    """Frontend and the SIMT stages of a kernel specialized for ``args`` (verified)."""
    specs = kernel.specialize(kernel.bind(args, constexprs))
    module, _ = frontend.generate(frontend.KernelSource.of(kernel.fn), specs)
    ctx = make_context()
    for p in (CanonicalizePass(), CommonSubexpressionElimination(),
              AssignLayouts(num_warps, vector_bits), TileToSimt(), CanonicalizePass(),
              CommonSubexpressionElimination()):
        p.apply(ctx, module)
        module.verify()
    return module


def simulate(kernel, grid, args, constexprs, num_warps: int, vector_bits: int) -> None:
    module = lowered(kernel, args, constexprs, num_warps, vector_bits)
    names = [n for n in kernel.arg_names if n not in constexprs]
    arrays = {n: a.reshape(-1) for n, a in zip(names, args, strict=True)
              if isinstance(a, np.ndarray)}
    scalars = {n: a for n, a in zip(names, args, strict=True) if not isinstance(a, np.ndarray)}
    run_grid(module, arrays, scalars, grid)


@pytest.mark.parametrize("vector_bits", [32, 128])
@pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
@pytest.mark.parametrize("name", sorted(CASES))
def test_simt_simulation(rng, name, num_warps, vector_bits):
    make, extra = CASES[name]
    kernel, grid, args, constexprs, want = make(rng, *extra)
    simulate(kernel, grid, args, constexprs, num_warps, vector_bits)
    _check(args, want)


# -- layouts ------------------------------------------------------------------------------

def _laid_out(make, *extra, num_warps=4, vector_bits=128):
    kernel, _, args, constexprs, _ = make(np.random.default_rng(0), *extra)
    specs = kernel.specialize(kernel.bind(args, constexprs))
    module, _ = frontend.generate(frontend.KernelSource.of(kernel.fn), specs)
    ctx = make_context()
    for p in (CanonicalizePass(), CommonSubexpressionElimination(),
              AssignLayouts(num_warps, vector_bits)):
        p.apply(ctx, module)
    module.verify()
    return module


def _ops(module, cls) -> list:
    return [op for op in module.walk() if isinstance(op, cls)]


def test_offsets_are_slices_of_the_access_layout():
    """offs_m[:, None] and offs_n[None, :] are computed in slices of the 2-D load's
    layout: no conversion at all, and each expand_dims is a lane renaming."""
    m = _laid_out(case_copy, np.float32)
    (load,) = _ops(m, tile.LoadOp)
    layout = load.result.type.encoding
    assert not _ops(m, tile.ConvertLayoutOp)
    assert {op.src.type.encoding for op in _ops(m, tile.ExpandDimsOp)} == {
        SliceLayoutAttr(1, layout), SliceLayoutAttr(0, layout)}
    assert {op.result.type.encoding for op in _ops(m, tile.RangeOp)} == {
        SliceLayoutAttr(1, layout), SliceLayoutAttr(0, layout)}


def test_one_range_for_rows_and_columns_is_split():
    """A square tile's arange (one value after cse) serves rows and columns; offsets
    needed both ways are recomputed, only the loaded tile is converted."""
    m = _laid_out(case_pairwise)
    convs = _ops(m, tile.ConvertLayoutOp)
    assert len(convs) == 1 and isinstance(convs[0].src.owner, tile.LoadOp)
    assert len({op.result.type.encoding for op in _ops(m, tile.RangeOp)}) == 2


def test_reduction_result_is_a_slice():
    m = _laid_out(case_row_center)
    (red,) = _ops(m, tile.ReduceOp)
    assert red.outs[0].type.encoding == SliceLayoutAttr(1, red.srcs[0].type.encoding)
    assert not _ops(m, tile.ConvertLayoutOp)


@pytest.mark.parametrize("stride, vec", [(64, 4), (50, 1)])
def test_2d_access_width(stride, vec):
    """Rows 16-byte aligned (a stride divisible by 16): 128-bit accesses along rows."""
    x = np.zeros((32, stride), np.float32)
    kernel_args = (x, np.zeros_like(x), 32, 64, stride, stride)
    specs = SK.copy2d.specialize(SK.copy2d.bind(kernel_args, {"BM": 32, "BN": 64}))
    module, _ = frontend.generate(frontend.KernelSource.of(SK.copy2d.fn), specs)
    ctx = make_context()
    for p in (CanonicalizePass(), CommonSubexpressionElimination(), AssignLayouts(4, 128)):
        p.apply(ctx, module)
    assert {op.vec.value.data for op in _ops(module, tile.LoadOp | tile.StoreOp)} == {vec}


def test_transpose_goes_through_shared_memory_once_per_tile():
    rng = np.random.default_rng(0)
    kernel, _, args, constexprs, _ = case_transpose(rng, "T")
    m = lowered(kernel, args, constexprs, 4, 128)
    # the value and its mask: two round trips, each store / barrier / load / barrier
    assert len(_ops(m, simt.SharedStoreOp)) == 2 and len(_ops(m, simt.BarrierOp)) == 4
    assert not _ops(m, tile.TransOp)


def test_broadcasts_are_lane_renaming():
    rng = np.random.default_rng(0)
    kernel, _, args, constexprs, _ = case_broadcast3d(rng)
    m = lowered(kernel, args, constexprs, 4, 128)
    assert not _ops(m, simt.SharedStoreOp) and _ops(m, vector.ShuffleOp)


# -- frontend errors ----------------------------------------------------------------------

@tc.kernel
def bad_shapes(x, WHAT: tl.constexpr):
    r = tl.arange(0, 16)
    if WHAT == "index":
        r = r[0]
    elif WHAT == "slice":
        r = r[1:]
    elif WHAT == "too-many":
        r = r[:, :]
    elif WHAT == "rank":
        r = r[:, None, None, None, None, None]
    elif WHAT == "mismatch":
        r = r + tl.arange(0, 32)
    elif WHAT == "broadcast_to":
        r = tl.broadcast_to(r, (4, 8))
    elif WHAT == "reshape":
        r = tl.reshape(r, (4, 8))
    elif WHAT == "reshape-pow2":
        r = tl.reshape(r, 3, 5)
    elif WHAT == "trans":
        r = tl.trans(r[:, None], 0, 0)
    elif WHAT == "axis":
        r = tl.expand_dims(r, 2)
    elif WHAT == "zeros":
        r = tl.zeros((2, 2, 2, 2, 2, 2), tl.float32)
    tl.store(x + r, r)


@pytest.mark.parametrize("what, message", [
    ("index", "tiles can only be indexed with ':', None and '...'"),
    ("slice", "tiles can only be indexed with"), ("too-many", "too many ':'"),
    ("rank", "tiles have 1 to 5 dimensions, got 6"), ("mismatch", "shape mismatch"),
    ("broadcast_to", "shape mismatch"), ("reshape", "the number of elements differs"),
    ("reshape-pow2", "powers of two"), ("trans", "is not a permutation"),
    ("axis", "axis 2 is out of range"), ("zeros", "tiles have 1 to 5 dimensions"),
])
def test_shape_errors(what, message):
    with pytest.raises(tc.CompileError, match=re.escape(message)) as err:
        tc.compile(bad_shapes, signature={"x": "*i32"}, constants={"WHAT": what},
                   backend="numpy")
    assert err.value.loc is not None and "r = " in err.value.loc.text
