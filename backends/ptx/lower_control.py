"""Structured control flow for simt-to-ptx: ``scf.for``/``if``/``while`` -> ``ptx.label``,
``ptx.bra`` and registers.

PTX has no structured control flow: a loop is a head label, a guarded branch out, the body
and a branch back; an ``if`` branches around its regions. The values SSA passes through
block arguments and results (the induction variable, loop-carried values, an ``if``'s
results) live in ``ptx.reg`` registers instead, written by ``ptx.assign`` where a region
yields; a ``vector<K x T>`` value is K registers, moved lane by lane. Region bodies are
lowered by ``Lowering`` into the kernel's one block, so labels and branches keep program
order.

The moves of one yield are a parallel copy: a yielded value may alias (be, or be lanes
of) a register written by the same yield (``a, b = b, a``), so such values are copied to
fresh registers first. The constants and offsets ``Lowering`` memoizes are forgotten
at the end of each region: a register set inside a branch is not set on other paths.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from backends.ptx.lower_core import Lowering, lowers
from dialects import ptx
from dialects.tile import element_type


def _labels(lo: Lowering, kind: str, *suffixes: str) -> list[str]:
    """Fresh labels for one construct, numbered per kernel."""
    lo.labels += 1
    return [f"$L__{kind}{lo.labels}{s}" for s in suffixes]


def _regs(lo: Lowering, types: Sequence[Attribute]) -> list[SSAValue]:
    return [lo.value(ptx.RegOp(t)) for t in types]


def _assign(lo: Lowering, regs: Sequence[SSAValue], values: Sequence[SSAValue]) -> None:
    """``regs = values`` as a parallel copy."""
    targets = set(regs)
    moves = []
    for reg, v in zip(regs, values, strict=True):
        if v is reg:
            continue
        if ptx.register_source(v) in targets:  # read before any of the moves writes it
            cls = ptx.REGISTER_CLASSES[element_type(v.type)][0]
            v = lo.inst(f"mov.{cls}", [v], v.type)
        moves.append((reg, v))
    for reg, v in moves:
        lo.emit(ptx.AssignOp(reg, v))


def _region(lo: Lowering, block: Block, args: Sequence[SSAValue]) -> Operation:
    """Lower ``block`` but its terminator, its arguments read from ``args``; the
    terminator, with ``lo.location`` at it."""
    for arg, v in zip(block.args, args, strict=True):
        lo.values[arg] = v
    memo = dict(lo.memo)
    end = block.last_op
    assert end is not None
    for op in block.ops:
        if op is not end:
            lo.location = op.location
            lo.lower(op)
    lo.memo = memo
    lo.location = end.location
    return end


def _operands(lo: Lowering, values: Sequence[SSAValue]) -> list[SSAValue]:
    return [lo.values[v] for v in values]


def _bind(lo: Lowering, results: Sequence[SSAValue], regs: Sequence[SSAValue]) -> None:
    for res, reg in zip(results, regs, strict=True):
        lo.values[res] = reg


@lowers(scf.ForOp)
def lower_for(lo: Lowering, op: scf.ForOp) -> None:
    """``iv = lb; head: if iv >= ub goto end; body; iv += step; goto head; end:``
    (signed, as ``scf.for`` compares)."""
    head, end = _labels(lo, "for", "", "_end")
    body = op.body.block
    regs = _regs(lo, [a.type for a in body.args])
    _assign(lo, regs, _operands(lo, [op.lb, *op.iter_args]))
    lo.emit(ptx.LabelOp(head))
    iv, bits = regs[0], element_type(op.lb.type).bitwidth  # pyright: ignore
    done = lo.inst(f"setp.ge.s{bits}", [iv, lo.values[op.ub]], IntegerType(1))
    lo.emit(ptx.BraOp(end, done))
    yielded = _region(lo, body, regs)
    step = lo.inst(f"add.s{bits}", [iv, lo.values[op.step]], iv.type)
    _assign(lo, regs, [step, *_operands(lo, yielded.operands)])
    lo.emit(ptx.BraOp(head))
    lo.emit(ptx.LabelOp(end))
    _bind(lo, op.results, regs[1:])


@lowers(scf.IfOp)
def lower_if(lo: Lowering, op: scf.IfOp) -> None:
    """``if !cond goto else; then; goto end; else: else; end:``."""
    other, end = _labels(lo, "if", "_else", "_end")
    regs = _regs(lo, [r.type for r in op.results])
    has_else = bool(op.false_region.blocks)
    lo.emit(ptx.BraOp(other if has_else else end, lo.values[op.cond], negated=True))
    regions = [op.true_region.block] + ([op.false_region.block] if has_else else [])
    for i, block in enumerate(regions):
        if i:
            lo.emit(ptx.BraOp(end))
            lo.emit(ptx.LabelOp(other))
        yielded = _region(lo, block, [])
        _assign(lo, regs, _operands(lo, yielded.operands))
    lo.emit(ptx.LabelOp(end))
    _bind(lo, op.results, regs)


@lowers(scf.WhileOp)
def lower_while(lo: Lowering, op: scf.WhileOp) -> None:
    """``head: before; results = args; if !cond goto end; after; goto head; end:``."""
    head, end = _labels(lo, "while", "", "_end")
    before, after = op.before_region.block, op.after_region.block
    state = _regs(lo, [a.type for a in before.args])
    results = _regs(lo, [a.type for a in after.args])
    _assign(lo, state, _operands(lo, op.arguments))
    lo.emit(ptx.LabelOp(head))
    cond = _region(lo, before, state)
    assert isinstance(cond, scf.ConditionOp)
    _assign(lo, results, _operands(lo, cond.args))
    lo.emit(ptx.BraOp(end, lo.values[cond.condition], negated=True))
    yielded = _region(lo, after, results)
    _assign(lo, state, _operands(lo, yielded.operands))
    lo.emit(ptx.BraOp(head))
    lo.emit(ptx.LabelOp(end))
    _bind(lo, op.results, results)

