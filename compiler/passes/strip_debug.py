"""strip-debug: tile IR -> tile IR without ``tile.print``/``tile.assert``.

``tl.device_print`` and ``tl.device_assert`` are active on the GPU backends only with
``debug=True``. Without it the GPU pipelines drop them here, before
layouts are assigned. With it each one becomes tile IR that appends records to a hidden
int32 buffer, the kernel's last parameter (``compiler/debug.py`` reads them back after
the launch): an ``atomic_add`` on word 0 reserves a record per element (only failing
elements for an assert), then stores write the op number, the program id, the element
index and the values' 32-bit patterns. A ``tile.check_bounds`` (from ``check-bounds``)
records its out-of-bounds elements as an assert its failing ones, with the offset and
the extent as values. The NumPy backend always runs them (its pipeline has no
strip-debug).

The GPU pipelines drop every ``tile.check_tile_index`` here too (``debug=True`` puts them
there; only the NumPy backend checks cuTile's tile indices): left in place, a check between a large tile's load and
its store keeps ``strip-mine`` from looping over chunks of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    Float32Type,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    i32,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from compiler.context import source_loc
from compiler.debug import CAPACITY, HEADER
from compiler.errors import UnsupportedError
from compiler.passes.check_bounds import add_param
from dialects import arith_shaped as casts
from dialects import tile

_DEBUG_OPS = (tile.PrintOp, tile.AssertOp, tile.CheckBoundsOp)
_KIND = {tile.PrintOp: "print", tile.AssertOp: "assert", tile.CheckBoundsOp: "bounds"}


def debug_ops(module: ModuleOp) -> list[Operation]:
    return [o for o in module.walk() if isinstance(o, _DEBUG_OPS)]


def debug_records(module: ModuleOp) -> list[dict]:
    """What the host needs to decode each op's records, in op order (JSON-able)."""
    records = []
    for op in debug_ops(module):
        loc = source_loc(op)
        records.append({
            "kind": _KIND[type(op)], "text": _text(op), "shape": list(_shape(op)),
            "dtypes": [_dtype(v, op) for v in _values(op)],
            "file": loc.file if loc else "", "line": loc.line if loc else 0,
            "col": loc.col if loc else 0})
    return records


def _text(op: Operation) -> str:
    if isinstance(op, tile.CheckBoundsOp):
        return f"{op.access.data} of {op.array.data}"
    return op.prefix.data if isinstance(op, tile.PrintOp) else op.message.data


def _values(op: Operation) -> list[SSAValue]:
    """The values a record carries: a print's, a bounds check's offset and extent."""
    if isinstance(op, tile.PrintOp):
        return list(op.args)
    return [op.offset, op.extent] if isinstance(op, tile.CheckBoundsOp) else []


def _shape(op: Operation) -> tuple[int, ...]:
    return max((tuple(o.type.get_shape()) if isinstance(o.type, TensorType) else ()
                for o in op.operands), key=len, default=())


def _dtype(v: SSAValue, op: Operation) -> str:
    t = tile.element_type(v.type)
    name = str(t)
    if name in ("f64", "i64") or isinstance(t, tile.PtrType):
        raise UnsupportedError(f"device_print of {name} values is not supported on the GPU "
                               "backends", source_loc(op))
    return name


@dataclass(frozen=True)
class StripDebug(ModulePass):
    """Drop the debugging ops (``debug=False``) or route them to the debug buffer; drop
    the tile-index checks."""

    name = "strip-debug"

    debug: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        found = debug_ops(op)
        if found and self.debug:
            fn = next(o for o in op.walk() if isinstance(o, func.FuncOp))
            buf = add_param(fn, tile.PtrType(i32), "tilec_debug",
                            {"tile.divisibility": IntegerAttr(16, i32)})
            for number, dop in enumerate(found):
                _Lowering(dop, buf, number).run()
        checks = [o for o in op.walk() if isinstance(o, tile.CheckTileIndexOp)]
        for o in found + checks:
            Rewriter.erase_op(o)


class _Lowering:
    """The records of one print, assert or bounds check, built in front of it."""

    def __init__(self, op: Operation, buf: SSAValue, number: int):
        self.op, self.buf, self.number = op, buf, number
        self.shape = _shape(op)

    def emit(self, new: Operation) -> SSAValue:
        new.location = self.op.location
        Rewriter.insert_op(new, InsertPoint.before(self.op))
        return new.results[0] if new.results else None

    def tiled(self, v: SSAValue) -> SSAValue:
        if not self.shape or isinstance(v.type, TensorType):
            return v
        return self.emit(tile.SplatOp(v, TensorType(v.type, self.shape)))

    def const(self, value: int) -> SSAValue:
        return self.tiled(self.emit(arith.ConstantOp(IntegerAttr(value, i32), i32)))

    def word(self, v: SSAValue) -> SSAValue:
        """``v`` as 32 bits: floats as f32 bit patterns, integers sign-extended."""
        v = self.tiled(v)
        t = tile.element_type(v.type)
        if isinstance(t, IntegerType):
            if t.width.data == 32:
                return v
            cls = casts.ExtUIOp if t.width.data == 1 else casts.ExtSIOp
            return self.emit(cls(v, tile.like(v.type, i32)))
        if not isinstance(t, Float32Type):
            v = self.emit(arith.ExtFOp(v, tile.like(v.type, Float32Type())))
        return self.emit(arith.BitcastOp(v, tile.like(v.type, i32)))

    def index(self) -> SSAValue:
        if not self.shape:
            return self.const(0)
        n = math.prod(self.shape)
        flat = self.emit(tile.RangeOp(0, n))
        if len(self.shape) == 1:
            return flat
        return self.emit(tile.ReshapeOp(flat, TensorType(i32, self.shape)))

    def failing(self) -> SSAValue | None:
        """Where an assert fails or an access is out of bounds (None: a print, always)."""
        op = self.op
        if isinstance(op, tile.AssertOp):
            true = self.tiled(self.emit(
                arith.ConstantOp(IntegerAttr(-1, IntegerType(1)), IntegerType(1))))
            return self.emit(arith.XOrIOp(self.tiled(op.cond), true))
        if isinstance(op, tile.CheckBoundsOp):  # unsigned: negative offsets are outside
            outside = self.emit(tile.CmpIOp("uge", op.offset, self.tiled(op.extent)))
            return outside if op.mask is None else self.emit(arith.AndIOp(outside, op.mask))
        return None

    def run(self) -> None:
        values = _values(self.op)
        words = [self.const(self.number)]
        words += [self.tiled(self.emit(tile.ProgramIdOp(a))) for a in range(3)]
        words += [self.index()] + [self.word(v) for v in values]
        mask = self.failing()
        ptr = self.tiled(self.buf)
        size = HEADER + len(values)
        old = self.emit(tile.AtomicRMWOp("add", ptr, self.const(size), mask))
        base = self.emit(arith.AddiOp(old, self.const(1)))
        room = self.emit(tile.CmpIOp("sle", self.emit(arith.AddiOp(base, self.const(size))),
                                     self.const(CAPACITY)))
        keep = room if mask is None else self.emit(arith.AndIOp(room, mask))
        for j, w in enumerate(words):
            at = self.emit(arith.AddiOp(base, self.const(j))) if j else base
            self.emit(tile.StoreOp(self.emit(tile.AddPtrOp(ptr, at)), w, keep))
