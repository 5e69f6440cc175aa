"""Contiguity, divisibility and constancy of tile-IR values (an analysis, not a pass).

In the spirit of Triton's AxisInfo. ``assign-layouts`` asks it how many neighbouring
elements of a load or store can move as one wide access. Per dimension ``d`` of a value:

- ``contiguity[d]``: the elements come in runs of this many consecutive values
  (x, x+1, ...), each run starting at an index that is a multiple of its length;
- ``divisibility[d]``: a power of two dividing the first element of every such run
  (for pointers: the address counted in elements, so a 16-byte aligned ``f32`` pointer
  has divisibility 4);
- ``constancy[d]``: the elements come in runs of this many equal values, aligned likewise.

Every fact is a power of two and 1 is always a safe answer: an op the analysis does not
know gets 1s. Scalars are values of shape ``[1]``. Like Triton, division and remainder by a
power of two assume non-negative operands (offsets into arrays are).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from dialects.tile import PtrType, element_type

MAX_DIVISIBILITY = 1 << 30  # what we claim for 0: divisible by anything we ask about
DIVISIBILITY_ATTR = "tile.divisibility"


def pow2_divisor(v: int) -> int:
    """The largest power of two dividing ``v`` (capped for 0)."""
    return MAX_DIVISIBILITY if v == 0 else min(abs(v) & -abs(v), MAX_DIVISIBILITY)


def shape_of(t: Attribute) -> tuple[int, ...]:
    return t.get_shape() if isinstance(t, TensorType) else (1,)


def bits_of(t: Attribute) -> int:
    """Storage bits of a scalar type (i1 is stored as a byte)."""
    t = element_type(t)
    if isinstance(t, IntegerType):
        return max(8, t.width.data)
    return t.bitwidth  # pyright: ignore[reportAttributeAccessIssue]


@dataclass(frozen=True)
class AxisInfo:
    """Facts about one value, per dimension; ``value`` when every element is known."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    value: int | None = None

    @staticmethod
    def unknown(shape: Sequence[int]) -> AxisInfo:
        ones = (1,) * len(shape)
        return AxisInfo(ones, ones, ones)

    @staticmethod
    def uniform(shape: Sequence[int], div: int, value: int | None = None) -> AxisInfo:
        """Every element equal (to ``value`` if known) and divisible by ``div``."""
        return AxisInfo((1,) * len(shape), (div,) * len(shape), tuple(shape), value)

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    def run_divisibility(self, d: int, run: int) -> int:
        """Divisibility of the first element of each aligned run of ``run`` elements."""
        if self.contiguity[d] <= run:
            return self.divisibility[d]
        return min(self.divisibility[d], run)

    def splat(self, shape: Sequence[int]) -> AxisInfo:
        """A scalar's facts as the tile made by splatting it to ``shape``."""
        return AxisInfo.uniform(shape, self.divisibility[0], self.value)


def _known(value: int | None, info: AxisInfo) -> AxisInfo:
    """``info`` made exact when the value is known everywhere."""
    if value is None:
        return info
    return AxisInfo(info.contiguity, (pow2_divisor(value),) * info.rank, info.constancy, value)


def _elementwise(args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    """Any elementwise function is constant where all its operands are."""
    const = tuple(min(a.constancy[d] for a in args) for d in range(len(shape)))
    return AxisInfo((1,) * len(shape), (1,) * len(shape), const)


def _add(a: AxisInfo, b: AxisInfo, shape: Sequence[int], sign: int = 1) -> AxisInfo:
    base = _elementwise((a, b), shape)
    cont, div = [], []
    for d in range(len(shape)):
        c = min(a.contiguity[d], b.constancy[d])  # a run of a plus a constant stretch of b
        if sign > 0:
            c = max(c, min(a.constancy[d], b.contiguity[d]))
        cont.append(c)
        div.append(min(a.run_divisibility(d, c), b.run_divisibility(d, c)))
    value = None if a.value is None or b.value is None else a.value + sign * b.value
    return _known(value, AxisInfo(tuple(cont), tuple(div), base.constancy))


def _mul(a: AxisInfo, b: AxisInfo, shape: Sequence[int]) -> AxisInfo:
    if b.value == 1:
        return a
    if a.value == 1:
        return b
    base = _elementwise((a, b), shape)
    div = tuple(min(MAX_DIVISIBILITY, a.run_divisibility(d, 1) * b.run_divisibility(d, 1))
                for d in range(len(shape)))
    value = None if a.value is None or b.value is None else a.value * b.value
    return _known(value, AxisInfo(base.contiguity, div, base.constancy))


def _pow2_const(b: AxisInfo) -> int | None:
    return b.value if b.value is not None and b.value > 0 and not b.value & (b.value - 1) else None


def _div(a: AxisInfo, b: AxisInfo, shape: Sequence[int]) -> AxisInfo:
    """``a // p`` for a power of two ``p``: aligned blocks of ``a`` within p-blocks agree."""
    p = _pow2_const(b)
    if p is None:
        return _elementwise((a, b), shape)
    if p == 1:
        return a
    const, div = [], []
    for d in range(len(shape)):
        block = min(a.contiguity[d], a.divisibility[d], p)
        const.append(max(a.constancy[d], block))
        div.append(max(1, a.run_divisibility(d, 1) // p))
    value = None if a.value is None or a.value < 0 else a.value // p
    return _known(value, AxisInfo((1,) * len(shape), tuple(div), tuple(const)))


def _rem(a: AxisInfo, b: AxisInfo, shape: Sequence[int]) -> AxisInfo:
    """``a % b``: runs of ``a`` cut where they cross a multiple of ``b``. No multiple of
    ``b`` falls inside an aligned run of a power of two dividing it, so where ``b`` is
    constant (Triton's ``offs % N`` with N a multiple of 16) runs that long survive."""
    p = _pow2_const(b)
    cont, div = [], []
    for d in range(len(shape)):
        step = p if p is not None else min(b.run_divisibility(d, 1), b.constancy[d])
        c = min(a.contiguity[d], a.divisibility[d], step)
        cont.append(c)
        div.append(min(a.run_divisibility(d, c), step))
    const = tuple(min(a.constancy[d], b.constancy[d]) for d in range(len(shape)))
    value = None if a.value is None or a.value < 0 or p is None else a.value % p
    return _known(value, AxisInfo(tuple(cont), tuple(div), const))


def _shift(rule: Callable[[AxisInfo, AxisInfo, Sequence[int]], AxisInfo]):
    """``x << s`` / ``x >> s`` as multiplication / division by ``2**s``."""
    def apply(a: AxisInfo, b: AxisInfo, shape: Sequence[int]) -> AxisInfo:
        if b.value is None or not 0 <= b.value < 31:
            return _elementwise((a, b), shape)
        return rule(a, AxisInfo.uniform(shape, 1 << b.value, 1 << b.value), shape)
    return apply


def _select(c: AxisInfo, a: AxisInfo, b: AxisInfo, shape: Sequence[int]) -> AxisInfo:
    """Where the condition is constant, the result is a stretch of one side."""
    base = _elementwise((c, a, b), shape)
    cont = tuple(min(c.constancy[d], a.contiguity[d], b.contiguity[d]) for d in range(len(shape)))
    div = tuple(min(a.run_divisibility(d, cont[d]), b.run_divisibility(d, cont[d]))
                for d in range(len(shape)))
    return AxisInfo(cont, div, base.constancy)


_LESS = ("slt", "sge", "ult", "uge")  # x < n flips between n-1 and n
_GREATER = ("sgt", "sle", "ugt", "ule")  # n > x, the same test mirrored


def _cmpi(op: Operation, args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    """``x < n`` is constant on aligned blocks of x's runs that no multiple of n splits."""
    lhs, rhs = args
    pred = op.predicate.data  # pyright: ignore[reportAttributeAccessIssue]
    base = _elementwise(args, shape)
    if pred not in _LESS + _GREATER:
        return base
    if pred in _GREATER:
        lhs, rhs = rhs, lhs
    const = tuple(
        max(base.constancy[d], min(lhs.contiguity[d], lhs.divisibility[d],
                                   rhs.run_divisibility(d, 1), rhs.constancy[d]))
        for d in range(len(shape)))
    return AxisInfo(base.contiguity, base.divisibility, const)


def _range(op: Operation, shape: Sequence[int]) -> AxisInfo:
    start = op.start.value.data  # pyright: ignore[reportAttributeAccessIssue]
    return AxisInfo((shape[0],), (pow2_divisor(start),), (1,))


def _constant(op: Operation, shape: Sequence[int]) -> AxisInfo:
    attr = op.value  # pyright: ignore[reportAttributeAccessIssue]
    if isinstance(attr, IntegerAttr):
        return AxisInfo.uniform(shape, pow2_divisor(attr.value.data), attr.value.data)
    if isinstance(attr, DenseIntOrFPElementsAttr) and attr.is_splat():
        v = next(iter(attr.iter_values()))
        if isinstance(v, int):
            return AxisInfo.uniform(shape, pow2_divisor(v), v)
        return AxisInfo.uniform(shape, 1)
    return AxisInfo.unknown(shape)


def _expand_dims(op: Operation, args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    """A new dimension of size 1: its one element per position is divisible by what
    every element of the operand is (a dimension without runs says that)."""
    a, axis = args[0], op.axis.value.data  # pyright: ignore[reportAttributeAccessIssue]
    div = max([a.divisibility[d] for d in range(a.rank) if a.contiguity[d] == 1] or [1])

    def put(facts: tuple[int, ...], new: int) -> tuple[int, ...]:
        return facts[:axis] + (new,) + facts[axis:]
    return AxisInfo(put(a.contiguity, 1), put(a.divisibility, div), put(a.constancy, 1),
                    a.value)


def _broadcast(op: Operation, args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    """Along a stretched dimension every element repeats the operand's one."""
    a, src = args[0], shape_of(op.operands[0].type)
    stretched = [src[d] != n for d, n in enumerate(shape)]
    return AxisInfo(
        tuple(1 if s else c for s, c in zip(stretched, a.contiguity, strict=True)),
        a.divisibility,
        tuple(n if s else k for s, n, k in zip(stretched, shape, a.constancy, strict=True)),
        a.value)


def _trans(op: Operation, args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    a, order = args[0], op.permutation  # pyright: ignore[reportAttributeAccessIssue]
    return AxisInfo(*(tuple(f[d] for d in order) for f in (
        a.contiguity, a.divisibility, a.constancy)), a.value)


def _promised(known: tuple[int, ...], given: tuple[int, ...] | None, unit: int,
              limits: Sequence[int]) -> tuple[int, ...]:
    """Per dimension, the larger power of two of a known fact and a promised one (``given``
    counted in ``unit``s of the analysis' count), within ``limits``."""
    if given is None:
        return known
    return tuple(max(k, min(max(1, pow2_divisor(g) // unit), lim))
                 for k, g, lim in zip(known, given, limits, strict=True))


def _assumed(op: Operation, args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    """``tile.assume_facts`` (``tl.multiple_of``, ...): both what is known and what the
    user promises hold, so the stronger of each; a pointer's divisibility is promised in
    bytes and counted here in elements."""
    a, t = args[0], element_type(op.operands[0].type)
    size = max(1, bits_of(t.pointee) // 8) if isinstance(t, PtrType) else 1
    facts = op.facts  # pyright: ignore[reportAttributeAccessIssue]
    return AxisInfo(_promised(a.contiguity, facts("contiguity"), 1, shape),
                    _promised(a.divisibility, facts("divisibility"), size,
                              (MAX_DIVISIBILITY,) * len(shape)),
                    _promised(a.constancy, facts("constancy"), 1, shape), a.value)


def _binary(rule):
    return lambda op, args, shape: rule(args[0], args[1], shape)


def _same(op: Operation, args: Sequence[AxisInfo], shape: Sequence[int]) -> AxisInfo:
    return args[0]


Rule = Callable[[Operation, Sequence[AxisInfo], Sequence[int]], AxisInfo]

_RULES: dict[str, Rule] = {
    "tile.range": lambda op, args, shape: _range(op, shape),
    "arith.constant": lambda op, args, shape: _constant(op, shape),
    "tile.splat": _same,
    "arith.extsi": _same,
    "arith.extui": _same,
    "arith.trunci": _same,  # divisibility by powers of two survives truncation
    "arith.addi": _binary(_add),
    "tile.addptr": _binary(_add),
    "arith.subi": _binary(lambda a, b, shape: _add(a, b, shape, -1)),
    "arith.muli": _binary(_mul),
    "arith.shli": _binary(_shift(_mul)),
    "arith.divsi": _binary(_div),
    "arith.divui": _binary(_div),
    "arith.shrsi": _binary(_shift(_div)),
    "arith.shrui": _binary(_shift(_div)),
    "arith.remsi": _binary(_rem),
    "arith.remui": _binary(_rem),
    "tile.cmpi": _cmpi,
    "tile.select": lambda op, args, shape: _select(*args, shape),
    "tile.program_id": lambda op, args, shape: AxisInfo.unknown(shape),
    "tile.num_programs": lambda op, args, shape: AxisInfo.unknown(shape),
    "tile.load": lambda op, args, shape: AxisInfo.unknown(shape),
    "tile.expand_dims": _expand_dims,
    "tile.broadcast": _broadcast,
    "tile.trans": _trans,
    "tile.convert_layout": _same,
    "tile.assume_facts": _assumed,
}


def _is_elementwise(op: Operation) -> bool:
    """An arith/math/tile comparison op whose operands all have the result's shape."""
    if not op.name.startswith(("arith.", "math.", "tile.cmp")):
        return False
    shape = shape_of(op.results[0].type)
    return all(shape_of(o.type) == shape for o in op.operands)


def _arg_info(arg: SSAValue, attrs: dict[str, Attribute]) -> AxisInfo:
    """A kernel argument: ``tile.divisibility`` says ints divide by D, pointers are
    D-byte aligned (counted here in elements)."""
    div_attr = attrs.get(DIVISIBILITY_ATTR)
    div = div_attr.value.data if isinstance(div_attr, IntegerAttr) else 1
    if isinstance(arg.type, PtrType):
        div = max(1, div // max(1, bits_of(arg.type.pointee) // 8))
    return AxisInfo.uniform((1,), min(div, MAX_DIVISIBILITY))


def _meet(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """What holds of both ``a`` and ``b``."""
    return AxisInfo(tuple(map(min, a.contiguity, b.contiguity)),
                    tuple(map(min, a.divisibility, b.divisibility)),
                    tuple(map(min, a.constancy, b.constancy)),
                    a.value if a.value == b.value else None)


class AxisInfoAnalysis:
    """The facts for every value under ``root``, in program order; a loop's carried
    values hold what both their initial and their yielded values do (a fixpoint, as
    Triton's: ``ptrs += BLOCK`` keeps the pointers' runs)."""

    def __init__(self, root: Operation):
        self._facts: dict[SSAValue, AxisInfo] = {}
        self._walk(root)

    def _walk(self, op: Operation) -> None:
        if isinstance(op, func.FuncOp):
            self._seed_args(op)
        if isinstance(op, scf.ForOp):
            self._loop(op)
            return
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    self._walk(inner)
        if len(op.results) == 1:
            self._facts[op.results[0]] = self._visit(op)

    def _loop(self, loop: scf.ForOp) -> None:
        """Starting from the initial values' facts, the body again until the carried
        values' facts hold of what it yields: facts only weaken, so this ends (at worst
        where the carried values are unknown)."""
        body = loop.body.block
        div = min(self[loop.lb].divisibility[0], self[loop.step].divisibility[0])
        self._facts[body.args[0]] = AxisInfo.uniform((1,), div)  # iv = lb + k * step
        assumed = [self[v] for v in loop.iter_args]
        while True:
            self._facts.update(zip(body.args[1:], assumed, strict=True))
            for inner in body.ops:
                self._walk(inner)
            met = [_meet(a, self[y]) for a, y in zip(assumed, body.last_op.operands,
                                                        strict=True)]
            if met == assumed:
                break
            assumed = met
        self._facts.update(zip(loop.results, assumed, strict=True))

    def __getitem__(self, value: SSAValue) -> AxisInfo:
        info = self._facts.get(value)
        return AxisInfo.unknown(shape_of(value.type)) if info is None else info

    def _seed_args(self, f: func.FuncOp) -> None:
        if not f.body.blocks:
            return
        attrs = f.arg_attrs.data if f.arg_attrs is not None else ()
        for i, arg in enumerate(f.body.blocks[0].args):
            a = attrs[i].data if i < len(attrs) else {}
            self._facts[arg] = _arg_info(arg, a)

    def _visit(self, op: Operation) -> AxisInfo:
        shape = shape_of(op.results[0].type)
        tile = isinstance(op.results[0].type, TensorType)
        args = [self[o].splat(shape) if tile and not isinstance(o.type, TensorType) else self[o]
                for o in op.operands]
        rule = _RULES.get(op.name)
        if rule is not None:
            return rule(op, args, shape)
        if _is_elementwise(op):
            return _elementwise(args, shape)
        return AxisInfo.unknown(shape)
