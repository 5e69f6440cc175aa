"""``tl.inline_asm_elementwise``: a user's PTX run for each element, as Triton runs it.

The operands (tiles or numbers) broadcast to one shape, the result has that shape (a
scalar when every operand is one, or there is none) and ``dtype``; ``$0`` in the text is
the result's register and ``$1``, ``$2``, ... the operands' in order. Each of Triton's
constraints names a register of one size (``r`` 32 bits, ``l`` 64, ``h`` 16, ``f`` an
f32, ``d`` an f64): an operand, and the result, must have an element of that size, and
its bits go to the text as they are. One result and ``pack=1`` only, for now: a tuple of
dtypes or a packing of several elements into one register is refused. Only ``ptx`` runs
the text; the other backends refuse it when they meet it.
"""

from __future__ import annotations

import re
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


def _register(cg: CodeGenerator, letter: str, d: tl.dtype, what: str) -> None:
    bits = CONSTRAINT_BITS.get(letter)
    if bits is None:
        cg.fail(f"tl.inline_asm_elementwise: constraint {letter!r} is not supported "
                f"(use one of {', '.join(CONSTRAINT_BITS)})")
    if d.bits != bits:
        cg.fail(f"tl.inline_asm_elementwise: {what} is {d}, which does not fit constraint "
                f"{letter!r} (a {bits}-bit register)")


@builtin("inline_asm_elementwise")
def inline_asm_elementwise(cg: CodeGenerator, asm: Any, constraints: Any, args: Any,
                           dtype: Any, is_pure: Any, pack: Any) -> Value:
    if not isinstance(asm, str) or not isinstance(constraints, str):
        cg.fail("tl.inline_asm_elementwise takes its asm text and constraints as strings")
    if isinstance(dtype, tuple | list):
        cg.fail("tl.inline_asm_elementwise with several results is not supported yet")
    if pack != 1:
        cg.fail(f"tl.inline_asm_elementwise with pack={pack} is not supported yet (pack=1 "
                "runs the text once per element)")
    result = dtype_arg(cg, dtype)
    values = [a if isinstance(a, Value) else ops.materialize(cg.b, a, literal_dtype(a), ())
              for a in (args if isinstance(args, tuple | list) else [args])]
    letters = [c.strip() for c in constraints.split(",") if c.strip()]
    outputs = [c for c in letters if c.startswith("=")]
    if len(outputs) != 1 or not letters[0].startswith("=") \
            or len(letters) != 1 + len(values):
        cg.fail(f"tl.inline_asm_elementwise: constraints {constraints!r} must name one "
                f"result ('=r', ...) and then one register for each of the {len(values)} "
                "operands")
    _register(cg, letters[0][1:], result, "the result")
    for i, (letter, v) in enumerate(zip(letters[1:], values, strict=True)):
        if v.is_ptr:
            cg.fail(f"tl.inline_asm_elementwise: operand {i} is a pointer")
        _register(cg, letter, v.dtype, f"operand {i}")
    named = {int(k) for k in re.findall(r"\$(\d+)", asm)}
    if named and max(named) > len(values):
        cg.fail(f"tl.inline_asm_elementwise: the text names ${max(named)}, but there are "
                f"only $0 (the result) to ${len(values)}")
    shape = broadcast_shapes(*(v.shape for v in values))
    ssa = [v.ssa if not v.shape else splat(cg.b, v, shape).ssa for v in values]
    op = tile.InlineAsmOp(asm, constraints, ssa, value_type(result, shape), bool(is_pure))
    return cg.b.value(op, result, shape)
