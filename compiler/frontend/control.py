"""Control flow of the code generator: ``for``/``while``/``if`` -> ``scf``, and
``tl.static_range`` unrolling (``tl.range`` is ``range`` with hints on its ``scf.for``).

``ControlFlow`` is a base of ``CodeGenerator`` (``compiler.frontend.codegen``) and uses
its ``visit``, ``scope``, builder ``b``, ``_fail`` and ``const_int``.

Loop-carried variables are found the way Triton finds them: the body is generated once
into a scratch block (a dry run) and thrown away; the names it rebinds that existed
before the loop are carried (``iter_args``), and their type must not change. A Python
number before the loop becomes a scalar of its literal type (``0`` -> int32, ``0.0`` ->
float32), or of the loop's type when the loop makes it a scalar of another dtype; a tile
never replaces a scalar (``acc = 0.0`` then ``acc += tile`` is an error, as in Triton:
start from ``tl.zeros``). A name first bound inside a loop is carried too (from a
stand-in zero) when the loop surely runs, binds it on every path through its first
iteration (a dry run where jumps count as paths) and something after the loop reads it;
otherwise it is not visible after the loop. Where the branches of an ``if`` meet, and for
``break``/``continue``/``return``, see ``compiler.frontend.jumps``.

An ``Aggregate`` (a block pointer) is carried part by part: the analysis sees each of
its runtime parts as a variable of its own, keyed ``(name, i)``, so only the parts that
change (``tl.advance``'s offsets) become ``iter_args``; the aggregate is rebuilt from the
carried parts and the unchanged ones, and its compile-time part may not change.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.jumps import Frame, Jumps, hidden
from compiler.frontend.values import (
    Aggregate,
    Value,
    constant,
    ir_type,
    literal_dtype,
    root_name,
    value_type,
)
from dialects.tile import NUM_STAGES_ATTR

_NUMBER = (bool, int, float)
_MAX_DRY_RUNS = 4  # each may turn more Python numbers into carried scalars

Key = str | tuple[str, int]
"""A carried variable: a name, or part ``i`` of the aggregate a name holds."""


def _builtin_name(fn: Any) -> str | None:
    return getattr(fn, "__tilec_builtin__", None)


def _same_binding(a: Any, b: Any) -> bool:
    """Whether a name still holds what it held (Python numbers compare by value)."""
    if a is b:
        return True
    return isinstance(a, _NUMBER) and type(a) is type(b) and a == b


LOOP_FLAGS = ("warp_specialize", "flatten", "disallow_acc_multi_buffer", "disable_licm")
"""``tl.range``'s scheduling hints from Triton, accepted and ignored: tilec neither
specializes warps nor flattens loop nests yet."""

class Sig(NamedTuple):
    """The type of a carried or yielded value: what a loop or branch may not change."""

    dtype: tl.dtype
    shape: tuple[int, ...] = ()
    is_ptr: bool = False

    @staticmethod
    def of(v: Value) -> Sig:
        return Sig(v.dtype, v.shape, v.is_ptr)

    def ir_type(self) -> Attribute:
        return value_type(self.dtype, self.shape, self.is_ptr)

    def describe(self) -> str:
        return Value(None, *self).describe()  # pyright: ignore[reportArgumentType]


def _describe(v: Any) -> str:
    if isinstance(v, (Value, Aggregate)):
        return v.describe()
    return f"the Python {type(v).__name__} {v!r}"


def _leaves(scope: dict[str, Any]) -> dict[Key, Any]:
    """``scope`` with each aggregate replaced by its parts, keyed ``(name, i)``."""
    out: dict[Key, Any] = {}
    for name, v in scope.items():
        if isinstance(v, Aggregate):
            out.update({(name, i): p for i, p in enumerate(v.parts())})
        else:
            out[name] = v
    return out


def _assemble(scope: dict[str, Any], leaves: dict[Key, Any]) -> dict[str, Any]:
    """The variables ``leaves`` rebinds; an aggregate is ``scope``'s with the new parts."""
    out = {k: v for k, v in leaves.items() if isinstance(k, str)}
    for name in dict.fromkeys(k[0] for k in leaves if isinstance(k, tuple)):
        agg = scope[name]
        out[name] = agg.with_parts([leaves.get((name, i), p) for i, p in enumerate(agg.parts())])
    return out


def _returned(key: Key) -> bool:
    """Whether ``key`` holds part of a function's return value (``jumps``)."""
    return isinstance(key, str) and hidden(key) and "." in key


def _shown(key: Key, scope: dict[str, Any]) -> str:
    """A carried variable as messages and SSA names show it: ``acc``, ``bp.off1``."""
    return key if isinstance(key, str) else f"{key[0]}.{scope[key[0]].part_name(key[1])}"


class ControlFlow(Jumps):
    """``visit_For``, ``visit_While`` and ``visit_If``."""

    # ------------------------------------------------------------------ helpers

    @contextmanager
    def _in_block(self, block: Block) -> Iterator[Block]:
        outer = self.b.block
        self.b.block = block
        try:
            yield block
        finally:
            self.b.block = outer

    def _dry_run(self, body: Sequence[ast.stmt], scope: dict[str, Any]) -> dict[str, Any]:
        """The scope after generating ``body`` from ``scope`` into a block that is then
        erased (its ops use outer values, so their uses are dropped with them)."""
        saved = self.scope
        self.scope = dict(scope)
        scratch = Block()
        try:
            with self._in_block(scratch):
                self._iteration(body)
            return self.scope
        finally:
            self.scope = saved
            scratch.erase(safe_erase=False)

    def _start_sig(self, name: str, start: Any, end: Any) -> Sig:
        """The type a carried variable starts with (see the module docstring)."""
        if isinstance(start, Value):
            return Sig.of(start)
        if not isinstance(start, _NUMBER):
            self._fail(self.node, f"cannot rebind {name!r} (a compile-time "
                                  f"{type(start).__name__}) inside a loop")
        if isinstance(end, Value) and not end.shape and not end.is_ptr:
            return Sig(end.dtype)
        return Sig(literal_dtype(start))

    def _loop_carried(self, body: Sequence[ast.stmt],
                      bind: dict[str, tl.dtype]) -> dict[Key, Sig]:
        """The carried variables of a loop body and their types. Dry runs bind them (and
        the names in ``bind``, scalars) to stand-ins built in a scratch block."""
        outer = self.scope
        before = _leaves(outer)
        sigs: dict[Key, Sig] = {}
        escaping: set[str] | None = None
        prelude = Block()
        try:
            with self._in_block(prelude):
                for _ in range(_MAX_DRY_RUNS):
                    stand = {k: self._initial(k, sig, before) for k, sig in sigs.items()
                             if not isinstance(before.get(k), Value)}
                    stand |= {n: constant(self.b, 0, d) for n, d in bind.items()}
                    if escaping is None:  # once, from the scope before the first iteration
                        escaping = self._escaping(body, outer | stand)
                    end_scope = self._dry_run(body, outer | _assemble(outer, stand))
                    self._same_aggregates(outer, end_scope, "before the loop",
                                          "after an iteration")
                    after = _leaves(end_scope)
                    new = {k: self._start_sig(_shown(k, outer), before.get(k, v), after[k])
                           for k, v in (before | stand).items()
                           if k not in bind and k in after and not _same_binding(v, after[k])}
                    new |= {k: Sig.of(v) if isinstance(v, Value) else Sig(literal_dtype(v))
                            for k, v in after.items()
                            if k not in before and (_returned(k) or k in escaping)}
                    if new == sigs:
                        break
                    sigs = new
        finally:
            prelude.erase(safe_erase=False)
        for key, sig in sigs.items():
            end, name = after[key], _shown(key, outer)
            if isinstance(end, Value) and Sig.of(end) != sig or \
                    not isinstance(end, (Value, *_NUMBER)):
                self._fail(self.node, f"loop-carried variable {name!r} is {sig.describe()} "
                                      f"before the loop but {_describe(end)} after an "
                                      "iteration; its type must stay the same (start from "
                                      "e.g. tl.zeros)")
        return sigs

    def _same_aggregates(self, a: dict[str, Any], b: dict[str, Any], where_a: str,
                         where_b: str) -> None:
        """Fail where a name holds an aggregate in ``a`` or ``b`` but not the same kind
        of aggregate (its compile-time part) in both."""
        for name in (n for n in a if n in b):
            x, y = a[name], b[name]
            if x is y or not isinstance(x, Aggregate) and not isinstance(y, Aggregate):
                continue
            if not (isinstance(x, Aggregate) and isinstance(y, Aggregate)
                    and x.static() == y.static()):
                self._fail(self.node, f"{name!r} is {_describe(x)} {where_a} but "
                                      f"{_describe(y)} {where_b}; its type must stay the same")

    def _starts(self, sigs: dict[Key, Sig]) -> dict[Key, Value]:
        """The carried variables' values before the loop, as typed Values."""
        before = _leaves(self.scope)
        return {k: self._initial(k, sig, before) for k, sig in sigs.items()}

    def _initial(self, key: Key, sig: Sig, before: dict[Key, Any]) -> Value:
        """A carried variable's value before the loop. One first bound inside starts as
        zero, never read: a ``return`` inside the loop gives it, or the loop surely runs
        and binds it on every path (``jumps``)."""
        v = before.get(key, 0)
        if isinstance(v, Value):
            return v
        if sig.is_ptr:
            self._fail(self.node, "returning a pointer from inside a loop is not supported"
                       if _returned(key) else f"pointer {key!r} is first bound inside the "
                       "loop; bind it before the loop to use it after")
        return constant(self.b, v, sig.dtype, sig.shape)

    def _carry_out(self, sig: Sig, end: Any) -> Value:
        """``end`` (a Value of type ``sig`` or a Python number) as a Value of ``sig``."""
        if isinstance(end, Value):
            return end
        return ops.materialize(self.b, end, sig.dtype, sig.shape)

    def _yield(self, sigs: dict[Key, Sig], scope: dict[str, Any]) -> None:
        values = _leaves(scope)
        ends = [self._carry_out(sig, values[k]) for k, sig in sigs.items()]
        self.b.emit(scf.YieldOp(*[e.ssa for e in ends]))

    def _bind(self, values: Sequence[SSAValue], sigs: dict[Key, Sig],
              sources: dict[str, Any]) -> dict[str, Any]:
        """``values`` as the variables ``sigs`` names (aggregates rebuilt from
        ``sources``, the scope the values replace), their SSA names too; a pointer is
        named after the parameter its source points into, if it has one."""
        leaves = _leaves(sources)
        out: dict[Key, Any] = {}
        for (key, sig), v in zip(sigs.items(), values, strict=True):
            root = root_name(leaves[key]) if sig.is_ptr else ""
            v.name_hint = root or _shown(key, sources).replace(".", "_").lstrip("$")
            out[key] = Value(v, *sig)
        return _assemble(sources, out)

    # ------------------------------------------------------------------ for

    def visit_For(self, node: ast.For) -> None:
        if not isinstance(node.target, ast.Name):
            self._fail(node.target, "the loop variable must be a plain name")
        if node.orelse:
            self._fail(node, "for ... else is not supported")
        it = node.iter
        fn = self.visit(it.func) if isinstance(it, ast.Call) else None
        if fn is not builtins.range and _builtin_name(fn) not in ("range", "static_range",
                                                                  "static_iter"):
            self._fail(it, "for loops iterate over range(...), tl.range(...) or "
                           "tl.static_range(...)")
        args = [self.visit(a) for a in it.args]
        kwargs = {k.arg: self.visit(k.value) for k in it.keywords}
        if _builtin_name(fn) == "static_iter":
            self._static_iter(node, args, kwargs)
            return
        if kwargs and _builtin_name(fn) != "range":
            self._fail(it, f"{'range' if fn is builtins.range else 'tl.static_range'}() "
                           "takes positional arguments only")
        if _builtin_name(fn) == "static_range":
            self._static_for(node, args)
        else:
            self._scf_for(node, *self._range_bounds(args), self._loop_hints(kwargs))

    def _loop_hints(self, kwargs: dict[str, Any]) -> dict[str, Attribute]:
        """``tl.range``'s keywords as attributes of its ``scf.for``: ``num_stages`` (this
        loop's prefetch depth for pipeline-loads); ``loop_unroll_factor`` and Triton's
        boolean scheduling hints (``LOOP_FLAGS``) are checked and ignored."""
        unknown = set(kwargs) - {"num_stages", "loop_unroll_factor", *LOOP_FLAGS}
        if unknown:
            self._fail(self.node.iter, f"tl.range() got unexpected keywords {sorted(unknown)} "
                                       "(it takes num_stages=, loop_unroll_factor= and "
                                       f"the flags {', '.join(LOOP_FLAGS)})")
        attrs: dict[str, Attribute] = {}
        for name, v in kwargs.items():
            if name in LOOP_FLAGS:
                if not isinstance(v, bool | int):
                    self._fail(self.node.iter, f"tl.range {name} must be a constexpr bool, "
                                               f"got {v!r}")
                continue
            if v is not None and (self.const_int(v, f"tl.range {name}") < 1):
                self._fail(self.node.iter, f"tl.range {name} must be >= 1, got {v}")
            if name == "num_stages" and v is not None:
                attrs[NUM_STAGES_ATTR] = IntegerAttr(v, i32)
        return attrs

    def _static_for(self, node: ast.For, args: list[Any]) -> None:
        if not 1 <= len(args) <= 3:
            self._fail(node.iter, "tl.static_range takes 1 to 3 arguments")
        bounds = [self.const_int(a, "a tl.static_range bound") for a in args]
        if len(bounds) == 3 and bounds[2] == 0:
            self._fail(node.iter, "tl.static_range step must not be zero")
        self._static_loop(node, list(range(*bounds)))

    def _static_loop(self, node: ast.For, items: list[Any]) -> None:
        pending = self._frame().pending
        pending.append(node.body)  # later iterations read what earlier ones bind
        self.frames.append(Frame("static"))
        try:
            self._unroll(node, items)
        finally:
            self.frames.pop()
            pending.pop()

    def _static_iter(self, node: ast.For, args: list[Any], kwargs: dict[str, Any]) -> None:
        """``for x in ct.static_iter(items)``: the body once per item of a sequence known
        at compile time (tiles among them), as ``tl.static_range`` unrolls."""
        if len(args) != 1 or kwargs or isinstance(args[0], Value):
            self._fail(node.iter, "ct.static_iter takes one iterable known at compile time")
        try:
            items = list(args[0])
        except TypeError:
            self._fail(node.iter, f"ct.static_iter needs an iterable, got {args[0]!r}")
        self._static_loop(node, items)

    def _unroll(self, node: ast.For, indices: list[Any]) -> None:
        """Iterations of a ``tl.static_range`` (or ``ct.static_iter``) loop; after one
        that may have returned, the rest under a guard."""
        for n, i in enumerate(indices):
            self.scope[node.target.id] = i
            self._visit_body(node.body)
            skip = self._skip()
            if skip is True:
                return
            if isinstance(skip, Value) and n + 1 < len(indices):
                self._guard(skip, lambda rest=indices[n + 1:]: self._unroll(node, rest))
                return

    def _range_bounds(self, args: list[Any]) -> tuple[Any, Any, Any]:
        if not 1 <= len(args) <= 3:
            self._fail(self.node.iter, "range takes 1 to 3 arguments")
        start, stop, step = ([0] + args + [1])[:3] if len(args) == 1 else (args + [1])[:3]
        for b in (start, stop, step):
            bad = isinstance(b, Value) and (b.shape or b.is_ptr or not b.dtype.is_int())
            if bad or not isinstance(b, Value) and (isinstance(b, bool) or not isinstance(b, int)):
                got = b.describe() if isinstance(b, Value) else repr(b)
                self._fail(self.node.iter, f"range bounds must be integer scalars, got {got}")
        if isinstance(step, int) and step == 0:
            self._fail(self.node.iter, "range() step must not be zero")
        return start, stop, step

    def _iv_dtype(self, bounds: Sequence[Any]) -> tl.dtype:
        """int64 if a bound needs it, else int32 (Triton's induction variable types)."""
        wide = any(b.dtype is tl.int64 if isinstance(b, Value) else
                   literal_dtype(b) is tl.int64 for b in bounds)
        return tl.int64 if wide else tl.int32

    def _scf_for(self, node: ast.For, start: Any, stop: Any, step: Any,
                 hints: dict[str, Attribute]) -> None:
        """``scf.for`` with a positive step; a constant negative step counts ``k`` up
        from 0 to ``start - stop`` and binds ``i = start - k``. A loop that a ``break``
        or ``return`` leaves is an ``scf.while`` on ``k < stop and not exit``."""
        dtype = self._iv_dtype((start, stop, step))
        down = isinstance(step, int) and step < 0
        bounds = (0, self._sub(start, stop), -step) if down else (start, stop, step)
        lb, ub, st = (ops.materialize(self.b, v, dtype, ()) for v in bounds)
        runs = all(isinstance(v, int) for v in bounds) and len(range(*bounds)) > 0
        with self._loop(node, node.body, runs) as frame:
            if frame.exit:
                self._counted_while(node, (lb, ub, st), start if down else None, dtype)
                return
            name = node.target.id
            sigs = self._loop_carried(node.body, {name: dtype})
            starts = self._starts(sigs)
            body = Block(arg_types=[ir_type(dtype)] + [sig.ir_type() for sig in sigs.values()])
            outer = self.scope
            with self._in_block(body):
                (k,) = self._bind(body.args[:1], {name: Sig(dtype)}, {}).values()
                i = ops.materialize(self.b, self._sub(start, k), dtype, ()) if down else k
                self.scope = outer | self._bind(body.args[1:], sigs, outer) | {name: i}
                self._iteration(node.body)
                self._yield(sigs, self.scope)
            self.scope = outer
            loop = self.b.emit(scf.ForOp(lb.ssa, ub.ssa, st.ssa,
                                         [v.ssa for v in starts.values()], Region(body)))
            loop.attributes.update(hints)
            self.scope.update(self._bind(loop.results, sigs, outer))
            self._forget_loop_locals(node.body, node)

    def _counted_while(self, node: ast.For, bounds: tuple[Value, Value, Value],
                       down_from: Any, dtype: tl.dtype) -> None:
        """``for i in range(...)`` as ``while k < stop: i = k (or down_from - k);
        k += step; body`` on hidden names (``k`` steps before the body, so ``continue``
        cannot skip it)."""
        names = [self._hidden(w) for w in ("k", "stop", "step", "from")]
        self.scope.update(zip(names, (*bounds, down_from), strict=True))
        k, stop, step, start = (ast.Name(n, ast.Load()) for n in names)
        iv = k if down_from is None else ast.BinOp(start, ast.Sub(), k)
        head = [ast.Assign([node.target], iv),
                ast.AugAssign(ast.Name(names[0], ast.Store()), ast.Add(), step)]
        test = ast.Compare(k, [ast.Lt()], [stop])
        for part in (*head, test):
            for n in ast.walk(part):
                ast.copy_location(n, node)
        self._while(node, test, [*head, *node.body], {node.target.id: dtype}, lazy=False)
        for name in names:
            self.scope.pop(name, None)

    def _sub(self, a: Any, b: Any) -> Any:
        return a - b if not isinstance(a, Value) and not isinstance(b, Value) else \
            ops.binary(self.b, "sub", a, b)

    # ------------------------------------------------------------------ while

    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            self._fail(node, "while ... else is not supported")
        runs = isinstance(node.test, ast.Constant) and bool(node.test.value)
        with self._loop(node, node.body, runs):
            self._while(node, node.test, node.body, {}, lazy=True)

    def _while(self, node: ast.stmt, test: ast.expr, body: Sequence[ast.stmt],
               bind: dict[str, tl.dtype], lazy: bool) -> None:
        """``scf.while`` testing ``test`` before each run of ``body``."""
        sigs = self._loop_carried(body, bind)
        starts = self._starts(sigs)
        types = [sig.ir_type() for sig in sigs.values()]
        before, after = Block(arg_types=types), Block(arg_types=types)
        outer = self.scope
        with self._in_block(before):
            self.scope = outer | self._bind(before.args, sigs, outer)
            cond = self._loop_test(test, self.scope.get(self._frame().exit or ""), lazy)
            self.scope = outer
            if not isinstance(cond, Value):
                before.erase(safe_erase=False)
                if cond:
                    self._fail(test, "while on a constant true condition never ends "
                                     "without a break or return")
                return
            self.b.emit(scf.ConditionOp(cond.ssa, *before.args))
        with self._in_block(after):
            self.scope = outer | self._bind(after.args, sigs, outer)
            self._iteration(body)
            self._yield(sigs, self.scope)
        self.scope = outer
        loop = self.b.emit(scf.WhileOp([v.ssa for v in starts.values()], types,
                                       Region(before), Region(after)))
        self.scope.update(self._bind(loop.results, sigs, outer))
        self._forget_loop_locals(body, node)

    def _loop_test(self, test: ast.expr, exit_: Any, lazy: bool) -> Any:
        """A loop's condition, false once the exit flag ``exit_`` is set (a Value, or
        None/False: no jump leaves the loop). ``lazy``: ``test`` is not evaluated then
        (a while's own test may load what a break guarded against)."""
        if not isinstance(exit_, Value) or not lazy:
            cond = self.visit(test)
            if not isinstance(cond, Value):
                return ops.unary(self.b, "not", exit_) if cond and exit_ else cond
            self._scalar_condition(test, cond, "while")
            cond = ops.to_bool(self.b, cond)
            return ops.binary(self.b, "and", ops.unary(self.b, "not", exit_), cond) \
                if exit_ else cond
        then, other = Block(), Block()
        with self._in_block(other):
            cond = self.visit(test)
            if isinstance(cond, Value):
                self._scalar_condition(test, cond, "while")
                self.b.emit(scf.YieldOp(ops.to_bool(self.b, cond).ssa))
        if not isinstance(cond, Value):
            other.erase(safe_erase=False)
            return ops.unary(self.b, "not", exit_) if cond else False
        with self._in_block(then):
            self.b.emit(scf.YieldOp(constant(self.b, False, tl.int1).ssa))
        op = self.b.emit(scf.IfOp(exit_.ssa, [ir_type(tl.int1)], Region(then), Region(other)))
        return Value(op.results[0], tl.int1)

    def _scalar_condition(self, where: ast.AST, cond: Value, what: str) -> None:
        if cond.shape or cond.is_ptr:
            self._fail(where, f"{what} needs a scalar condition, got {cond.describe()} "
                              "(use tl.where for tiles)")

    # ------------------------------------------------------------------ if

    def visit_If(self, node: ast.If) -> None:
        cond = self.visit(node.test)
        if isinstance(cond, Value) and cond.is_ptr and not cond.shape and \
                isinstance(cond.ssa, BlockArgument) and cond.ssa.block is self.entry:
            cond = True  # Triton tests ptr != 0: an array's is not (None is a constexpr)
        if not isinstance(cond, Value):  # constexpr: resolved at compile time
            self._visit_body(node.body if cond else node.orelse)
            return
        self._scalar_condition(node.test, cond, "if")
        self._if(ops.to_bool(self.b, cond), lambda: self._visit_body(node.body),
                 lambda: self._visit_body(node.orelse))

    def _if(self, cond: Value, then: Callable[[], None], other: Callable[[], None]) -> None:
        """``scf.if`` of the code ``then`` and ``other`` generate, yielding the
        variables whose values the branches leave different."""
        outer = self.scope
        blocks = (Block(), Block())
        ends = [self._branch(gen, block, outer)
                for gen, block in zip((then, other), blocks, strict=True)]
        self._merge(ends, self.node)
        self._same_aggregates(*ends, "in the if branch", "in the else branch")
        a, b = map(_leaves, ends)
        keys = [k for k in a if k in b and not _same_binding(a[k], b[k])]
        sigs = {k: self._join(_shown(k, ends[0]), a[k], b[k]) for k in keys}
        for block, values in zip(blocks, ends, strict=True):
            with self._in_block(block):
                self._yield(sigs, values)
        has_else = bool(sigs) or bool(blocks[1].ops)
        op = self.b.emit(scf.IfOp(cond.ssa, [sig.ir_type() for sig in sigs.values()],
                                  Region(blocks[0]), Region(blocks[1]) if has_else else None))
        if not has_else:
            blocks[1].erase()
        self.scope = dict(ends[0])
        self.scope.update(self._bind(op.results, sigs, ends[0]))

    def _branch(self, gen: Callable[[], None], block: Block,
                outer: dict[str, Any]) -> dict[str, Any]:
        """The scope after ``gen``'s code in ``block`` (outer names included)."""
        self.scope = dict(outer)
        with self._in_block(block):
            gen()
        scope, self.scope = self.scope, outer
        return scope

    def _join(self, name: str, a: Any, b: Any) -> Sig:
        """The type both branches yield for ``name``."""
        for v in (a, b):
            if not isinstance(v, (Value, *_NUMBER)):
                self._fail(self.node, f"{name!r} holds a compile-time {type(v).__name__}; "
                                      "it cannot change under a runtime condition")
        if isinstance(a, Value) and isinstance(b, Value):
            if Sig.of(a) != Sig.of(b) and _returned(name):
                self._fail(self.node, f"return values differ: {a.describe()} on one path, "
                                      f"{b.describe()} on another; every return must give "
                                      "the same types")
            if Sig.of(a) != Sig.of(b):
                self._fail(self.node, f"{name!r} is {a.describe()} in the if branch but "
                                      f"{b.describe()} in the else branch; both must agree")
            return Sig.of(a)
        if isinstance(a, Value) or isinstance(b, Value):
            return Sig.of(a if isinstance(a, Value) else b)
        return Sig(ops.promote(literal_dtype(a), literal_dtype(b)))
