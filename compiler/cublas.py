"""cuBLASLt's matrix product on CUDA arrays, through ctypes: the vendor kernel tilec's are
measured against (``benchmarks/``), and what Triton programs reach as
``triton._C.libtriton.nvidia.cublas`` (``compiler/triton/_C``).

``CublasLt(workspace).matmul(a, b, c)`` computes ``c = a @ b.T`` for row-major CUDA arrays
``a`` (M, K), ``b`` (N, K) and ``c`` (M, N), accumulating in f32, on the current stream
of the arrays' library (PyTorch's or CuPy's; the legacy default stream for other arrays).
Arrays are PyTorch CUDA tensors (read by ``data_ptr()``, fp8 included) or anything with
``__cuda_array_interface__``; rows may be padded (a row stride above the row length), the
last stride must be 1. Element types: f16, bf16 or f32 operands, with a result of their
type or f32; fp8 e4m3 operands (``torch.float8_e4m3fn``) with an fp8 e4m3, f16, bf16 or
f32 result (sm_89 and newer). Anything else is a ``LaunchError`` naming the argument,
raised before cuBLAS is called.

cuBLAS is column-major: a row-major (R, C) array is, at the same address, the
column-major C x R matrix. So the product computed is c^T = b a^T, with cuBLAS's first
operand ``b``'s memory transposed and its second ``a``'s as it is: the "TN" form, the only
one cuBLASLt's fp8 kernels take on Hopper. The algorithm is cuBLASLt's first heuristic
choice for the shape, asked once per shape and kept.

The library (``candidates()``, ``load()``): the libcublasLt this process already loaded
(PyTorch's), else the nvidia-cublas pip package's (``nvidia/cublas/lib`` under a
``sys.path`` entry), ``$CUDA_HOME``/``$CUDA_PATH``/``/usr/local/cuda`` ``lib64``, then the
linker's search path. Finding and loading it needs no GPU and no PyTorch.

While a ``compiler.triton.profiler`` session records, each product is timed and recorded
as a launch named ``cublasLt_matmul``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import sys
from ctypes import byref, c_float, c_int, c_int32, c_int64, c_size_t, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any

import numpy as np

import compiler.jit
import compiler.language as tl
from compiler.errors import (
    BackendUnavailableError,
    LaunchError,
    argument_error,
    contiguous_fix,
    describe_value,
    unsupported_dtype,
)
from compiler.specialize import cai_dtype, cuda_interface

LIBRARY = "libcublasLt.so"
CUDA_DEFAULT = "/usr/local/cuda"  # the toolkit looked in after $CUDA_HOME and $CUDA_PATH
PROFILE_NAME = "cublasLt_matmul"

RESULTS = {tl.float16: (tl.float16, tl.float32), tl.bfloat16: (tl.bfloat16, tl.float32),
           tl.float32: (tl.float32,),
           tl.float8e4nv: (tl.float8e4nv, tl.float16, tl.bfloat16, tl.float32)}
"""Operand type -> the result types cuBLASLt computes from it here."""

_CUDA_TYPES = {tl.float32: 0, tl.float16: 2, tl.bfloat16: 14, tl.float8e4nv: 28}  # cudaDataType
_COMPUTE_32F = 68  # cublasComputeType_t
_OP_N, _OP_T = 0, 1  # cublasOperation_t
_DESC_TRANSA, _DESC_TRANSB = 3, 4  # cublasLtMatmulDescAttributes_t
_PREF_MAX_WORKSPACE_BYTES = 1  # cublasLtMatmulPreferenceAttributes_t
_STATUS = {1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH",
           11: "MAPPING_ERROR", 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR",
           15: "NOT_SUPPORTED", 16: "LICENSE_ERROR"}

_P = c_void_p
_SIGNATURES = {
    "cublasLtCreate": [_P],
    "cublasLtDestroy": [_P],
    "cublasLtMatmulDescCreate": [_P, c_int, c_int],
    "cublasLtMatmulDescSetAttribute": [_P, c_int, _P, c_size_t],
    "cublasLtMatmulDescDestroy": [_P],
    "cublasLtMatrixLayoutCreate": [_P, c_int, c_uint64, c_uint64, c_int64],
    "cublasLtMatrixLayoutDestroy": [_P],
    "cublasLtMatmulPreferenceCreate": [_P],
    "cublasLtMatmulPreferenceSetAttribute": [_P, c_int, _P, c_size_t],
    "cublasLtMatmulPreferenceDestroy": [_P],
    "cublasLtMatmulAlgoGetHeuristic": [_P] * 7 + [c_int, _P, _P],
    "cublasLtMatmul": [_P] * 14 + [c_size_t, _P],
}


class _Heuristic(ctypes.Structure):
    """``cublasLtMatmulHeuristicResult_t``: an algorithm and what it needs."""

    _fields_ = [("algo", c_uint64 * 8), ("workspace_size", c_size_t), ("state", c_int),
                ("waves_count", c_float), ("reserved", c_int * 4)]


# ---------------------------------------------------------------- the library

def candidates() -> list[str]:
    """Where libcublasLt may be, in the order ``load()`` tries them (see the module
    docstring); each file once."""
    found = [p for p in _mapped_files() if os.path.basename(p).startswith(LIBRARY)]
    for entry in sys.path:
        for package in ("cublas", "cu*"):  # CUDA 12 wheels, and CUDA 13's nvidia/cu13
            found += sorted(glob.glob(os.path.join(entry or ".", "nvidia", package, "lib",
                                                   LIBRARY + "*")))
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), CUDA_DEFAULT):
        if root:
            found += sorted(glob.glob(os.path.join(root, "lib64", LIBRARY + "*")))
    linked = ctypes.util.find_library("cublasLt")
    if linked:
        found.append(linked)
    unique: dict[str, str] = {}
    for path in found:
        unique.setdefault(os.path.realpath(path) if os.path.isabs(path) else path, path)
    return list(unique.values())


def _mapped_files() -> list[str]:
    """The files this process has mapped (Linux): a library PyTorch loaded is among them."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            return [line.split(maxsplit=5)[5].strip() for line in f
                    if len(line.split(maxsplit=5)) == 6]
    except OSError:
        return []


@functools.cache
def load() -> ctypes.CDLL:
    """libcublasLt, from the first of ``candidates()`` that loads (once per process)."""
    return open_library(candidates())


def open_library(paths: list[str]) -> ctypes.CDLL:
    """The first of ``paths`` that loads as libcublasLt; a ``BackendUnavailableError``
    saying where it looked when none does."""
    if not paths:
        raise BackendUnavailableError(
            "cuBLASLt (libcublasLt.so) was not found: not loaded in this process, not in the "
            "nvidia-cublas pip package (nvidia/cublas/lib under site-packages), not under "
            "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda (lib64), not on the linker's path; "
            "install it (pip install nvidia-cublas-cu12; PyTorch's CUDA wheels bring it) or "
            "set CUDA_HOME to a CUDA toolkit")
    problems = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            for name, argtypes in _SIGNATURES.items():
                function = getattr(lib, name)
                function.argtypes, function.restype = argtypes, c_int
            return lib
        except (OSError, AttributeError) as e:
            problems.append(f"{path}: {e}")
    raise BackendUnavailableError("cuBLASLt could not be loaded from any of "
                                  f"{len(paths)} candidates ({'; '.join(problems)})")


def _check(status: int, what: str) -> None:
    if status != 0:
        raise LaunchError(f"{what} failed: CUBLAS_STATUS_{_STATUS.get(status, status)}")


# ---------------------------------------------------------------- arrays

@dataclass(frozen=True)
class Matrix:
    """A CUDA array as cuBLASLt takes it: address, element type, shape, strides (in
    elements), GPU (None: unknown, a null pointer), and the library whose current stream
    it is used on (``"torch"``, ``"cupy"`` or None)."""

    ptr: int
    dtype: tl.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    device: int | None
    source: str | None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.bits // 8

    @property
    def ld(self) -> int:
        """The row stride: cuBLAS's leading dimension of the column-major transpose."""
        return self.strides[0] if self.shape[0] > 1 else max(self.shape[1], 1)


def matrix(name: str, v: Any) -> Matrix:
    """Argument ``name`` of a product, described (any rank: ``matmul`` checks it)."""
    if type(v).__module__.startswith("torch"):
        if not v.is_cuda:
            raise argument_error(name, f"{describe_value(v)} is not on a CUDA device",
                                 "{}.cuda()")
        try:
            dtype = tl.dtype_from_str(str(v.dtype).removeprefix("torch."))
        except ValueError:
            raise unsupported_dtype(v, v.dtype).named(name) from None
        return Matrix(v.data_ptr(), dtype, tuple(v.shape), tuple(v.stride()),
                      v.get_device(), "torch")
    cai = cuda_interface(v)
    if cai is None:
        raise argument_error(name, "expected a CUDA array (a PyTorch CUDA tensor or an array "
                                   f"with __cuda_array_interface__), got {describe_value(v)}")
    dtype = cai_dtype(v, cai["typestr"])
    if dtype is None:
        raise unsupported_dtype(v, getattr(v, "dtype", cai["typestr"])).named(name)
    shape, itemsize = tuple(cai["shape"]), np.dtype(cai["typestr"]).itemsize
    strides = tuple(s // itemsize for s in cai["strides"]) if cai.get("strides") else \
        tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
    ptr = cai["data"][0]
    device = compiler.jit.backend_module("ptx")._device_of([v]) if ptr else None
    source = "cupy" if type(v).__module__.startswith("cupy") else None
    return Matrix(ptr, dtype, shape, strides, device, source)


def check_product(a: Matrix, b: Matrix, c: Matrix, arrays: tuple) -> None:
    """Refuse operands ``matmul`` cannot give cuBLASLt (ranks, shapes, layouts, types),
    naming the argument; ``arrays`` are the arguments themselves, for the messages."""
    for name, m, v in zip("abc", (a, b, c), arrays):
        if len(m.shape) != 2:
            raise argument_error(name, f"expected a 2-D array, got {describe_value(v)}")
        rows, cols = m.shape
        if (cols > 1 and m.strides[1] != 1) or (rows > 1 and m.strides[0] < cols):
            raise argument_error(name, f"{describe_value(v, strides=True)} is not row-major "
                                       "(a last stride of 1, rows not overlapping)",
                                 contiguous_fix(v))
    if a.shape[1] != b.shape[1] or c.shape != (a.shape[0], b.shape[0]):
        raise LaunchError(f"matmul(a, b, c) computes c = a @ b.T with a (M, K), b (N, K) and "
                          f"c (M, N); got a {a.shape}, b {b.shape}, c {c.shape}")
    if 0 in a.shape or 0 in b.shape:
        raise LaunchError(f"matmul(a, b, c) of an empty product (a {a.shape}, b {b.shape}): "
                          "skip the call when there is nothing to compute")
    if a.dtype != b.dtype:
        raise argument_error("b", f"its dtype {b.dtype} differs from a's ({a.dtype})")
    results = RESULTS.get(a.dtype)
    if results is None:
        accepted = ", ".join(map(str, RESULTS))
        raise argument_error("a", f"cuBLASLt products here take operands of {accepted}; "
                                  f"got {describe_value(arrays[0])}")
    if c.dtype not in results:
        raise argument_error("c", f"a product of {a.dtype} operands is stored as "
                                  f"{' or '.join(map(str, results))}; got "
                                  f"{describe_value(arrays[2])}")


# ---------------------------------------------------------------- products

@dataclass
class _Plan:
    """What one kind of product (types, shapes, row strides) launches with: cuBLASLt's
    descriptors and the algorithm its heuristic chose. ``c_type`` is the type of the C
    operand, which cuBLASLt wants f16 when the result is fp8 (beta is 0: C is not read)."""

    desc: c_void_p
    layouts: tuple[c_void_p, ...]  # A, B, C, D
    algo: Any  # the heuristic's cublasLtMatmulAlgo_t
    c_type: tl.dtype


class CublasLt:
    """cuBLASLt on the GPU that holds ``workspace`` (a CUDA array it may use as scratch,
    Triton's ``CublasLt(workspace)``): ``matmul(a, b, c)`` (the module docstring)."""

    def __init__(self, workspace: Any):
        self.workspace = matrix("workspace", workspace)
        self._keep = workspace  # cuBLAS writes there: the array must outlive this object
        self._lib = load()
        self._ptx = compiler.jit.backend_module("ptx")
        self._device = self._ptx.Device(self.workspace.device)
        self._device.set_current()
        self._handle = c_void_p()
        _check(self._lib.cublasLtCreate(byref(self._handle)), "cublasLtCreate")
        self._plans: dict[tuple, _Plan] = {}

    @property
    def device(self) -> int:
        return self._device.device_id

    def matmul(self, a: Any, b: Any, c: Any) -> None:
        """``c = a @ b.T`` (the module docstring), on the arrays' current stream."""
        arrays = (a, b, c)
        ma, mb, mc = (matrix(n, v) for n, v in zip("abc", arrays))
        check_product(ma, mb, mc, arrays)
        for name, m, v in zip("abc", (ma, mb, mc), arrays):
            if m.device not in (None, self.device):
                raise argument_error(name, f"{describe_value(v)} is on GPU {m.device}; this "
                                           f"CublasLt's workspace is on GPU {self.device}")
        key = (ma.dtype, mc.dtype, ma.shape, mb.shape, ma.ld, mb.ld, mc.ld)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(ma, mb, mc)
        source = next((m.source for m in (ma, mb, mc) if m.source), None)
        stream = self._ptx._current_stream(source, self.device)
        profile = compiler.jit.PROFILE
        if profile is None:
            self._run(plan, ma, mb, mc, stream)
        else:  # a profile is recording: it times the product
            profile(PROFILE_NAME, "ptx", lambda: self._run(plan, ma, mb, mc, stream), None)

    def _run(self, plan: _Plan, a: Matrix, b: Matrix, c: Matrix, stream: int) -> None:
        self._device.set_current()
        alpha, beta = c_float(1.0), c_float(0.0)
        a_layout, b_layout, c_layout, d_layout = plan.layouts
        _check(self._lib.cublasLtMatmul(
            self._handle, plan.desc, byref(alpha), b.ptr, a_layout, a.ptr, b_layout,
            byref(beta), c.ptr if plan.c_type == c.dtype else None, c_layout, c.ptr,
            d_layout, byref(plan.algo), self.workspace.ptr, self.workspace.nbytes, stream),
            "cublasLtMatmul")

    def _plan(self, a: Matrix, b: Matrix, c: Matrix) -> _Plan:
        """Descriptors of c^T (N x M) = b (N x K, stored K x N: transposed) times a^T
        (K x M, stored so), and the heuristic's algorithm for them."""
        lib, (m, k), n = self._lib, a.shape, b.shape[0]
        desc = c_void_p()
        _check(lib.cublasLtMatmulDescCreate(byref(desc), _COMPUTE_32F,
                                            _CUDA_TYPES[tl.float32]), "cublasLtMatmulDescCreate")
        for attribute, op in ((_DESC_TRANSA, _OP_T), (_DESC_TRANSB, _OP_N)):
            value = c_int32(op)
            _check(lib.cublasLtMatmulDescSetAttribute(desc, attribute, byref(value), 4),
                   "cublasLtMatmulDescSetAttribute")
        c_type = tl.float16 if c.dtype.is_fp8() else c.dtype
        layouts = tuple(self._layout(*spec) for spec in (
            (a.dtype, k, n, b.ld), (a.dtype, k, m, a.ld), (c_type, n, m, c.ld),
            (c.dtype, n, m, c.ld)))
        plan = _Plan(desc, layouts, None, c_type)
        try:
            result = self._heuristic(desc, layouts)
            if result is None:
                raise LaunchError(f"cuBLASLt has no algorithm on this GPU for a {m}x{n}x{k} "
                                  f"product of {a.dtype} operands into {c.dtype}")
        except LaunchError:
            self._free(plan)
            raise
        plan.algo = result.algo
        return plan

    def _layout(self, dtype: tl.dtype, rows: int, cols: int, ld: int) -> c_void_p:
        layout = c_void_p()
        _check(self._lib.cublasLtMatrixLayoutCreate(byref(layout), _CUDA_TYPES[dtype], rows,
                                                    cols, ld), "cublasLtMatrixLayoutCreate")
        return layout

    def _heuristic(self, desc: c_void_p, layouts: tuple) -> _Heuristic | None:
        """cuBLASLt's first choice of algorithm within the workspace, or None."""
        lib, pref = self._lib, c_void_p()
        _check(lib.cublasLtMatmulPreferenceCreate(byref(pref)),
               "cublasLtMatmulPreferenceCreate")
        try:
            size = c_uint64(self.workspace.nbytes)
            _check(lib.cublasLtMatmulPreferenceSetAttribute(
                pref, _PREF_MAX_WORKSPACE_BYTES, byref(size), 8),
                "cublasLtMatmulPreferenceSetAttribute")
            result, count = _Heuristic(), c_int()
            _check(lib.cublasLtMatmulAlgoGetHeuristic(self._handle, desc, *layouts, pref, 1,
                                                      byref(result), byref(count)),
                   "cublasLtMatmulAlgoGetHeuristic")
        finally:
            lib.cublasLtMatmulPreferenceDestroy(pref)
        return result if count.value else None

    def _free(self, plan: _Plan) -> None:
        self._lib.cublasLtMatmulDescDestroy(plan.desc)
        for layout in plan.layouts:
            self._lib.cublasLtMatrixLayoutDestroy(layout)

    def __del__(self) -> None:
        if getattr(self, "_handle", None):  # made: __init__ got as far as cublasLtCreate
            for plan in self._plans.values():
                self._free(plan)
            self._lib.cublasLtDestroy(self._handle)


__all__ = ["CUDA_DEFAULT", "LIBRARY", "PROFILE_NAME", "RESULTS", "CublasLt", "Matrix",
           "candidates", "check_product", "load", "matrix", "open_library"]
