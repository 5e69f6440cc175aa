"""What a kernel's compiled code depends on besides its arguments: the source of every
function it inlines, and the values of the globals and closure variables they read.

``find`` reads the functions' ASTs (it compiles nothing). A name a function does not bind
itself resolves as the frontend resolves it: in the function's closure, then its module
(then builtins, which need no key); ``module.NAME`` and ``Class.NAME`` read through
them. Their values go into the kernel's cache keys, in memory and on disk, so a changed
constant compiles again, in this process and the next.

``Dependencies.check`` runs at every launch, so it is one ``operator.itemgetter`` (or
``attrgetter``) call and a compare per dictionary, module or closure cell read, identity
first: re-running ``FACTOR = 2.0`` in a notebook finds a new but equal float, and the key,
found again, is the same.

The kinds of values a kernel may read (``global_problem``): numbers, bools, strings,
None, dtypes (tilec's, NumPy's and PyTorch's: ``compiler.tile`` takes them), enum
members, ``tl.constexpr`` values and tuples of these, whose values are keyed; and
modules, classes and callables (functions, kernels), which the frontend resolves and
whose inlined sources are keyed. Anything else (a list, a dict, an array)
could change without the kernel knowing: the frontend refuses it.
"""

from __future__ import annotations

import ast
import enum
import functools
import inspect
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import compiler.language as tl
from compiler.source import HELPER, FunctionText, TileFunction, function_text, local_names

ALLOWED = ("numbers, bools, strings, None, dtypes, enum members, tl.constexpr values or "
           "tuples of these (or modules, classes and functions)")
_MISSING = object()


def value_token(v: Any) -> Any:
    """What a cache key holds of a global's value; None for a kind kernels may not read."""
    if isinstance(v, tl.constexpr):
        inner = value_token(v.value)
        return None if inner is None else ("constexpr", inner)
    if v is None or type(v) in (bool, int, float, str):
        return repr(v)  # repr tells the types apart: 1, 1.0, True, '1'
    if isinstance(v, tl.dtype | tl.pointer_type | enum.Enum | np.bool_ | np.number | np.dtype) or \
            _is_torch_dtype(v):
        return (type(v).__qualname__, repr(v))
    if isinstance(v, tuple):
        parts = tuple(value_token(x) for x in v)
        if None in parts:
            return None
        return (type(v).__qualname__, getattr(type(v), "_fields", ()), parts)
    if inspect.ismodule(v):
        return ("module", v.__name__)
    if callable(v):  # functions, kernels, classes: the frontend decides what it calls
        return ("callable", getattr(v, "__module__", None),
                getattr(v, "__qualname__", type(v).__qualname__))
    return None


def _is_torch_dtype(v: Any) -> bool:
    """``torch.float16`` and its kind (PyTorch is imported already if one exists)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.dtype)


def global_problem(name: str, v: Any) -> str | None:
    """Why a kernel may not read global ``name`` holding ``v`` (None: it may)."""
    if value_token(v) is not None:
        return None
    return (f"global {name!r} is a {type(v).__name__}: a kernel may read globals that are "
            f"{ALLOWED}; pass it as an argument instead")


def compiler_owned(obj: Any) -> bool:
    """A module, class or function of tilec itself (``tl``, ``ct.PaddingMode``,
    ``tl.load``): keyed by the compiler's own hash; a kernel's global bound to one is
    not checked at launches (nobody assigns ``tl`` another module)."""
    if inspect.ismodule(obj):
        return obj.__name__.split(".")[0] == "compiler"
    if inspect.isclass(obj) or inspect.isroutine(obj):
        return (getattr(obj, "__module__", None) or "").split(".")[0] == "compiler"
    return False


@dataclass
class Dependencies:
    """A kernel's sources and the global values they read, as found at one time."""

    sources: list[str]  # each function's ``FunctionText.located()``: the kernel's first
    values: list[tuple[str, str, Any]]  # (where, name, value_token) of each global read
    checks: list[tuple[Callable, Any, Any]] = field(default_factory=list)
    """(getter, holder, what the getter returned): a dict, module or closure cell."""
    check: Callable[[], bool] | None = field(init=False)
    """``changed`` as the launch path calls it: None when nothing is read."""

    def __post_init__(self):
        self.check = _checker(self.checks)

    def changed(self) -> bool:
        """Whether a global read holds another value now (or was deleted)."""
        return self.check is not None and self.check()

    @functools.cached_property
    def key(self) -> str:
        """Everything above as text, for cache keys."""
        return "\n".join(self.sources) + "\n" + repr(self.values)


def _checker(checks: list[tuple[Callable, Any, Any]]) -> Callable[[], bool] | None:
    """``Dependencies.check``, made for its checks: it runs at every launch, and a
    kernel mostly reads globals of its own module only, so that case is one closure call
    (a loop in a method took twice its time)."""
    if not checks:
        return None
    parts = [_check(*c) for c in checks]
    if len(parts) == 1:
        return parts[0]
    return lambda: any(changed() for changed in parts)


def _check(get: Callable, holder: Any, seen: Any) -> Callable[[], bool]:
    def changed() -> bool:
        try:
            now = get(holder)
            if now is seen or now == seen:
                return False
        except Exception:  # noqa: BLE001, S110 - deleted, or a new value that cannot compare
            pass
        return True
    return changed


NONE = Dependencies([], [])
"""Before a kernel's dependencies are first found: nothing to check at a launch."""


def find(fn: Callable, text: FunctionText, plain: bool = False) -> Dependencies:
    """The dependencies of kernel ``fn``: those of the functions it inlines, transitively
    (``@tc.func`` helpers and kernels; ``plain``: plain Python functions too, as
    ``compiler.tile`` inlines them)."""
    finder = _Finder(plain)
    finder.visit(fn, text)
    return Dependencies(finder.sources, list(finder.values.values()), finder.checks())


class _Finder:
    def __init__(self, plain: bool):
        self.plain = plain
        self.sources: list[str] = []
        self.values: dict[tuple[int, str], tuple[str, str, Any]] = {}
        self.read: dict[int, tuple[Any, bool, dict[str, Any]]] = {}  # holder, by item, names
        self.seen: set[Any] = set()

    def visit(self, fn: Callable, text: FunctionText) -> None:
        self.seen.add(fn)
        self.sources.append(text.located())
        tree = text.parse()[0]
        own = local_names(tree) if isinstance(tree, ast.FunctionDef) else set()
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id not in own:
                self.name(fn, cells, node.id)
            elif isinstance(node, ast.Attribute):
                base = self.value_of(fn, cells, own, node.value)
                if (inspect.ismodule(base) or inspect.isclass(base)) and \
                        not compiler_owned(base):
                    self.attribute(base, node.attr)

    def name(self, fn: Callable, cells: dict[str, Any], name: str) -> None:
        cell = cells.get(name)
        if cell is not None:
            try:
                self.record(cell, False, "cell_contents", name, fn.__qualname__,
                            cell.cell_contents)
            except ValueError:  # an empty cell: the frontend finds nothing either
                pass
        elif name in fn.__globals__:
            self.record(fn.__globals__, True, name, name, fn.__globals__.get("__name__", "?"),
                        fn.__globals__[name])

    def attribute(self, base: Any, attr: str) -> None:
        if inspect.ismodule(base):
            if attr in vars(base):
                self.record(vars(base), True, attr, attr, base.__name__, vars(base)[attr])
        else:
            v = getattr(base, attr, _MISSING)
            if v is not _MISSING:
                self.record(base, False, attr, attr, base.__qualname__, v)

    def value_of(self, fn: Callable, cells: dict[str, Any], own: set[str],
                 node: ast.AST) -> Any:
        """The module or class a ``Name.attr...`` chain names (else ``_MISSING``)."""
        if isinstance(node, ast.Name) and node.id not in own:
            cell = cells.get(node.id)
            if cell is not None:
                try:
                    return cell.cell_contents
                except ValueError:
                    return _MISSING
            return fn.__globals__.get(node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            base = self.value_of(fn, cells, own, node.value)
            if inspect.ismodule(base) or inspect.isclass(base):
                return getattr(base, node.attr, _MISSING)
        return _MISSING

    def record(self, holder: Any, by_item: bool, key: str, name: str, where: str,
               v: Any) -> None:
        """One global read: ``holder[key]`` (``by_item``) or ``holder.key``."""
        if (id(holder), key) in self.values:
            return
        token = value_token(v)
        self.values[id(holder), key] = (where, name, token or ("unsupported",
                                                               type(v).__qualname__))
        if token is not None and not compiler_owned(v):  # None: the frontend refuses it
            self.read.setdefault(id(holder), (holder, by_item, {}))[2][key] = v
        self.inline(v)

    def inline(self, v: Any) -> None:
        """Visit the function ``v`` stands for, if kernels inline it."""
        tf = v if isinstance(v, TileFunction) else None
        if tf is None and isinstance(getattr(type(v), "tile_function", None), property):
            tf = v.tile_function  # a @tc.kernel: inlined when called, as in Triton
        if tf is not None and tf.fn not in self.seen:
            self.visit(tf.fn, tf.text)
        elif self.plain and inspect.isfunction(v) and v not in self.seen and \
                v.__name__ != "<lambda>" and not hasattr(v, "__tilec_builtin__"):
            self.visit(v, function_text(v, what=HELPER))

    def checks(self) -> list[tuple[Callable, Any, Any]]:
        out = []
        for holder, by_item, names in self.read.values():
            get = (operator.itemgetter if by_item else operator.attrgetter)(*names)
            out.append((get, holder, get(holder)))
        return out
