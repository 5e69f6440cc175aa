"""PTX text of the ptx dialect's asynchronous copies, for ``print_core.KernelPrinter``.

``cp.async.cg`` (cached in L2 only) moves 16 bytes; 4 and 8 bytes need ``cp.async.ca``.
"""

from __future__ import annotations

from backends.ptx.print_core import KernelPrinter, emits
from dialects import ptx


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
