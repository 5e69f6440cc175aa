"""fp8 (``tl.float8e4nv``: e4m3fn, ``tl.float8e5``: e5m2) on every backend.

Conversions are checked bit for bit against a reference written here from the formats
alone (the nearest of the 256 values, ties to the even code, saturating at the largest
finite value, NaN to 0x7F: PTX's ``cvt.rn.satfinite`` on sm_90, which Triton emits), over
all 256 fp8 bit patterns and over f32 values chosen to hit every rule: NaN, infinities,
overflow, subnormals, exact ties and their neighbours. Then loads and stores, ``where``,
comparisons and arithmetic (computed in f32), constants, ``tl.dot`` (its operands
converted to f16 exactly), array arguments (NumPy's ml_dtypes arrays, PyTorch's fp8
tensors) and the ``lower-fp8`` pass that GPU targets run, whose arithmetic form (WGSL,
sm_80) the NumPy backend runs here too, on a million values.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import backends.ptx as ptx_backend
import compiler as tc
import compiler.language as tl
from backends.numpy import run as numpy_run
from compiler.context import make_context, parse_module
from compiler.debug import extents
from compiler.dtypes import ML_DTYPES
from compiler.kinfo import Param
from compiler.passes.lower_fp8 import LowerFp8
from compiler.specialize import arg_spec
from compiler.triton.tools.tensor_descriptor import TensorDescriptor
from tests.conftest import launch

ml_dtypes = pytest.importorskip("ml_dtypes")

FP8 = [tl.float8e4nv, tl.float8e5]
NUMPY = {tl.float8e4nv: np.dtype(ml_dtypes.float8_e4m3fn),
         tl.float8e5: np.dtype(ml_dtypes.float8_e5m2)}
# explicit mantissa bits, exponent bias, whether the top exponent holds infinities
FORMAT = {tl.float8e4nv: (3, 7, False), tl.float8e5: (2, 15, True)}


# -- the reference ------------------------------------------------------------------------

def decode(code: int, d: tl.dtype) -> float:
    """The value of fp8 bit pattern ``code``, from the format's definition."""
    m, bias, ieee = FORMAT[d]
    sign = -1.0 if code & 0x80 else 1.0
    e, f = (code & 0x7F) >> m, code & ((1 << m) - 1)
    if ieee and e == (0x7F >> m) or not ieee and code & 0x7F == 0x7F:
        return sign * float("inf") if ieee and f == 0 else float("nan")
    if e == 0:
        return sign * f * 2.0 ** (1 - bias - m)
    return sign * (1 + f / 2**m) * 2.0 ** (e - bias)


def values(d: tl.dtype) -> np.ndarray:
    """The 256 values, by code (float64)."""
    return np.array([decode(c, d) for c in range(256)])


def reference_bits(x: np.ndarray, d: tl.dtype) -> np.ndarray:
    """The fp8 bits of ``x`` (any float dtype, read exactly): the nearest finite value,
    ties to the even code, magnitudes past the largest finite value (infinity too) that
    value, NaN 0x7F."""
    table = values(d)[:128]
    positive = table[np.isfinite(table)]  # codes 0 .. largest finite, increasing
    with np.errstate(invalid="ignore"):  # signalling NaNs among random bits
        a = np.minimum(np.abs(x.astype(np.float64)), positive[-1])
    hi = np.clip(np.searchsorted(positive, a), 1, len(positive) - 1)
    below, above = positive[hi - 1], positive[hi]
    up = (above - a < a - below) | ((above - a == a - below) & (hi % 2 == 0))
    code = np.where(up, hi, hi - 1) | np.where(np.signbit(x), 0x80, 0)
    return np.where(np.isnan(x), 0x7F, code).astype(np.uint8)


def edge_floats(d: tl.dtype) -> np.ndarray:
    """f32 values at every rounding rule of ``d``, and random ones over its range."""
    v = values(d)
    finite = np.unique(np.abs(v[np.isfinite(v)]))
    mids = (finite[:-1] + finite[1:]) / 2  # exact ties (f32 holds them)
    top = finite[-1]
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, top, top * 1.0625, top * 1.125,
               top * 1.5, 3e38, 1e-45, -1e-45, 1e-38, finite[1] / 2, finite[1] / 4]
    rng = np.random.default_rng(8)
    spread = rng.standard_normal(4000) * 2.0 ** rng.integers(-20, 20, 4000)
    x = np.concatenate([finite, mids, special, spread]).astype(np.float32)
    near = np.concatenate([np.nextafter(x, np.float32(np.inf)),
                           np.nextafter(x, np.float32(-np.inf))])
    x = np.concatenate([x, near])
    return np.concatenate([x, -x])


def test_spellings():
    for d, names in {tl.float8e4nv: ("fp8e4nv", "float8e4nv", "float8_e4m3fn"),
                     tl.float8e5: ("fp8e5", "float8e5", "float8_e5m2")}.items():
        assert {tl.dtype_from_str(n) for n in names} == {d}
        assert tl.dtype_from_numpy(NUMPY[d]) is d
        assert d.numpy == NUMPY[d] and d.bits == 8 and d.is_float and d.is_fp8()


def test_reference_agrees_with_ml_dtypes_on_the_values():
    for d in FP8:
        codes = np.arange(256, dtype=np.uint8)
        np.testing.assert_array_equal(codes.view(NUMPY[d]).astype(np.float64), values(d))


# -- conversions on every backend ---------------------------------------------------------

@tc.kernel
def convert(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m).to(out.dtype.element_ty), mask=m)


def _convert(x: np.ndarray, dtype: np.dtype, backend: str) -> np.ndarray | None:
    out = np.zeros(len(x), dtype)
    block = 1024
    if not launch(convert, (tc.cdiv(len(x), block),), x, out, len(x), backend=backend,
                  BLOCK=block):
        return None
    return out


@pytest.mark.parametrize("d", FP8, ids=str)
@pytest.mark.parametrize("source", [np.float32, np.float16])
def test_floats_round_to_fp8_as_cvt_satfinite(backend, d, source):
    with np.errstate(over="ignore"):  # f16 holds fewer of them: infinities
        x = edge_floats(d).astype(source)
    got = _convert(x, NUMPY[d], backend)
    if got is not None:
        np.testing.assert_array_equal(got.view(np.uint8), reference_bits(x, d))


@pytest.mark.parametrize("d", FP8, ids=str)
def test_bfloat16_rounds_to_fp8(backend, d):
    """bf16 -> fp8: as the f32 of the same value."""
    x = edge_floats(d).astype(ml_dtypes.bfloat16)
    got = _convert(x, NUMPY[d], backend)
    if got is not None:
        np.testing.assert_array_equal(got.view(np.uint8), reference_bits(x, d))


@pytest.mark.parametrize("d", FP8, ids=str)
@pytest.mark.parametrize("target", [np.float32, np.float16])
def test_fp8_widens_exactly(backend, d, target):
    codes = np.arange(256, dtype=np.uint8).view(NUMPY[d])
    got = _convert(codes, np.dtype(target), backend)
    if got is not None:
        np.testing.assert_array_equal(got.astype(np.float64), values(d))


@pytest.mark.parametrize("d", FP8, ids=str)
def test_fp8_to_the_other_fp8(backend, d):
    other = FP8[1 - FP8.index(d)]
    codes = np.arange(256, dtype=np.uint8).view(NUMPY[d])
    got = _convert(codes, NUMPY[other], backend)
    if got is not None:
        np.testing.assert_array_equal(got.view(np.uint8), reference_bits(values(d), other))


@pytest.mark.parametrize("d", FP8, ids=str)
def test_fp8_to_and_from_integers(backend, d):
    """Through f32: to int32 truncates toward zero (NaN gives 0), from int32 rounds."""
    codes = np.arange(256, dtype=np.uint8).view(NUMPY[d])
    got = _convert(codes, np.dtype(np.int32), backend)
    ints = np.array([0, 1, -3, 17, 255, 448, 449, 464, 465, 1000, -70000, 2**31 - 1],
                    np.int32)
    back = _convert(ints, NUMPY[d], backend)
    if got is None:
        return
    v = values(d)
    want = np.where(np.isnan(v), 0, np.trunc(np.clip(v, -2.0**31, 2.0**31 - 1)))
    np.testing.assert_array_equal(got, want.astype(np.int32))
    np.testing.assert_array_equal(back.view(np.uint8), reference_bits(ints, d))


# -- lower-fp8: what the GPU targets run ----------------------------------------------------

def _lowered(signature: dict[str, str], native: int):
    """``convert`` for ``signature``, compiled for NumPy, then through ``lower-fp8``."""
    ck = tc.compile(convert, signature=signature, constants={"BLOCK": 4096}, backend="numpy")
    module = parse_module(ck.stages[-1][1])
    LowerFp8(native=native).apply(make_context(), module)
    module.verify()
    return module, ck.metadata


@pytest.mark.parametrize("native", [0, 1])
@pytest.mark.parametrize("d", FP8, ids=str)
def test_lower_fp8_rounds_a_million_floats(d, native):
    """``lower-fp8``'s conversions, run by the NumPy backend: as arithmetic (native=0, what
    WGSL and sm_80 run) and as ``tile.to_fp8``/``from_fp8`` (native=1, PTX's ``cvt``), over
    a million f32 bit patterns of every exponent and a million values in fp8's range."""
    rng = np.random.default_rng(1)
    top = values(d)[0x7B if d is tl.float8e5 else 0x7E]
    x = np.concatenate([rng.integers(0, 2**32, 2**20, dtype=np.uint32).view(np.float32),
                        (rng.standard_normal(2**20) * top / 8).astype(np.float32),
                        edge_floats(d)])
    module, info = _lowered({"x": "*f32", "out": f"*{d.short}", "n": "i32"}, native)
    out = np.zeros(len(x), NUMPY[d])
    numpy_run(module, info, (tc.cdiv(len(x), 4096),), [x, out, len(x)])
    np.testing.assert_array_equal(out.view(np.uint8), reference_bits(x, d))
    codes = np.arange(256, dtype=np.uint8).view(NUMPY[d])
    for wide, short in ((np.float32, "f32"), (np.float16, "f16")):  # native: f16 at once
        module, info = _lowered({"x": f"*{d.short}", "out": f"*{short}", "n": "i32"}, native)
        back = np.zeros(256, wide)
        numpy_run(module, info, (1,), [codes, back, 256])
        np.testing.assert_array_equal(back.astype(np.float64), values(d))


@pytest.mark.parametrize("target, native", [("sm_90", True), ("sm_89", False),
                                             ("sm_80", False)])
def test_ptx_converts_with_cvt_on_sm_90(target, native):
    """sm_90 converts with ``cvt`` (as Triton does); sm_80 has no fp8 ``cvt`` and sm_89's
    needs a newer PTX ISA than tilec declares there, so the conversions are arithmetic
    there. All assemble."""
    ck = tc.compile(roundtrip, signature={"x": "*f32", "bits": "*fp8e4nv", "back": "*f32",
                                          "n": "i32"},
                    constants={"BLOCK": 256}, backend="ptx", target=target)
    ptx = ck.asm["ptx"]
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    cvts = ("cvt.rn.satfinite.e4m3x2.f32" in ptx, "cvt.rn.f16x2.e4m3x2" in ptx)
    assert cvts == (native, native)


@tc.kernel
def roundtrip(x, bits, back, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m).to(bits.dtype.element_ty)
    tl.store(bits + offs, v, mask=m)
    tl.store(back + offs, v.to(tl.float32), mask=m)


# -- computing with fp8: in f32, as Triton types it ---------------------------------------

@tc.kernel
def compute(a, b, sel, flags, arith, signs, n, BLOCK: tl.constexpr):
    """Selections and comparisons (exact), arithmetic rounded back to fp8 after each op."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(a + offs, mask=m, other=0.0)
    y = tl.load(b + offs, mask=m, other=0.0)
    tl.static_assert((x * y).dtype == x.dtype and tl.where(m, x, y).dtype == x.dtype)
    tl.store(sel + offs, tl.where(x < y, x, y), mask=m)
    bits = ((x < y).to(tl.int32) + (x == y).to(tl.int32) * 2 + (x >= y).to(tl.int32) * 4
            + (x != y).to(tl.int32) * 8 + (x > 0.5).to(tl.int32) * 16)
    tl.store(flags + offs, bits, mask=m)
    tl.store(arith + offs, x * y + x, mask=m)
    tl.store(signs + offs, tl.maximum(tl.abs(x), -y), mask=m)


@pytest.mark.parametrize("d", FP8, ids=str)
def test_compute_on_fp8_in_float32(backend, d):
    """Every pair of fp8 values: ``where``, comparisons, ``maximum``, ``abs`` and negation
    as their f32 values give them; ``x * y + x`` rounded to fp8 after each operator."""
    codes = np.arange(256, dtype=np.uint8).view(NUMPY[d])
    a, b = (np.ascontiguousarray(c) for c in np.meshgrid(codes, codes))
    a, b = a.reshape(-1), b.reshape(-1)
    n = len(a)
    sel, arith, signs = (np.zeros(n, NUMPY[d]) for _ in range(3))
    flags = np.zeros(n, np.int32)
    if not launch(compute, (tc.cdiv(n, 1024),), a, b, sel, flags, arith, signs, n,
                  backend=backend, BLOCK=1024):
        return
    x, y = (v.astype(np.float32) for v in (a, b))
    with np.errstate(invalid="ignore", over="ignore"):
        want_flags = ((x < y) + (x == y) * 2 + (x >= y) * 4 + (x != y) * 8 + (x > 0.5) * 16)
        product = reference_bits(x * y, d).view(NUMPY[d]).astype(np.float32)
        want_arith = reference_bits(product + x, d)
        larger = np.maximum(np.abs(x), -y)  # NaN if either is
        want_signs = reference_bits(np.where(larger == 0, 0.0, larger), d)  # +0 > -0
    np.testing.assert_array_equal(sel.view(np.uint8), np.where(x < y, a, b).view(np.uint8))
    np.testing.assert_array_equal(flags, want_flags)
    np.testing.assert_array_equal(arith.view(np.uint8), want_arith)
    np.testing.assert_array_equal(signs.view(np.uint8), want_signs)


@tc.kernel
def promotions(a, b, h, g, out, BLOCK: tl.constexpr):
    """Triton's computation types: two fp8 types meet in f16, fp8 and bf16 in f32, fp8 and
    f16 in f16; a Python float takes the fp8 type; math functions and sums are f32."""
    offs = tl.arange(0, BLOCK)
    x, y = tl.load(a + offs), tl.load(b + offs)
    hv, gv = tl.load(h + offs), tl.load(g + offs)
    tl.static_assert((x + y).dtype == tl.float16)
    tl.static_assert((x + gv).dtype == tl.float32)
    tl.static_assert((x + hv).dtype == tl.float16)
    tl.static_assert((x * 2.0).dtype == x.dtype)
    tl.static_assert(tl.exp(x).dtype == tl.float32)
    tl.static_assert(tl.extra.libdevice.rint(x).dtype == tl.float32)
    tl.static_assert(tl.sum(x, axis=0).dtype == tl.float32)
    tl.static_assert(tl.max(x, axis=0).dtype == x.dtype)
    tl.store(out + offs, (x + y).to(tl.float32) + tl.sum(x, axis=0) + tl.max(y, axis=0))


def test_promotions_follow_triton():
    n = 64
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(NUMPY[tl.float8e4nv])
    y = rng.standard_normal(n).astype(NUMPY[tl.float8e5])
    h = np.zeros(n, np.float16)
    g = np.zeros(n, ml_dtypes.bfloat16)
    out = np.zeros(n, np.float32)
    promotions[(1,)](x, y, h, g, out, BLOCK=n, backend="numpy")
    xs, ys = x.astype(np.float32), y.astype(np.float32)
    want = (xs + ys).astype(np.float16).astype(np.float32) + xs.sum() + ys.max()
    np.testing.assert_allclose(out, want, rtol=1e-6)


@tc.kernel
def constants(out, V: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.full((BLOCK,), V, out.dtype.element_ty))


@pytest.mark.parametrize("d", FP8, ids=str)
@pytest.mark.parametrize("value", [0.1, -1000.0, float("inf"), float("nan"), 2.0**-20])
def test_constants_round_as_conversions(backend, d, value):
    out = np.zeros(16, NUMPY[d])
    if launch(constants, (1,), out, backend=backend, V=value, BLOCK=16):
        np.testing.assert_array_equal(out.view(np.uint8),
                                      reference_bits(np.full(16, value, np.float32), d))


def test_rounding_toward_zero_is_refused():
    @tc.kernel
    def rtz(x, out):
        tl.store(out, tl.load(x).to(tl.float8e4nv, fp_downcast_rounding="rtz"))

    with pytest.raises(tc.CompileError, match="'rtz' is not supported for fp8"):
        rtz[(1,)](np.ones(1, np.float32), np.zeros(1, NUMPY[tl.float8e4nv]),
                  backend="numpy")


@tc.kernel
def show(x, BLOCK: tl.constexpr):
    tl.device_print("x:", tl.load(x + tl.arange(0, BLOCK)))


def test_device_print_shows_fp8_values(backend, capsys):
    x = np.array([0.5, -448, np.nan, 2.0**-9], NUMPY[tl.float8e4nv])
    if launch(show, (1,), x, backend=backend, debug=True, BLOCK=4):
        assert capsys.readouterr().out.splitlines() == [
            f"pid (0, 0, 0) idx ({i}) x: {v}" for i, v in enumerate([0.5, -448.0, "nan",
                                                                     0.001953125])]


# -- arguments: ml_dtypes arrays, PyTorch fp8 tensors --------------------------------------

@tc.kernel
def scatter(x, out, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs * stride, tl.load(x + offs, mask=m).to(out.dtype.element_ty), mask=m)


@pytest.mark.parametrize("d", FP8, ids=str)
def test_ml_dtypes_strided_views_are_arguments(backend, d):
    """A strided view of an ml_dtypes fp8 array, written through its stride (NumPy itself
    cannot rebuild a float8_e5m2 view from its typestr, "<f1")."""
    x = edge_floats(d)[:32]
    base = np.zeros((32, 2), NUMPY[d])
    out = base[:, 1]  # every other byte
    if launch(scatter, (1,), x, out, 32, 2, backend=backend, BLOCK=32):
        np.testing.assert_array_equal(out.view(np.uint8), reference_bits(x, d))
        assert not base[:, 0].view(np.uint8).any()


@pytest.mark.parametrize("d", FP8, ids=str)
def test_torch_fp8_tensors(backend, d):
    """PyTorch's fp8 tensors, through DLPack: on the CPU (numpy, wgsl) or the GPU (ptx;
    without one it compiles for their dtype): read, and written in place through a
    strided view."""
    torch = pytest.importorskip("torch")
    on = "cuda" if backend == "ptx" and torch.cuda.is_available() else "cpu"
    tdtype = getattr(torch, ML_DTYPES[d])
    x = torch.tensor(edge_floats(d)[:512], device=on)
    base = torch.zeros(512, 2, dtype=tdtype, device=on)
    out = base[:, 0]
    if launch(scatter, (1,), x, out, 512, out.stride(0), backend=backend, BLOCK=512):
        got = base.view(torch.uint8).cpu().numpy()
        np.testing.assert_array_equal(got[:, 0], reference_bits(x.cpu().numpy(), d))
        assert not got[:, 1].any()
    back = torch.zeros(512, device=on)
    codes = torch.arange(256, dtype=torch.uint8, device=on).view(tdtype)
    if launch(convert, (1,), codes, back, 256, backend=backend, BLOCK=256):
        np.testing.assert_array_equal(back.cpu().numpy()[:256].astype(np.float64), values(d))


class _CudaFp8:
    """What PyTorch's CUDA fp8 tensor shows a launch: a CUDA array interface that cannot
    name the dtype (it raises KeyError), and DLPack, which can."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.shape = tensor.shape

    @property
    def __cuda_array_interface__(self):
        raise KeyError(self.tensor.dtype)

    def __dlpack__(self, **options):
        return self.tensor.__dlpack__(**options)

    def __dlpack_device__(self):
        return (2, 0)


def test_cuda_fp8_tensors_are_described_by_dlpack():
    torch = pytest.importorskip("torch")
    t = _CudaFp8(torch.zeros(16, dtype=torch.float8_e4m3fn))
    assert arg_spec(t) == ("ptr", "fp8e4nv", t.tensor.data_ptr() % 16 == 0)


@pytest.mark.parametrize("d", FP8, ids=str)
def test_ptx_takes_torch_fp8_tensors_of_their_dtype(d):
    """The PTX launcher matches a torch fp8 tensor to the kernel's dtype (a CPU one is then
    refused for being on the CPU, not for its dtype)."""
    torch = pytest.importorskip("torch")
    put = ptx_backend._torch_put(Param("x", d.short, True), None, 0, torch)
    with pytest.raises(tc.LaunchError, match="not on cuda:0"):
        put(torch.zeros(4, dtype=getattr(torch, ML_DTYPES[d])))
    with pytest.raises(tc.LaunchError, match=f"expected an array of {d}"):
        put(torch.zeros(4))


def test_fp8_scalar_parameters_are_refused():
    with pytest.raises(tc.LaunchError, match="fp8 scalars are not supported"):
        tc.compile(convert, signature={"x": "*f32", "out": "*fp8e5", "n": "fp8e5"},
                   constants={"BLOCK": 16}, backend="numpy")


def test_without_ml_dtypes_fp8_is_unsupported_on_numpy_only(monkeypatch):
    """As bfloat16: NumPy alone has no fp8, and the numpy backend names the package; the
    GPU targets compile fp8 kernels (constants included) without it."""
    @tc.kernel
    def fill(out):
        tl.store(out + tl.arange(0, 16), tl.full((16,), 1000.0, out.dtype.element_ty))

    out = np.zeros(16, NUMPY[tl.float8e5])  # made while ml_dtypes could be imported
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    assert tl.float8e4nv.numpy is None
    with pytest.raises(tc.UnsupportedError, match="fp8e5 needs the ml_dtypes package"):
        fill[(1,)](out, backend="numpy")
    for gpu in ("ptx", "wgsl"):
        ck = tc.compile(fill, signature={"out": "*fp8e5"}, backend=gpu)
        assert "1.024000e+03 : f8E5M2" in ck.stages[0][1]  # 1000, rounded


# -- tl.dot ------------------------------------------------------------------------------

@tc.kernel
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 03's loop: fp8 tiles of A and B, an f32 accumulator."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


def _small_fp8(d: tl.dtype, shape: tuple[int, int], rng) -> np.ndarray:
    """fp8 values of magnitude 1/4 to 8 (and zeros): every product and partial sum of a
    dot of K = 64 is exact in f32, so every target's order of sums gives one answer."""
    v = values(d)
    pool = v[np.isfinite(v) & ((np.abs(v) >= 0.25) & (np.abs(v) <= 8) | (v == 0))]
    return rng.choice(pool, shape).astype(np.float32).astype(NUMPY[d])


@pytest.mark.parametrize("da, db", [(tl.float8e4nv, tl.float8e4nv), (tl.float8e5, tl.float8e5),
                                    (tl.float8e4nv, tl.float8e5)], ids=str)
def test_dot_of_fp8_accumulates_in_f32(backend, da, db):
    """e4m3 x e4m3, e5m2 x e5m2 and e4m3 x e5m2, as Hopper's fp8 wgmma takes them: the
    f32 product of the fp8 values (their conversion to f16 is exact)."""
    rng = np.random.default_rng(5)
    m, n, k = 64, 32, 64
    a, b = _small_fp8(da, (m, k), rng), _small_fp8(db, (k, n), rng)
    c = np.zeros((m, n), np.float32)
    if launch(matmul, (2, 1), a, b, c, m, n, k, backend=backend, BM=32, BN=32, BK=32):
        np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_dot_of_fp8_and_f16_is_refused():
    @tc.kernel
    def mixed(a, b, c):
        r = tl.arange(0, 16)
        x = tl.load(a + r[:, None] * 16 + r[None, :])
        y = tl.load(b + r[:, None] * 16 + r[None, :])
        tl.store(c + r[:, None] * 16 + r[None, :], tl.dot(x, y))

    with pytest.raises(tc.CompileError, match="one dtype, got float8e4nv and float16"):
        tc.compile(mixed, signature={"a": "*fp8e4nv", "b": "*f16", "c": "*f32"},
                   backend="numpy")


@tc.kernel
def descriptor_dot(q, k, o, M, D, BM: tl.constexpr, BD: tl.constexpr):
    """Tutorial 06's shape: fp8 tiles through tensor descriptors, ``q @ k.T`` in a loop,
    the f32 result stored as fp8 through a descriptor."""
    qd = tl.make_tensor_descriptor(q, (M, D), (D, 1), (BM, BD))
    kd = tl.make_tensor_descriptor(k, (M, D), (D, 1), (BM, BD))
    od = tl.make_tensor_descriptor(o, (M, M), (M, 1), (BM, BM))
    at = tl.program_id(0) * BM
    acc = tl.zeros((BM, BM), tl.float32)
    for d in range(0, D, BD):
        acc = tl.dot(qd.load([at, d]), kd.load([0, d]).T, acc)
    od.store([at, 0], acc.to(o.dtype.element_ty))


@pytest.mark.parametrize("d", FP8, ids=str)
def test_dot_through_tensor_descriptors(backend, d):
    rng = np.random.default_rng(6)
    m, dim = 64, 64
    q, k = _small_fp8(d, (m, dim), rng), _small_fp8(d, (m, dim), rng)
    o = np.zeros((m, m), NUMPY[d])
    if launch(descriptor_dot, (1,), q, k, o, m, dim, backend=backend, BM=64, BD=32):
        exact = q.astype(np.float32) @ k.astype(np.float32).T
        np.testing.assert_array_equal(o.view(np.uint8), reference_bits(exact, d))


# -- verify=True and debug=True with fp8 ----------------------------------------------------

@pytest.mark.parametrize("d", FP8, ids=str)
def test_verify_compares_fp8_results(d):
    """``verify=True`` on WGSL takes NaN for NaN in an fp8 result (the comparison is of
    values, within one fp8 step: an f32 sum in another order, rounded, may differ)."""
    if not tc.backends()["wgsl"][0]:
        pytest.skip("no WebGPU adapter")
    x = edge_floats(d)[:1000]
    out = np.zeros(len(x), NUMPY[d])
    convert[(1,)](x, out, len(x), BLOCK=1024, backend="wgsl", verify=True)
    np.testing.assert_array_equal(out.view(np.uint8), reference_bits(x, d))


def test_debug_reads_the_length_of_a_cuda_fp8_tensor():
    torch = pytest.importorskip("torch")
    t = _CudaFp8(torch.zeros(3, 5, dtype=torch.float8_e5m2))
    assert extents([t], [0]) == [15]


@tc.kernel
def reductions(x, top, low, total, BM: tl.constexpr, BN: tl.constexpr):
    """Row maxima and minima of fp8 (fp8, exact), row sums (in f32)."""
    rm, rn = tl.arange(0, BM), tl.arange(0, BN)
    v = tl.load(x + rm[:, None] * BN + rn[None, :])
    tl.store(top + rm, tl.max(v, axis=1))
    tl.store(low + rm, tl.min(v, axis=1))
    tl.store(total + rm, tl.sum(v, axis=1))


@pytest.mark.parametrize("d", FP8, ids=str)
def test_reductions_of_fp8(backend, d):
    rng = np.random.default_rng(7)
    x = _small_fp8(d, (16, 64), rng)
    top, low = np.zeros(16, NUMPY[d]), np.zeros(16, NUMPY[d])
    total = np.zeros(16, np.float32)
    if launch(reductions, (1,), x, top, low, total, backend=backend, BM=16, BN=64):
        xs = x.astype(np.float32)
        np.testing.assert_array_equal(top.astype(np.float32), xs.max(axis=1))
        np.testing.assert_array_equal(low.astype(np.float32), xs.min(axis=1))
        np.testing.assert_array_equal(total, xs.sum(axis=1))  # exact: see _small_fp8


@tc.kernel
def matmul_descriptors(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr):
    """Tutorial 09's fp8 matmul through host descriptors: B given as its transpose, C fp8."""
    off_m, off_n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([off_n, k]).T, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@pytest.mark.parametrize("d", FP8, ids=str)
def test_matmul_through_host_descriptors(backend, d):
    rng = np.random.default_rng(9)
    m, n, k = 64, 32, 64
    a, bt = _small_fp8(d, (m, k), rng), _small_fp8(d, (n, k), rng)
    c = np.zeros((m, n), NUMPY[d])
    descs = (TensorDescriptor.from_tensor(a, [32, 32]), TensorDescriptor.from_tensor(bt, [32, 32]),
             TensorDescriptor.from_tensor(c, [32, 32]))
    if launch(matmul_descriptors, (2, 1), *descs, k, backend=backend, BM=32, BN=32, BK=32):
        exact = a.astype(np.float32) @ bt.astype(np.float32).T
        np.testing.assert_array_equal(c.view(np.uint8), reference_bits(exact, d))
