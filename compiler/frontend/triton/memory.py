"""Triton's memory builtins: ``tl.load``/``tl.store`` -> ``tile.load``/``tile.store``.

The pointer, mask and value (or ``other``) broadcast together, as in Triton. A block
pointer is ``compiler.frontend.triton.block_ptr``'s to lower. The helpers
``check_pointer`` and ``as_mask`` serve the atomics too. A store marks the parameter it writes
(copied back to NumPy arrays). ``cache_modifier``/``eviction_policy`` become attributes of
the access (``hints.cache_hints``; through a block pointer they are checked only).
"""

from __future__ import annotations

from typing import Any

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.operators import materialize, to_bool
from compiler.frontend.triton import block_ptr, hints
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Value, broadcast_shapes, splat
from dialects import tile


def check_pointer(cg: CodeGenerator, p: Any, what: str) -> Value:
    """``p``, checked to be a pointer (scalar or tile)."""
    if not isinstance(p, Value) or not p.is_ptr:
        got = p.describe() if isinstance(p, Value) else type(p).__name__
        cg.fail(f"{what} expects a pointer, got {got}")
    return p


def as_mask(cg: CodeGenerator, m: Any, ptr: Value) -> Value | None:
    """The mask as an i1 tile of the pointer's shape (None: no mask)."""
    if m is None:
        return None
    return splat(cg.b, to_bool(cg.b, m), ptr.shape)


def _broadcast_pointer(cg: CodeGenerator, ptr: Value, *operands: Any) -> Value:
    """A load's or store's pointer stretched to the shape it shares with its mask and
    value (Triton broadcasts all of them together)."""
    shape = broadcast_shapes(*(v.shape for v in (ptr, *operands) if isinstance(v, Value)))
    return splat(cg.b, ptr, shape)


def _no_block_options(cg: CodeGenerator, what: str, **options: Any) -> None:
    """``boundary_check``/``padding_option`` belong to block pointers; ``mask``/``other``
    to pointer tiles."""
    given = [name for name, v in options.items() if v not in (None, (), "")]
    if given:
        cg.fail(f"{what}: {' and '.join(given)} cannot be used here")


@builtin("load")
def load(cg: CodeGenerator, pointer: Any, mask: Any = None, other: Any = None,
         boundary_check: Any = None, padding_option: Any = None, cache_modifier: Any = "",
         eviction_policy: Any = "") -> Value:
    cache = hints.cache_hints(cg, "tl.load", hints.LOAD_CACHE_MODIFIERS, cache_modifier,
                              eviction_policy)
    if isinstance(pointer, block_ptr.BlockPtr):
        _no_block_options(cg, "tl.load of a block pointer", mask=mask, other=other)
        return block_ptr.load(cg, pointer, boundary_check, padding_option)
    _no_block_options(cg, "tl.load of a pointer (not a block pointer)",
                      boundary_check=boundary_check, padding_option=padding_option)
    ptr = _broadcast_pointer(cg, check_pointer(cg, pointer, "tl.load"), mask, other)
    mask_v = as_mask(cg, mask, ptr)
    other_v = None
    if mask_v is not None or other is not None:
        # A masked-off lane reads ``other``, zero by default, on every backend.
        other_v = materialize(cg.b, 0 if other is None else other, ptr.dtype, ptr.shape,
                              as_cast=True)
    op = tile.LoadOp(ptr.ssa, mask_v.ssa if mask_v else None,
                     other_v.ssa if other_v else None)
    op.attributes.update(cache)
    return cg.b.value(op, ptr.dtype, ptr.shape)


@builtin("store")
def store(cg: CodeGenerator, pointer: Any, value: Any, mask: Any = None,
          boundary_check: Any = None, cache_modifier: Any = "",
          eviction_policy: Any = "") -> None:
    cache = hints.cache_hints(cg, "tl.store", hints.STORE_CACHE_MODIFIERS, cache_modifier,
                              eviction_policy)
    if isinstance(pointer, block_ptr.BlockPtr):
        _no_block_options(cg, "tl.store through a block pointer", mask=mask)
        return block_ptr.store(cg, pointer, value, boundary_check)
    _no_block_options(cg, "tl.store through a pointer (not a block pointer)",
                      boundary_check=boundary_check)
    ptr = _broadcast_pointer(cg, check_pointer(cg, pointer, "tl.store"), mask, value)
    if isinstance(value, Value) and value.is_ptr:
        cg.fail("storing pointers is not supported")
    val = materialize(cg.b, value, ptr.dtype, ptr.shape, as_cast=True)
    mask_v = as_mask(cg, mask, ptr)
    op = tile.StoreOp(ptr.ssa, val.ssa, mask_v.ssa if mask_v else None)
    op.attributes.update(cache)
    cg.b.emit(op)
