"""User functions as the compiler reads them: ``FunctionText`` (where a function's source
text comes from), ``KernelSource`` (its parsed source and locations) and ``TileFunction``
(a ``@tc.func`` helper).

Both the launch path (``compiler.jit``) and the frontend need these, so they live here,
importing neither of them and no xDSL.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.errors import CompileError, SourceLoc, TilecError

HELPER = "a kernel's helper"
"""What errors call a plain Python function a ``compiler.tile`` kernel inlines."""


@dataclass
class FunctionText:
    """The text a function was defined in (its file, a notebook cell, or the ``source=``
    its decorator was given) and the line its definition starts on (its first
    decorator). Taken when the function is decorated: the kernel compiles the code that
    was run, even if the file changes later."""

    file: str  # the function's ``co_filename``
    lines: list[str]  # the whole text, each line with its newline
    first: int  # 1-based

    @functools.cached_property
    def block(self) -> list[str]:
        """The function's own lines, decorators included."""
        return inspect.getblock(self.lines[self.first - 1:])

    def located(self) -> str:
        """File, first line and source: what a cache key holds of a function (compiled IR
        records source locations, so moving a kernel within its file must not reuse an
        entry)."""
        return f"{self.file}:{self.first}\n{''.join(self.block)}"

    def parse(self) -> tuple[ast.stmt, int]:
        """The definition's AST (its lines counted from ``first``) and its indentation."""
        block = self.block
        tree = ast.parse(textwrap.dedent("".join(block))).body[0]
        return tree, len(block[0]) - len(block[0].lstrip())

    def node_loc(self, node: ast.AST, indent: int) -> SourceLoc:
        """Where a node of ``parse()``'s tree is."""
        return self.loc(self.first + node.lineno - 1, node.col_offset + indent + 1)

    def loc(self, line: int, col: int = 1) -> SourceLoc:
        """A position in this text (1-based line and column), for an error."""
        text = self.lines[line - 1].rstrip("\n") if 0 < line <= len(self.lines) else ""
        return SourceLoc(shown_path(self.file), line, col, text)


def shown_path(file: str) -> str:
    """A file name as errors show it: relative to the working directory when below it."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def function_text(fn: Callable, source: str | None = None,
                  what: str = "@tc.kernel") -> FunctionText:
    """Where ``fn``'s source is: the ``source=`` text if given, else the lines Python
    keeps for its file (``linecache``: files, IPython cells, and any text registered
    there), else the text of ``python -c``. Code from standard input, the interactive
    prompt (before Python 3.13) or ``exec`` of a string has none."""
    code = inspect.unwrap(fn).__code__
    if source is not None:
        return _given_text(fn.__name__, code, source, what)
    linecache.checkcache(code.co_filename)  # a file edited since it was cached: read again
    lines = linecache.getlines(code.co_filename, fn.__globals__) or _command_text(code)
    if not 0 < code.co_firstlineno <= len(lines):
        file = code.co_filename
        why = ("Python keeps none for standard input, the interactive prompt or exec of a "
               "string" if file.startswith("<") else "the file cannot be read")
        given = f"{what}(source=text)" if what.startswith("@") else "@tc.func(source=text)"
        raise TilecError(f"{what} {fn.__name__!r}: no source text for code defined in "
                         f"{file} ({why}); define it in a file, or give its text: {given}")
    return FunctionText(code.co_filename, lines, code.co_firstlineno)


def _command_text(code: Any) -> list[str]:
    """The text of ``python -c`` (``sys.orig_argv`` keeps it), if it defined ``code``:
    compiled again, it must hold an equal code object (code run by ``exec`` is named
    ``<string>`` too)."""
    argv = getattr(sys, "orig_argv", [])
    if code.co_filename != "<string>" or "-c" not in argv[:-1]:
        return []
    text = argv[argv.index("-c") + 1]
    try:
        todo = [compile(text, "<string>", "exec", dont_inherit=True)]
    except (SyntaxError, ValueError):
        return []
    while todo:
        c = todo.pop()
        if c == code:
            return text.splitlines(keepends=True)
        todo += [k for k in c.co_consts if inspect.iscode(k)]
    return []


def _given_text(name: str, code: Any, source: str, what: str) -> FunctionText:
    """``source=``: the text of the definition or of all the code that was run; the
    definition of ``name`` in it is the one on the function's own first line, else the
    only one."""
    if not isinstance(source, str):
        raise TilecError(f"{what} {name!r}: source= takes the text of the code (a str), "
                         f"got {type(source).__name__}")
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError as e:
        raise TilecError(f"{what} {name!r}: source= is not valid Python: {e}") from None
    firsts = [min([n.lineno] + [d.lineno for d in n.decorator_list])
              for n in ast.walk(tree)
              if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]
    if code.co_firstlineno in firsts:
        first = code.co_firstlineno
    elif len(firsts) == 1:
        first = firsts[0]
    else:
        raise TilecError(f"{what} {name!r}: source= holds {len(firsts)} definitions of "
                         f"{name!r}, none on line {code.co_firstlineno}; pass the text "
                         f"of its def")
    return FunctionText(code.co_filename, source.splitlines(keepends=True), first)


def checked_function(fn: Any, what: str) -> Callable:
    """``fn`` if it is a plain ``def`` function (as ``what``, a decorator, takes), else
    a ``TilecError`` (a ``CompileError`` at the definition for a lambda, an ``async def``
    or a generator)."""
    if not inspect.isfunction(fn):
        if inspect.isclass(fn):
            got = f"class {fn.__name__!r}"
        elif inspect.isbuiltin(fn):
            got = f"builtin {fn.__name__!r}"
        else:
            got = f"{type(fn).__name__} {fn!r}"
        raise TilecError(f"{what} takes a Python function (a def), got {got}")
    if fn.__name__ == "<lambda>":
        raise CompileError(f"{what} takes a def, not a lambda", _lambda_loc(fn))
    kind = ("an async def" if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
            else "a generator (it has yield)" if inspect.isgeneratorfunction(fn) else None)
    if kind is not None:
        raise CompileError(f"{what} takes a plain def; {fn.__name__!r} is {kind}",
                           _def_loc(fn, what))
    return fn


def _lambda_loc(fn: Callable) -> SourceLoc | None:
    try:
        text = function_text(fn)
    except TilecError:
        return None
    line = text.lines[text.first - 1]
    return text.loc(text.first, line.find("lambda") + 1)


def _def_loc(fn: Callable, what: str) -> SourceLoc | None:
    """Where ``fn``'s ``def`` is (after its decorators)."""
    try:
        text = function_text(fn, what=what)
        return text.node_loc(*text.parse())
    except (TilecError, SyntaxError):
        return None


def local_names(tree: ast.FunctionDef) -> set[str]:
    """The names a function binds itself (its parameters and every name it assigns):
    Python's locals, which never read a global."""
    args = tree.args
    params = args.posonlyargs + args.args + args.kwonlyargs + \
        [a for a in (args.vararg, args.kwarg) if a is not None]
    declared = {n for s in ast.walk(tree) if isinstance(s, ast.Global | ast.Nonlocal)
                for n in s.names}
    assigned = {n.id for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)}
    return ({a.arg for a in params} | assigned) - declared


@dataclass
class KernelSource:
    """A kernel function's parsed source and where it came from."""

    fn: Any
    tree: ast.FunctionDef
    file: str
    lines: list[str]  # the whole text it was defined in, for error display
    line_offset: int  # add to ast line numbers
    col_offset: int  # add to ast col offsets (dedent)

    @classmethod
    def of(cls, fn, text: FunctionText | None = None) -> KernelSource:
        text = function_text(fn) if text is None else text
        tree, indent = text.parse()
        if not isinstance(tree, ast.FunctionDef):
            raise CompileError(f"{fn.__name__} is not a plain function",
                               text.node_loc(tree, indent))
        return cls(fn, tree, shown_path(text.file), "".join(text.lines).splitlines(),
                   text.first - 1, indent)

    @functools.cached_property
    def local_names(self) -> set[str]:
        return local_names(self.tree)

    def loc(self, node: ast.AST) -> SourceLoc:
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset + 1
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return SourceLoc(self.file, line, col, text)


class TileFunction:
    """A ``@tc.func`` helper: inlined into the kernels (and functions) that call it.
    Its source text is found when it is made (``source=``: given)."""

    def __init__(self, fn: Callable, source: str | None = None, what: str = "@tc.func"):
        self.fn = checked_function(fn, what)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.text = function_text(fn, source, what)
        self._source: KernelSource | None = None

    def kernel_source(self) -> KernelSource:
        if self._source is None:
            self._source = KernelSource.of(self.fn, self.text)
        return self._source

    def __call__(self, *args, **kwargs):
        raise TilecError(f"{self.__name__} is a @tc.func: call it from a kernel")
