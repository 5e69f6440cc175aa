"""PTX text of the ptx dialect's shared memory, barrier and register-joining ops, for
``print_core.KernelPrinter``.

A ``ptx.shared`` becomes a ``.shared`` byte array declared at the top of the kernel body
(16-byte aligned, named per kernel) and a ``mov.u32`` of its address; shared accesses go
through 32-bit addresses, one per lane or per ``vec`` lanes (``.vN``). A kernel whose
arrays together pass the 48 KB of static shared memory instead declares one ``.extern
.shared`` (dynamic) array before its entry, and each ``ptx.shared`` is an offset into it
(the launcher supplies the bytes); so does a kernel whose arrays ``place-shared`` placed,
which may overlap.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from backends.ptx import STATIC_SHARED_LIMIT, shared_arrays, shared_layout
from backends.ptx.print_core import MEMORY_TYPES, KernelPrinter, emits
from dialects import ptx
from dialects.tile import element_type


@emits(ptx.SharedOp)
def emit_shared(p: KernelPrinter, op: ptx.SharedOp) -> None:
    arrays = [s for s in p.kernel.walk() if isinstance(s, ptx.SharedOp)]
    offsets, total = shared_layout(shared_arrays(p.kernel))
    align = max(s.align.value.data for s in arrays)
    dynamic = total > STATIC_SHARED_LIMIT
    if dynamic or op.offset is not None:  # placed arrays may overlap: one array holds all
        name = f"{p.name}_smem"
        decls, decl = ((p.globals, f".extern .shared .align {align} .b8 {name}[];") if dynamic
                       else (p.shared, f"\t.shared .align {align} .b8 {name}[{total}];"))
        if decl not in decls:
            decls.append(decl)
        offset = offsets[arrays.index(op)]
        p.line(f"mov.u32 {p.reg(op.result)[0]}, {name}{f'+{offset}' if offset else ''}")
        return
    name = f"{p.name}_smem{len(p.shared)}"
    p.shared.append(f"\t.shared .align {op.align.value.data} .b8 {name}[{op.size.value.data}];")
    p.line(f"mov.u32 {p.reg(op.result)[0]}, {name}")


def _shared(p: KernelPrinter, op: ptx.LdSharedOp | ptx.StSharedOp, kind: str,
            value: SSAValue, pred: SSAValue | None) -> None:
    """One ``ld``/``st.shared[.vN]`` per address, of its group of ``vec`` registers."""
    vec, t = op.width, MEMORY_TYPES[element_type(value.type)]
    wide, regs = f".v{vec}" if vec > 1 else "", p.reg(value)
    for g, addr in enumerate(p.reg(op.addr)):
        guard = f"@{p.lane(pred, g)} " if pred is not None else ""
        group = regs[g * vec:(g + 1) * vec]
        data = group[0] if vec == 1 else "{" + ", ".join(group) + "}"
        access = f"{data}, [{addr}]" if kind == "ld" else f"[{addr}], {data}"
        p.line(f"{guard}{kind}.shared{wide}.{t} {access}")


@emits(ptx.LdSharedOp)
def emit_ld_shared(p: KernelPrinter, op: ptx.LdSharedOp) -> None:
    _shared(p, op, "ld", op.result, None)


@emits(ptx.StSharedOp)
def emit_st_shared(p: KernelPrinter, op: ptx.StSharedOp) -> None:
    _shared(p, op, "st", op.value, op.pred)


@emits(ptx.BarOp)
def emit_bar(p: KernelPrinter, _op: ptx.BarOp) -> None:
    p.line("bar.sync 0")


@emits(ptx.ConcatOp)
def emit_concat(p: KernelPrinter, op: ptx.ConcatOp) -> None:
    p.regs[op.result] = [r for s in op.sources for r in p.reg(s)]

