"""Jumps of the code generator: ``break``, ``continue`` and ``return`` anywhere, as flags.

``Jumps`` is a base of ``ControlFlow`` (``compiler.frontend.control``). Each loop and each
function (the kernel, an inlined ``@tc.func``) is a ``Frame`` with a hidden boolean
variable, its *skip* flag: "the rest of this iteration (function) does not run". A loop
that a ``break`` or ``return`` leaves also has an *exit* flag, which its condition tests
(a ``for`` with one becomes an ``scf.while``, so no iteration is wasted). ``break`` sets
its loop's skip and exit flags, ``continue`` the skip flag, ``return`` its function's skip
flag and both flags of every loop it leaves, and keeps the returned values in hidden
variables. Flags are ordinary variables of the scope, so loops carry them and ``if``s
yield them like a user's: a flag is a Python bool while it is known at compile time and
an ``i1`` once a runtime condition decides it. After a statement that may have set its
frame's skip flag, the rest of the statements run under ``if not skip`` (a guard).

A path that set its skip flag never reads the names first bound in its frame again, so
where ``if`` branches meet, such a name is kept from the branch that went on (with a
stand-in on the other side, only if something later reads it). A name bound in one
branch of an ``if`` whose other branch went on, or first bound inside a loop, is not
visible after it; ``unbound`` remembers why, for the error at a use. A path that returned
never reads any name of its function again, so a name bound before the function may
change type on the path that went on (a stand-in again only if something later reads it);
a loop's names must keep one type, for the next iteration and the code after the loop.
Hidden names start with ``$``, which no Python name has.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from compiler.frontend import operators as ops
from compiler.frontend.values import Aggregate, Value

_JUMPS = {ast.Return: "return", ast.Break: "break", ast.Continue: "continue"}


@dataclass(eq=False)
class Frame:
    """A loop or function being generated (``static``: a ``tl.static_range`` loop, which
    only marks where ``break``/``continue`` are refused)."""

    kind: Literal["function", "loop", "static"]
    skip: str = ""
    exit: str | None = None
    before: frozenset[str] = frozenset()  # names bound when the frame started
    pending: list[Sequence[ast.stmt]] = field(default_factory=list)  # what follows, per level
    returns: str | None = None  # a function's kind of return value, set by the first return
    unbound: dict[str, str] = field(default_factory=dict)  # a function's names not visible
    runs: bool = False  # a loop whose body surely runs (then names it binds may leave it)
    strict: bool = False  # every path counts where branches meet, jumps included


def hidden(name: Any) -> bool:
    return isinstance(name, str) and name.startswith("$")


@functools.lru_cache(maxsize=1 << 14)
def _names_read(stmt: ast.stmt) -> frozenset[str]:
    """The names ``stmt`` reads (``x += 1`` reads ``x``)."""
    nodes = list(ast.walk(stmt))
    return frozenset(n.id for n in nodes if isinstance(n, ast.Name) and
                     isinstance(n.ctx, ast.Load)) | frozenset(
        n.target.id for n in nodes if isinstance(n, ast.AugAssign)
        and isinstance(n.target, ast.Name))


def _names_bound(body: Sequence[ast.stmt]) -> set[str]:
    return {n.id for s in body for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def leaves_loop(nodes: Iterable[ast.AST]) -> bool:
    """Whether a ``break`` of this loop (not of a nested one) or a ``return`` is in
    ``nodes``."""
    for node in nodes:
        if isinstance(node, (ast.Break, ast.Return)):
            return True
        if isinstance(node, (ast.For, ast.While)):
            if any(isinstance(n, ast.Return) for n in ast.walk(node)):
                return True
        elif leaves_loop(ast.iter_child_nodes(node)):
            return True
    return False


def _compile_time(v: Any) -> bool:
    if isinstance(v, (tuple, list)):
        return all(map(_compile_time, v))
    return not isinstance(v, (Value, Aggregate))


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return f"{len(value)} values" if isinstance(value, tuple) else "one value"


class Jumps:
    """Frames, ``visit_Break``/``Continue``/``Return``, statement lists with guards, and
    where ``if`` branches meet (``_merge``)."""

    # ------------------------------------------------------------------ frames

    def _hidden(self, what: str) -> str:
        self.ids += 1
        return f"${what}{self.ids}"

    def _frame(self) -> Frame:
        """The innermost loop or function."""
        return next(f for f in reversed(self.frames) if f.kind != "static")

    def _function_frame(self) -> Frame:
        return next(f for f in reversed(self.frames) if f.kind == "function")

    def _skip(self) -> Any:
        return self.scope.get(self._frame().skip, False)

    def function_body(self, fn: ast.FunctionDef) -> Any:
        """Generate a function's body; its return value (None when it returns nothing)."""
        frame = Frame("function", self._hidden("ret"), before=frozenset(self.scope))
        self.scope[frame.skip] = False
        self.frames.append(frame)
        try:
            self._visit_body(fn.body)
        finally:
            self.frames.pop()
        done = self.scope[frame.skip]
        if frame.returns in (None, "nothing") or done is False:
            return None
        if done is not True:
            self._fail(fn, f"{fn.name} returns {frame.returns} on some paths and nothing "
                           "on others; every path must return the same types")
        values = tuple(self.scope[f"{frame.skip}.{i}"] for i in range(self._arity(frame)))
        return values if frame.returns.endswith("values") else values[0]

    @staticmethod
    def _arity(frame: Frame) -> int:
        return 1 if frame.returns == "one value" else int(frame.returns.split()[0])

    @contextmanager
    def _loop(self, node: ast.For | ast.While, body: Sequence[ast.stmt],
              runs: bool) -> Iterator[Frame]:
        """A loop's frame; its exit flag starts False (carried if a jump sets it)."""
        frame = Frame("loop", self._hidden("skip"), self._hidden("exit")
                      if leaves_loop(body) else None, frozenset(self.scope), runs=runs)
        if frame.exit:
            self.scope[frame.exit] = False
        self.frames.append(frame)
        try:
            yield frame
        finally:
            self.frames.pop()
        for name in (frame.skip, frame.exit):
            self.scope.pop(name or "", None)

    def _iteration(self, body: Sequence[ast.stmt]) -> None:
        """A loop body, from a fresh skip flag."""
        self.scope[self._frame().skip] = False
        self._visit_body(body)

    def _escaping(self, body: Sequence[ast.stmt], scope: dict[str, Any]) -> set[str]:
        """The names first bound inside a loop that surely runs, on every path through
        its first iteration, that something after the loop reads: the loop carries them."""
        frame = self._frame()
        below = next(f for f in reversed(self.frames[:-1]) if f.kind != "static")
        wanted = {n for n in _names_bound(body) - scope.keys() if self._read_later(n, below)}
        if not frame.runs or not wanted:  # no extra dry run in the common case
            return set()
        frame.strict = True
        try:
            end = self._dry_run(body, scope)
        finally:
            frame.strict = False
        return wanted & end.keys()

    def _forget_loop_locals(self, body: Sequence[ast.stmt], node: ast.AST) -> None:
        """Why the names the loop binds but does not carry are not visible after it."""
        line = self.src.loc(node).line
        why = (f"it is not bound on every path through the loop at line {line}"
               if self._frame().runs else f"it is first bound inside the loop at line "
               f"{line}, which may run no iteration (bind it before the loop)")
        for name in _names_bound(body) - self.scope.keys():
            self._function_frame().unbound[name] = why

    # ------------------------------------------------------------------ statements

    def _visit_body(self, body: Sequence[ast.stmt]) -> None:
        """Statements; after one that may jump, the rest under a guard."""
        frame = self._frame()
        for i, stmt in enumerate(body):
            rest = body[i + 1:]
            frame.pending.append(rest)
            try:
                self.visit(stmt)
            finally:
                frame.pending.pop()
            skip = self._skip()
            if not rest or skip is False:
                continue
            if skip is True and type(stmt) in _JUMPS:
                self._fail(rest[0], f"unreachable code after {_JUMPS[type(stmt)]}")
            if skip is True:  # every path jumped for these constexprs: the rest is dead
                return
            self._guard(skip, lambda rest=rest: self._visit_body(rest))
            return

    def _guard(self, skip: Value, gen: Callable[[], None]) -> None:
        """``gen``'s code under ``if not skip``."""
        name = self._frame().skip

        def run() -> None:
            self.scope[name] = False
            gen()

        self._if(ops.unary(self.b, "not", skip), run,
                 lambda: self.scope.__setitem__(name, True))

    def visit_Break(self, node: ast.Break) -> None:
        self._jump(node, [self._innermost_loop(node)])

    def visit_Continue(self, node: ast.Continue) -> None:
        self._jump(node, [self._innermost_loop(node)], leave=False)

    def _innermost_loop(self, node: ast.stmt) -> Frame:
        if self.frames[-1].kind == "static":
            self._fail(node, f"{_JUMPS[type(node)]} inside tl.static_range is not "
                             "supported (use range)")
        return self.frames[-1]

    def visit_Return(self, node: ast.Return) -> None:
        value = None if node.value is None else self.visit(node.value)
        fn = self._function_frame()
        if not self.calls and value is not None:
            self._fail(node, "kernels cannot return a value")
        if isinstance(value, list):
            value = tuple(value)
        if fn.returns not in (None, _kind(value)):
            self._fail(node, f"this return gives {_kind(value)} but an earlier one gives "
                             f"{fn.returns}; every return must give the same types")
        fn.returns = _kind(value)
        parts = () if value is None else value if isinstance(value, tuple) else (value,)
        for i, v in enumerate(parts):
            self.scope[f"{fn.skip}.{i}"] = v
        self._jump(node, self.frames[next(i for i, f in enumerate(self.frames) if f is fn):])

    def _jump(self, node: ast.stmt, frames: list[Frame], leave: bool = True) -> None:
        """Set the skip flags of ``frames`` (the innermost ones) and, if ``leave``, the
        exit flags of the loops among them."""
        for frame in frames:
            if frame.kind != "static":
                self.scope[frame.skip] = True
            if frame.exit and leave:
                self.scope[frame.exit] = True

    # ------------------------------------------------------------------ if branches meet

    def _merge(self, ends: list[dict[str, Any]], node: ast.AST) -> None:
        """Make both branch scopes bind the same names (see the module docstring)."""
        frame = self._frame()
        jumped = [e.get(frame.skip) is True and not frame.strict for e in ends]
        for name in dict.fromkeys([*ends[0], *ends[1]]):
            if name in ends[0] and name in ends[1] and ends[0][name] is ends[1][name]:
                continue
            reads = self._jumped_reads(name, ends, jumped, frame)
            has = [name in e and (hidden(name) or not j or reads)
                   for e, j in zip(ends, jumped, strict=True)]
            if all(has):
                continue
            kept = [e[name] for e, h in zip(ends, has, strict=True) if h]
            others_left = all(j for j, h in zip(jumped, has, strict=True) if not h)
            stand_in = self._stand_in(kept[0]) if kept else None
            if kept and stand_in is not None and (hidden(name) or others_left and
                                                  self._read_later(name, frame)):
                for e, h in zip(ends, has, strict=True):
                    if not h:
                        e[name] = stand_in
                continue
            if hidden(name) and kept:
                self._fail(node, "returning a pointer or block pointer from only some "
                                 "paths of a @tc.func is not supported")
            for e in ends:
                e.pop(name, None)
            if kept and not others_left:
                self._function_frame().unbound[name] = (
                    f"it is bound in only one branch of the if at line "
                    f"{self.src.loc(node).line}")
            elif kept and self._read_later(name, frame):
                self._function_frame().unbound[name] = (
                    "a pointer or block pointer bound on some paths only cannot be used "
                    "after them; bind it before the if")

    def _jumped_reads(self, name: str, ends: list[dict[str, Any]], jumped: list[bool],
                      frame: Frame) -> bool:
        """Whether a path that jumped still reads ``name`` (so its value must agree with
        the other path's): a name bound before a loop, which the next iteration or the
        code after the loop reads. A path that returned reads nothing again; its value
        counts only where something later in the function reads the name (on the paths
        that go on there) and the path that went on here has none, or one of no stand-in."""
        if name not in frame.before:
            return False
        if frame.kind != "function":
            return True
        went_on = [e[name] for e, j in zip(ends, jumped, strict=True) if name in e and not j]
        return self._read_later(name, frame) and (
            not went_on or self._stand_in(went_on[0]) is None)

    def _stand_in(self, v: Any) -> Any:
        """What a path that never reads ``v``'s name binds instead (None: nothing can;
        runtime values from a branch cannot leave it unyielded)."""
        if isinstance(v, Value):
            return None if v.is_ptr else 0
        if isinstance(v, (bool, int, float)):
            return type(v)(0)
        return v if _compile_time(v) else None

    @staticmethod
    def _read_later(name: str, frame: Frame) -> bool:
        """Whether a statement still to come in ``frame`` reads ``name``."""
        return any(name in _names_read(s) for rest in frame.pending for s in rest)
