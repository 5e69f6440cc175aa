"""cuTile's lists of arrays in the frontend: a kernel parameter that receives a Python
list of arrays (of one dtype and rank), as AllGatherMatmul takes its peers' inputs.

The list arrives as its arrays' parameters one after another (``compiler.arrays``; its
length specializes the kernel), each made an ``Array`` with its own view. ``len(lst)`` is
that length; ``lst[k]`` with a constant ``k`` is the ``k``-th array. With a runtime
index ``lst[i]`` is a ``ListItem``: its ``shape`` and ``strides`` are selected from the
arrays' by ``i``, and a builtin given it (``ct.load``, ``ct.store``, ``ct.gather``, the
atomics, ...) runs on each array in turn under ``if i == k``, yielding the one result it
has. No pointer is selected, so every backend runs it (WGSL binds each array apart and
cannot pick one at run time); an index outside the list takes the last array (cuTile
leaves it undefined).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile import indexed  # noqa: F401 - its builtins are wrapped here
from compiler.frontend.cutile.arrays import Array, ListItem
from compiler.frontend.cutile.table import TABLE

_RESULT = "list.item"  # a scope entry no Python name can be (an SSA name hint too)


def _on_each(cg: CodeGenerator, item: ListItem, call: Callable[[Array], Any]) -> Any:
    """``call`` on the array ``item`` stands for: on each array under ``if index == k``
    (the last one in the final ``else``), yielding the result where there is one."""
    def branch(k: int) -> Callable[[], None]:
        def generate() -> None:
            cg.scope[_RESULT] = call(item.arrays[k])
        if k == len(item.arrays) - 1:
            return generate
        test = ops.to_bool(cg.b, ops.compare(cg.b, "eq", item.index, k))
        return lambda: cg._if(test, generate, branch(k + 1))
    branch(0)()
    return cg.scope.pop(_RESULT, None)


def _through_items(handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler`` (its array first), run on each array of a ``ListItem`` it is given."""
    @functools.wraps(handler)
    def run(cg: CodeGenerator, *args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], ListItem):
            return _on_each(cg, args[0], lambda a: handler(cg, a, *args[1:], **kwargs))
        if isinstance(kwargs.get("array"), ListItem):
            item = kwargs.pop("array")
            return _on_each(cg, item, lambda a: handler(cg, *args, array=a, **kwargs))
        return handler(cg, *args, **kwargs)
    return run


_ON_ARRAYS = ("load", "store", "num_tiles", "gather", "scatter", "atomic_add", "atomic_max",
              "atomic_min", "atomic_xchg", "atomic_cas")
for _name in _ON_ARRAYS:
    TABLE.functions[_name] = _through_items(TABLE.functions[_name])
