"""Frontend: the Python AST of a ``@tc.kernel`` function -> tile IR.

One ``visit_<Node>`` per construct. ``visit`` records the node's source position (so
every op created gets it) and turns any internal exception into a ``CompileError`` that
points at the user's line. Types and operator rules live in ``compiler.semantics``;
builtins (``tl.load``, ``tl.exp``, ...) are methods named ``builtin_<name>``.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import textwrap
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, Region

import compiler.language as tl
from compiler import semantics as S
from compiler.errors import CompileError, SourceLoc, TilecError
from compiler.frontend_atomic import AtomicMixin
from compiler.frontend_control import ControlFlowMixin
from compiler.frontend_reduce import ReduceMixin
from compiler.frontend_shape import POINTER_SHAPE_OPS, ShapeMixin
from compiler.jit import TileFunction
from compiler.kinfo import ArgSpec, Param
from compiler.semantics import Value
from dialects import tile


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


_NOTHING = object()  # no return statement seen yet

_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.BitAnd: "and",
           ast.BitOr: "or", ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt",
           ast.GtE: "ge"}
_UNARY = {ast.USub: "neg", ast.Invert: "invert", ast.Not: "not"}
_MATH_UNARY = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil"}


def _python_binop(name: str, x, y):
    import operator
    fn = {"truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
          "and": operator.and_, "or": operator.or_}.get(name) or getattr(operator, name)
    return fn(x, y)


class CodeGenerator(AtomicMixin, ReduceMixin, ControlFlowMixin, ShapeMixin, ast.NodeVisitor):
    """Builds one ``func.func`` for a kernel specialization."""

    def __init__(self, src: KernelSource, specs: list[ArgSpec]):
        self.src = src
        self.specs = specs
        self.node: ast.AST | None = None
        self.scope: dict[str, Any] = {}
        self.written: set[str] = set()
        self.calls: list[tuple[Any, Block]] = []  # inlined @tc.func calls: (fn, block)
        self.returned: Any = _NOTHING  # the value of the innermost call's return

    # ------------------------------------------------------------------ driver

    def generate(self) -> tuple[ModuleOp, list[Param]]:
        fn = self.src.tree
        self._check_params(fn)
        runtime = [s for s in self.specs if s.kind != "constexpr"]
        types = [S.value_type(s.dtype, (), s.kind == "ptr") for s in runtime]
        block = Block(arg_types=types)
        self.b = S.Builder(block, self.src.file)
        self.node = fn
        self._set_pos(fn)
        for spec in self.specs:
            if spec.kind == "constexpr":
                self.scope[spec.name] = spec.value
        for spec, arg in zip(runtime, block.args, strict=True):
            arg.name_hint = spec.name
            self.scope[spec.name] = Value(arg, spec.dtype, (), spec.kind == "ptr")
        for stmt in fn.body:
            self.visit(stmt)
        self.b.emit(func.ReturnOp())
        arg_attrs = [DictionaryAttr({"tile.divisibility": IntegerAttr(16, i32)}
                                    if s.divisible16 else {}) for s in runtime]
        kernel = func.FuncOp(fn.name, (types, []), Region(block), arg_attrs=ArrayAttr(arg_attrs))
        self._set_pos(fn)
        kernel.location = self.b.location()
        params = [Param(s.name, s.dtype.short, s.kind == "ptr", s.name in self.written)
                  for s in runtime]
        return ModuleOp([kernel]), params

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

    def _fail(self, node: ast.AST | None, msg: str) -> None:
        raise CompileError(msg, self.src.loc(node) if node is not None else None)

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
            raise CompileError(f"internal compiler error: {type(e).__name__}: {e}",
                               self.src.loc(node)) from None
        finally:
            self.node = outer
            if outer is not None and hasattr(outer, "lineno"):
                self._set_pos(outer)

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

    def visit_Return(self, node: ast.Return) -> None:
        if not self.calls:
            if node.value is not None:
                self._fail(node, "kernels cannot return a value")
            if node is not self.src.tree.body[-1]:
                self._fail(node, "return is only supported at the end of a kernel")
            return
        if self.b.block is not self.calls[-1][1]:
            self._fail(node, "return inside runtime control flow is not supported; "
                             "assign a variable and return it at the end")
        self.returned = None if node.value is None else self.visit(node.value)

    def inline_call(self, fn: Any, args: list, kwargs: dict) -> Any:
        """Inline a ``@tc.func`` at the current insertion point; its return value."""
        if len(self.calls) >= 64:
            self._fail(self.node, f"{fn.__name__}: calls nested too deeply (recursion?)")
        try:
            bound = inspect.signature(fn.fn).bind(*args, **kwargs)
        except TypeError as e:
            self._fail(self.node, f"bad arguments to {fn.__name__}: {e}")
        bound.apply_defaults()
        outer = (self.src, self.scope, self.returned)
        self.src, self.scope, self.returned = fn.kernel_source(), dict(bound.arguments), _NOTHING
        self.calls.append((fn, self.b.block))
        try:
            for stmt in self.src.tree.body:
                if self.returned is not _NOTHING:
                    self._fail(stmt, "unreachable code after return")
                self.visit(stmt)
            return None if self.returned is _NOTHING else self.returned
        finally:
            self.calls.pop()
            self.src, self.scope, self.returned = outer

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
        fn = self.src.fn
        closure = inspect.getclosurevars(fn)
        for table in (closure.nonlocals, fn.__globals__, vars(builtins)):
            if node.id in table:
                return table[node.id]
        self._fail(node, f"name {node.id!r} is not defined")

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        if isinstance(base, Value):
            if node.attr in self.TILE_METHODS or node.attr in self.SHAPE_METHODS:
                return _Method(base, node.attr)
            if node.attr == "T":
                return self.builtin_trans(base)
            attrs = {"to": lambda: _Method(base, "to"), "dtype": lambda: base.dtype,
                     "shape": lambda: base.shape}
            if node.attr not in attrs:
                self._fail(node, f"{base.describe()} has no attribute {node.attr!r}")
            return attrs[node.attr]()
        if not hasattr(base, node.attr):
            self._fail(node, f"{getattr(base, '__name__', base)!r} has no attribute {node.attr!r}")
        return getattr(base, node.attr)

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> list:
        return [self.visit(e) for e in node.elts]

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        return self._binop(type(node.op), self.visit(node.left), self.visit(node.right))

    def _binop(self, op: type, x: Any, y: Any) -> Any:
        name = _BINOPS.get(op)
        if name is None:
            self._fail(self.node, f"unsupported operator {op.__name__}")
        if not isinstance(x, Value) and not isinstance(y, Value):
            return _python_binop(name, x, y)
        if name == "floordiv" and (S._is_float_operand(x) or S._is_float_operand(y)):
            self._fail(self.node, "// needs integer operands; use tl.floor(a / b) for floats")
        return S.binary(self.b, name, x, y)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        x = self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return x
        if not isinstance(x, Value):
            return {ast.USub: lambda v: -v, ast.Invert: lambda v: ~v,
                    ast.Not: lambda v: not v}[type(node.op)](x)
        return S.unary(self.b, _UNARY[type(node.op)], x)

    def visit_Compare(self, node: ast.Compare) -> Any:
        result = None
        left = self.visit(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _CMPOPS:
                self._fail(node, f"unsupported comparison {type(op).__name__}")
            right = self.visit(comp)
            name = _CMPOPS[type(op)]
            if isinstance(left, Value) or isinstance(right, Value):
                r = S.compare(self.b, name, left, right)
            else:
                r = _python_compare(name, left, right)
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
        return S.binary(self.b, name, S.to_bool(self.b, x), S.to_bool(self.b, y))

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if isinstance(cond, Value):
            return S.select(self.b, cond, self.visit(node.body), self.visit(node.orelse))
        return self.visit(node.body) if cond else self.visit(node.orelse)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        if isinstance(base, Value):
            return self._subscript_tile(node, base)
        return base[self.visit(node.slice)]

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        if isinstance(fn, _Method) and fn.name != "to":
            return getattr(self, f"builtin_{fn.name}")(fn.value, *args, **kwargs)
        if isinstance(fn, _Method):
            return self.builtin_cast(fn.value, *args, **kwargs)
        if isinstance(fn, TileFunction):
            return self.inline_call(fn, args, kwargs)
        name = getattr(fn, "__tilec_builtin__", None)
        if name is not None:
            impl = getattr(self, f"builtin_{name}", None)
            if impl is None:
                self._fail(node, f"tl.{name} is not supported yet")
            try:
                return impl(*args, **kwargs)
            except TypeError as e:
                if "builtin_" in str(e):
                    self._fail(node, f"bad arguments to tl.{name}: "
                                     f"{str(e).replace('builtin_', 'tl.')}")
                raise
        if fn in (builtins.min, builtins.max, builtins.abs, builtins.len, builtins.int,
                  builtins.float, builtins.bool, builtins.range) or fn is getattr(
                      __import__("compiler"), "cdiv", None):
            if any(isinstance(a, Value) for a in args):
                self._fail(node, f"{fn.__name__}() on tiles: use the tl. builtin instead")
            return fn(*args, **kwargs)
        self._fail(node, f"cannot call {getattr(fn, '__name__', fn)!r} in a kernel "
                         "(only tl builtins and constexpr helpers)")

    # ------------------------------------------------------------------ builtins

    def _const_int(self, v: Any, what: str) -> int:
        if isinstance(v, Value) or not isinstance(v, int):
            self._fail(self.node, f"{what} must be a constexpr integer")
        return v

    def builtin_program_id(self, axis: Any) -> Value:
        return self._axis_op(tile.ProgramIdOp, axis)

    def builtin_num_programs(self, axis: Any) -> Value:
        return self._axis_op(tile.NumProgramsOp, axis)

    def _axis_op(self, cls, axis: Any) -> Value:
        axis = self._const_int(axis, "axis")
        if axis not in (0, 1, 2):
            self._fail(self.node, f"axis must be 0, 1 or 2, got {axis}")
        return self.b.value(cls(axis), tl.int32)

    def builtin_arange(self, start: Any, end: Any) -> Value:
        start, end = self._const_int(start, "arange start"), self._const_int(end, "arange end")
        n = end - start
        if n <= 0 or n & (n - 1):
            self._fail(self.node, f"arange length must be a power of two, got {n}")
        return self.b.value(tile.RangeOp(start, end), tl.int32, (n,))

    def _shape(self, shape: Any) -> tuple[int, ...]:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for n in shape:
            if not isinstance(n, int) or n <= 0 or n & (n - 1):
                self._fail(self.node, f"tile dimensions must be constexpr powers of two, "
                                      f"got {list(shape)}")
        self._shape_rank(len(shape), "tile shape")
        return shape

    def _dtype(self, d: Any) -> tl.dtype:
        if isinstance(d, tl.dtype):
            return d
        if isinstance(d, str):
            return tl.dtype_from_str(d)
        self._fail(self.node, f"expected a dtype such as tl.float32, got {d!r}")

    def builtin_full(self, shape: Any, value: Any, dtype: Any) -> Value:
        shape, dtype = self._shape(shape), self._dtype(dtype)
        if isinstance(value, Value):
            return S.splat(self.b, S.cast(self.b, value, dtype), shape)
        return S.constant(self.b, value, dtype, shape)

    def builtin_zeros(self, shape: Any, dtype: Any) -> Value:
        return self.builtin_full(shape, 0, dtype)

    def builtin_zeros_like(self, x: Value) -> Value:
        return S.constant(self.b, 0, x.dtype, x.shape)

    def builtin_load(self, pointer: Any, mask: Any = None, other: Any = None) -> Value:
        ptr = self._broadcast_pointer(self._pointer(pointer, "tl.load"), mask, other)
        mask_v = self._mask(mask, ptr)
        other_v = None
        if mask_v is not None or other is not None:
            # A masked-off lane reads ``other``, zero by default, on every backend.
            other_v = S.materialize(self.b, 0 if other is None else other, ptr.dtype, ptr.shape)
        op = tile.LoadOp(ptr.ssa, mask_v.ssa if mask_v else None,
                         other_v.ssa if other_v else None)
        return self.b.value(op, ptr.dtype, ptr.shape)

    def builtin_store(self, pointer: Any, value: Any, mask: Any = None) -> None:
        ptr = self._broadcast_pointer(self._pointer(pointer, "tl.store"), mask, value)
        if isinstance(value, Value) and value.is_ptr:
            self._fail(self.node, "storing pointers is not supported")
        val = S.materialize(self.b, value, ptr.dtype, ptr.shape)
        mask_v = self._mask(mask, ptr)
        self.b.emit(tile.StoreOp(ptr.ssa, val.ssa, mask_v.ssa if mask_v else None))
        self.written.add(self._root_name(ptr))

    def _pointer(self, p: Any, what: str) -> Value:
        if not isinstance(p, Value) or not p.is_ptr:
            got = p.describe() if isinstance(p, Value) else type(p).__name__
            self._fail(self.node, f"{what} expects a pointer, got {got}")
        return p

    def _mask(self, mask: Any, ptr: Value) -> Value | None:
        if mask is None:
            return None
        return S.splat(self.b, S.to_bool(self.b, mask), ptr.shape)

    def _root_name(self, ptr: Value) -> str:
        """The parameter a pointer value was derived from (for copy-back)."""
        v = ptr.ssa
        while isinstance(v.owner, (tile.AddPtrOp, tile.SplatOp, *POINTER_SHAPE_OPS)):
            v = v.owner.operands[0]
        return v.name_hint or ""

    def builtin_where(self, condition: Any, x: Any, y: Any) -> Value:
        return S.select(self.b, condition, x, y)

    def builtin_maximum(self, x: Any, y: Any) -> Value:
        return S.binary(self.b, "max", x, y)

    def builtin_minimum(self, x: Any, y: Any) -> Value:
        return S.binary(self.b, "min", x, y)

    def builtin_clamp(self, x: Any, lo: Any, hi: Any) -> Value:
        return S.binary(self.b, "min", S.binary(self.b, "max", x, lo), hi)

    def builtin_fma(self, x: Any, y: Any, z: Any) -> Value:
        xv, yv = S.operands(self.b, x, y)
        xv, zv = S.operands(self.b, xv, z)
        yv = S.materialize(self.b, yv, xv.dtype, xv.shape)
        if not xv.dtype.is_float:
            return S.binary(self.b, "add", S.binary(self.b, "mul", xv, yv), zv)
        from xdsl.dialects import math
        return self.b.value(math.FmaOp(xv.ssa, yv.ssa, zv.ssa), xv.dtype, xv.shape)

    def builtin_cdiv(self, x: Any, y: Any) -> Any:
        if not isinstance(x, Value) and not isinstance(y, Value):
            return -(-x // y)
        return S.binary(self.b, "floordiv", S.binary(self.b, "sub",
                        S.binary(self.b, "add", x, y), 1), y)

    def builtin_cast(self, x: Any, dtype: Any) -> Value:
        d = self._dtype(dtype)
        if not isinstance(x, Value):
            return S.constant(self.b, x, d)
        return S.cast(self.b, x, d)

    def _float_arg(self, x: Any) -> Value:
        if not isinstance(x, Value):
            return S.constant(self.b, float(x), tl.float32)
        return x if x.dtype.is_float else S.cast(self.b, x, tl.float32)

    def _math(self, name: str, x: Any) -> Value:
        from xdsl.dialects import math
        ops = {"exp": math.ExpOp, "exp2": math.Exp2Op, "log": math.LogOp, "log2": math.Log2Op,
               "sqrt": math.SqrtOp, "rsqrt": math.RsqrtOp, "sin": math.SinOp,
               "cos": math.CosOp, "floor": math.FloorOp, "ceil": math.CeilOp}
        xv = self._float_arg(x)
        return self.b.value(ops[name](xv.ssa), xv.dtype, xv.shape)

    def builtin_abs(self, x: Any) -> Value:
        from xdsl.dialects import math
        if not isinstance(x, Value):
            return builtins.abs(x)
        op = math.AbsFOp(x.ssa) if x.dtype.is_float else math.AbsIOp(x.ssa)
        return self.b.value(op, x.dtype, x.shape)

    def builtin_sigmoid(self, x: Any) -> Value:
        xv = self._float_arg(x)
        e = self._math("exp", S.unary(self.b, "neg", xv))
        return S.binary(self.b, "truediv", 1.0, S.binary(self.b, "add", 1.0, e))

    def builtin_static_assert(self, cond: Any, msg: str = "") -> None:
        if isinstance(cond, Value):
            self._fail(self.node, "tl.static_assert needs a constexpr condition")
        if not cond:
            self._fail(self.node, f"static_assert failed: {msg}" if msg else
                       "static_assert failed")

    def builtin_static_print(self, *values: Any) -> None:
        print(*(v.describe() if isinstance(v, Value) else v for v in values))


for _name in _MATH_UNARY:
    setattr(CodeGenerator, f"builtin_{_name}",
            lambda self, x, _n=_name: self._math(_n, x))


@dataclass
class _Method:
    """A bound tile method such as ``x.to``."""

    value: Value
    name: str


def _python_compare(name: str, x: Any, y: Any) -> bool:
    import operator
    return getattr(operator, name)(x, y)


def generate(src: KernelSource, specs: list[ArgSpec]) -> tuple[ModuleOp, list[Param]]:
    """Tile IR for one specialization of a kernel, and its runtime parameters."""
    return CodeGenerator(src, specs).generate()
