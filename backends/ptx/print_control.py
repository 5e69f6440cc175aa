"""PTX text of the ptx dialect's control flow (``ptx.label``, ``ptx.bra``, ``ptx.reg``,
``ptx.assign``), for ``print_core.KernelPrinter``.

A ``ptx.reg`` prints nothing: its registers are allocated where first used, like any
value's. ``ptx.assign`` is one ``mov`` per lane, none where the lane is the register
itself (an accumulator a wgmma wrote in place).
"""

from __future__ import annotations

from backends.ptx.print_core import KernelPrinter, emits
from dialects import ptx
from dialects.tile import element_type


@emits(ptx.LabelOp)
def emit_label(p: KernelPrinter, op: ptx.LabelOp) -> None:
    p.lines.append(f"{op.label.data}:")


@emits(ptx.BraOp)
def emit_bra(p: KernelPrinter, op: ptx.BraOp) -> None:
    if op.pred is None:
        p.line(f"bra.uni {op.target.data}")
        return
    neg = "!" if op.negated is not None else ""
    p.line(f"@{neg}{p.reg(op.pred)[0]} bra {op.target.data}")


@emits(ptx.RegOp)
def emit_reg(p: KernelPrinter, op: ptx.RegOp) -> None:
    p.reg(op.result)


@emits(ptx.AssignOp)
def emit_assign(p: KernelPrinter, op: ptx.AssignOp) -> None:
    cls = ptx.REGISTER_CLASSES[element_type(op.reg.type)][0]
    for i, d in enumerate(p.reg(op.reg)):
        if d != p.lane(op.value, i):
            p.line(f"mov.{cls} {d}, {p.lane(op.value, i)}")
