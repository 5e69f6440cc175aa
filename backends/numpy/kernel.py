"""The core of the NumPy backend's interpreter: ``Kernel`` runs a tile-IR kernel on the
user's NumPy arrays, in place, with the op meanings registered in its tables.

Input: a ``builtin.module`` holding one ``func.func`` of tile, arith and math ops (tile IR,
with or without layouts). Output: the kernel's stores, written into the argument arrays.

All programs of the grid run at once: every SSA value has a leading program axis whose
length is the number of programs in the batch, or 1 when the value is the same in every
program (constants, ranges, arguments); NumPy broadcasting widens those for free. A scalar
is an array ``(L,)``, a tile ``(L, *shape)``, a pointer ``Ptr(argument index, int64
element offsets)``. Huge grids run in batches of programs so memory stays bounded;
``serial=True`` runs one program at a time, the fallback for ops whose effect depends on
the order of programs (atomics) and for control flow whose split batches cannot be put
together again (``control.py``).

The kernel is compiled once into a flat list of steps ``(impl, operand slots, result
slots, slots dead after it)`` over a list of SSA values, so a launch is a tight loop. Region
ops (scf.for, scf.if, scf.while) fit the same scheme: slots are numbered over the whole
function and liveness already counts uses inside nested regions, so their builders compile
the nested blocks with ``Kernel.compile_block`` and their impls run them with ``Batch.run``
on the same environment. A value's array goes back to the thread's ``pool.Pool`` when the
value dies, and the ops that make large arrays take their outputs from it: a fresh array
of megabytes costs more (page faults) than the pass that fills it.

Two things spare passes over memory. A load of consecutive elements from an array that no
store of the launch can reach (``Param.written``, and no overlap with a written array)
returns a read-only view of it, not a copy. And a value may be ``Lazy``, kept in a form
cheaper than its array (``ramps.py``: ``pid * BLOCK + tl.arange(0, BLOCK)`` as row
starts): the ops in ``LAZY_USERS`` take it as it is, any other gets its ``dense()`` array.

Why not xDSL's ``Interpreter``: measured with xdsl 0.74 on a 17-op kernel, its dispatch costs
~6 us per op against ~0.5 us for this loop, and its impls would re-read types and attributes
on every run. That is noise when the grid runs at once, but the one-program-at-a-time
fallback runs the op list once per program (1024 programs: ~110 ms of dispatch alone), and
none of xDSL's arith/scf implementations apply to values with a program axis, so the
framework would contribute only the dispatch.

Each op's meaning is registered by the feature modules (``ops``, ``atomics``, ``combine``,
``shapes``, ``control``; ``interpreter`` imports them all): ``BUILDERS`` maps an op name
to a builder that reads the op's types and attributes once and returns its implementation
``impl(batch, *operands) -> tuple of results``; ``KERNEL_BUILDERS`` holds the builders that
also need the ``Kernel`` (region ops compile their blocks with it); ``SERIAL_CHECKS`` holds
the tests of whether a kernel must run one program at a time. This module also holds how
values are stored (``Ptr``, ``np_dtype``, ``shape``) and how the user's arguments are bound.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from backends.numpy.pool import SOLE_REFS, Pool, recyclable, thread_pool
from backends.numpy.rows import load as load_rows
from backends.numpy.rows import store as store_rows
from compiler.context import source_loc
from compiler.device_arrays import host_view, span_view
from compiler.errors import (
    ArgumentError,
    LaunchError,
    OutOfBoundsError,
    UnsupportedError,
    argument_error,
    describe_value,
)
from compiler.fp8 import numpy_dtype
from compiler.kinfo import GRID_LIMITS, MAX_GRID, KernelInfo, Param
from compiler.language import dtype_from_str
from dialects.tile import PtrType, element_type

Impl = Callable[..., tuple]
Builder = Callable[[Operation], Impl]
KernelBuilder = Callable[[Operation, "Kernel"], Impl]
Step = tuple[Impl, tuple[int, ...], tuple[int, ...], tuple[int, ...]]
Binder = Callable[[Any], tuple[Any, np.ndarray | None]]

# What each op means, filled in by the feature modules (see the module docstring).
BUILDERS: dict[str, Builder] = {}
KERNEL_BUILDERS: dict[str, KernelBuilder] = {}
SERIAL_CHECKS: list[Callable[[func.FuncOp], bool]] = []
# Values some op makes as a ``Lazy`` (tests on the SSA value), and the ops that take them
# as they are; any other op gets them ``dense()``.
LAZY_VALUES: list[Callable[[SSAValue], bool]] = []
LAZY_USERS: set[str] = set()

_BATCH_ELEMENTS = 1 << 22  # elements of the largest tile value over a batch's programs
_ID_SPAN = 1 << 16  # programs whose ids are made at once
_ZERO_OFFSET = np.zeros(1, np.int64)
_RUN_MIN = 1 << 12  # offsets worth testing for one consecutive run
_BOOL = np.dtype(np.bool_)


# -- values -------------------------------------------------------------------------------

class Lazy:
    """A value kept in a form cheaper than its array (``ramps.Ramp``)."""

    __slots__ = ()

    def dense(self) -> np.ndarray:
        raise NotImplementedError


def all_set(mask: np.ndarray) -> bool:
    """``mask.all()``, without a pass over a mask that is one value broadcast."""
    return bool(mask[(0,) * mask.ndim]) if not any(mask.strides) else bool(mask.all())


class Ptr:
    """Pointers into kernel argument ``buf``: int64 element offsets ``off`` of ``shape``,
    program axis first. Two shapes of offsets are known without them, and ``off`` is then
    only made if some op asks for it: ``run``, the first of offsets that rise by one in C
    order (a batch of programs on consecutive blocks; a load or store is one slice), and
    ``rows``, the starts of rows that rise by one along the last axis (``rows.py``)."""

    __slots__ = ("_off", "buf", "rows", "run", "shape")

    def __init__(self, buf: int, off: np.ndarray | None, run: int | None = None,
                 shape: tuple[int, ...] = (), rows: np.ndarray | None = None):
        self.buf, self.run, self.rows, self._off = buf, run, rows, off
        self.shape = shape if off is None else off.shape

    @classmethod
    def consecutive(cls, buf: int, run: int, shape: tuple[int, ...]) -> Ptr:
        return cls(buf, None, run, shape)

    @classmethod
    def of_rows(cls, buf: int, starts: np.ndarray, shape: tuple[int, ...]) -> Ptr:
        return cls(buf, None, None, shape, starts)

    @property
    def off(self) -> np.ndarray:
        if self._off is None and self.rows is not None:
            self._off = self.rows[..., None] + np.arange(self.shape[-1], dtype=np.int64)
        elif self._off is None:
            self._off = np.arange(self.run, self.run + math.prod(self.shape),
                                  dtype=np.int64).reshape(self.shape)
        return self._off


_INTS = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_FLOATS = {Float16Type: np.float16, Float32Type: np.float32, Float64Type: np.float64}


def ml_dtype(short: str) -> np.dtype:
    """ml_dtypes' bfloat16 or fp8 dtype (``short``: bf16, fp8e4nv, fp8e5); NumPy alone has
    none of them."""
    try:
        return numpy_dtype(short)
    except UnsupportedError:
        raise UnsupportedError(
            f"dtype {short} needs the ml_dtypes package on the numpy backend") from None


_ML_TYPES = {BFloat16Type: "bf16", Float8E4M3FNType: "fp8e4nv", Float8E5M2Type: "fp8e5"}


def np_dtype(t: Attribute) -> np.dtype:
    """The NumPy dtype holding values of scalar or tile type ``t`` (pointers: the pointee)."""
    t = element_type(t)
    if isinstance(t, PtrType):
        t = t.pointee
    if isinstance(t, IntegerType) and t.width.data in _INTS:
        return np.dtype(_INTS[t.width.data])
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if type(t) in _FLOATS:
        return np.dtype(_FLOATS[type(t)])
    if type(t) in _ML_TYPES:
        return ml_dtype(_ML_TYPES[type(t)])
    raise UnsupportedError(f"type {t} is not supported by the numpy backend")


def shape(t: Attribute) -> tuple[int, ...]:
    """The tile shape of ``t`` (``()`` for a scalar)."""
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


# -- compiling and running ------------------------------------------------------------------

class Kernel:
    """A tile-IR kernel compiled to NumPy steps; ``launch`` runs it."""

    def __init__(self, module: ModuleOp, info: KernelInfo):
        fn = _kernel_func(module)
        args = fn.body.block.args
        if len(args) != len(info.params):
            raise ValueError(f"kernel {info.name}: {len(info.params)} params for "
                             f"{len(args)} IR arguments")
        self.info = info
        self._slots: dict[SSAValue, int] = {}
        self.arg_slots = [self.slot(a) for a in args]
        self.binders = [_binder(i, p, a.type, fn)
                        for i, (p, a) in enumerate(zip(info.params, args, strict=True))]
        with np.errstate(all="ignore"):  # constants such as 1e10 : f16 overflow on purpose
            self.steps = self.compile_block(fn.body.block)
        self.largest = _largest_tile(fn)  # elements of its largest tile value
        # memory effects depend on program order, or control flow on the program
        self.serial = any(needs_serial(fn) for needs_serial in SERIAL_CHECKS)

    def slot(self, value: SSAValue) -> int:
        return self._slots.setdefault(value, len(self._slots))

    def compile_block(self, block: Block) -> list[Step]:
        """Steps for ``block``'s ops. Each step also drops the values defined in this block
        that it uses last: freeing them early bounds memory and lets the allocator reuse
        big buffers instead of faulting in fresh pages."""
        body = [op for op in block.ops if op.name != "func.return"]  # kernels return nothing
        last_use: dict[int, int] = {}
        for i, op in enumerate(body):
            for r in op.results:
                last_use[self.slot(r)] = i
            # Uses inside nested regions count as uses by the op that holds them.
            for inner in op.walk():
                for v in inner.operands:
                    last_use[self.slot(v)] = i
        local = {self.slot(r) for op in body for r in op.results}
        dead: list[list[int]] = [[] for _ in body]
        for slot, i in last_use.items():
            if slot in local:
                dead[i].append(slot)
        return [(self._build(op), tuple(self.slot(v) for v in op.operands),
                 tuple(self.slot(r) for r in op.results), tuple(d))
                for op, d in zip(body, dead, strict=True)]

    def _build(self, op: Operation) -> Impl:
        """``op``'s impl, made to take its ``Lazy`` operands dense unless it knows them."""
        impl = _build(op, self)
        lazy = () if op.name in LAZY_USERS else tuple(
            i for i, v in enumerate(op.operands) if any(test(v) for test in LAZY_VALUES))
        return partial(_dense_operands, impl, lazy) if lazy else impl

    def launch(self, grid: Sequence[int], args: Sequence[Any], serial: bool = False) -> None:
        """Run the grid on ``args`` (NumPy arrays are written in place)."""
        grid = _check_grid(grid)
        if len(args) != len(self.binders):
            raise LaunchError(f"kernel {self.info.name} takes {len(self.binders)} arguments, "
                              f"got {len(args)}")
        with np.errstate(all="ignore"):  # NaN, inf and wrapping are the semantics, not news
            bound = [bind(a) for bind, a in zip(self.binders, args, strict=True)]
            bufs = [buf for _, buf in bound]
            shared = _read_in_place(self.info.params, bufs)
            programs = math.prod(grid)
            num_programs = tuple(np.full(1, g, np.int32) for g in grid)
            # read at each launch: a batch size set for one launch must not stay with the kernel
            step = 1 if serial or self.serial else max(1, _BATCH_ELEMENTS // self.largest)
            pool = thread_pool()  # reuses the arrays of earlier batches and launches
            # the ids of a span of batches at once: a grid may hold 2**31 programs
            span = step * max(1, _ID_SPAN // step)
            for first in range(0, programs, span):
                pids = _program_ids(grid, first, min(first + span, programs))
                for start in range(0, pids.shape[1], step):
                    env: list[Any] = [None] * len(self._slots)
                    for slot, (value, _) in zip(self.arg_slots, bound, strict=True):
                        env[slot] = value
                    batch = Batch(self.info.params, bufs, pids[:, start:start + step],
                                  num_programs, env, pool, shared)
                    batch.run(self.steps)
                    batch.release_all()


class Batch:
    """Programs run together: their ids, the launch's arrays and the SSA values."""

    def __init__(self, params: list[Param], bufs: list[np.ndarray | None], pid: np.ndarray,
                 num_programs: tuple[np.ndarray, ...], env: list[Any], pool: Pool,
                 shared: Sequence[bool] = ()):
        self.params = params
        self.bufs = bufs  # flat views of the argument arrays (None for scalars)
        self.shared = shared  # per argument: loads may return views of its memory
        self.pid = pid  # (3, L) int32: program ids along each grid axis
        self.num_programs = num_programs
        self.env = env
        self.pool = pool
        self.yielded: tuple = ()  # operands of the last scf.yield / scf.condition run
        self._widened: tuple[np.ndarray, np.ndarray | None, int | None] | None = None  # widen

    def run(self, steps: list[Step]) -> None:
        env = self.env
        for impl, ins, outs, dead in steps:
            for slot, value in zip(outs, impl(self, *[env[i] for i in ins]), strict=True):
                env[slot] = value
            value = None  # a release must see the only reference to its value
            for slot in dead:
                release(self, env, slot)

    def release_all(self) -> None:
        self._widened = None
        env = self.env
        for slot in range(len(env)):
            if env[slot] is not None:
                release(self, env, slot)

    def widen(self, off: np.ndarray) -> tuple[np.ndarray | None, int | None]:
        """``off`` as int64 (None when it is one consecutive run: nothing needs it), to be
        read only, and its ``run_start``. The last answer is reused for the same array, as
        the pointers into several arguments usually share one index tile."""
        if self._widened is None or self._widened[0] is not off:
            run, wide = run_start(off, self.pool), off
            if run is not None:
                wide = None
            elif off.dtype != np.int64:
                wide = self.pool.empty(off.shape, np.dtype(np.int64))
                np.copyto(wide, off)
            self._widened = (off, wide, run)
        return self._widened[1], self._widened[2]

    def load(self, op: Operation, ptr: Ptr, mask: np.ndarray | None,
             other: np.ndarray) -> np.ndarray:
        """Gather; ``other`` where ``mask`` is false."""
        mem = self.bufs[ptr.buf]
        full = mask is None or all_set(mask)
        if ptr.rows is not None:
            values = load_rows(self, ptr, mem, None if full else mask, other)
            if values is not None:
                return values
        if full:  # the common full tile skips two passes
            size = math.prod(ptr.shape)
            if ptr.run is None or not 0 <= ptr.run <= mem.size - size:
                self._check(op, "load", ptr.buf, ptr.off, None)
                values = self.pool.empty(ptr.shape, mem.dtype)
                return np.take(mem, ptr.off, mode="clip", out=values)  # "clip": checked
            run = mem[ptr.run:ptr.run + size].reshape(ptr.shape)
            if self.shared and self.shared[ptr.buf]:
                run.flags.writeable = False  # no op may write a value it was given
                return run
            values = self.pool.empty(ptr.shape, mem.dtype)
            np.copyto(values, run)
            return values
        off, mask = np.broadcast_arrays(ptr.off, mask)
        self._check(op, "load", ptr.buf, off, mask)
        if not mem.size:
            return np.where(mask, np.zeros((), mem.dtype), other)
        # Masked-off lanes may point anywhere: "clip" reads some element for them, which
        # ``other`` then replaces, instead of a pass rewriting their offsets first.
        values = np.take(mem, off, mode="clip", out=self.pool.empty(off.shape, mem.dtype))
        if other.dtype != values.dtype or np.broadcast_shapes(values.shape, other.shape) \
                != values.shape:
            return np.where(mask, values, other)
        np.copyto(values, other, where=~mask)
        return values

    def store(self, op: Operation, ptr: Ptr, value: np.ndarray, mask: np.ndarray | None) -> None:
        """Scatter where ``mask`` is true. Offsets are flattened program-major and NumPy
        assigns repeated indices in order, so where programs overlap the later one wins."""
        mem = self.bufs[ptr.buf]
        full = mask is None or all_set(mask)
        if ptr.rows is not None and store_rows(ptr, mem, value, None if full else mask):
            return
        if full:
            size = math.prod(ptr.shape)
            if ptr.run is not None and 0 <= ptr.run <= mem.size - size \
                    and np.broadcast_shapes(ptr.shape, value.shape) == ptr.shape:
                # distinct offsets: no later program to win
                mem[ptr.run:ptr.run + size].reshape(ptr.shape)[...] = value
                return
            off, value = np.broadcast_arrays(ptr.off, value)
            self._check(op, "store", ptr.buf, off, None)
            mem[off.ravel()] = value.ravel()
            return
        off, value, mask = np.broadcast_arrays(ptr.off, value, mask)
        self._check(op, "store", ptr.buf, off, mask)
        mem[off[mask]] = value[mask]

    def _check(self, op: Operation, access: str, buf: int, off: np.ndarray,
               mask: np.ndarray | None) -> None:
        """Raise if an access where ``mask`` is true (every access: None) falls outside its
        array. One reduction without temporaries decides the common case: the largest
        offset read as unsigned (negative ones read as huge) below the length."""
        n = self.bufs[buf].size
        high = np.max(off.view(np.uint64), where=True if mask is None else mask, initial=0)
        if n > high or not off.size:
            return
        if mask is not None:
            off = np.where(mask, off, 0)  # masked-off lanes report as 0, never as bad
        bad = off.view(np.uint64) >= n
        if mask is not None and n == 0:
            bad &= mask
        if bad.any():
            raise self._out_of_bounds(op, access, buf, off, bad)

    def _out_of_bounds(self, op: Operation, access: str, buf: int, off: np.ndarray,
                       bad: np.ndarray) -> OutOfBoundsError:
        k = int(np.argmax(bad))  # the first bad element, program-major
        # A value without a program axis (length 1) is accessed alike by every program.
        row = k // bad[0].size if len(bad) > 1 else 0
        pid = tuple(int(p[row]) for p in self.pid)
        offset = int(off.reshape(-1)[k])
        name, n = self.params[buf].name, self.bufs[buf].size
        return OutOfBoundsError(
            f"out-of-bounds {access} of {name}[{offset}] (array length {n}) in program {pid}",
            source_loc(op))


def run_start(off: np.ndarray, pool: Pool) -> int | None:
    """``lo`` when offsets ``off`` in C order are lo, lo + 1, lo + 2, ... (a batch of
    programs on consecutive blocks), else None; ``Ptr.run`` keeps it. n strictly increasing
    integers from lo to lo + n - 1 are exactly those: one comparison pass, after a
    constant-time test that rejects the rest (2-D tiles of a larger matrix) at once."""
    if off.size < _RUN_MIN or not off.flags.c_contiguous:
        return None
    flat = off.reshape(-1)
    lo = int(flat[0])
    if int(flat[-1]) - lo != flat.size - 1:
        return None
    rising = np.greater(flat[1:], flat[:-1], out=pool.empty((flat.size - 1,), _BOOL))
    consecutive = bool(rising.all())
    pool.give(rising)
    return lo if consecutive else None


def release(batch: Batch, values: list[Any], index: int) -> None:
    """Drop the dead value ``values[index]``: its array (a pointer's offsets) goes to the
    batch's pool when nothing else holds it, and the widened offsets cached for it go (no
    later addptr can ask for a dead value)."""
    value = values[index]
    values[index] = None
    if batch._widened is not None and batch._widened[0] is value:
        batch._widened = None
    if type(value) is Ptr:
        value = value._off  # its offsets, if they were ever made
    if recyclable(value) and sys.getrefcount(value) == SOLE_REFS:
        batch.pool.give(value)


def _read_in_place(params: list[Param], bufs: list[np.ndarray | None]) -> list[bool]:
    """Per argument: whether loads may hand out views of its memory instead of copies.
    So for an array the kernel never writes and that overlaps none it writes (``add(x, y,
    x)`` writes x): no store can change a loaded value while it is live."""
    written = [b for p, b in zip(params, bufs, strict=True) if p.written and b is not None]
    return [b is not None and not any(np.may_share_memory(b, w) for w in written)
            for b in bufs]


def _dense_operands(impl: Impl, lazy: tuple[int, ...], batch: Batch, *xs: Any) -> tuple:
    xs = tuple(x.dense() if i in lazy and isinstance(x, Lazy) else x
               for i, x in enumerate(xs))
    return impl(batch, *xs)


def _kernel_func(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(funcs) != 1:
        raise ValueError(f"expected one func.func in the module, found {len(funcs)}")
    return funcs[0]


def _build(op: Operation, kernel: Kernel) -> Impl:
    if op.name in KERNEL_BUILDERS:  # region ops compile their blocks with the kernel
        return KERNEL_BUILDERS[op.name](op, kernel)
    builder = BUILDERS.get(op.name)
    try:
        if builder is None:
            raise UnsupportedError(f"{op.name} is not supported by the numpy backend"
                                   f"{getattr(op, 'UNSUPPORTED', '')}")
        return builder(op)
    except UnsupportedError as e:
        raise UnsupportedError(e.message, e.loc or source_loc(op)) from None


def _largest_tile(fn: func.FuncOp) -> int:
    return max((math.prod(shape(r.type)) for op in fn.walk() for r in op.results),
               default=1)


def _check_grid(grid: Sequence[int]) -> tuple[int, int, int]:
    g = tuple(grid) + (1,) * (3 - len(grid))
    if len(g) != 3 or not all(isinstance(x, int | np.integer) for x in g):
        raise LaunchError(f"grid must be 1 to 3 positive integers, got {tuple(grid)!r}")
    if not all(0 < x <= most for x, most in zip(g, MAX_GRID)):
        raise LaunchError(f"grid {tuple(grid)!r} is invalid: {GRID_LIMITS}")
    return int(g[0]), int(g[1]), int(g[2])


def _program_ids(grid: tuple[int, int, int], start: int, stop: int) -> np.ndarray:
    """(3, stop - start) int32: the ids of programs ``start`` to ``stop``, program p being
    (p % gx, (p // gx) % gy, p // (gx * gy))."""
    gx, gy, _ = grid
    p = np.arange(start, stop, dtype=np.int64)
    return np.stack([p % gx, p // gx % gy, p // (gx * gy)]).astype(np.int32)


# -- arguments ------------------------------------------------------------------------

def _binder(index: int, param: Param, arg_type: Attribute, fn: func.FuncOp) -> Binder:
    """How to turn the user's value for ``param`` into (SSA value, flat array or None)."""
    try:
        storage = np_dtype(arg_type)
        user = dtype_from_str(param.dtype).numpy or ml_dtype(param.dtype)
    except UnsupportedError as e:
        raise UnsupportedError(e.message, source_loc(fn)) from None
    if param.is_ptr != isinstance(arg_type, PtrType) or user.itemsize != storage.itemsize:
        raise ValueError(f"param {param.name} ({param.dtype}) does not match IR type {arg_type}")
    if param.is_ptr:
        return partial(_bind_array, index, param, user, storage)
    return partial(_bind_scalar, param, user, storage)


def _bind_array(index: int, param: Param, user: np.dtype, storage: np.dtype,
                a: Any) -> tuple[Ptr, np.ndarray]:
    name = param.name
    if not isinstance(a, np.ndarray):
        try:  # a DLPack producer's CPU memory (a PyTorch CPU tensor): no copy
            view = host_view(a)
        except ArgumentError as e:
            raise e.named(name) from None
        if view is None:
            raise argument_error(name, "the numpy backend takes CPU arrays with __dlpack__ and "
                                       f"NumPy arrays, got {describe_value(a)}")
        a = view
    if a.dtype != user:
        raise argument_error(name, f"expected an array of {dtype_from_str(param.dtype)}, "
                                   f"got {describe_value(a)}")
    try:
        a = span_view(a)
    except ArgumentError as e:
        raise e.named(name) from None
    if param.written and not a.flags.writeable:
        raise argument_error(name, f"{describe_value(a)} is read-only, and the kernel writes it")
    return Ptr(index, _ZERO_OFFSET), a.reshape(-1).view(storage)


_SCALAR_TYPES = {"f": (int, float, np.integer, np.floating), "i": (int, np.integer),
                 "u": (int, np.integer), "b": (bool, np.bool_)}


def _bind_scalar(param: Param, user: np.dtype, storage: np.dtype,
                 v: Any) -> tuple[np.ndarray, None]:
    dtype = dtype_from_str(param.dtype)
    if not isinstance(v, _SCALAR_TYPES[dtype.kind]):
        raise argument_error(param.name, f"expected a scalar of type {dtype}, got "
                                         f"{describe_value(v)}")
    if dtype.kind in "iu":
        info = np.iinfo(user)
        if not info.min <= int(v) <= info.max:
            raise argument_error(param.name, f"{describe_value(v)} does not fit {dtype} (from "
                                             f"{info.min} to {info.max})")
        v = int(v)
    return np.array([v], user).view(storage), None
