"""Which pointer arguments a kernel may write through.

A store, an atomic or a view store writes through a pointer whose source is found by
following it back through pointer arithmetic, shape ops, views and the values that loops
and branches carry (``p, q = q, p`` in a loop: both). Backends copy these arguments back
to the user's host arrays (PTX, WGSL), ``verify=True`` compares them, and the NumPy
backend reads the other arguments in place. A pointer whose source cannot be followed
counts as pointing into every argument: a write missed here would lose the user's output.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func, scf
from xdsl.ir import Attribute, Operation, SSAValue

from dialects.tile import AtomicCASOp, AtomicRMWOp, PtrType, StoreOp, element_type
from dialects.tile.array import ArrayType, ViewStoreOp

_WRITERS = (StoreOp, AtomicRMWOp, AtomicCASOp, ViewStoreOp)


def written_arguments(fn: func.FuncOp) -> set[int]:
    """Indices of ``fn``'s arguments that some op in it may write through."""
    pointers = {a: frozenset({i}) for i, a in enumerate(fn.body.block.args) if _points(a.type)}
    roots = dict(pointers)
    _propagate(fn, roots)
    everywhere = frozenset().union(*pointers.values())
    written: set[int] = set()
    for op in fn.walk():
        if isinstance(op, _WRITERS):
            written |= roots.get(op.operands[0]) or everywhere
    return written


def _points(t: Attribute) -> bool:
    return isinstance(t, ArrayType) or isinstance(element_type(t), PtrType)


def _propagate(fn: func.FuncOp, roots: dict[SSAValue, frozenset[int]]) -> None:
    """Fill ``roots`` for every pointer value, to a fixed point: a value carried around a
    loop gets its sources from the next iteration too, so a pass may add to an earlier one."""
    flows = [(dst, src) for op in fn.walk() for dst, src in _flows(op)
             if _points(dst.type) and _points(src.type)]
    changed = True
    while changed:
        changed = False
        for dst, src in flows:
            have, more = roots.get(dst, frozenset()), roots.get(src, frozenset())
            if not more <= have:
                roots[dst] = have | more
                changed = True


def _flows(op: Operation) -> Iterator[tuple[SSAValue, SSAValue]]:
    """(value, a value it may be derived from) pairs that ``op`` makes."""
    if isinstance(op, scf.ForOp):
        body = op.body.block
        for i, init in enumerate(op.iter_args):
            for dst in (body.args[i + 1], op.results[i]):
                yield dst, init
                yield dst, body.last_op.operands[i]
    elif isinstance(op, scf.WhileOp):
        before, after = op.before_region.block, op.after_region.block
        for i, init in enumerate(op.arguments):
            yield before.args[i], init
            yield before.args[i], after.last_op.operands[i]
        for i, v in enumerate(before.last_op.args):
            yield after.args[i], v
            yield op.results[i], v
    elif isinstance(op, scf.IfOp):
        for region in op.regions:
            for block in region.blocks:
                yield from zip(op.results, block.last_op.operands, strict=True)
    else:  # pointer arithmetic and shape ops; anything else: from all it takes
        inner = [a for region in op.regions for block in region.blocks for a in block.args]
        for dst in (*op.results, *inner):
            for src in op.operands:
                yield dst, src
