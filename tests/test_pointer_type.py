"""Pointers made of 64-bit addresses (``tl.pointer_type``), the way Triton's grouped-GEMM
tutorial finds each group's matrices: int64 tables of addresses, each loaded and cast.

ptx takes any device address: compiled and assembled for sm_90 here, run on a GPU.
numpy follows an address into the arrays passed to the same launch, every access checked
against them; wgsl has no addresses and refuses the casts when compiling.
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.jit import availability

F16_PTR = tl.pointer_type(tl.float16)  # a module global a kernel reads


@tc.func
def _group_tiles(a_ptrs, b_ptrs, c_ptrs, sizes, strides, groups, PROGRAMS: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C_g = A_g @ B_g for every group g: program p takes the output tiles p, p +
    PROGRAMS, ... counted across the groups; group g's matrices are at the addresses
    ``a_ptrs[g]``, ``b_ptrs[g]``, ``c_ptrs[g]``, its sizes M, N, K at ``sizes[3g:]``
    and its row strides at ``strides[3g:]``."""
    tile = tl.program_id(0)
    first = 0
    for g in range(groups):
        m = tl.load(sizes + 3 * g)
        n = tl.load(sizes + 3 * g + 1)
        k = tl.load(sizes + 3 * g + 2)
        across = tl.cdiv(n, BN)
        tiles = tl.cdiv(m, BM) * across
        while tile >= first and tile < first + tiles:
            a = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
            b = tl.cast(tl.load(b_ptrs + g), F16_PTR)
            c = tl.load(c_ptrs + g).to(F16_PTR)
            rows = (tile - first) // across * BM + tl.arange(0, BM)
            cols = (tile - first) % across * BN + tl.arange(0, BN)
            ks = tl.arange(0, BK)
            a_tile = a + rows[:, None] * tl.load(strides + 3 * g) + ks[None, :]
            b_tile = b + ks[:, None] * tl.load(strides + 3 * g + 1) + cols[None, :]
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for kk in range(tl.cdiv(k, BK)):
                inside = kk * BK + ks < k
                x = tl.load(a_tile, mask=(rows[:, None] < m) & inside[None, :], other=0.0)
                y = tl.load(b_tile, mask=inside[:, None] & (cols[None, :] < n), other=0.0)
                acc += tl.dot(x, y)
                a_tile += BK
                b_tile += BK * tl.load(strides + 3 * g + 1)
            c_tile = c + rows[:, None] * tl.load(strides + 3 * g + 2) + cols[None, :]
            tl.store(c_tile, acc.to(tl.float16), mask=(rows[:, None] < m) & (cols[None, :] < n))
            tile += PROGRAMS
        first = first + tiles


@tc.kernel
def grouped_matmul(a_ptrs, b_ptrs, c_ptrs, sizes, strides, groups, PROGRAMS: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    _group_tiles(a_ptrs, b_ptrs, c_ptrs, sizes, strides, groups, PROGRAMS, BM, BN, BK)


@tc.kernel
def grouped_matmul_in(a_ptrs, b_ptrs, c_ptrs, sizes, strides, groups, a_mem, b_mem, c_mem,
                      PROGRAMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    """``grouped_matmul`` given the arrays the matrices live in too (and never reading
    them itself): the numpy backend follows addresses into a launch's arrays only."""
    _group_tiles(a_ptrs, b_ptrs, c_ptrs, sizes, strides, groups, PROGRAMS, BM, BN, BK)


SHAPES = [(40, 24, 48), (16, 16, 16), (33, 50, 20)]  # (M, N, K) of each group
TABLE_SIG = "*i64,*i64,*i64,*i32,*i32,i32"
BLOCKS = {"PROGRAMS": 4, "BM": 16, "BN": 16, "BK": 16}


def _packed(rng, sizes: list[tuple[int, int]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One f16 array holding random matrices of ``sizes`` one after another, and views."""
    mem = np.zeros(sum(r * c for r, c in sizes), np.float16)
    views, at = [], 0
    for r, c in sizes:
        views.append(mem[at:at + r * c].reshape(r, c))
        views[-1][...] = rng.standard_normal((r, c))
        at += r * c
    return mem, views


def _tables(a_s, b_s, c_s, address, row_stride) -> tuple[np.ndarray, ...]:
    """The kernel's tables: the matrices' addresses, the groups' sizes and row strides."""
    def table(mats):
        return np.array([address(x) for x in mats], np.int64)
    shapes = [(a.shape[0], b.shape[1], a.shape[1]) for a, b in zip(a_s, b_s, strict=True)]
    rows = [tuple(map(row_stride, mats)) for mats in zip(a_s, b_s, c_s, strict=True)]
    return (table(a_s), table(b_s), table(c_s), np.array(shapes, np.int32).ravel(),
            np.array(rows, np.int32).ravel())


def test_grouped_matmul_through_address_tables_on_numpy():
    rng = np.random.default_rng(8)
    a_mem, a_s = _packed(rng, [(m, k) for m, _, k in SHAPES])
    b_mem, b_s = _packed(rng, [(k, n) for _, n, k in SHAPES])
    c_mem, c_s = _packed(rng, [(m, n) for m, n, _ in SHAPES])
    tables = _tables(a_s, b_s, c_s, lambda x: x.ctypes.data, lambda x: x.strides[0] // 2)
    grouped_matmul_in[(BLOCKS["PROGRAMS"],)](*tables, len(SHAPES), a_mem, b_mem, c_mem,
                                             backend="numpy", **BLOCKS)
    for a, b, c in zip(a_s, b_s, c_s, strict=True):
        want = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-2)


@pytest.mark.gpu
def test_grouped_matmul_through_address_tables_on_the_gpu():
    torch = pytest.importorskip("torch")
    if not availability("ptx")[0] or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU and PyTorch with CUDA")
    a_s = [torch.randn(m, k, device="cuda", dtype=torch.float16) for m, _, k in SHAPES]
    b_s = [torch.randn(k, n, device="cuda", dtype=torch.float16) for _, n, k in SHAPES]
    c_s = [torch.empty(m, n, device="cuda", dtype=torch.float16) for m, n, _ in SHAPES]
    tables = [torch.from_numpy(t).cuda()
              for t in _tables(a_s, b_s, c_s, lambda x: x.data_ptr(), lambda x: x.stride(0))]
    grouped_matmul[(BLOCKS["PROGRAMS"],)](*tables, len(SHAPES), backend="ptx", **BLOCKS)
    for a, b, c in zip(a_s, b_s, c_s, strict=True):
        torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-3, atol=2e-2)


def test_grouped_matmul_compiles_and_assembles_for_sm_90():
    ck = tc.compile(grouped_matmul, signature=TABLE_SIG, constants=BLOCKS, backend="ptx",
                    target="sm_90")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert ck.asm["tile"].count("tile.int_to_ptr") == 3
    # six pointer parameters, then the three addresses loaded from the tables
    assert ck.asm["ptx"].count("cvta.to.global.u64") == 5 + 3
    assert not ck.metadata.extra.get("wide_offsets")


@tc.kernel
def descriptor_matmul(a_ptrs, b_ptrs, c_ptrs, M, N, K, a_mem, b_mem, c_mem,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Program g computes C_g's first BM x BN block, reading and writing its matrices
    through tensor descriptors made on the device from the cast addresses (B transposed,
    as in the tutorial's TMA kernel)."""
    g = tl.program_id(0)
    a = tl.make_tensor_descriptor(tl.load(a_ptrs + g).to(F16_PTR), shape=[M, K],
                                  strides=[K, 1], block_shape=[BM, BK])
    b = tl.make_tensor_descriptor(tl.load(b_ptrs + g).to(F16_PTR), shape=[N, K],
                                  strides=[K, 1], block_shape=[BN, BK])
    c = tl.make_tensor_descriptor(tl.load(c_ptrs + g).to(F16_PTR), shape=[M, N],
                                  strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(tl.cdiv(K, BK)):
        acc += tl.dot(a.load([0, kk * BK]), b.load([0, kk * BK]).T)
    c.store([0, 0], acc.to(tl.float16))


def test_tensor_descriptors_made_from_cast_addresses():
    rng = np.random.default_rng(1)
    groups, (m, n, k) = 3, (20, 24, 40)
    a_mem, a_s = _packed(rng, [(m, k)] * groups)
    b_mem, b_s = _packed(rng, [(n, k)] * groups)
    c_mem, c_s = _packed(rng, [(m, n)] * groups)
    args = [*(np.array([x.ctypes.data for x in xs], np.int64) for xs in (a_s, b_s, c_s)),
            m, n, k, a_mem, b_mem, c_mem]
    blocks = {"BM": 32, "BN": 32, "BK": 16}  # larger than C: the descriptors clip
    descriptor_matmul[(groups,)](*args, backend="numpy", **blocks)
    for a, b, c in zip(a_s, b_s, c_s, strict=True):
        want = a.astype(np.float32) @ b.astype(np.float32).T
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-2)
    ck = tc.compile(descriptor_matmul, args=(*args, *blocks.values()), backend="ptx",
                    target="sm_90")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert "cp.async.bulk.tensor" not in ck.asm["ptx"]  # no tensor map for an address


@tc.kernel
def addresses_of(x, out, first, BLOCK: tl.constexpr):
    """``out[i]``: the address of ``x[i]``; ``out[BLOCK]``: 1 where the pointer made of
    ``first``'s address is not null; ``out[BLOCK + 1]``: that pointer's address."""
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, (x + offs).to(tl.int64))
    p = first.to(tl.pointer_type(tl.float32))
    tl.store(out + BLOCK, p.to(tl.int1).to(tl.int64))
    tl.store(out + BLOCK + 1, tl.cast(p + 2, tl.int64))


def test_a_pointer_cast_to_an_integer_is_its_address():
    x, out = np.zeros(8, np.float32), np.zeros(10, np.int64)
    addresses_of[(1,)](x, out, x.ctypes.data, backend="numpy", BLOCK=8)
    base = x.ctypes.data
    assert out.tolist() == [base + 4 * i for i in range(8)] + [1, base + 8]
    ck = tc.compile(addresses_of, signature="*f32,*i64,i64", constants={"BLOCK": 8},
                    backend="ptx", target="sm_90")
    assert "cvta.global.u64" in ck.asm["ptx"] and ck.asm["cubin"][:4] == b"\x7fELF"


@tc.kernel
def count_through(table, counts, n):
    """Adds 1 to ``*table[i]`` for each of the n addresses (repeats add again)."""
    for i in range(n):
        tl.atomic_add(tl.load(table + i).to(tl.pointer_type(tl.int32)), 1)


def test_atomics_through_addresses():
    counts = np.zeros(4, np.int32)
    table = np.array([counts.ctypes.data + 4 * i for i in (0, 2, 2, 3, 2)], np.int64)
    count_through[(3,)](table, counts, len(table), backend="numpy")
    assert counts.tolist() == [3, 0, 9, 3]
    ck = tc.compile(count_through, signature="*i64,*i32,i32", backend="ptx", target="sm_90")
    assert "atom." in ck.asm["ptx"] and ck.asm["cubin"][:4] == b"\x7fELF"


@tc.kernel
def copy_through(table, out, mem, BLOCK: tl.constexpr):
    """BLOCK floats from the address ``table[0]`` to ``out``; ``mem``: an array for the
    numpy backend to find that address in."""
    offs = tl.arange(0, BLOCK)
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    tl.store(out + offs, tl.load(p + offs))


def test_numpy_checks_accesses_through_an_address_against_its_array():
    x, out = np.arange(12, dtype=np.float32), np.zeros(8, np.float32)
    copy_through[(1,)](np.array([x.ctypes.data + 16], np.int64), out, x, backend="numpy",
                       BLOCK=8)
    assert out.tolist() == list(range(4, 12))
    with pytest.raises(tc.OutOfBoundsError, match=r"out-of-bounds load of mem\[12\]"):
        copy_through[(1,)](np.array([x.ctypes.data + 20], np.int64), out, x,
                           backend="numpy", BLOCK=8)


def test_numpy_follows_addresses_only_into_the_launch_arrays():
    elsewhere, out = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(tc.UnsupportedError, match="in none of the arrays passed to this "
                                                   "launch"):
        copy_through[(1,)](np.array([elsewhere.ctypes.data], np.int64), out, out,
                           backend="numpy", BLOCK=8)
    ints = np.zeros(8, np.int32)
    with pytest.raises(tc.UnsupportedError, match="an array of int32, cast to a pointer of "
                                                   "another type"):
        copy_through[(1,)](np.array([ints.ctypes.data], np.int64), out, ints,
                           backend="numpy", BLOCK=8)
    with pytest.raises(tc.UnsupportedError, match="not at one of its elements"):
        copy_through[(1,)](np.array([out.ctypes.data + 2], np.int64), out, out,
                           backend="numpy", BLOCK=8)


@pytest.mark.parametrize("kernel", ["copy_through", "addresses_of"])
def test_wgsl_refuses_casts_between_integers_and_pointers(kernel):
    sigs = {"copy_through": ("*i64,*f32,*f32", {"BLOCK": 8}),
            "addresses_of": ("*f32,*i64,i64", {"BLOCK": 8})}
    sig, constants = sigs[kernel]
    with pytest.raises(tc.UnsupportedError, match="not supported by the wgsl backend: WGSL "
                                                   "has no raw pointers"):
        tc.compile(globals()[kernel], signature=sig, constants=constants, backend="wgsl")


@tc.kernel
def gather_through(table, out, mem, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(tl.load(table + offs).to(tl.pointer_type(tl.float32))))


@tc.kernel
def wide_offset(table, out, i):
    tl.store(out, tl.load(tl.load(table).to(tl.pointer_type(tl.float32)) + i.to(tl.int64)))


@tc.kernel
def recast_in_loop(table, out, n):
    p = tl.load(table).to(tl.pointer_type(tl.float32))
    for i in range(n):
        p = tl.load(table + i).to(tl.pointer_type(tl.float32))
    tl.store(out, tl.load(p))


def test_a_tile_of_addresses_runs_on_numpy():
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    table = np.array([x.ctypes.data + 4 * i for i in (7, 0, 3, 3, 1, 2, 6, 5)], np.int64)
    gather_through[(1,)](table, out, x, backend="numpy", BLOCK=8)
    assert out.tolist() == [7, 0, 3, 3, 1, 2, 6, 5]


@pytest.mark.parametrize("kernel, sig, error, message", [
    (gather_through, "*i64,*f32,*f32", tc.UnsupportedError,
     "a tile of addresses cast to pointers"),
    (wide_offset, "*i64,*f32,i32", tc.UnsupportedError,
     "a 64-bit offset from a pointer made of an address"),
    (recast_in_loop, "*i64,*f32,i32", tc.CompileError, "must stay in one array"),
])
def test_what_ptx_cannot_address(kernel, sig, error, message):
    constants = {"BLOCK": 8} if "BLOCK" in kernel.arg_names else {}
    tc.compile(kernel, signature=sig, constants=constants, backend="numpy")  # numpy runs it
    with pytest.raises(error, match=message):
        tc.compile(kernel, signature=sig, constants=constants, backend="ptx")


@tc.kernel
def narrow_address(table, out):
    tl.store(out, tl.load(tl.load(table).to(tl.pointer_type(tl.float32))))


@tc.kernel
def other_pointer_type(x, out):
    tl.store(out, tl.load(x.to(tl.pointer_type(tl.int32))))


@tc.kernel
def pointer_to_int32(x, out):
    tl.store(out, x.to(tl.int32))


@tc.kernel
def pointer_to_a_name(x, out):
    tl.store(out, tl.load(tl.load(x).to(tl.pointer_type("fp32"))))


@pytest.mark.parametrize("kernel, sig, message", [
    (narrow_address, "*i32,*f32",
     r"an address cast to pointer<float32> must be a 64-bit integer \(tl.int64\), got int32"),
    (other_pointer_type, "*f32,*i32", "casts between pointer types are not supported"),
    (pointer_to_int32, "*f32,*i32", r"a pointer casts to tl.int64 \(its address\) or tl.int1"),
    (pointer_to_a_name, "*i64,*f32", "tl.pointer_type takes a dtype such as tl.float16"),
])
def test_casts_the_frontend_refuses(kernel, sig, message):
    with pytest.raises(tc.CompileError, match=message):
        tc.compile(kernel, signature=sig, backend="numpy")


def test_verify_refuses_a_kernel_that_casts_addresses():
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(tc.LaunchError, match="verify=True cannot check a kernel that casts "
                                              "addresses"):
        copy_through[(1,)](np.array([x.ctypes.data], np.int64), out, x, backend="numpy",
                           BLOCK=8, verify=True)


def test_debug_checks_leave_accesses_through_addresses_alone():
    ck = tc.compile(copy_through, signature="*i64,*f32,*f32", constants={"BLOCK": 8},
                    backend="ptx", target="sm_90", debug=True)
    assert ck.metadata.extra["bounds"] == [0, 1, 2]  # the arguments, not the address
    assert ck.asm["cubin"][:4] == b"\x7fELF"


def test_pointer_type_is_triton_s_description_of_a_pointer():
    p = tl.pointer_type(tl.float16)
    assert p.element_ty is tl.float16 and p.address_space == 1
    assert p == F16_PTR and hash(p) == hash(F16_PTR) and p != tl.pointer_type(tl.float32)
    assert str(p) == "pointer<float16>" and repr(p) == "tl.pointer_type(tl.float16)"
    with pytest.raises(TypeError, match="takes a dtype"):
        tl.pointer_type("fp16")
