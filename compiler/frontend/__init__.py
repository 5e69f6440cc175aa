"""Frontend: the Python AST of a ``@tc.kernel`` function -> tile IR.

The rest of the compiler uses only ``generate`` and ``KernelSource``. Inside:

- ``values``, ``operators``: typed values, Triton's promotion rules and operator tables;
- ``codegen``, ``control``: the ``CodeGenerator`` (statements, expressions, calls and
  ``@tc.func`` inlining; ``for``/``while``/``if``), which knows no builtin;
- ``builtins``: ``BuiltinTable``, a language's builtin name -> handler table;
- ``triton``: the Triton-style language (``tl.*``), one module per builtin family.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton import TABLE
from compiler.kinfo import ArgSpec, Param
from compiler.source import KernelSource

__all__ = ["CodeGenerator", "KernelSource", "generate"]


def generate(src: KernelSource, specs: list[ArgSpec]) -> tuple[ModuleOp, list[Param]]:
    """Tile IR for one specialization of a kernel, and its runtime parameters."""
    return CodeGenerator(src, specs, TABLE).generate()
