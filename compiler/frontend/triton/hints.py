"""Triton's hints and scheduling builtins: ``tl.multiple_of``/``max_contiguous``/
``max_constancy`` (-> ``tile.assume_facts``, read by the axis analysis), ``tl.assume``
(-> ``tile.assert``: checked where assertions are), ``tl.debug_barrier`` (->
``tile.barrier``) and ``tl.range`` (outside a ``for``: an error; the code generator reads
its ``num_stages``). ``cache_hints`` checks ``tl.load``/``tl.store``'s ``cache_modifier``
and ``eviction_policy`` and gives them as the access's attributes (PTX emits them).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.operators import to_bool
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value
from dialects import tile

LOAD_CACHE_MODIFIERS = ("", ".ca", ".cg", ".cv")
STORE_CACHE_MODIFIERS = ("", ".wb", ".cg", ".cs", ".wt")
EVICTION_POLICIES = ("", "evict_first", "evict_last")


def _per_dimension(cg: CodeGenerator, x: Value, values: Any, what: str) -> list[int]:
    """``values`` as one positive int per dimension (an int stands for a 1-D tile's or a
    scalar's one value, as in Triton)."""
    vals = list(values) if isinstance(values, tuple | list) else [values]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in vals):
        cg.fail(f"tl.{what} needs constexpr integers, got {values!r}")
    rank = max(1, len(x.shape))
    if len(vals) != rank:
        cg.fail(f"tl.{what} needs {rank} value{'s' if rank > 1 else ''} (one per dimension) "
                f"for {x.describe()}, got {values!r}")
    if min(vals) < 1:
        cg.fail(f"tl.{what} values must be positive, got {values!r}")
    return vals


def _assume_facts(cg: CodeGenerator, x: Any, values: Any, what: str, fact: str) -> Any:
    if not isinstance(x, Value):
        return x  # a constexpr: the analysis knows it exactly
    if not x.is_ptr and not x.dtype.is_int():
        cg.fail(f"tl.{what} needs integers or pointers, got {x.describe()}")
    facts = {fact: _per_dimension(cg, x, values, what)}
    return cg.b.value(tile.AssumeFactsOp(x.ssa, **facts), x.dtype, x.shape, x.is_ptr)


@builtin("multiple_of")
def multiple_of(cg: CodeGenerator, x: Any, values: Any) -> Any:
    return _assume_facts(cg, x, values, "multiple_of", "divisibility")


@builtin("max_contiguous")
def max_contiguous(cg: CodeGenerator, x: Any, values: Any) -> Any:
    return _assume_facts(cg, x, values, "max_contiguous", "contiguity")


@builtin("max_constancy")
def max_constancy(cg: CodeGenerator, x: Any, values: Any) -> Any:
    return _assume_facts(cg, x, values, "max_constancy", "constancy")


@builtin("assume")
def assume(cg: CodeGenerator, cond: Any) -> None:
    if not isinstance(cond, Value):
        if not cond:
            cg.fail("tl.assume of a false constant")
        return
    if cond.is_ptr:
        cg.fail("tl.assume needs a condition, got a pointer")
    cg.b.emit(tile.AssertOp(to_bool(cg.b, cond).ssa, "tl.assume(...) is false"))


@builtin("debug_barrier")
def debug_barrier(cg: CodeGenerator) -> None:
    cg.b.emit(tile.BarrierOp())


@builtin("gdc_wait")
@builtin("gdc_launch_dependents")
def no_dependent_launch(_cg: CodeGenerator) -> None:
    """PDL's waits compile to nothing: without ``launch_pdl`` overlap, each launch already
    starts after the previous one ends."""


@builtin("range")
def range_(cg: CodeGenerator, *_args: Any, **_kwargs: Any) -> None:
    cg.fail("tl.range can only be the iterable of a for loop")


def cache_hints(cg: CodeGenerator, what: str, modifiers: tuple[str, ...],
                cache_modifier: Any, eviction_policy: Any) -> dict[str, Attribute]:
    """The attributes of a load or store for its options (none for the defaults); a
    ``CompileError`` unless both are among Triton's values."""
    attrs: dict[str, Attribute] = {}
    for attr, name, value, allowed in (
            (tile.CACHE_MODIFIER_ATTR, "cache_modifier", cache_modifier, modifiers),
            (tile.EVICTION_POLICY_ATTR, "eviction_policy", eviction_policy,
             EVICTION_POLICIES)):
        if value is not None and value not in allowed:
            cg.fail(f"{what}: {name} must be one of {', '.join(map(repr, allowed))}, "
                    f"got {value!r}")
        if value:
            attrs[attr] = StringAttr(value)
    return attrs
