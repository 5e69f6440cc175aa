"""Triton's compile-time and debugging builtins: ``tl.static_assert``,
``tl.static_print``, ``tl.static_range`` (outside a ``for``: an error; the code
generator unrolls it), ``tl.device_print`` and ``tl.device_assert``."""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.operators import to_bool
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value, cast, constant, literal_dtype
from dialects import tile


@builtin("static_assert")
def static_assert(cg: CodeGenerator, cond: Any, msg: str = "") -> None:
    if isinstance(cond, Value):
        cg.fail("tl.static_assert needs a constexpr condition")
    if not cond:
        cg.fail(f"static_assert failed: {msg}" if msg else "static_assert failed")


@builtin("static_print")
def static_print(_cg: CodeGenerator, *values: Any) -> None:
    print(*(v.describe() if isinstance(v, Value) else v for v in values))


@builtin("static_range")
def static_range(cg: CodeGenerator, *_args: Any) -> None:
    cg.fail("tl.static_range can only be the iterable of a for loop")


@builtin("device_print")
def device_print(cg: CodeGenerator, prefix: Any, *values: Any) -> None:
    if not isinstance(prefix, str):
        cg.fail("tl.device_print needs a string prefix first")
    vals = [v if isinstance(v, Value) else constant(cg.b, v, literal_dtype(v))
            for v in values]
    if any(v.is_ptr for v in vals):
        cg.fail("tl.device_print cannot print pointers")
    vals = [cast(cg.b, v, tl.float32) if v.dtype.is_fp8() else v for v in vals]  # exact
    if len({v.shape for v in vals} - {()}) > 1:
        cg.fail("tl.device_print needs scalars and tiles of one shape")
    cg.b.emit(tile.PrintOp(prefix, [v.ssa for v in vals]))


@builtin("device_assert")
def device_assert(cg: CodeGenerator, cond: Any, msg: Any = "") -> None:
    if not isinstance(msg, str):
        cg.fail("tl.device_assert message must be a string")
    if not isinstance(cond, Value) and cond:
        return
    cg.b.emit(tile.AssertOp(to_bool(cg.b, cond).ssa, msg))
