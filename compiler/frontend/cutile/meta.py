"""cuTile's compile-time and utility builtins: ``ct.static_assert``, ``static_eval``,
``static_iter`` (the code generator unrolls ``for x in ct.static_iter(items)``),
``ensure_constant``, ``assume_divisible_by``, ``assert_``, the grid dependency controls,
``x.ndim``; and the names tilec does not implement yet, each a ``CompileError`` that says
so and what to use instead.

``ct.static_eval(expr)`` is its argument: tilec already evaluates the parts of any
expression that are known at compile time as Python does (a conditional on a constant
picks one branch), though only in the kernel language's syntax, where cuTile takes any
Python expression there.
"""

from __future__ import annotations

from typing import Any

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.table import builtin, tile_property
from compiler.frontend.triton import TABLE as TRITON
from compiler.frontend.triton.hints import _assume_facts
from compiler.frontend.values import Value


@builtin("static_assert")
def static_assert(cg: CodeGenerator, condition: Any, message: Any = None) -> None:
    if isinstance(condition, Value):
        cg.fail("ct.static_assert needs a condition known at compile time")
    if not condition:
        text = "" if message is None else str(message)
        cg.fail(f"static assertion failed: {text}" if text else "static assertion failed")


@builtin("static_eval")
def static_eval(_cg: CodeGenerator, expr: Any) -> Any:
    return expr


@builtin("static_iter")
def static_iter(cg: CodeGenerator, _iterable: Any) -> None:
    cg.fail("ct.static_iter can only be the iterable of a for loop")


@builtin("ensure_constant")
def ensure_constant(cg: CodeGenerator, value: Any) -> Any:
    if isinstance(value, Value):
        cg.fail(f"ct.ensure_constant: its argument is a runtime {value.describe()}, not a "
                f"compile-time constant")
    return value


@builtin("assume_divisible_by")
def assume_divisible_by(cg: CodeGenerator, x: Any, divisor: Any) -> Any:
    """``x``, with the promise kept for the divisibility analysis (as ``tl.multiple_of``)."""
    if isinstance(divisor, Value | bool) or not isinstance(divisor, int) or divisor < 1:
        cg.fail(f"ct.assume_divisible_by: divisor must be a positive constant integer, "
                f"got {divisor!r}")
    if isinstance(x, Value) and (x.shape or not x.dtype.is_int()):
        cg.fail(f"ct.assume_divisible_by takes an integer scalar, got {x.describe()}")
    return _assume_facts(cg, x, divisor, "multiple_of", "divisibility")


@builtin("assert_")
def assert_(cg: CodeGenerator, cond: Any, message: Any = None) -> None:
    TRITON.functions["device_assert"](cg, cond, "" if message is None else str(message))


@builtin("grid_dependency_control_wait")
@builtin("grid_dependency_control_launch_dependents")
def grid_dependency_control(cg: CodeGenerator) -> None:
    TRITON.functions["gdc_wait"](cg)


@tile_property("ndim")
def ndim(_cg: CodeGenerator, x: Value) -> int:
    return len(x.shape)


# ---------------------------------------------------------------- not yet

NOT_YET = {
    "printf": "print tiles with tl.device_print(prefix, *tiles), which ct kernels take",
    "print": "print tiles with tl.device_print(prefix, *tiles), which ct kernels take",
    "pack_to_bytes": "tilec has no byte reinterpretation of whole tiles; ct.bitcast "
                     "reinterprets elements of one width",
    "unpack_from_bytes": "tilec has no byte reinterpretation of whole tiles; ct.bitcast "
                         "reinterprets elements of one width",
}


def _not_yet(name: str, why: str) -> None:
    def handler(cg: CodeGenerator, *_args: Any, **_kwargs: Any) -> None:
        cg.fail(f"ct.{name} is not supported by tilec yet: {why}")
    handler.__name__ = handler.__qualname__ = name
    builtin(name)(handler)


for _name, _why in NOT_YET.items():
    _not_yet(_name, _why)
