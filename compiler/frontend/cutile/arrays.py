"""cuTile's arrays in the frontend: array parameters, ``ct.load``/``ct.store`` of tiles by
tile-granular index, ``ct.num_tiles`` and ``arr.shape``/``arr.strides``/``arr.dtype``.

An array parameter arrives as a pointer, one ``i32`` shape value per dimension and the
strides (``compiler.arrays``; a unit last stride is the constant 1); ``ArrayCodeGenerator``
makes one ``tile.make_view`` of them at the top of the kernel, and every load and store
is a ``tile.view_load``/``tile.view_store`` of that view, lowered later by the pass
``lower-array-views``. A list parameter is an ``ArrayList`` of such arrays; indexed at
run time it gives a ``ListItem`` (``compiler.frontend.cutile.lists``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType, i32
from xdsl.ir import SSAValue

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.leading import drop_axes, leading_ones
from compiler.frontend.cutile.table import TABLE, builtin
from compiler.frontend.triton.shape import permute
from compiler.frontend.values import Builder, Value, cast, constant, expand, ir_type
from compiler.kinfo import ArgSpec
from dialects.tile import PADDING_MODES, MakeViewOp, ViewLoadOp, ViewStoreOp


@dataclass(frozen=True)
class Array:
    """An array parameter: its view, base pointer, shape and strides (in elements)."""

    name: str
    view: SSAValue
    base: Value
    shape: tuple[Value, ...]
    strides: tuple[Value, ...]

    @property
    def dtype(self) -> tl.dtype:
        return self.base.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def describe(self) -> str:
        return f"array<{self.ndim}-D, {self.dtype}>"


@dataclass(frozen=True)
class ListItem:
    """``lst[i]`` for a runtime ``i``: an array chosen when the kernel runs."""

    arrays: tuple[Array, ...]
    index: Value
    shape: tuple[Value, ...]
    strides: tuple[Value, ...]

    @property
    def dtype(self) -> tl.dtype:
        return self.arrays[0].dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def describe(self) -> str:
        return f"array<{self.ndim}-D, {self.dtype}> of a list"


@dataclass(frozen=True)
class ArrayList:
    """A list parameter: its arrays, and the builder that selects among them."""

    name: str
    arrays: tuple[Array, ...]
    b: Builder

    def __len__(self) -> int:
        return len(self.arrays)

    def __getitem__(self, index: Any) -> Array | ListItem:
        if not isinstance(index, Value):
            return self.arrays[index]
        if index.shape or index.is_ptr or not index.dtype.is_int():
            raise TypeError(f"a list of arrays is indexed by an integer scalar, got "
                            f"{index.describe()}")
        i = cast(self.b, index, tl.int32)
        return ListItem(self.arrays, i, self._pick(i, "shape"), self._pick(i, "strides"))

    def _pick(self, i: Value, field: str) -> tuple[Value, ...]:
        """Each dimension's ``field`` value of the array ``i`` selects."""
        picked = []
        for d, last in enumerate(getattr(self.arrays[-1], field)):
            v = last
            for k in range(len(self.arrays) - 2, -1, -1):
                here = ops.compare(self.b, "eq", i, k)
                v = ops.select(self.b, here, getattr(self.arrays[k], field)[d], v)
            picked.append(v)
        return tuple(picked)

    def describe(self) -> str:
        first = self.arrays[0]
        return f"list of {len(self)} array<{first.ndim}-D, {first.dtype}>"


class ArrayCodeGenerator(CodeGenerator):
    """The code generator of ``compiler.tile`` kernels: array parameters become views."""

    def __init__(self, src, specs: list[ArgSpec]):
        super().__init__(src, specs, TABLE)
        self.tf32: set[SSAValue] = set()  # f32 tiles marked by x.astype(ct.tfloat32)

    def runtime_params(self) -> list[ArgSpec]:
        params = []
        for s in super().runtime_params():
            if s.kind == "array":
                params += _array_params(s.name, s.dtype, s.divisible16, s.value)
            elif s.kind == "array_list":
                for i, (aligned, layout) in enumerate(s.value):
                    params += _array_params(item_name(s.name, i), s.dtype, aligned, layout)
            else:
                params.append(s)
        return params

    def _binop(self, op: type, x: Any, y: Any) -> Any:
        """cuTile's ``//`` and ``%`` on runtime values are Python's: floor division, and a
        remainder with the divisor's sign, of floats too (Triton's, and tilec's ``tl``,
        truncate)."""
        if op in (ast.FloorDiv, ast.Mod) and (isinstance(x, Value) or isinstance(y, Value)):
            return self._floor_divmod(op is ast.FloorDiv, *ops.operands(self.b, x, y))
        return super()._binop(op, x, y)

    def _floor_divmod(self, floordiv: bool, x: Value, y: Value) -> Value:
        b = self.b
        if x.dtype.is_float and floordiv:
            return self.builtin("floor")(self, ops.binary(b, "truediv", x, y))
        if x.dtype.kind in "ub":  # unsigned and bool: truncation is the floor
            return ops.binary(b, "floordiv" if floordiv else "mod", x, y)
        r = ops.binary(b, "mod", x, y)  # C's remainder (floats: fmod), the dividend's sign
        # Truncation rounded toward zero where the quotient is negative and inexact.
        signs_differ = ops.compare(b, "ne", ops.compare(b, "lt", r, 0), ops.compare(b, "lt", y, 0))
        fix = ops.binary(b, "and", ops.compare(b, "ne", r, 0), signs_differ)
        if floordiv:
            q = ops.binary(b, "floordiv", x, y)
            return ops.select(b, fix, ops.binary(b, "sub", q, 1), q)
        return ops.select(b, fix, ops.binary(b, "add", r, y), r)

    def bind_params(self) -> None:
        for s in self.specs:
            if s.kind == "array":
                self.scope[s.name] = self._array(s)
            elif s.kind == "array_list":
                items = [ArgSpec(item_name(s.name, i), "array", s.dtype, aligned, layout)
                         for i, (aligned, layout) in enumerate(s.value)]
                arrays = [self._array(item) for item in items]
                for item in items:
                    del self.scope[item.name]
                self.scope[s.name] = ArrayList(s.name, tuple(arrays), self.b)

    def _array(self, spec: ArgSpec) -> Array:
        layout = spec.value
        names = layout.param_names(spec.name)
        parts = [self.scope.pop(n) for n in names]
        shape, strides = parts[:layout.rank], parts[layout.rank:]
        if layout.unit_last:
            strides.append(self.b.value(arith.ConstantOp(IntegerAttr(1, i32), i32), tl.int32))
        base = self.scope[spec.name]
        view = self.b.emit(MakeViewOp(base.ssa, [v.ssa for v in shape],
                                           [v.ssa for v in strides])).results[0]
        view.name_hint = f"{spec.name}_view"
        return Array(spec.name, view, base, tuple(shape), tuple(strides))


def _array_params(name: str, dtype: tl.dtype, aligned: bool, layout: Any) -> list[ArgSpec]:
    """An array's kernel parameters: its pointer, shape and strides (``ArrayLayout``)."""
    divisible = (*layout.shape_div16, *layout.stride_div16)
    return [ArgSpec(name, "ptr", dtype, aligned)] + [
        ArgSpec(n, "scalar", tl.int32, div)
        for n, div in zip(layout.param_names(name), divisible, strict=False)]


def item_name(name: str, i: int) -> str:
    """The parameters of item ``i`` of list parameter ``name``: ``name_i``, ..."""
    return f"{name}_{i}"


# ---------------------------------------------------------------- argument checks

def array_arg(cg: CodeGenerator, a: Any, what: str) -> Array:
    if not isinstance(a, Array):
        got = a.describe() if isinstance(a, Value) else type(a).__name__
        cg.fail(f"{what} expects an array parameter, got {got}")
    return a


def _tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def tile_shape(cg: CodeGenerator, shape: Any, rank: int, what: str,
               scalar: bool = False) -> tuple[int, ...]:
    """A tile shape: constant powers of two, one per array dimension (or none, where
    ``scalar``: ``shape=()``, one element)."""
    dims = _tuple(shape)
    if scalar and dims == ():
        return dims
    for n in dims:
        if isinstance(n, Value | bool) or not isinstance(n, int):
            got = n.describe() if isinstance(n, Value) else repr(n)
            cg.fail(f"{what}: the tile shape must be constant (ct.Constant) integers, "
                    f"got {got}")
        if n <= 0 or n & (n - 1):
            cg.fail(f"{what}: tile dimensions must be powers of two, got {list(dims)}")
    if len(dims) != rank:
        cg.fail(f"{what}: a tile shape of rank {len(dims)} for an array of rank {rank}")
    return dims


def index_values(cg: CodeGenerator, index: Any, rank: int, what: str) -> list[Value]:
    """A tile index: one integer scalar per dimension, as ``i32`` values."""
    items = _tuple(index)
    if len(items) != rank:
        cg.fail(f"{what}: an array of rank {rank} needs an index of {rank} "
                f"entr{'y' if rank == 1 else 'ies'}, got {len(items)}")
    out = []
    for i in items:
        if isinstance(i, Value):
            if i.shape or i.is_ptr or not i.dtype.is_int():
                cg.fail(f"{what}: index entries must be integer scalars, got {i.describe()}")
            out.append(i if i.dtype is tl.int32 else cast(cg.b, i, tl.int32))
        elif isinstance(i, int) and not isinstance(i, bool):
            out.append(constant(cg.b, i, tl.int32))
        else:
            cg.fail(f"{what}: index entries must be integer scalars, got {i!r}")
    return out


def _order(cg: CodeGenerator, order: Any, rank: int, what: str) -> tuple[int, ...]:
    """cuTile's ``order``: tile axis ``k`` is array axis ``order[k]``."""
    if order == "C":
        return tuple(range(rank))
    if order == "F":
        return tuple(reversed(range(rank)))
    perm = _tuple(order)
    if sorted(perm) != list(range(rank)):
        cg.fail(f"{what}: order must be 'C', 'F' or a permutation of {rank} axes, "
                f"got {order!r}")
    return perm


def implicitly_stored(src: tl.dtype, dst: tl.dtype) -> bool:
    """Whether a tile of ``src`` stores into an array of ``dst`` without an explicit cast,
    by cuTile's rule: only where ``dst`` is the promotion of the two dtypes. So a bool
    into anything; an integer into any float, or into an integer of the same signedness
    at least as wide; a float into a wider float (float16 or bfloat16 into float32 or
    float64, float32 into float64). Anything else (a float into an integer array, any
    narrowing, signed and unsigned mixed, float16 and bfloat16 either way) needs
    ``.astype(dtype)``."""
    if src == dst or src is tl.int1:
        return True
    if dst.is_float:
        return not src.is_float or dst.bits > src.bits
    return src.kind == dst.kind and dst.bits >= src.bits


def checked_store_value(cg: CodeGenerator, value: Any, arr: Array, what: str) -> None:
    """Fail unless ``value`` (a tile, or a Python number for ``ct.scatter``) stores into
    ``arr`` without an explicit cast, by cuTile's rules: ``implicitly_stored`` for a tile
    (an ``x.astype(ct.tfloat32)`` tile stores nowhere), and for a number: no float into
    an integer array, only 0, 1 and bools into a bool array, an integer in the dtype's
    range."""
    dst = arr.dtype
    cast = f"cast it with .astype(ct.{'bool_' if dst is tl.int1 else dst.name})"
    if isinstance(value, Value):
        tf32 = value.ssa in getattr(cg, "tf32", ())  # ArrayCodeGenerator's marks
        if tf32 or not implicitly_stored(value.dtype, dst):
            cg.fail(f"{what}: a tile of {'tfloat32' if tf32 else value.dtype} does not store "
                    f"into {arr.describe()} without a cast (as in cuTile, a store converts "
                    f"implicitly only to the promotion of the tile's and the array's dtypes); "
                    f"{cast}")
        return
    if isinstance(value, float) and not dst.is_float or dst is tl.int1 and value not in (0, 1):
        cg.fail(f"{what}: {value!r} does not store into {arr.describe()} without a cast")
    if isinstance(value, int) and dst.kind in "iu":
        low, high = (0, 2**dst.bits) if dst.kind == "u" else \
            (-2**(dst.bits - 1), 2**(dst.bits - 1))
        if not low <= value < high:
            cg.fail(f"{what}: {value} is out of the range of {dst}")


def _padding(cg: CodeGenerator, mode: Any) -> str:
    value = getattr(mode, "value", mode)
    if value == "neg_zero":
        cg.fail("ct.load: padding mode NEG_ZERO is not supported by tilec yet (ZERO pads "
                "with +0.0)")
    if value not in PADDING_MODES:
        cg.fail(f"ct.load: padding_mode must be a ct.PaddingMode, got {mode!r}")
    return value


# ---------------------------------------------------------------- builtins

@builtin("load")
def load(cg: CodeGenerator, array: Any, index: Any, shape: Any, order: Any = "C",
         padding_mode: Any = None, latency: Any = None, allow_tma: Any = None) -> Value:
    arr = array_arg(cg, array, "ct.load")
    dims = tile_shape(cg, shape, arr.ndim, "ct.load", scalar=True)
    idx = index_values(cg, index, arr.ndim, "ct.load")
    perm = _order(cg, order, arr.ndim, "ct.load")
    mode = "undetermined" if padding_mode is None else _padding(cg, padding_mode)
    if mode in ("neg_inf", "pos_inf", "nan") and not arr.dtype.is_float:
        cg.fail(f"ct.load: padding mode {mode.upper()} needs a float array, got {arr.dtype}")
    # The array-ordered tile: tile axis k is array axis perm[k]. Its leading dimensions
    # of size 1 are left out of the access (``leading``; all of them for shape=()).
    inv = [perm.index(a) for a in range(arr.ndim)]
    array_shape = tuple((dims or (1,) * arr.ndim)[k] for k in inv)
    dropped = leading_ones(array_shape, 2 if dims else 0)
    accessed = array_shape[dropped:]
    rt = TensorType(ir_type(arr.dtype), accessed) if accessed else ir_type(arr.dtype)
    op = ViewLoadOp(arr.view, [idx[k].ssa for k in inv], rt, mode)
    t = cg.b.value(op, arr.dtype, accessed)
    # in tile order, as the kernel sees it
    return t if not dims else _rearrange(cg, t, list(range(dropped, arr.ndim)), list(perm))


def _rearrange(cg: CodeGenerator, x: Value, have: list[int], want: list[int]) -> Value:
    """``x``, whose axes are the array axes ``have``, with the axes ``want``: those only in
    ``have`` left out and those only in ``want`` added (all of size 1), the rest permuted.
    Left out first (undoing an ``expand_dims`` that made them) and added last, so that a
    reshape dropping the added ones again leaves the permuted tile."""
    gone = [i for i, a in enumerate(have) if a not in want]
    if gone:
        x = drop_axes(cg, x, gone)
    have = [a for a in have if a in want]
    order = tuple(have.index(a) for a in want if a in have)
    if order != tuple(range(len(order))):
        x = permute(cg, x, order)
    for at, a in enumerate(want):
        if a not in have:
            x = expand(cg.b, x, at)
    return x


@builtin("store")
def store(cg: CodeGenerator, array: Any, index: Any, tile: Any, order: Any = "C",
          latency: Any = None, allow_tma: Any = None) -> None:
    arr = array_arg(cg, array, "ct.store")
    idx = index_values(cg, index, arr.ndim, "ct.store")
    perm = _order(cg, order, arr.ndim, "ct.store")
    value = tile
    if isinstance(value, bool | int | float):  # a number is a tile of one element
        checked_store_value(cg, value, arr, "ct.store")
        value = constant(cg.b, value, arr.dtype)
    if not isinstance(value, Value) or value.is_ptr:
        cg.fail(f"ct.store expects a tile, got {type(value).__name__}")
    checked_store_value(cg, value, arr, "ct.store")
    at = [idx[perm.index(a)] for a in range(arr.ndim)]  # array order
    if value.shape:
        value = _array_order(cg, value, arr, perm)
    value = cast(cg.b, value, arr.dtype)
    cg.b.emit(ViewStoreOp(arr.view, [v.ssa for v in at], value.ssa))


def _array_order(cg: CodeGenerator, value: Value, arr: Array,
                 perm: tuple[int, ...]) -> Value:
    """A tile to store, as the access takes it: in array order, without the array's
    leading dimensions of size 1 in the tile (``load`` leaves them out too)."""
    if len(value.shape) != arr.ndim:
        cg.fail(f"ct.store: a tile of shape {list(value.shape)} does not match the index "
                f"of {arr.ndim} entr{'y' if arr.ndim == 1 else 'ies'} (array of rank "
                f"{arr.ndim})")
    array_shape = [value.shape[perm.index(a)] for a in range(arr.ndim)]
    dropped = leading_ones(array_shape, 2)
    return _rearrange(cg, value, list(perm), list(range(dropped, arr.ndim)))


@builtin("num_tiles")
def num_tiles(cg: CodeGenerator, array: Any, axis: Any, shape: Any) -> Value:
    arr = array_arg(cg, array, "ct.num_tiles")
    axis = cg.const_int(axis, "ct.num_tiles axis")
    if not -arr.ndim <= axis < arr.ndim:
        cg.fail(f"ct.num_tiles: axis {axis} is out of range for {arr.describe()}")
    dims = tile_shape(cg, shape, arr.ndim, "ct.num_tiles")
    n = dims[axis]
    return ops.binary(cg.b, "floordiv", ops.binary(cg.b, "add", arr.shape[axis], n - 1), n)
