"""The tile language used inside kernels (``import compiler.language as tl``).

Kernel bodies are compiled, never executed by Python: the builtins here only name
things for the frontend, which maps each one to IR. Calling one outside a kernel raises.
Imports nothing heavy (no xDSL), so the launch path can use the dtypes.
"""

from __future__ import annotations

import inspect
import sys
import types

from compiler import libdevice as _libdevice
from compiler.compile_time import constexpr_function
from compiler.descriptors import (  # noqa: F401 - isinstance(x, tl.tensor_descriptor)
    tensor_descriptor,
    tensor_descriptor_base,
)
from compiler.dtypes import (  # noqa: F401 - tl.float32 etc. are the language's names
    ALL_DTYPES,
    bfloat16,
    bool_,
    dtype_from_numpy,
    dtype_from_str,
    float8e4nv,
    float8e5,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    literal_int_dtype,
    pointer_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from compiler.dtypes import dtype as _dtype

dtype = _dtype  # an assignment: builtins below name their parameters ``dtype``


class constexpr:
    """Annotation for compile-time arguments; they specialize the kernel. Around a function
    (``@tl.constexpr def accum_type(dt): ...``), as in Triton, it makes one a kernel calls
    at compile time (``tc.constexpr_function``)."""

    def __init__(self, value=None):
        self.value = constexpr_function(value) if inspect.isfunction(value) else value

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __repr__(self) -> str:
        return f"constexpr({self.value!r})"


class tensor:
    """The type of tile values, for annotations (``def helper(x: tl.tensor)``), as Triton's
    class; kernels make tiles with builtins, never by calling this."""


def _builtin(fn):
    """Mark ``fn`` as a kernel builtin: the frontend lowers it; Python may not call it."""

    def outside(*_args, **_kwargs):
        raise RuntimeError(
            f"tl.{fn.__name__} can only be used inside a @tc.kernel or @tc.func")

    outside.__name__ = fn.__name__
    outside.__doc__ = fn.__doc__
    outside.__tilec_builtin__ = fn.__name__
    return outside


MATH_FUNCTIONS: list[str] = []
"""One-operand math functions: the frontend lowers ``tl.<name>(x)`` to the ``math.<name>``
op, in floating point (integer operands become float32, as in Triton)."""


def _math_builtin(fn):
    MATH_FUNCTIONS.append(fn.__name__)
    return _builtin(fn)


@_builtin
def dot(a, b, acc=None, input_precision=None, out_dtype=None, allow_tf32=None):
    """``a @ b + acc`` of 2-D tiles (f16/bf16/fp8 and f32 accumulate in f32, int8 in int32)."""


@_builtin
def program_id(axis):
    """The index of this program along grid ``axis`` (0, 1 or 2)."""


@_builtin
def num_programs(axis):
    """The grid size along ``axis``."""


@_builtin
def arange(start, end):
    """The 1-D int32 tile ``[start, end)``; ``end - start`` must be a power of two."""


@_builtin
def zeros(shape, dtype):
    """A tile of zeros."""


@_builtin
def full(shape, value, dtype):
    """A tile filled with ``value``."""


@_builtin
def zeros_like(x):
    """Zeros with the shape and dtype of ``x``."""


@_builtin
def load(pointer, mask=None, other=None, boundary_check=None, padding_option=None,
         cache_modifier="", eviction_policy=""):
    """Read through ``pointer`` where ``mask`` holds, ``other`` elsewhere; through a
    block pointer, outside the ``boundary_check`` dimensions read zero (or NaN with
    ``padding_option="nan"``). ``cache_modifier``/``eviction_policy``: checked hints."""


@_builtin
def store(pointer, value, mask=None, boundary_check=None, cache_modifier="",
          eviction_policy=""):
    """Write ``value`` through ``pointer`` where ``mask`` holds; through a block pointer,
    nothing outside the ``boundary_check`` dimensions."""


@_builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    """A pointer to the ``block_shape`` block at ``offsets`` (elements) of the tensor of
    ``shape`` and ``strides`` at ``base``; ``order`` is a layout hint."""


@_builtin
def advance(base, offsets):
    """The block pointer ``base`` moved by ``offsets`` elements."""


@_builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"):
    """A tensor read and written in ``block_shape`` blocks: ``desc.load(offsets)``,
    ``desc.store(offsets, value)``; outside the tensor, loads read 0 (or NaN), stores skip."""


_experimental_make_tensor_descriptor = make_tensor_descriptor  # Triton 3.3's names, which
_experimental_tensor_descriptor = tensor_descriptor  # projects still call under version checks


@_builtin
def where(condition, x, y):
    """Elementwise ``condition ? x : y``."""


@_builtin
def maximum(x, y):
    """Elementwise maximum (NaN-propagating for floats)."""


@_builtin
def minimum(x, y):
    """Elementwise minimum (NaN-propagating for floats)."""


@_builtin
def clamp(x, lo, hi):
    """``minimum(maximum(x, lo), hi)``."""


@_builtin
def fma(x, y, z):
    """``x * y + z``."""


@_builtin
def cdiv(x, y):
    """Ceiling division ``(x + y - 1) // y``."""


@_builtin
def cast(x, dtype):
    """``x`` converted to ``dtype``."""


@_math_builtin
def exp(x):
    """e ** x"""


@_math_builtin
def exp2(x):
    """2 ** x"""


@_math_builtin
def log(x):
    """Natural logarithm."""


@_math_builtin
def log2(x):
    """Base-2 logarithm."""


@_math_builtin
def sqrt(x):
    """Square root."""


@_math_builtin
def rsqrt(x):
    """1 / sqrt(x)."""


@_math_builtin
def sin(x):
    """Sine."""


@_math_builtin
def cos(x):
    """Cosine."""


@_math_builtin
def erf(x):
    """The error function (an f32 polynomial sequence on GPU backends; see the README)."""


@_math_builtin
def tanh(x):
    """Hyperbolic tangent (an f32 sequence on GPU backends; see the README)."""


@_builtin
def pow(x, y):
    """``x ** y`` in floating point (C's ``pow`` for negative ``x``)."""


@_builtin
def div_rn(x, y):
    """``x / y`` rounded to nearest (what tilec's ``/`` on floats always is)."""


@_builtin
def fdiv(x, y, ieee_rounding=False):
    """``x / y`` on floats; tilec always rounds it to nearest."""


@_builtin
def sqrt_rn(x):
    """Square root rounded to nearest."""


@_builtin
def abs(x):
    """Absolute value."""


@_math_builtin
def floor(x):
    """Round toward -inf."""


@_math_builtin
def ceil(x):
    """Round toward +inf."""


@_builtin
def sigmoid(x):
    """1 / (1 + exp(-x))."""


@_builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """PTX text ``asm`` run for every ``pack`` elements of ``args`` (broadcast to one
    shape): ``$0``... the registers of the results (of ``dtype``, or a tuple of dtypes)
    and then of the operands, elements under 32 bits packed into 32-bit words;
    ``constraints`` are Triton's (``"=r,r,r"``). Only ptx runs it."""


@_builtin
def umulhi(x, y):
    """The high 32 (or 64) bits of the unsigned product of 32- (or 64-) bit integers."""


@_builtin
def philox(seed, c0, c1, c2, c3, n_rounds=10):
    """Philox 4x32 of the counter (c0, c1, c2, c3) under the 64-bit key ``seed``: four
    uint32 words, as Triton's ``tl.philox``."""


@_builtin
def randint4x(seed, offset, n_rounds=10):
    """Four uint32 random words per element of ``offset`` (Philox of (offset, 0, 0, 0))."""


@_builtin
def randint(seed, offset, n_rounds=10):
    """The first word of ``randint4x``: uint32 random bits per element of ``offset``."""


@_builtin
def rand(seed, offset, n_rounds=10):
    """float32 uniform in [0, 1) per element of ``offset``, as Triton draws it."""


@_builtin
def randn(seed, offset, n_rounds=10):
    """float32 standard normal per element of ``offset`` (Box-Muller), as Triton draws it."""


@_builtin
def static_assert(cond, msg=""):
    """Compile-time assertion on constexprs."""


@_builtin
def static_print(*values):
    """Print constexpr values at compile time."""


@_builtin
def static_range(start, stop=None, step=1):
    """Like ``range`` in a ``for`` loop, but unrolled at compile time (constexpr bounds)."""


@_builtin
def device_print(prefix, *values):
    """Print ``values`` (scalars or tiles) from every program, one line per element."""


@_builtin
def device_assert(cond, msg=""):
    """Fail the launch where ``cond`` is false (GPU backends: only with ``debug=True``)."""


@_builtin
def multiple_of(x, values):
    """``x``; the compiler may assume each run of contiguous values starts at a multiple
    of ``values`` (one int per dimension; a bare int for a scalar or 1-D tile)."""


@_builtin
def max_contiguous(x, values):
    """``x``; the compiler may assume it comes in aligned runs of ``values`` consecutive
    integers."""


@_builtin
def max_constancy(x, values):
    """``x``; the compiler may assume it comes in aligned runs of ``values`` equal values."""


@_builtin
def assume(cond):
    """A promise that ``cond`` holds (checked as ``device_assert`` is; see the README)."""


@_builtin
def debug_barrier():
    """Every thread of the program waits here for the others."""


@_builtin
def gdc_wait():
    """Programmatic dependent launch: wait for the kernel launched before this one
    (``tl.extra.cuda.gdc_wait``); a no-op, since tilec launches every kernel after the
    one before it has finished."""


@_builtin
def gdc_launch_dependents():
    """Programmatic dependent launch: let the next kernel start (a no-op, as above)."""


@_builtin
def range(start, stop=None, step=None, num_stages=None, loop_unroll_factor=None,
          disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False,
          disable_licm=False):
    """Like ``range`` in a ``for`` loop; ``num_stages`` sets that loop's prefetch depth;
    ``loop_unroll_factor`` and the flags are Triton's hints, accepted and ignored."""


@_builtin
def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer += val`` where ``mask`` holds; returns the old values. ``sem``
    is ``"relaxed"``, ``"acquire"``, ``"release"`` or ``"acq_rel"`` (the default), ``scope``
    ``"gpu"`` (the default), ``"cta"`` or ``"sys"``, as in Triton; so for every atomic."""


@_builtin
def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer = maximum(*pointer, val)``; returns the old values."""


@_builtin
def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer = minimum(*pointer, val)``; returns the old values."""


@_builtin
def atomic_and(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer &= val`` (integers); returns the old values."""


@_builtin
def atomic_or(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer |= val`` (integers); returns the old values."""


@_builtin
def atomic_xor(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer ^= val`` (integers); returns the old values."""


@_builtin
def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    """Atomically ``*pointer = val``; returns the old values."""


@_builtin
def atomic_cas(pointer, cmp, val, mask=None, sem=None, scope=None):
    """Atomically ``if *pointer == cmp: *pointer = val`` (bitwise); returns the old values."""


@_builtin
def sum(x, axis=None, keep_dims=False, dtype=None):
    """Sum along ``axis`` (every axis when None); ints narrower than 32 bits accumulate in
    int32 (uint32 if unsigned), bfloat16 and fp8 in float32, unless ``dtype`` says otherwise."""


@_builtin
def max(x, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    """Maximum along ``axis`` (NaN propagates); with ``return_indices``, (values, argmax)."""


@_builtin
def min(x, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False):
    """Minimum along ``axis`` (NaN propagates); with ``return_indices``, (values, argmin)."""


@_builtin
def xor_sum(x, axis=None, keep_dims=False):
    """Bitwise xor of integers along ``axis`` (every axis when None)."""


@_builtin
def argmax(x, axis=None, tie_break_left=True, keep_dims=False):
    """int32 index of the first maximum along ``axis`` (NaN counts as the maximum)."""


@_builtin
def argmin(x, axis=None, tie_break_left=True, keep_dims=False):
    """int32 index of the first minimum along ``axis`` (NaN counts as the minimum)."""


@_builtin
def reduce(x, axis, combine_fn, keep_dims=False):
    """Reduce a tile (or a tuple of tiles) along ``axis`` with a ``@tc.func`` taking
    (earlier..., later...) and returning the combination; it must be associative and
    commutative."""


@_builtin
def cumsum(x, axis=0, reverse=False, dtype=None):
    """Inclusive prefix sums along ``axis`` (accumulating as ``sum`` does)."""


@_builtin
def cumprod(x, axis=0, reverse=False):
    """Inclusive prefix products along ``axis``."""


@_builtin
def associative_scan(x, axis, combine_fn, reverse=False):
    """Inclusive scan of a tile (or a tuple of tiles) along ``axis`` with an associative
    ``@tc.func``; ``reverse`` scans from the end (flip, scan, flip)."""


@_builtin
def expand_dims(x, axis):
    """``x`` with dimensions of size 1 inserted at ``axis`` (an int or a tuple)."""


@_builtin
def broadcast_to(x, *shape):
    """``x`` stretched to ``shape`` by NumPy's rules."""


@_builtin
def broadcast(x, y):
    """``x`` and ``y`` stretched to their common shape."""


@_builtin
def reshape(x, *shape, can_reorder=False):
    """The elements of ``x``, in row-major order, in ``shape``."""


@_builtin
def view(x, *shape):
    """Triton's older ``reshape`` that may reorder elements; tilec keeps row-major order."""


@_builtin
def ravel(x):
    """``x`` as a 1-D tile, in row-major order."""


@_builtin
def trans(x, *dims):
    """``x`` with its dimensions permuted (reversed when ``dims`` is empty)."""


@_builtin
def permute(x, *dims):
    """``x`` with its dimensions in the order ``dims``."""


@_builtin
def join(a, b):
    """``a`` and ``b`` side by side along a new last dimension of size 2."""


@_builtin
def split(x):
    """The two halves of ``x`` along its last dimension (of size 2): the inverse of join."""


@_builtin
def interleave(a, b):
    """The elements of ``a`` and ``b`` alternating along the last dimension."""


@_builtin
def cat(a, b, can_reorder=False):
    """``a`` then ``b`` along dimension 0 (tilec keeps the order either way)."""


@_builtin
def flip(x, dim=None):
    """``x`` reversed along ``dim`` (the last dimension when None)."""


@_builtin
def gather(src, index, axis):
    """``src`` indexed along ``axis`` by the integer tile ``index`` (indices clamped)."""


@_builtin
def sort(x, dim=None, descending=False):
    """``x`` sorted along its last dimension (bitonic network, not stable; NaN last)."""


@_builtin
def topk(x, k, dim=None):
    """The ``k`` largest values along the last dimension, largest first."""


@_builtin
def histogram(x, num_bins, mask=None):
    """int32 counts of the values ``0 .. num_bins - 1`` in the 1-D tile ``x``."""


@_builtin
def swizzle2d(i, j, size_i, size_j, size_g):
    """``(i, j)`` of a row-major grid renumbered to walk groups of ``size_g`` rows column
    by column (for L2 reuse), as Triton's."""


# -- tl.math and tl.extra.libdevice: Triton's other spellings of the math builtins -------

def _namespace(name: str, doc: str, members: dict) -> types.ModuleType:
    """A module object ``name`` (importable: it is put in ``sys.modules``)."""
    mod = types.ModuleType(name, doc)
    mod.__dict__.update(members)
    sys.modules[name] = mod
    return mod


def _libdevice_stub(name: str, doc: str):
    def stub(*args):
        pass
    stub.__name__, stub.__doc__ = name, doc
    return _builtin(stub)


_MATH_NAMES = (*MATH_FUNCTIONS, "abs", "fma", "umulhi", "pow", "div_rn", "fdiv", "sqrt_rn",
               "cdiv", "maximum", "minimum", "clamp", "sigmoid")
_LIBDEVICE = {n: _libdevice_stub(n, _libdevice.FLOAT.get(n) or _libdevice.INTEGER.get(n) or
                                 f"libdevice's ``{n}``") for n in _libdevice.NAMES}
math = _namespace(f"{__name__}.math", "``tl.math``: the math builtins under Triton's module.",
                  {n: globals()[n] for n in _MATH_NAMES} | _LIBDEVICE)
extra = _namespace(f"{__name__}.extra", "``tl.extra``: holds ``libdevice``.", {})
extra.libdevice = _namespace(
    f"{__name__}.extra.libdevice",
    "``tl.extra.libdevice``: CUDA libdevice's names (without ``__nv_`` and the ``f``).",
    {n: globals()[n] for n in _MATH_NAMES} | {"fabs": abs} | _LIBDEVICE)
libdevice = extra.libdevice  # Triton 2.0's ``tl.libdevice``, still in projects' kernels
