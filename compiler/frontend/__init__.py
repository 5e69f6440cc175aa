"""Frontend: the Python AST of a ``@tc.kernel`` function -> tile IR.

The rest of the compiler uses only ``generate`` and ``KernelSource``. Inside:

- ``values``, ``operators``: typed values, Triton's promotion rules and operator tables;
- ``codegen``, ``control``, ``jumps``: the ``CodeGenerator`` (statements, expressions,
  calls and ``@tc.func`` inlining; ``for``/``while``/``if``; ``break``/``continue``/
  ``return`` as flags), which knows no builtin;
- ``builtins``: ``BuiltinTable``, a language's builtin name -> handler table;
- ``triton``: the Triton-style language (``tl.*``), one module per builtin family;
- ``cutile``: the cuTile-style language (``ct.*``, ``compiler.tile``): arrays and tiles.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.host_descriptors import TritonCodeGenerator
from compiler.kinfo import ArgSpec, Param
from compiler.source import KernelSource

__all__ = ["CodeGenerator", "KernelSource", "generate"]


def generate(src: KernelSource, specs: list[ArgSpec], language: str = "triton"
             ) -> tuple[ModuleOp, list[Param]]:
    """Tile IR for one specialization of a kernel, and its runtime parameters;
    ``language``: ``"triton"`` (``tl.*``) or ``"cutile"`` (``ct.*``, array tiles)."""
    if language == "cutile":
        from compiler.frontend.cutile import ArrayCodeGenerator
        return ArrayCodeGenerator(src, specs).generate()
    return TritonCodeGenerator(src, specs).generate()
