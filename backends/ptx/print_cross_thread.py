"""PTX text of the ptx dialect's shared memory, barrier and register-joining ops, for
``printer.KernelPrinter``.

A ``ptx.shared`` becomes a ``.shared`` byte array declared at the top of the kernel body
(16-byte aligned, named per kernel) and a ``mov.u32`` of its address; shared accesses go
through 32-bit addresses, one per lane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute

from dialects import ptx
from dialects.tile import element_type

if TYPE_CHECKING:
    from backends.ptx.printer import KernelPrinter

# Element type -> the type ld/st.shared move (i8 registers are 16 bits wide).
_TYPES: dict[Attribute, str] = {
    IntegerType(8): "u8", IntegerType(16): "b16", IntegerType(32): "b32",
    IntegerType(64): "b64", Float16Type(): "b16", BFloat16Type(): "b16",
    Float32Type(): "f32", Float64Type(): "f64",
}


def emit_shared(p: KernelPrinter, op: ptx.SharedOp) -> None:
    name = f"{p.name}_smem{len(p.shared)}"
    p.shared.append(f"\t.shared .align 16 .b8 {name}[{op.size.value.data}];")
    p.line(f"mov.u32 {p.reg(op.result)[0]}, {name}")


def emit_ld_shared(p: KernelPrinter, op: ptx.LdSharedOp) -> None:
    t = _TYPES[element_type(op.result.type)]
    for i, d in enumerate(p.reg(op.result)):
        p.line(f"ld.shared.{t} {d}, [{p.lane(op.addr, i)}]")


def emit_st_shared(p: KernelPrinter, op: ptx.StSharedOp) -> None:
    t = _TYPES[element_type(op.value.type)]
    for i, v in enumerate(p.reg(op.value)):
        guard = f"@{p.lane(op.pred, i)} " if op.pred is not None else ""
        p.line(f"{guard}st.shared.{t} [{p.lane(op.addr, i)}], {v}")


def emit_bar(p: KernelPrinter, _op: ptx.BarOp) -> None:
    p.line("bar.sync 0")


def emit_concat(p: KernelPrinter, op: ptx.ConcatOp) -> None:
    p.regs[op.result] = [r for s in op.sources for r in p.reg(s)]


EMITTERS = {ptx.SharedOp: emit_shared, ptx.LdSharedOp: emit_ld_shared,
            ptx.StSharedOp: emit_st_shared, ptx.BarOp: emit_bar, ptx.ConcatOp: emit_concat}
