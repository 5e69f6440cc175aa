"""PTX text of the ptx dialect's asynchronous copies, for ``print_core.KernelPrinter``.

``cp.async.cg`` (cached in L2 only) moves 16 bytes; 4 and 8 bytes need ``cp.async.ca``.
A tensor map's generic address is its parameter's, converted (``cvta.param``); a
``ptx.asm`` template is filled in and printed instruction by instruction.
"""

from __future__ import annotations

from backends.ptx.print_core import KernelPrinter, emits
from dialects import ptx
from dialects.ptx.tma import fill


@emits(ptx.CpAsyncOp)
def emit_cp_async(p: KernelPrinter, op: ptx.CpAsyncOp) -> None:
    n = op.bytes.value.data
    cache = "cg" if n == 16 else "ca"
    for g, dst in enumerate(p.reg(op.dst)):
        p.line(f"cp.async.{cache}.shared.global [{dst}], [{p.lane(op.src, g)}], {n}, "
               f"{p.lane(op.size, g)}")


@emits(ptx.PlainOp)
def emit_plain(p: KernelPrinter, op: ptx.PlainOp) -> None:
    p.line(op.text.data)


@emits(ptx.TensorMapParamOp)
def emit_tensor_map_param(p: KernelPrinter, op: ptx.TensorMapParamOp) -> None:
    d = p.reg(op.result)[0]
    p.line(f"mov.u64 {d}, {p.tensor_map(op.slot.value.data)}")
    p.line(f"cvta.param.u64 {d}, {d}")


@emits(ptx.AsmOp)
def emit_asm(p: KernelPrinter, op: ptx.AsmOp) -> None:
    p.labels += 1
    scratch = p.scratch("%p") if "{p}" in op.template.data else ""
    named = {"label": f"$L__asm{p.labels}", "p": scratch}
    if op.result is not None:
        named["r"] = p.reg(op.result)[0]
    text = fill(op.template.data, [p.reg(a)[0] for a in op.args], named)
    for part in (s.strip() for s in text.split(";")):
        if part.endswith(":"):
            p.lines.append(part)
        elif part:
            p.line(part)
