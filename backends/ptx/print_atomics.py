"""PTX text of the ptx dialect's atomics (``ptx.atom``, ``ptx.atom_loop``), one lane at a
time, for ``print_core.KernelPrinter``. An ``atom`` whose old values nothing reads is a
``red``.

A guarded atomic first zeroes its result, so guarded-off lanes (masked-off elements and
replicas) return 0. ``ptx.atom_loop`` is a compare-and-swap retry loop per lane, with
labels and scratch registers numbered per kernel by the printer's register counters.
"""

from __future__ import annotations

from backends.ptx.print_core import KernelPrinter, emits
from dialects import ptx
from dialects.tile import element_type


def _guard(p: KernelPrinter, op: ptx.AtomOp | ptx.AtomLoopOp, i: int, d: str) -> str:
    """Zero lane ``i``'s result ``d`` if the op is guarded; the guard prefix."""
    if op.pred is None:
        return ""
    p.line(f"mov.b{element_type(op.result.type).bitwidth} {d}, 0")
    return f"@{p.lane(op.pred, i)} "


# atom operations that red also makes (PTX ISA "red"): no exch or cas
_REDUCTIONS = ("add", "and", "or", "xor", "max", "min", "inc", "dec")


def _as_red(op: ptx.AtomOp) -> str | None:
    """The ``red`` opcode doing what ``op`` does where nothing reads the old values and
    its order is one ``red`` takes (relaxed, release); else None. ptxas keeps an unread
    ``atom`` an ``ATOMG``, which waits for the old value to come back: a weight gradient's
    split epilogue adds 64 of them a thread."""
    words = op.opcode.data.split(".")
    if op.result.uses or not set(words) & set(_REDUCTIONS) or \
            set(words) & {"acquire", "acq_rel"}:
        return None
    return ".".join(["red", *words[1:]])


@emits(ptx.AtomOp)
def emit_atom(p: KernelPrinter, op: ptx.AtomOp) -> None:
    if red := _as_red(op):
        for i in range(len(p.reg(op.result))):
            guard = f"@{p.lane(op.pred, i)} " if op.pred is not None else ""
            args = ", ".join(p.lane(a, i) for a in op.args)
            p.line(f"{guard}{red} [{p.lane(op.addr, i)}], {args}")
        return
    for i, d in enumerate(p.reg(op.result)):
        guard = _guard(p, op, i, d)
        args = ", ".join(p.lane(a, i) for a in op.args)
        p.line(f"{guard}{op.opcode.data} {d}, [{p.lane(op.addr, i)}], {args}")


@emits(ptx.AtomLoopOp)
def emit_atom_loop(p: KernelPrinter, op: ptx.AtomLoopOp) -> None:
    """``d = *a; do { seen = cas(a, d, combine(d, v)); retry = seen != d; d = seen }
    while (retry)``, comparing bit patterns (so NaN and -0.0 terminate)."""
    assert element_type(op.result.type).bitwidth == 32
    for i, d in enumerate(p.reg(op.result)):
        guard = _guard(p, op, i, d)
        a, v = p.lane(op.addr, i), p.lane(op.val, i)
        new, seen = p.scratch(d), p.scratch(d)
        retry = p.scratch("%p")
        label = f"$L__atom{retry[2:]}"
        if guard:
            p.line(f"@!{guard[1:-1]} bra {label}_done")
        p.line(f"ld.global.b32 {d}, [{a}]")
        p.lines.append(f"{label}_loop:")
        p.line(f"{op.combine.data} {new}, {d}, {v}")
        order = f".{op.order.data}" if op.order is not None else ""
        p.line(f"atom{order}.global.cas.b32 {seen}, [{a}], {d}, {new}")
        p.line(f"setp.ne.b32 {retry}, {seen}, {d}")
        p.line(f"mov.b32 {d}, {seen}")
        p.line(f"@{retry} bra {label}_loop")
        p.lines.append(f"{label}_done:")
