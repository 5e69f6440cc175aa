"""User functions as the compiler reads them: ``KernelSource`` (a function's parsed
source and its locations) and ``TileFunction`` (a ``@tc.func`` helper).

Both the launch path (``compiler.jit``) and the frontend need these, so they live here,
importing neither of them and no xDSL.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.errors import CompileError, SourceLoc, TilecError


@dataclass
class KernelSource:
    """A kernel function's parsed source and where it came from."""

    fn: Any
    tree: ast.FunctionDef
    file: str
    lines: list[str]  # the whole file, for error display
    line_offset: int  # add to ast line numbers
    col_offset: int  # add to ast col offsets (dedent)

    @classmethod
    def of(cls, fn) -> KernelSource:
        lines, first = inspect.getsourcelines(fn)
        src = "".join(lines)
        dedented = textwrap.dedent(src)
        indent = len(lines[0]) - len(lines[0].lstrip())
        tree = ast.parse(dedented).body[0]
        if not isinstance(tree, ast.FunctionDef):
            raise CompileError(f"{fn.__name__} is not a plain function")
        path = inspect.getsourcefile(fn) or "<unknown>"
        try:
            rel = os.path.relpath(path)
            path = rel if not rel.startswith("..") else path
        except ValueError:
            pass
        try:
            with open(inspect.getsourcefile(fn) or "", encoding="utf-8") as f:
                all_lines = f.read().splitlines()
        except OSError:
            all_lines = [""] * (first - 1) + src.splitlines()
        return cls(fn, tree, path, all_lines, first - 1, indent)

    def loc(self, node: ast.AST) -> SourceLoc:
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset + 1
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return SourceLoc(self.file, line, col, text)


class TileFunction:
    """A ``@tc.func`` helper: inlined into the kernels (and functions) that call it."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._source: KernelSource | None = None

    def kernel_source(self) -> KernelSource:
        if self._source is None:
            self._source = KernelSource.of(self.fn)
        return self._source

    def __call__(self, *args, **kwargs):
        raise TilecError(f"{self.__name__} is a @tc.func: call it from a kernel")
