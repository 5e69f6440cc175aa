"""PTX text of the ptx dialect's warp-level matrix ops, for ``print_core.KernelPrinter``.

``ldmatrix`` and ``mma.sync`` are one instruction for the whole warp: each fragment is a
brace group of its 32-bit registers. ``ptx.repack`` is one ``mov.b32`` per 32-bit
register, joining or splitting a pair of 16-bit registers.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from backends.ptx.print_core import KernelPrinter, emits
from dialects import ptx
from dialects.tile import element_type


def _group(p: KernelPrinter, v: SSAValue) -> str:
    return "{" + ", ".join(p.reg(v)) + "}"


@emits(ptx.LdMatrixOp)
def emit_ldmatrix(p: KernelPrinter, op: ptx.LdMatrixOp) -> None:
    p.line(f"{op.opcode.data} {_group(p, op.result)}, [{p.reg(op.addr)[0]}]")


@emits(ptx.MmaOp)
def emit_mma(p: KernelPrinter, op: ptx.MmaOp) -> None:
    groups = ", ".join(_group(p, v) for v in (op.result, op.a, op.b, op.c))
    p.line(f"{op.opcode.data} {groups}")


@emits(ptx.RepackOp)
def emit_repack(p: KernelPrinter, op: ptx.RepackOp) -> None:
    joining = element_type(op.result.type).bitwidth == 32
    words, halves = (op.result, op.source) if joining else (op.source, op.result)
    h = p.reg(halves)
    for i, w in enumerate(p.reg(words)):
        pair = f"{{{h[2 * i]}, {h[2 * i + 1]}}}"
        p.line(f"mov.b32 {w}, {pair}" if joining else f"mov.b32 {pair}, {w}")
