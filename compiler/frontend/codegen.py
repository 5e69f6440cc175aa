"""The code generator: the Python AST of a kernel -> one ``func.func`` of tile IR.

One ``visit_<Node>`` per construct (statements and expressions here, control flow in
``compiler.frontend.control``). ``visit`` records the node's source position (so every
op created gets it) and turns any internal exception into a ``CompileError`` that points
at the user's line. Types and operator rules live in ``values``/``operators``; builtins
(``tl.load``, ``x.sum(1)``, ...) are looked up in the language's ``BuiltinTable``, which
this module never imports: ``compiler.frontend.generate`` passes it in.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import operator
from typing import Any, NoReturn

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, Region
from xdsl.printer import Printer

import compiler.language as tl
from compiler.dependencies import compiler_owned, global_problem
from compiler.errors import CompileError, TilecError, internal_error
from compiler.frontend import operators as ops
from compiler.frontend.builtins import BuiltinTable, Handler, Method
from compiler.frontend.control import ControlFlow
from compiler.frontend.jumps import Frame
from compiler.frontend.values import (
    MAX_RANK,
    Builder,
    Value,
    constant,
    expand,
    literal_dtype,
    splat,
    value_type,
)
from compiler.frontend.written import written_arguments
from compiler.kinfo import ArgSpec, Param
from compiler.source import HELPER, KernelSource, TileFunction

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and",
           ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
           ast.GtE: "ge"}
_UNARY = {ast.USub: "neg", ast.Invert: "invert", ast.Not: "not"}
_PY_BINOPS = {"truediv": operator.truediv, "floordiv": operator.floordiv,
              "mod": operator.mod, "and": operator.and_, "or": operator.or_}
_PY_UNARY = {ast.USub: operator.neg, ast.Invert: operator.invert, ast.Not: operator.not_}
_PY_CALLABLE = (builtins.min, builtins.max, builtins.abs, builtins.len, builtins.int,
                builtins.float, builtins.bool, builtins.range)


_ON_TILES = {builtins.min: "minimum", builtins.max: "maximum", builtins.abs: "abs"}


def _python_binop(name: str, x, y):
    return (_PY_BINOPS.get(name) or getattr(operator, name))(x, y)


class CodeGenerator(ControlFlow, ast.NodeVisitor):
    """Builds one ``func.func`` for a kernel specialization.

    Builtin handlers get the generator as ``cg`` and use ``cg.b`` (the builder),
    ``cg.fail``, ``cg.const_int``, ``cg.check_rank``, ``cg.builtin`` and
    ``cg.inline_call``."""

    def __init__(self, src: KernelSource, specs: list[ArgSpec], table: BuiltinTable):
        self.src = src
        self.specs = specs
        self.table = table
        self.node: ast.AST | None = None
        self.scope: dict[str, Any] = {}
        self.calls: list[TileFunction] = []  # the inlined @tc.func calls under way
        self.frames: list[Frame] = []  # loops and functions being generated (jumps)
        self.ids = 0  # numbers the hidden variables of jumps
        self._helpers: dict[Any, TileFunction] = {}  # plain functions inlined (table.inline_plain)
        self.entry: Block | None = None  # the kernel's block: its arguments are the parameters

    # ------------------------------------------------------------------ driver

    def generate(self) -> tuple[ModuleOp, list[Param]]:
        fn = self.src.tree
        self._check_params(fn)
        runtime = self.runtime_params()
        types = [value_type(s.dtype, (), s.kind == "ptr") for s in runtime]
        block = self.entry = Block(arg_types=types)
        self.b = Builder(block, self.src.file)
        self.node = fn
        self._set_pos(fn)
        for spec in self.specs:
            if spec.kind == "constexpr":
                self.scope[spec.name] = spec.value
        for spec, arg in zip(runtime, block.args, strict=True):
            arg.name_hint = spec.name
            self.scope[spec.name] = (constant(self.b, 1, spec.dtype, ()) if spec.one else
                                     Value(arg, spec.dtype, (), spec.kind == "ptr"))
        self.bind_params()
        self.function_body(fn)
        self.b.emit(func.ReturnOp())
        arg_attrs = [DictionaryAttr({"tile.divisibility": IntegerAttr(16, i32)}
                                    if s.divisible16 else {}) for s in runtime]
        kernel = func.FuncOp(fn.name, (types, []), Region(block), arg_attrs=ArrayAttr(arg_attrs))
        self._set_pos(fn)
        kernel.location = self.b.location()
        written = written_arguments(kernel)
        params = [Param(s.name, s.dtype.short, s.kind == "ptr", i in written)
                  for i, s in enumerate(runtime)]
        return ModuleOp([kernel]), params

    def runtime_params(self) -> list[ArgSpec]:
        """The kernel's runtime parameters (a language may expand one into several)."""
        return [s for s in self.specs if s.kind != "constexpr"]

    def bind_params(self) -> None:
        """Hook: a language regroups the parameters in ``scope`` (``compiler.tile``'s
        arrays) before the body is generated."""

    def _check_params(self, fn: ast.FunctionDef) -> None:
        names = [a.arg for a in fn.args.args]
        if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
            self._fail(fn, "kernels take plain positional parameters only")
        if names != [s.name for s in self.specs]:
            raise AssertionError(f"specialization {self.specs} does not match {names}")

    # ------------------------------------------------------------------ helpers

    def _set_pos(self, node: ast.AST) -> None:
        loc = self.src.loc(node)
        self.b.file, self.b.line, self.b.col = loc.file, loc.line, loc.col

    def _fail(self, node: ast.AST | None, msg: str) -> NoReturn:
        raise CompileError(msg, self.src.loc(node) if node is not None else None)

    def fail(self, msg: str) -> NoReturn:
        """A ``CompileError`` at the construct being generated (for builtin handlers)."""
        self._fail(self.node, msg)

    def const_int(self, v: Any, what: str) -> int:
        if isinstance(v, Value) or not isinstance(v, int):
            self.fail(f"{what} must be a constexpr integer")
        return v

    def constexpr_eval(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args)`` on compile-time values, as Python would; its error is the user's."""
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError, ArithmeticError, LookupError) as e:
            self.fail(f"cannot evaluate this on compile-time values: {type(e).__name__}: {e}")

    def check_rank(self, rank: int, what: str) -> None:
        if not 1 <= rank <= MAX_RANK:
            self.fail(f"{what}: tiles have 1 to {MAX_RANK} dimensions, got {rank}")

    def visit(self, node: ast.AST) -> Any:
        outer = self.node
        self.node = node
        if hasattr(node, "lineno"):
            self._set_pos(node)
        try:
            return super().visit(node)
        except TilecError as e:
            if e.loc is None:
                raise type(e)(e.message, self.src.loc(node)) from None
            raise
        except Exception as e:  # noqa: BLE001 - an internal error still points at the user's line
            raise internal_error(e, "frontend", self._ir_so_far(), self.src.loc(node)) from None
        finally:
            self.node = outer
            if outer is not None and hasattr(outer, "lineno"):
                self._set_pos(outer)

    def _ir_so_far(self) -> str:
        """The kernel's tile IR generated up to the failure (for a bug report)."""
        block = self.b.block
        while block.parent_op() is not None and block.parent_op().parent_block() is not None:
            block = block.parent_op().parent_block()
        out = io.StringIO()
        printer = Printer(out)  # one printer: SSA names agree across the ops
        for op in block.ops:
            printer.print_op(op)
            out.write("\n")
        return out.getvalue()

    def generic_visit(self, node: ast.AST) -> Any:
        self._fail(node, f"unsupported Python construct in a kernel: {type(node).__name__}")

    # ------------------------------------------------------------------ statements

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self._assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            self._fail(node, "a declaration needs a value")
        self._assign(node.target, self.visit(node.value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            self._fail(node, "augmented assignment supports plain names only")
        current = self.visit_Name(ast.Name(node.target.id, ast.Load(), lineno=node.lineno,
                                           col_offset=node.col_offset))
        self._assign(node.target, self._binop(type(node.op), current, self.visit(node.value)))

    def _assign(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, tuple | list) \
                and len(value) == len(target.elts):
            for t, v in zip(target.elts, value, strict=True):
                self._assign(t, v)
        else:
            self._fail(target, "unsupported assignment target")

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        if isinstance(cond, Value):
            self._fail(node, "assert needs a constexpr condition (use tl.device_assert)")
        if not cond:
            msg = self.visit(node.msg) if node.msg is not None else ""
            self._fail(node, f"assertion failed: {msg}" if msg else "assertion failed")

    # ------------------------------------------------------------------ expressions

    def visit_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.scope:
            return self.scope[node.id]
        why = self._function_frame().unbound.get(node.id) if self.frames else None
        if why:
            self._fail(node, f"name {node.id!r} is not bound on every path to here: {why}")
        if node.id in self.src.local_names:  # Python's rule: never the global of that name
            self._fail(node, f"name {node.id!r} is used before it is assigned")
        fn = self.src.fn
        closure = inspect.getclosurevars(fn)
        for table in (closure.nonlocals, fn.__globals__):
            if node.id in table:
                return self._global(node.id, table[node.id])
        if node.id in vars(builtins):
            return vars(builtins)[node.id]
        self._fail(node, f"name {node.id!r} is not defined")

    def _global(self, name: str, v: Any) -> Any:
        """A global's (or closure variable's) value, if kernels may read its kind
        (``compiler.dependencies`` keys it); ``G = tl.constexpr(4)`` reads as 4."""
        problem = global_problem(name, v)
        if problem:
            self.fail(problem)
        return v.value if isinstance(v, tl.constexpr) else v

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        if type(base) in (bool, int, float) and (node.attr in self.table.methods
                                                 or node.attr in self.table.properties):
            # a number a name holds is a 0-d tile of its type to a tile's methods, as in
            # Triton (`zero = 0.0` then `zero.to(x.dtype)`)
            base = constant(self.b, base, literal_dtype(base))
        handler = self.table.method_of(base, node.attr, isinstance(base, Value))
        if handler is not None:
            return Method(base, node.attr, handler)
        if isinstance(base, Value):
            if node.attr not in self.table.properties:
                self._fail(node, f"{base.describe()} has no attribute {node.attr!r}")
            return self.table.properties[node.attr](self, base)
        if not hasattr(base, node.attr):
            shown = base.describe() if hasattr(base, "describe") else \
                repr(getattr(base, "__name__", base))
            self._fail(node, f"{shown} has no attribute {node.attr!r}")
        if (inspect.ismodule(base) or inspect.isclass(base)) and not compiler_owned(base):
            return self._global(f"{base.__name__}.{node.attr}", getattr(base, node.attr))
        return _unwrapped(getattr(base, node.attr))

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> list:
        return [self.visit(e) for e in node.elts]

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self._binop(type(node.op), self.visit(node.left), self.visit(node.right))

    def _binop(self, op: type, x: Any, y: Any) -> Any:
        if op is ast.MatMult:  # a @ b is the language's dot
            return self.builtin("dot")(self, x, y)
        name = _BINOPS.get(op)
        if name is None:
            self._fail(self.node, f"unsupported operator {op.__name__}")
        if not isinstance(x, Value) and not isinstance(y, Value):
            return self.constexpr_eval(_python_binop, name, x, y)
        if name == "floordiv" and (ops.is_float_operand(x) or ops.is_float_operand(y)):
            self._fail(self.node, "// needs integer operands; use tl.floor(a / b) for floats")
        return ops.binary(self.b, name, x, y)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        x = self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return x
        if not isinstance(x, Value):
            return self.constexpr_eval(_PY_UNARY[type(node.op)], x)
        return ops.unary(self.b, _UNARY[type(node.op)], x)

    def visit_Compare(self, node: ast.Compare) -> Any:
        result = None
        left = self.visit(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.visit(comp)
            if isinstance(op, ast.Is | ast.IsNot):  # identity, known at compile time
                r = (left is right) == isinstance(op, ast.Is)
                result = r if result is None else self._logical("and", result, r)
                left = right
                continue
            if type(op) not in _CMPOPS:
                self._fail(node, f"unsupported comparison {type(op).__name__}")
            name = _CMPOPS[type(op)]
            if isinstance(left, Value) or isinstance(right, Value):
                r = ops.compare(self.b, name, left, right)
            else:
                r = self.constexpr_eval(getattr(operator, name), left, right)
            result = r if result is None else self._logical("and", result, r)
            left = right
        return result

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        name = "and" if isinstance(node.op, ast.And) else "or"
        result = self.visit(node.values[0])
        for v in node.values[1:]:
            if not isinstance(result, Value) and (not result if name == "and" else result):
                return result  # constexpr short circuit
            result = self._logical(name, result, self.visit(v))
        return result

    def _logical(self, name: str, x: Any, y: Any) -> Any:
        if not isinstance(x, Value) and not isinstance(y, Value):
            return (x and y) if name == "and" else (x or y)
        return ops.binary(self.b, name, ops.to_bool(self.b, x), ops.to_bool(self.b, y))

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if isinstance(cond, Value):
            return ops.select(self.b, cond, self.visit(node.body), self.visit(node.orelse))
        return self.visit(node.body) if cond else self.visit(node.orelse)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        if isinstance(base, Value):
            return self._subscript_tile(node, base)
        return self.constexpr_eval(operator.getitem, base, self.visit(node.slice))

    def _subscript_tile(self, node: ast.Subscript, x: Value) -> Value:
        """``x[:, None]``, ``x[None, ...]``: ``:`` keeps a dimension, ``None`` adds one of
        size 1, ``...`` stands for the dimensions not written."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        kinds = [self._index_kind(i) for i in items]
        if kinds.count("...") > 1:
            self._fail(node, "a tile index may hold at most one '...'")
        kept = kinds.count(":")
        if kept > len(x.shape):
            self._fail(node, f"too many ':' for {x.describe()}")
        fill = [":"] * (len(x.shape) - kept)
        if "..." in kinds:
            at = kinds.index("...")
            kinds = kinds[:at] + fill + kinds[at + 1:]
        else:
            kinds += fill
        self.check_rank(len(kinds), "indexing")
        if not x.shape:  # a scalar: x[None] is a tile of one element
            return splat(self.b, x, (1,) * len(kinds))
        for axis, kind in enumerate(kinds):
            if kind == "None":
                x = expand(self.b, x, axis)
        return x

    def _index_kind(self, item: ast.expr) -> str:
        if isinstance(item, ast.Constant) and item.value is None:
            return "None"
        if isinstance(item, ast.Constant) and item.value is Ellipsis:
            return "..."
        if isinstance(item, ast.Slice) and all(
                v is None for v in (item.lower, item.upper, item.step)):
            return ":"
        self._fail(item, "tiles can only be indexed with ':', None and '...' "
                         "(use tl.reshape, tl.trans or a mask for other selections)")

    # ------------------------------------------------------------------ calls

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        if isinstance(fn, Method):
            return self._call(fn.handler, f".{fn.name}",
                              [fn.value, *args], kwargs)
        if isinstance(fn, TileFunction):
            return self.inline_call(fn, args, kwargs)
        if isinstance(getattr(fn, "tile_function", None), TileFunction):  # a @tc.kernel
            return self.inline_call(fn.tile_function, args, kwargs)
        name = getattr(fn, "__tilec_builtin__", None)
        if name is not None:
            misused = self.table.misused(fn, name)
            if misused is not None:
                self._fail(node.func, f"{ast.unparse(node.func)} {misused}")
            return self._call(self.builtin(name), f"{self.table.prefix}.{name}", args, kwargs)
        if fn is tl.constexpr:  # tl.constexpr(expr): the compile-time value itself
            if len(args) != 1 or kwargs or isinstance(args[0], Value):
                self._fail(node, "tl.constexpr(x) takes one compile-time value")
            return args[0]
        if fn is builtins.isinstance:
            if len(args) != 2 or kwargs:
                self._fail(node, "isinstance() takes a value and a class (or a tuple of them)")
            return self._isinstance(*args)
        if fn in _PY_CALLABLE or getattr(fn, "__tilec_constexpr_function__", False):
            if any(isinstance(a, Value) for a in args):
                return self._python_builtin_on_tiles(node, fn, args, kwargs)
            return self.constexpr_eval(fn, *args, **kwargs)
        if self.table.inline_plain and inspect.isfunction(fn):
            helper = self._helpers.get(fn)
            if helper is None:
                helper = self._helpers[fn] = TileFunction(fn, what=HELPER)
            return self.inline_call(helper, args, kwargs)
        self._fail(node, f"cannot call {getattr(fn, '__name__', fn)!r} in a kernel "
                         "(only tl builtins and constexpr helpers)")

    def _isinstance(self, value: Any, classes: Any) -> bool:
        """``isinstance`` at compile time: a class of the language (``tl.tensor_descriptor``)
        asks what ``value`` is in the kernel (the table's ``kinds``), any other class is
        Python's question about a compile-time value."""
        for cls in classes if isinstance(classes, tuple) else (classes,):
            kind = self.table.kinds.get(cls)
            if kind(value) if kind is not None else \
                    self.constexpr_eval(isinstance, value, cls):
                return True
        return False

    def _python_builtin_on_tiles(self, node: ast.Call, fn: Any, args: list, kwargs: dict
                                 ) -> Value:
        """``min``/``max`` of two or more operands and ``abs`` on tiles, as Triton reads
        them: ``minimum``/``maximum`` folded left to right, and ``abs``."""
        name = _ON_TILES.get(fn)
        if getattr(fn, "__tilec_constexpr_function__", False):
            self._fail(node, f"{fn.__name__}() runs at compile time: its arguments must be "
                             "compile-time values (constexpr parameters, literals), not tiles")
        if name is None or name not in self.table.functions or kwargs or \
                len(args) < (1 if fn is builtins.abs else 2):
            self._fail(node, f"{fn.__name__}() on tiles: use the "
                             f"{self.table.prefix}. builtin instead")
        handler, what = self.builtin(name), f"{fn.__name__}()"
        if fn is builtins.abs:
            return self._call(handler, what, args, {})
        result = args[0]
        for arg in args[1:]:
            result = self._call(handler, what, [result, arg], {})
        return result

    def builtin(self, name: str) -> Handler:
        """The handler of builtin ``name``; an error if the language has none."""
        handler = self.table.functions.get(name)
        if handler is None:
            self.fail(f"{self.table.prefix}.{name} is not supported yet")
        return handler

    def _call(self, handler: Handler, shown: str, args: list, kwargs: dict) -> Any:
        try:
            return handler(self, *args, **kwargs)
        except TypeError as e:
            # Raised by the call itself (no handler frame): the arguments do not fit.
            if e.__traceback__ is not None and e.__traceback__.tb_next is None:
                why = str(e).replace(f"{handler.__qualname__}(", f"{shown}(", 1)
                self.fail(f"bad arguments to {shown}: {why}")
            self._blame_arguments(handler, shown, args, kwargs)
            raise
        except (AttributeError, ValueError, KeyError, IndexError):
            self._blame_arguments(handler, shown, args, kwargs)
            raise

    def _blame_arguments(self, handler: Handler, shown: str, args: list, kwargs: dict) -> None:
        """After a handler failed: a ``CompileError`` if an argument annotated as a tile
        (``Value``) got a Python value instead; the failure is the user's, not tilec's."""
        params = inspect.signature(handler).parameters
        bound = inspect.signature(handler).bind(self, *args, **kwargs).arguments
        for name, v in bound.items():
            if params[name].annotation in ("Value", Value) and not isinstance(v, Value):
                self.fail(f"{shown}: {name} must be a tile or a runtime scalar, "
                          f"got {type(v).__name__} {v!r}")

    def inline_call(self, fn: TileFunction, args: list, kwargs: dict) -> Any:
        """Inline a ``@tc.func`` at the current insertion point; its return value."""
        if len(self.calls) >= 64:
            self._fail(self.node, f"{fn.__name__}: calls nested too deeply (recursion?)")
        try:
            bound = inspect.signature(fn.fn).bind(*args, **kwargs)
        except TypeError as e:
            self._fail(self.node, f"bad arguments to {fn.__name__}: {e}")
        bound.apply_defaults()
        outer = (self.src, self.scope)
        self.src, self.scope = fn.kernel_source(), dict(bound.arguments)
        self.calls.append(fn)
        try:
            return self.function_body(self.src.tree)
        finally:
            self.calls.pop()
            self.src, self.scope = outer


def _unwrapped(v: Any) -> Any:
    """A global's value: Triton asks for ``G = tl.constexpr(4)`` at module level."""
    return v.value if isinstance(v, tl.constexpr) else v
