"""PTX text of the ptx dialect's warp-level matrix ops, for ``print_core.KernelPrinter``.

``ldmatrix`` and ``mma.sync`` are one instruction for the whole warp: each fragment is a
brace group of its 32-bit registers. A ``wgmma`` reads and writes one group, D: it takes
over C's registers when C comes straight from the wgmma before it (a chain over k) or is
dead after it (``in_place``: a loop's accumulator; or an instruction's result used only
there), else C is copied into fresh ones; the
first of a chain is fenced from earlier register accesses by ``wgmma.fence`` (scale-d 1:
D = A B + D, or 0 where C is zero: then it is neither copied nor read; A K-major, B
N-major: trans-b 1). ``ptx.repack`` is one ``mov.b32`` per 32-bit
register, joining or splitting a pair of 16-bit registers.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, i64
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
    if op.is_wgmma:
        _wgmma(p, op)
        return
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


def _wgmma(p: KernelPrinter, op: ptx.MmaOp) -> None:
    c = op.c
    chained = ptx.is_wgmma(c.owner) and len(list(c.uses)) == 1
    zero = not chained and op.in_place is None and _is_zero(c)
    if chained or op.in_place is not None or _dies_here(c):
        p.regs[op.result] = p.reg(c)
    elif not zero:
        for d, s in zip(p.reg(op.result), p.reg(c), strict=True):
            p.line(f"mov.f32 {d}, {s}")
    if not chained:
        p.line("wgmma.fence.sync.aligned")
    b = p.reg(op.b)[0]
    trans_b = int(op.b_k_major is None)  # N-major B is the transposed one
    scale_d = int(not zero)  # 0: D = A B, C's registers unread
    if op.a.type == i64:  # both from shared memory: trans-a 0 (K-major)
        p.line(f"{op.opcode.data} {_group(p, op.result)}, {p.reg(op.a)[0]}, {b}, {scale_d}, 1, "
               f"1, 0, {trans_b}")
    else:  # A in registers: no trans-a
        p.line(f"{op.opcode.data} {_group(p, op.result)}, {_group(p, op.a)}, {b}, {scale_d}, 1, "
               f"1, {trans_b}")


def _dies_here(v: SSAValue) -> bool:
    """Whether the registers of ``v`` (an instruction's results, perhaps picked in another
    order, each register once) are read by nothing after its one use: then that use may
    write them."""
    while isinstance(v.owner, ptx.LanesOp):
        picked = v.owner.indices.get_values()
        if len(set(picked)) != len(picked) or not v.has_one_use():
            return False
        v = v.owner.source
    return isinstance(v.owner, ptx.InstOp) and v.has_one_use()


def _is_zero(v: SSAValue) -> bool:
    """Whether ``v``'s registers all hold the immediate 0 (a dot's zero accumulator)."""
    imm = ptx.register_source(v).owner
    return (isinstance(imm, ptx.MovImmOp) and isinstance(imm.value, IntegerAttr | FloatAttr)
            and imm.value.value.data == 0)
