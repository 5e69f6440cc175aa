"""``tl.inline_asm_elementwise``: a user's PTX run for each element, as Triton runs it.

The operands (tiles or numbers) broadcast to one shape; each result (``dtype``, or a
tuple of them) has that shape (a scalar when every operand is one, or there is none).
The text runs once for every ``pack`` elements. Its registers, numbered ``$0``, ``$1``,
... in the order of the constraints, are the results' and then the operands': an
element of 32 bits or more is a register of its own (``pack`` of them a value), smaller
ones are packed into 32-bit registers (``pack * bits / 32`` a value: four int8 or two
f16 in an ``r``). Each of Triton's constraints names a register of one size (``r`` 32
bits, ``l`` 64, ``h`` 16, ``f`` an f32, ``d`` an f64), which the element's (or the packed
word's) size must match; the bits go to the text as they are. Only ``ptx`` runs the
text; the other backends refuse it when they meet it.
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.creation import dtype_arg
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import (
    Value,
    broadcast_shapes,
    literal_dtype,
    splat,
    value_type,
)
from dialects import tile

CONSTRAINT_BITS = {"r": 32, "l": 64, "h": 16, "f": 32, "d": 64}
"""The register size each of Triton's (LLVM's NVPTX) constraint letters names."""


def _registers(cg: CodeGenerator, letters: list[str], d: tl.dtype, pack: int,
               what: str) -> list[str]:
    """Check ``what``'s constraints (the first of ``letters``), return the rest."""
    count, bits = tile.asm_registers(d.bits, pack)
    if count == 0:
        cg.fail(f"tl.inline_asm_elementwise: {pack} elements of {what} ({d}) do not fill "
                "whole 32-bit registers")
    if len(letters) < count:
        cg.fail(f"tl.inline_asm_elementwise: the constraints end before {what}'s registers")
    for letter in letters[:count]:
        size = CONSTRAINT_BITS.get(letter.lstrip("="))
        if size is None:
            cg.fail(f"tl.inline_asm_elementwise: constraint {letter!r} is not supported "
                    f"(use one of {', '.join(CONSTRAINT_BITS)})")
        if size != bits:
            cg.fail(f"tl.inline_asm_elementwise: {what} is {d}, which does not fit "
                    f"constraint {letter!r} (a {size}-bit register)")
    return letters[count:]


@builtin("inline_asm_elementwise")
def inline_asm_elementwise(cg: CodeGenerator, asm: Any, constraints: Any, args: Any,
                           dtype: Any, is_pure: Any, pack: Any) -> Any:
    if not isinstance(asm, str) or not isinstance(constraints, str):
        cg.fail("tl.inline_asm_elementwise takes its asm text and constraints as strings")
    if not isinstance(pack, int) or pack < 1:
        cg.fail(f"tl.inline_asm_elementwise: pack must be a positive int, got {pack!r}")
    several = isinstance(dtype, tuple | list)
    results = [dtype_arg(cg, d) for d in (dtype if several else [dtype])]
    values = [a if isinstance(a, Value) else ops.materialize(cg.b, a, literal_dtype(a), ())
              for a in (args if isinstance(args, tuple | list) else [args])]
    letters = [c.strip() for c in constraints.split(",") if c.strip()]
    outputs = sum(c.startswith("=") for c in letters)
    count = sum(tile.asm_registers(d.bits, pack)[0] for d in results)
    if outputs != count or any(c.startswith("=") for c in letters[count:]):
        cg.fail(f"tl.inline_asm_elementwise: constraints {constraints!r} must name the "
                f"results' {count} registers first ('=r', ...), then the operands'")
    for i, v in enumerate(values):
        if v.is_ptr:
            cg.fail(f"tl.inline_asm_elementwise: operand {i} is a pointer")
    rest = letters
    for i, d in enumerate(results):
        rest = _registers(cg, rest, d, pack, "the result" if not several else f"result {i}")
    for i, v in enumerate(values):
        rest = _registers(cg, rest, v.dtype, pack, f"operand {i}")
    if rest:
        cg.fail(f"tl.inline_asm_elementwise: constraints {constraints!r} name more "
                f"registers than the results and {len(values)} operands have")
    named = {int(k) for k in tile.ASM_OPERAND.findall(asm)}
    if named and max(named) >= len(letters):
        cg.fail(f"tl.inline_asm_elementwise: the text names ${max(named)}, but there are "
                f"only $0 to ${len(letters) - 1}")
    shape = broadcast_shapes(*(v.shape for v in values))
    ssa = [v.ssa if not v.shape else splat(cg.b, v, shape).ssa for v in values]
    op = tile.InlineAsmOp(asm, constraints, ssa, [value_type(d, shape) for d in results],
                          bool(is_pure), pack)
    cg.b.emit(op)
    out = tuple(Value(r, d, shape) for r, d in zip(op.results, results, strict=True))
    return out if several else out[0]
