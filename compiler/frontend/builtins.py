"""The builtin table of a kernel language: builtin name -> handler, and tile methods.

A handler is a plain function ``handler(cg, *args, **kwargs)`` taking the
``CodeGenerator`` first and the call's (already evaluated) arguments after it. A
language module fills a ``BuiltinTable`` with the decorators::

    @TABLE.builtin("load")
    def load(cg, pointer, mask=None, other=None): ...

    @TABLE.builtin("sum", method=True)   # tl.sum(x, 1) and x.sum(1)
    def sum_(cg, x, axis=None, ...): ...

    @TABLE.method("load", on=TensorDescriptor)   # desc.load(offsets): not a tile method

    @TABLE.kind(tl.tensor_descriptor)   # isinstance(x, tl.tensor_descriptor)
    def is_descriptor(x): ...

The code generator looks a ``tl.<name>`` call up by name (the ``__tilec_builtin__``
attribute of ``compiler.language`` functions), ``x.<name>(...)`` with ``method_of`` and
``x.<name>`` in ``properties``, and ``isinstance(x, cls)`` of a language's class in
``kinds``. The table knows nothing of the code generator.

A language whose kernels may meet the builtins of another (``tl.*`` in a ``@ct.kernel``:
both are importable there) names it ``foreign``: a builtin of the foreign language's
module is refused (``misused``) unless its handler is shared, meaning the same in both,
or ours is ``compatible``: it takes the foreign builtin's calls with the same meaning
(``tl.exp(x)`` is ``ct.exp(x)``, whose handler adds cuTile's keywords).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[..., Any]


@dataclass
class BuiltinTable:
    """The builtins of one kernel language (``prefix`` names it in messages: ``tl``)."""

    prefix: str
    module: str = ""  # the Python module that defines the builtins: compiler.language
    title: str = ""  # the language, for messages
    inline_plain: bool = False  # plain Python functions called in a kernel are inlined
    foreign: BuiltinTable | None = None  # another language that kernels may reach
    counterparts: dict[str, str] = field(default_factory=dict)  # foreign name -> ours
    compatible: frozenset[str] = frozenset()  # foreign names our handler takes alike
    functions: dict[str, Handler] = field(default_factory=dict)
    methods: dict[str, Handler] = field(default_factory=dict)
    object_methods: dict[tuple[type, str], Handler] = field(default_factory=dict)
    properties: dict[str, Handler] = field(default_factory=dict)
    kinds: dict[type, Callable[[Any], bool]] = field(default_factory=dict)

    def builtin(self, name: str, *, method: bool = False) -> Callable[[Handler], Handler]:
        """Register ``prefix.name``; with ``method``, also ``x.name(...)``."""
        def register(fn: Handler) -> Handler:
            self.functions[name] = fn
            if method:
                self.methods[name] = fn
            return fn
        return register

    def method(self, name: str, *, on: type | None = None) -> Callable[[Handler], Handler]:
        """Register ``x.name(...)`` only: on tiles (``x.to(dtype)``), or with ``on`` on
        the frontend objects of that class (``desc.load(offsets)``)."""
        def register(fn: Handler) -> Handler:
            if on is None:
                self.methods[name] = fn
            else:
                self.object_methods[on, name] = fn
            return fn
        return register

    def misused(self, fn: Any, name: str) -> str | None:
        """Why builtin ``fn`` (named ``name``) cannot be called here, if it is the foreign
        language's and means something else (a handler of its own, or none): ``tl.arange``
        in a ``@ct.kernel`` would reach ``ct.arange(size)``. None: it can."""
        other = self.foreign
        if other is None or getattr(fn, "__module__", None) != other.module or \
                self.functions.get(name) is other.functions.get(name) or \
                name in self.compatible:
            return None
        why = f"belongs to {other.title}, not to {self.title}"
        ours = self.counterparts.get(name, name)
        own = getattr(sys.modules.get(self.module), ours, None)
        if ours not in self.functions or own is None:
            return f"{why}, which has no {name}"
        return f"{why}: use {self.prefix}.{ours}{inspect.signature(own)}"

    def method_of(self, value: Any, name: str, is_tile: bool) -> Handler | None:
        """The handler of ``value.name(...)`` (``is_tile``: ``value`` is a tile or scalar)."""
        if is_tile:
            return self.methods.get(name)
        return self.object_methods.get((type(value), name))

    def property(self, name: str) -> Callable[[Handler], Handler]:
        """Register the attribute ``x.name`` (``x.T``, ``x.dtype``): ``fn(cg, x)``."""
        def register(fn: Handler) -> Handler:
            self.properties[name] = fn
            return fn
        return register

    def kind(self, cls: type) -> Callable[[Callable[[Any], bool]], Callable[[Any], bool]]:
        """Register what ``isinstance(x, cls)`` is in a kernel for a class of the
        language (``tl.tensor_descriptor``): ``fn(x)``, a question about the frontend value
        that ``x`` is there, since no kernel value is an instance of that Python class."""
        def register(fn: Callable[[Any], bool]) -> Callable[[Any], bool]:
            self.kinds[cls] = fn
            return fn
        return register


@dataclass
class Method:
    """A method bound to its tile or object (``x.sum``), waiting for its call."""

    value: Any
    name: str
    handler: Handler
