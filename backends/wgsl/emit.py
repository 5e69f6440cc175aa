"""SIMT IR -> WGSL text: the WGSL backend's emitter.

Input: a ``builtin.module`` holding one ``func.func`` in SIMT form (per-thread code, see
CONTRIBUTING.md "IR conventions"). Output: WGSL source plus the layout facts the runtime
needs to bind and dispatch it (``emit_wgsl``).

WGSL is structured, so the text is printed straight from SIMT IR. Elementwise ops are a
table from op class to an expression template (C-style infix operators with WGSL
overrides); constants, memory access, program ids and ``scf`` loops have a method each.
A thread's ``vector<K x T>`` value becomes ceil(K / 4) locals of type ``vec4<T>`` (the
last one narrower), on which WGSL's operators and builtins already work lane-wise.

Bindings: pointer parameter i (in order among pointers) is ``@binding(i)``, an
``array<T>`` that is ``read_write`` only when the kernel stores through it; the scalars and
the grid go in one uniform struct at the next binding. The runtime may fold a grid of
more than 65,535 programs along axis 0 into dispatch x and y (``fold_x`` programs per
row, ``fold_n`` rows per program row of axis 1); the entry point rebuilds the program ids
and returns at once in the padding programs.
"""

from __future__ import annotations

import linecache
import math as pymath
import os
import re
import struct

import numpy as np
from xdsl.dialects import arith, func, math, scf, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from backends.wgsl import atomics, cross_thread
from backends.wgsl.atomics import emit_atomic
from compiler.context import source_loc
from compiler.errors import UnsupportedError
from dialects import simt, tile
from dialects.tile import PtrType, element_type

GRID_FIELDS = ("grid_x", "grid_y", "grid_z", "fold_x", "fold_n")
"""The first u32 words of the uniform struct, written by the runtime on every launch."""

# ---------------------------------------------------------------- operator tables

_C_STYLE: dict[type[Operation], str] = {
    arith.AddiOp: "{a} + {b}", arith.AddfOp: "{a} + {b}",
    arith.SubiOp: "{a} - {b}", arith.SubfOp: "{a} - {b}",
    arith.MuliOp: "{a} * {b}", arith.MulfOp: "{a} * {b}",
    arith.DivSIOp: "{a} / {b}", arith.DivfOp: "{a} / {b}", arith.RemSIOp: "{a} % {b}",
    arith.AndIOp: "{a} & {b}", arith.OrIOp: "{a} | {b}", arith.XOrIOp: "{a} ^ {b}",
    arith.ShLIOp: "{a} << {b}", arith.ShRSIOp: "{a} >> {b}", arith.NegfOp: "-{a}",
    arith.SelectOp: "{a} ? {b} : {c}",
}
"""Operators WGSL shares with C; operands are always names, literals or calls."""

_WGSL: dict[type[Operation], str] = _C_STYLE | {
    # division by zero and shifts by 32 or more: the NumPy backend's answers, not WGSL's
    arith.DivSIOp: "{divsi}({a}, {b})", arith.RemSIOp: "{remsi}({a}, {b})",
    arith.DivUIOp: "{divui}({a}, {b})", arith.RemUIOp: "{remui}({a}, {b})",
    arith.ShLIOp: "{shli}({a}, {b})", arith.ShRUIOp: "{shrui}({a}, {b})",
    arith.ShRSIOp: "{a} >> min(bitcast<{U}>({b}), {U}(31u))",  # sign fill from 31 on
    arith.MaxSIOp: "max({a}, {b})", arith.MinSIOp: "min({a}, {b})",
    arith.MaxUIOp: "bitcast<{T}>(max(bitcast<{U}>({a}), bitcast<{U}>({b})))",
    arith.MinUIOp: "bitcast<{T}>(min(bitcast<{U}>({a}), bitcast<{U}>({b})))",
    arith.MaximumfOp: "{maximumf}({a}, {b})", arith.MinimumfOp: "{minimumf}({a}, {b})",
    arith.SelectOp: "select({c}, {b}, {a})", tile.SelectOp: "select({c}, {b}, {a})",
    arith.SIToFPOp: "{T}({a})", arith.UIToFPOp: "{T}(bitcast<{U}>({a}))",
    arith.FPToSIOp: "{fptosi}({a})", arith.FPToUIOp: "{fptoui}({a})",
    arith.ExtFOp: "{T}({a})", arith.TruncFOp: "{T}({a})",
    arith.ExtUIOp: "{T}({a})", arith.ExtSIOp: "-{T}({a})",  # from i1 only (i32 is widest)
    arith.TruncIOp: "({a} & {S}(1)) != {S}(0)", arith.BitcastOp: "bitcast<{T}>({a})",
    arith.IndexCastOp: "{a}",  # index is i32 here
    math.ExpOp: "exp({a})", math.Exp2Op: "exp2({a})", math.LogOp: "log({a})",
    math.Log2Op: "log2({a})", math.SqrtOp: "sqrt({a})", math.RsqrtOp: "inverseSqrt({a})",
    math.SinOp: "sin({a})", math.CosOp: "cos({a})", math.AbsFOp: "abs({a})",
    math.AbsIOp: "abs({a})", math.FloorOp: "floor({a})", math.CeilOp: "ceil({a})",
    math.TruncOp: "trunc({a})", math.FmaOp: "fma({a}, {b}, {c})", math.PowFOp: "{powf}({a}, {b})",
}

_BOOL: dict[type[Operation], str] = {
    arith.XOrIOp: "{a} != {b}", arith.UIToFPOp: "{T}({a})",
    arith.SIToFPOp: "select({T}(0.0), {T}(-1.0), {a})",  # a true i1 is -1 when signed
}
"""Overrides where the first operand is i1: a WGSL ``bool``, which has no ``^``."""

_CMPI = {"eq": "{a} == {b}", "ne": "{a} != {b}", "slt": "{a} < {b}", "sle": "{a} <= {b}",
         "sgt": "{a} > {b}", "sge": "{a} >= {b}"} | {
    p: "bitcast<{U}>({a}) OP bitcast<{U}>({b})".replace("OP", o)
    for p, o in (("ult", "<"), ("ule", "<="), ("ugt", ">"), ("uge", ">="))}

# WGSL lets a compiler assume no NaN at run time, so NaN is tested on the bit pattern;
# the IEEE ordered comparisons are already false on NaN.
_UNO = "{isnan}({a}) | {isnan}({b})"
_CMPF = {"oeq": "{a} == {b}", "olt": "{a} < {b}", "ole": "{a} <= {b}", "ogt": "{a} > {b}",
         "oge": "{a} >= {b}", "one": f"({{a}} != {{b}}) & !({_UNO})", "ord": f"!({_UNO})",
         "uno": _UNO} | {
    p: f"({{a}} {o} {{b}}) | {_UNO}"
    for p, o in (("ueq", "=="), ("une", "!="), ("ult", "<"), ("ule", "<="), ("ugt", ">"),
                 ("uge", ">="))}

_HELPERS = {
    # WGSL gives x / 0 = x and x % 0 = 0; the NumPy backend (like PTX) -1 and x
    "divsi": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return select(a / b, {T}(-1), b == {T}(0));
}}""",
    # a - b * (a / b) rather than WGSL's %: NVIDIA's Vulkan driver returned wrong signed
    # remainders for negative operands (seen on an H200, driver 580)
    "remsi": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let q = select(a / b, {T}(0), b == {T}(0));
  return a - b * q;
}}""",
    "divui": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return select(bitcast<{T}>(bitcast<{U}>(a) / bitcast<{U}>(b)), {T}(-1), b == {T}(0));
}}""",
    "remui": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return select(bitcast<{T}>(bitcast<{U}>(a) % bitcast<{U}>(b)), a, b == {T}(0));
}}""",
    # WGSL takes a shift amount modulo 32; from 32 on the NumPy backend (like PTX) gives 0
    "shli": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = bitcast<{U}>(b);
  return select(a << s, {T}(0), s >= {U}(32u));
}}""",
    "shrui": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = bitcast<{U}>(b);
  return select(bitcast<{T}>(bitcast<{U}>(a) >> s), {T}(0), s >= {U}(32u));
}}""",
    "isnan": """fn {name}(x: {T}) -> {B} {{
  return (bitcast<{U}>({F}(x)) & {U}(0x7fffffffu)) > {U}(0x7f800000u);
}}""",
    # WGSL's max/min may return either operand on NaN or on -0.0 vs +0.0; maximumf
    # propagates NaN (a + b) and orders -0.0 below +0.0, decided on the sign bits since
    # a driver may fold float sign tricks such as -(-a - b) (NVIDIA's did)
    "maximumf": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zeros = (a == {T}(0.0)) & (b == {T}(0.0));
  let both = {T}(bitcast<{F}>(bitcast<{U}>({F}(a)) & bitcast<{U}>({F}(b))));
  return select(select(max(a, b), both, zeros), a + b, {isnan}(a) | {isnan}(b));
}}""",
    "minimumf": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zeros = (a == {T}(0.0)) & (b == {T}(0.0));
  let both = {T}(bitcast<{F}>(bitcast<{U}>({F}(a)) | bitcast<{U}>({F}(b))));
  return select(select(min(a, b), both, zeros), a + b, {isnan}(a) | {isnan}(b));
}}""",
    # the NumPy backend's convention: saturate, NaN -> 0 (WGSL's i32() leaves both open)
    "fptosi": """fn {name}(v: {T}) -> {I} {{
  let x = {F}(v);
  let t = {I}(clamp(x, {F}(-2147483648.0), {F}(2147483520.0)));
  return select(select(t, {I}(2147483647), x >= {F}(2147483648.0)), {I}(0), {isnan}(v));
}}""",
    "fptoui": """fn {name}(v: {T}) -> {I} {{
  let x = {F}(v);
  let t = {U}(clamp(x, {F}(0.0), {F}(4294967040.0)));
  let s = select(t, {U}(4294967295u), x >= {F}(4294967296.0));
  return bitcast<{I}>(select(s, {U}(0u), {isnan}(v)));
}}""",
    # WGSL's pow is exp2(b * log2(a)), undefined for a < 0: give C pow's sign and NaN
    # (in f32 for f16, whose exp2/log2 would lose several bits)
    "powf": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let p = {T}(pow(abs({F}(a)), {F}(b)));
  let whole = trunc(b) == b;
  let odd = whole & (abs(b - {T}(2.0) * trunc(b * {T}(0.5))) == {T}(1.0));
  let negative = a < {T}(0.0);
  let r = select(p, -p, negative & odd);
  let nan = {T}({F}(bitcast<f32>(0x7fc00000u)));
  return select(select(r, nan, negative & !whole), {T}(1.0), b == {T}(0.0));
}}""",
}
"""Helper functions, one per (name, type) a kernel uses; ``{T}`` is the operand type."""

_STORAGE_REASON = {"i1": "bool arrays need packing into u32, which is not implemented",
                   "i8": "WGSL has no 8-bit integers", "i16": "WGSL has no 16-bit integers"}
_UNIFORM_TYPE = {"i32": "i32", "f32": "f32", "f16": "f32", "bool": "u32"}
_FROM_UNIFORM = {"i32": "{}", "f32": "{}", "f16": "f16({})", "bool": "{} != 0u"}


def _ty(elem: str, width: int) -> str:
    return elem if width == 1 else f"vec{width}<{elem}>"


def _widths(t: Attribute) -> list[int]:
    k = pymath.prod(t.get_shape()) if isinstance(t, VectorType) else 1
    return [min(4, k - i) for i in range(0, k, 4)]


def _literal(x: float, elem: str) -> str:
    """A WGSL literal that is also an atomic operand (negatives in parentheses)."""
    if elem == "bool":
        return "true" if x else "false"
    if elem == "i32":
        x = (int(x) + 2**31) % 2**32 - 2**31
        return "i32(-2147483648)" if x == -2**31 else f"({x}i)" if x < 0 else f"{x}i"
    with np.errstate(over="ignore"):
        v = np.float16(x) if elem == "f16" else np.float32(x)
    if not np.isfinite(v):  # no literal for these; the constant folds in the compiler
        bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
        return f"{elem}(bitcast<f32>(0x{bits:08x}u))"
    s = str(v)
    s += "" if ("." in s or "e" in s) else ".0"
    s += "h" if elem == "f16" else "f"
    return f"({s})" if s.startswith("-") else s


class _Subst(dict):
    """Template keys of one chunk; any other key is a helper of the operand type."""

    def __init__(self, emitter: WGSLEmitter, elem: str, width: int, **keys: str):
        super().__init__(T=_ty(elem, width), U=_ty("u32", width), I=_ty("i32", width),
                         F=_ty("f32", width), B=_ty("bool", width))
        self.update(keys)
        self.emitter, self.elem, self.width = emitter, elem, width

    def __missing__(self, key: str) -> str:
        return self.emitter.helper(key, self.elem, self.width)


class _Val:
    """How an SSA value is spelled: one WGSL expression per chunk of up to 4 lanes."""

    def __init__(self, names: list[str], widths: list[int], elem: str):
        self.names, self.widths, self.elem = names, widths, elem

    def chunk(self, c: int) -> str:
        return self.names[c if len(self.names) > 1 else 0]  # a scalar serves every chunk

    def lane(self, j: int) -> str:
        name, w = self.names[j // 4], self.widths[j // 4]
        return name if w == 1 else f"{name}[{j % 4}]"


def _lookup(table: dict, op: Operation):
    for cls in type(op).__mro__:  # subclasses (dialects/arith_shaped.py) use the base's entry
        if cls in table:
            return table[cls]
    return None


class WGSLEmitter:
    """Prints one SIMT kernel as WGSL; all naming state lives on the instance."""

    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        self.vals: dict[SSAValue, _Val] = {}
        self.buffers: dict[SSAValue, str] = {}
        self.helpers: dict[str, str] = {}
        self.features: set[str] = set()
        self.lines: list[str] = []
        self.counter = 0
        self.depth = 1
        self.op: Operation = fn
        self.loc: tuple[str, int] | None = None
        self.atomic = atomics.buffer_types(fn)  # buffer -> atomic type; all accesses atomic
        self.exits: list[list[list[str]]] = []  # result variables of the enclosing scf.while
        self.subgroup: dict[str, str] = {}  # helper text -> its subgroup-op version
        self.shared = 0  # bytes of var<workgroup> arrays

    # ------------------------------------------------------------ naming and types

    def fresh(self, value: SSAValue) -> str:
        """A unique local name; the trailing ``_<n>`` keeps it clear of WGSL keywords."""
        hint = re.sub(r"[^A-Za-z0-9_]", "_", value.name_hint or "")
        hint = re.sub(r"(_\d+)+$", "", hint.lstrip("_")) or "v"
        self.counter += 1
        return f"{hint}_{self.counter - 1}"

    def elem(self, t: Attribute) -> str:
        """The WGSL scalar type of a (vector) type, or UnsupportedError naming the dtype."""
        e = element_type(t)
        if isinstance(e, IntegerType) and e.width.data in (1, 32) or isinstance(e, IndexType):
            return "bool" if isinstance(e, IntegerType) and e.width.data == 1 else "i32"
        if isinstance(e, Float16Type):
            self.features.add("shader-f16")
            return "f16"
        if isinstance(e, Float32Type):
            return "f32"
        d = str(e)  # the short dtype name: i8, f64, bf16...
        reason = "WGSL has no 64-bit types" if d.endswith("64") else \
            "WGSL has no bfloat16" if d == "bf16" else f"WGSL has no {d} arithmetic"
        raise self.error(f"dtype {d} is not supported by the wgsl backend ({reason})")

    def error(self, message: str) -> UnsupportedError:
        return UnsupportedError(message, source_loc(self.op))

    def define(self, value: SSAValue, names: list[str] | None = None) -> _Val:
        widths = _widths(value.type)
        if names is None:
            base = self.fresh(value)
            names = [base] if len(widths) == 1 else [f"{base}_{c}" for c in range(len(widths))]
        self.vals[value] = _Val(names, widths, self.elem(value.type))
        return self.vals[value]

    def helper(self, kind: str, elem: str, width: int) -> str:
        if kind not in _HELPERS:
            raise KeyError(kind)
        name = f"{kind}_{elem if width == 1 else f'v{width}{elem}'}"
        if name not in self.helpers:
            text = _HELPERS[kind].format_map(_Subst(self, elem, width, name=name))
            self.helpers[name] = text  # after its own helpers, which format_map added
        return name

    # ------------------------------------------------------------ text

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def note_location(self, op: Operation) -> None:
        """A ``// file:line`` comment (with the source line) whenever the line changes."""
        loc = op.location
        if not isinstance(loc, FileLineColLoc) or isinstance(op, scf.YieldOp | func.ReturnOp):
            return
        key = (loc.filename.data, loc.line.data)
        if key != self.loc:
            self.loc = key
            src = linecache.getline(key[0], key[1]).strip()
            self.line(f"// {os.path.basename(key[0])}:{key[1]}" + (f": {src}" if src else ""))

    # ------------------------------------------------------------ ops

    def block(self, block: Block, targets: list[list[str]] | None = None) -> None:
        for op in block.ops:
            self.op = op
            self.note_location(op)
            if isinstance(op, scf.YieldOp):
                self.assign(targets or [], op.operands)
                continue
            method = _lookup(_METHODS, op)
            if method is not None:
                method(self, op)
            else:
                self.elementwise(op, self.template(op))

    def template(self, op: Operation) -> str:
        is_bool = bool(op.operands) and self.vals[op.operands[0]].elem == "bool"
        template = (_lookup(_BOOL, op) if is_bool else None) or _lookup(_WGSL, op)
        if template is None:
            raise self.error(f"{op.name} is not supported by the wgsl backend")
        return template

    def elementwise(self, op: Operation, template: str) -> None:
        out = self.define(op.results[0])
        src = self.vals[op.operands[0]] if op.operands else out
        for c, w in enumerate(out.widths):
            ops = {k: self.vals[v].chunk(c) for k, v in zip("abc", op.operands)}
            subst = _Subst(self, src.elem, w, S=_ty(src.elem, w), **ops)
            subst["T"] = _ty(out.elem, w)
            self.line(f"let {out.names[c]} = {template.format_map(subst)};")

    def cmp(self, op: tile.CmpIOp | tile.CmpFOp) -> None:
        table = _CMPF if isinstance(op, tile.CmpFOp) else _CMPI
        if op.predicate.data not in table:
            raise self.error(f"{op.name} {op.predicate.data} is not supported by the wgsl backend")
        self.elementwise(op, table[op.predicate.data])

    def constant(self, op: arith.ConstantOp) -> None:
        elem = self.elem(op.result.type)
        attr = op.value
        values = attr.get_values() if isinstance(attr, DenseIntOrFPElementsAttr) else \
            [attr.value.data]
        lits = [_literal(v, elem) for v in values]
        widths = _widths(op.result.type)
        if len(set(lits)) == 1:  # splat: spelled inline where used
            self.define(op.result, [lits[0] if w == 1 else f"{_ty(elem, w)}({lits[0]})"
                                    for w in widths])
            return
        out = self.define(op.result)
        for c, w in enumerate(widths):
            lanes = ", ".join(lits[4 * c:4 * c + w])
            self.line(f"let {out.names[c]} = {_ty(elem, w)}({lanes});")

    def broadcast(self, op: vector.BroadcastOp) -> None:
        s = self.vals[op.source].chunk(0)
        elem = self.elem(op.vector.type)
        self.define(op.vector, [s if w == 1 else f"{_ty(elem, w)}({s})"
                                for w in _widths(op.vector.type)])

    def program_id(self, op: tile.ProgramIdOp) -> None:
        axis = op.axis.value.data
        self.define(op.result, [("i32(pid_x)", "i32(wg.y / args.fold_n)", "i32(wg.z)")[axis]])

    def num_programs(self, op: tile.NumProgramsOp) -> None:
        self.define(op.result, [f"i32(args.{GRID_FIELDS[op.axis.value.data]})"])

    def thread_id(self, op: simt.ThreadIdOp) -> None:
        self.define(op.result, ["i32(lid)"])

    def groups(self, op: simt.LoadOp | simt.StoreOp, c: int, w: int) -> list[list[int]]:
        """Lanes of chunk c in runs that share one mask value (``vec`` of the access)."""
        lanes = range(4 * c, 4 * c + w)
        return [[j for j in lanes if j // op.width == g]
                for g in sorted({j // op.width for j in lanes})]

    def guarded(self, mask: _Val | None, lane: int, stmts: list[str]) -> None:
        if mask is None:
            for s in stmts:
                self.line(s)
        elif len(stmts) == 1:
            self.line(f"if ({mask.lane(lane)}) {{ {stmts[0]} }}")
        else:
            self.line(f"if ({mask.lane(lane)}) {{")
            for s in stmts:
                self.line(f"  {s}")
            self.line("}")

    def load(self, op: simt.LoadOp) -> None:
        index = self.vals[op.index]
        out = self.define(op.result)
        ty = [_ty(out.elem, w) for w in out.widths]
        if op.mask is None:
            for c, w in enumerate(out.widths):
                lanes = ", ".join(self.read(op.base, index.lane(j), out.elem)
                                  for j in range(4 * c, 4 * c + w))
                self.line(f"let {out.names[c]} = {lanes if w == 1 else f'{ty[c]}({lanes})'};")
            return
        mask = self.vals[op.mask]
        other = self.vals[op.other] if op.other is not None else None
        for c, w in enumerate(out.widths):
            init = other.chunk(c) if other else f"{ty[c]}()"
            self.line(f"var {out.names[c]}: {ty[c]} = {init};")  # masked-off lanes: no read
            for group in self.groups(op, c, w):
                self.guarded(mask, group[0], [
                    f"{out.lane(j)} = {self.read(op.base, index.lane(j), out.elem)};"
                    for j in group])

    def store(self, op: simt.StoreOp) -> None:
        index, value = self.vals[op.index], self.vals[op.value]
        mask = self.vals[op.mask] if op.mask is not None else None
        for c, w in enumerate(value.widths):
            for group in self.groups(op, c, w):
                self.guarded(mask, group[0], [
                    self.write(op.base, index.lane(j), value.lane(j), value.elem)
                    for j in group])

    def read(self, base: SSAValue, index: str, elem: str) -> str:
        buf = self.buffers[base]
        if base in self.atomic:
            return atomics.read(buf, self.atomic[base], elem, index)
        return f"{buf}[{index}]"

    def write(self, base: SSAValue, index: str, value: str, elem: str) -> str:
        buf = self.buffers[base]
        if base in self.atomic:
            return atomics.write(buf, self.atomic[base], elem, index, value)
        return f"{buf}[{index}] = {value};"

    def assign(self, targets: list[list[str]], values) -> None:
        for names, v in zip(targets, values, strict=True):
            for c, name in enumerate(names):
                self.line(f"{name} = {self.vals[v].chunk(c)};")

    def variables(self, values, inits=None) -> list[list[str]]:
        """One ``var`` per chunk of each value (loop-carried values, ``scf.if`` results)."""
        out = []
        for i, v in enumerate(values):
            val = self.define(v)
            for c, w in enumerate(val.widths):
                init = f" = {self.vals[inits[i]].chunk(c)}" if inits else ""
                self.line(f"var {val.names[c]}: {_ty(val.elem, w)}{init};")
            out.append(val.names)
        return out

    def for_(self, op: scf.ForOp) -> None:
        carried = self.variables(op.res, list(op.iter_args))
        body = op.body.block
        iv = self.define(body.args[0]).names[0]
        lb, ub, step = (self.vals[v].chunk(0) for v in (op.lb, op.ub, op.step))
        self.line(f"for (var {iv}: i32 = {lb}; {iv} < {ub}; {iv} = {iv} + {step}) {{")
        self.depth += 1
        self.copies(body.args[1:], carried)
        self.block(body, carried)
        self.depth -= 1
        self.line("}")

    def copies(self, args, variables: list[list[str]]) -> None:
        """Block arguments as copies of loop variables, so a yield may assign in any order."""
        for arg, names in zip(args, variables, strict=True):
            copy = self.define(arg)
            for c, name in enumerate(copy.names):
                self.line(f"let {name} = {names[c]};")

    def while_(self, op: scf.WhileOp) -> None:
        """A ``loop`` that runs the before region, leaves at ``scf.condition`` when it is
        false (results: its operands), then runs the after region."""
        before, after = op.before_region.block, op.after_region.block
        state = self.variables(before.args, list(op.arguments))
        results = self.variables(op.res)
        self.line("loop {")
        self.depth += 1
        self.copies(before.args, state)
        self.exits.append(results)
        self.block(before)
        self.exits.pop()
        self.copies(after.args, results)
        self.block(after, state)
        self.depth -= 1
        self.line("}")

    def condition(self, op: scf.ConditionOp) -> None:
        self.assign(self.exits[-1], op.args)
        self.line(f"if (!{self.vals[op.condition].chunk(0)}) {{ break; }}")

    def if_(self, op: scf.IfOp) -> None:
        results = self.variables(op.output)
        self.line(f"if ({self.vals[op.cond].chunk(0)}) {{")
        for i, region in enumerate((op.true_region, op.false_region)):
            if region.blocks:
                if i:
                    self.line("} else {")
                self.depth += 1
                self.block(region.block, results)
                self.depth -= 1
        self.line("}")

    # ------------------------------------------------------------ the kernel

    def signature(self) -> tuple[list[str], list[str], list[dict], int]:
        """Binding declarations, uniform fields, per-parameter facts, pointer count."""
        stored = {op.base for op in self.fn.walk() if isinstance(op, simt.StoreOp)}
        stored |= self.atomic.keys()
        decls, fields, facts = [], [f"{f}: u32," for f in GRID_FIELDS], []
        nptr = 0
        for arg in self.fn.body.block.args:
            if isinstance(arg.type, PtrType):
                facts.append(self.pointer(arg, nptr, arg in stored, decls))
                nptr += 1
                continue
            elem, name = self.elem(arg.type), self.fresh(arg)
            fields.append(f"{name}: {_UNIFORM_TYPE[elem]},")
            self.line(f"let {name} = {_FROM_UNIFORM[elem].format(f'args.{name}')};")
            self.define(arg, [name])
            facts.append({"kind": "scalar", "offset": 4 * (len(fields) - 1),
                          "type": _UNIFORM_TYPE[elem]})
        return decls, fields, facts, nptr

    def pointer(self, arg: SSAValue, binding: int, written: bool, decls: list[str]) -> dict:
        pointee = arg.type.pointee
        d = str(pointee)
        if d in _STORAGE_REASON:
            raise self.error(f"dtype {d} arrays are not supported by the wgsl backend "
                             f"({_STORAGE_REASON[d]})")
        elem, name = self.elem(pointee), self.fresh(arg)
        self.buffers[arg] = name
        access = "read_write" if written else "read"
        item = f"atomic<{self.atomic[arg]}>" if arg in self.atomic else elem
        decls.append(f"@group(0) @binding({binding}) var<storage, {access}> {name}: "
                     f"array<{item}>;")
        return {"kind": "ptr", "binding": binding, "dtype": elem, "access": access}

    def emit(self) -> tuple[str, dict]:
        decls, fields, params, nptr = self.signature()
        self.block(self.fn.body.block)
        warps = self.fn.attributes.get("simt.num_warps")
        size = 32 * (warps.value.data if warps is not None else 4)
        out = [f"// tilec kernel {self.fn.sym_name.data} (SIMT IR -> WGSL)"]
        out += ["enable f16;"] if "shader-f16" in self.features else []
        out += ["", "struct Args {"] + [f"  {f}" for f in fields] + ["}", ""] + decls
        out += [f"@group(0) @binding({nptr}) var<uniform> args: Args;", ""]
        out += [h + "\n" for h in self.helpers.values()]
        out += _ENTRY.format(size=size).splitlines() + self.lines + ["}", ""]
        facts = {"name": self.fn.sym_name.data, "entry": "main", "workgroup_size": size,
                 "params": params, "features": sorted(self.features),
                 "uniform": {"binding": nptr, "size": -(-len(fields) // 4) * 16},
                 "subgroup": self.subgroup, "shared": self.shared}
        return "\n".join(out), facts


_ENTRY = """@compute @workgroup_size({size})
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  // axis 0 may be folded into dispatch x and y (over 65,535 programs)
  let pid_x = wg.x + args.fold_x * (wg.y % args.fold_n);
  if (pid_x >= args.grid_x) {{
    return;  // a padding program of the folded dispatch
  }}"""

_METHODS = {
    arith.ConstantOp: WGSLEmitter.constant, vector.BroadcastOp: WGSLEmitter.broadcast,
    tile.ProgramIdOp: WGSLEmitter.program_id, tile.NumProgramsOp: WGSLEmitter.num_programs,
    simt.ThreadIdOp: WGSLEmitter.thread_id, simt.LoadOp: WGSLEmitter.load,
    simt.StoreOp: WGSLEmitter.store, tile.CmpIOp: WGSLEmitter.cmp,
    tile.CmpFOp: WGSLEmitter.cmp,
    scf.ForOp: WGSLEmitter.for_, scf.IfOp: WGSLEmitter.if_, scf.WhileOp: WGSLEmitter.while_,
    scf.ConditionOp: WGSLEmitter.condition, func.ReturnOp: lambda _s, _o: None,
    simt.AtomicRMWOp: emit_atomic, simt.AtomicCASOp: emit_atomic,
} | cross_thread.METHODS


def emit_wgsl(module: ModuleOp) -> tuple[str, dict]:
    """WGSL source of the module's kernel and the facts its launcher needs.

    Facts: ``name``, ``entry``, ``workgroup_size``, ``features`` (adapter features to
    request), ``uniform`` (``binding``, ``size`` in bytes; the u32 words ``GRID_FIELDS``
    come first) and ``params``, one per kernel parameter in order: pointers
    ``{"kind": "ptr", "binding", "dtype", "access": "read" | "read_write"}``, scalars
    ``{"kind": "scalar", "offset", "type": "i32" | "u32" | "f32"}`` (f16 travels as f32,
    i1 as u32).
    """
    fns = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(fns) != 1:
        raise ValueError(f"expected one func.func in the module, found {len(fns)}")
    return WGSLEmitter(fns[0]).emit()
