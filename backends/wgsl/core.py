"""The WGSL emitter's core: ``WGSLEmitter``, its expression table and its handler table.

WGSL is structured, so the text is printed straight from SIMT IR, one op at a time
(``WGSLEmitter.block``). An op is looked up first in ``HANDLERS``, filled by the feature
modules through ``@handles(OpClass, ...)``; any other op is elementwise and spelled by
the expression table (C-style infix operators with WGSL overrides). A thread's
``vector<K x T>`` value becomes ceil(K / 4) locals of type ``vec4<T>`` (the last one
narrower), on which WGSL's operators and builtins already work lane-wise (``Val``); an
int64 chunk is a struct of two such vectors of u32 words (``wide.py``). WGSL has no
bfloat16: a bf16 value is held in an f32 that is always a bf16 value, as each op with a
bf16 result rounds its f32 answer to nearest even (``bf16_rounding``), which is what the
NumPy backend's ml_dtypes computes.

This module imports no feature module; ``emit.py`` imports them all, so the table is
full when it emits.
"""

from __future__ import annotations

import linecache
import math as pymath
import os
import re
from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from backends.wgsl import UNSUPPORTED_DTYPES, wide, workgroup
from backends.wgsl.helpers import HELPERS
from compiler.context import source_loc
from compiler.errors import UnsupportedError
from dialects import tile
from dialects.arith_shaped import rounds_toward_zero
from dialects.tile import element_type

# ---------------------------------------------------------------- expression tables

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
    tile.UMulHiOp: "{umulhi}({a}, {b})",
    arith.SIToFPOp: "{T}({a})", arith.UIToFPOp: "{T}(bitcast<{U}>({a}))",
    arith.FPToSIOp: "{fptosi}({a})", arith.FPToUIOp: "{fptoui}({a})",
    arith.ExtFOp: "{T}({a})", arith.TruncFOp: "{T}({roundf16}({a}))",  # f32 -> f16
    arith.ExtUIOp: "{T}({a})", arith.ExtSIOp: "-{T}({a})",  # from i1 only (i32 is widest)
    arith.TruncIOp: "({a} & {S}(1)) != {S}(0)", arith.BitcastOp: "bitcast<{T}>({a})",
    arith.IndexCastOp: "{a}",  # index is i32 here
    math.ExpOp: "exp({a})", math.Exp2Op: "exp2({a})", math.LogOp: "log({a})",
    math.Log2Op: "log2({a})", math.SqrtOp: "sqrt({a})", math.RsqrtOp: "inverseSqrt({a})",
    math.SinOp: "sin({a})", math.CosOp: "cos({a})", math.AbsFOp: "abs({a})",
    math.AbsIOp: "abs({a})", math.FloorOp: "floor({a})", math.CeilOp: "ceil({a})",
    math.TruncOp: "trunc({a})", math.FmaOp: "fma({a}, {b}, {c})", math.PowFOp: "{powf}({a}, {b})",
    math.RoundEvenOp: "round({a})",  # WGSL's round ties to even
    math.CtPopOp: "countOneBits({a})", math.CountLeadingZerosOp: "countLeadingZeros({a})",
    math.CountTrailingZerosOp: "countTrailingZeros({a})", tile.BrevOp: "reverseBits({a})",
    # or'ed with a zero the compiler cannot see (no grid reaches 2^31 programs)
    tile.ArithFenceOp: "bitcast<{T}>(bitcast<{U}>({a}) | {U}(args.grid_z >> 31u))",
}

_HALF_IN_F32 = {cls: "{T}(" + _WGSL[cls].replace("{a}", "{F}({a})") + ")"
                for cls in (math.ExpOp, math.Exp2Op, math.LogOp, math.Log2Op, math.SinOp,
                            math.CosOp, math.RsqrtOp)}
"""f16 functions computed in f32 and rounded once, as the PTX backend does: the f16
builtins may be several ulps off (NVIDIA's Vulkan driver: enough for a float ``%`` after
``exp`` to differ from NumPy by 9%)."""

_BOOL: dict[type[Operation], str] = {
    arith.XOrIOp: "{a} != {b}", arith.UIToFPOp: "{T}({a})",
    arith.SIToFPOp: "select({T}(0.0), {T}(-1.0), {a})",  # a true i1 is -1 when signed
}
"""Overrides where the first operand is i1: a WGSL ``bool``, which has no ``^``."""

_ZERO_EXTENDED: dict[type[Operation], str] = {
    arith.DivUIOp: "{divui}({a} & {Z}, {b} & {Z})", arith.RemUIOp: "{remui}({a} & {Z}, {b} & {Z})",
    arith.ShRUIOp: "{shrui}({a} & {Z}, {b})", arith.UIToFPOp: "{T}({a} & {Z})",
    arith.ExtUIOp: "{a} & {Z}", arith.ExtSIOp: "{a}", arith.TruncIOp: "{a}",
}
"""8- and 16-bit integer operands, held sign-extended: what reads them as unsigned masks
them first; widening and narrowing between integer types move no bits (the result is
brought back to its range, as every 8- or 16-bit result is)."""

# float -> 8/16-bit integer: saturate to the type's range, NaN -> 0 (the NumPy backend's)
_TO_NARROW = "select({fptosi}(clamp({a}, {S}(LO), {S}(HI))), {I}(0), {isnan}({a}))"
_RANGES = {(True, 8): (-128, 127), (True, 16): (-32768, 32767), (False, 8): (0, 255),
           (False, 16): (0, 65535)}  # (signed, bits) -> the range


def narrow_bits(t: Attribute) -> int | None:
    """8 or 16 for the integer types WGSL lacks, which a kernel holds sign-extended in an
    ``i32`` and arrays pack four or two to a ``u32``; else None."""
    e = element_type(t)
    return e.width.data if isinstance(e, IntegerType) and e.width.data in (8, 16) else None


def is_bf16(t: Attribute) -> bool:
    """Whether ``t`` is bfloat16 or a vector of it (held in f32: the module docstring)."""
    return isinstance(element_type(t), BFloat16Type)


_KEEPS_BF16 = (arith.SelectOp, tile.SelectOp, arith.NegfOp, math.AbsFOp, arith.MaximumfOp,
               arith.MinimumfOp)
"""Ops whose result is one of their operands' values, or its sign changed: a bf16 value
already, with nothing to round."""


def bf16_rounding(op: Operation) -> str | None:
    """The helper that brings ``op``'s f32 answer to its bf16 result type (None: the result
    is not bf16, or needs no rounding)."""
    if not op.results or not is_bf16(op.results[0].type) or isinstance(op, _KEEPS_BF16):
        return None
    return "truncbf16" if rounds_toward_zero(op) else "roundbf16"


def _narrow_template(op: Operation) -> str | None:
    """The template of an op on or to 8- or 16-bit integers where the plain one is wrong."""
    if not op.operands or not op.results:
        return None
    src, dst = narrow_bits(op.operands[0].type), narrow_bits(op.results[0].type)
    if dst is not None and isinstance(op, arith.FPToSIOp | arith.FPToUIOp):
        lo, hi = _RANGES[(isinstance(op, arith.FPToSIOp), dst)]
        return _TO_NARROW.replace("LO", f"{lo}.0").replace("HI", f"{hi}.0")
    if isinstance(op, arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp):
        bools = any(element_type(v.type) == i1 for v in (op.operands[0], op.results[0]))
        return None if bools or src is None and dst is None else _lookup(_ZERO_EXTENDED, op)
    return _lookup(_ZERO_EXTENDED, op) if src is not None else None


# ---------------------------------------------------------------- handler table

Handler = Callable[["WGSLEmitter", Any], None]

HANDLERS: dict[type[Operation], Handler] = {}
"""Op class -> the function that prints it; subclasses use their base's entry."""


def handles(*ops: type[Operation]) -> Callable[[Handler], Handler]:
    """Register the decorated ``fn(emitter, op)`` as the handler of ``ops``."""

    def register(fn: Handler) -> Handler:
        for op in ops:
            HANDLERS[op] = fn
        return fn

    return register


def _lookup(table: dict, op: Operation):
    for cls in type(op).__mro__:  # subclasses (dialects/arith_shaped.py) use the base's entry
        if cls in table:
            return table[cls]
    return None


# ---------------------------------------------------------------- values


def ty(elem: str, width: int) -> str:
    """The WGSL type of a chunk of ``width`` lanes (int64: a struct, ``wide.py``)."""
    if elem == "i64":
        return wide.type_name(width)
    return elem if width == 1 else f"vec{width}<{elem}>"


def half_of_word(word: str, shift: str, elem: str) -> str:
    """The 16-bit float at bit ``shift`` of the u32 ``word`` of a packed array, as a value
    of ``elem``: a bfloat16's bits as the high half of an f32 (which is its value), a
    float16 unpacked."""
    if elem == "f32":
        return f"bitcast<f32>(({word} << (16u - {shift})) & 0xffff0000u)"
    return f"f16(unpack2x16float({word} >> {shift}).x)"


def half_bits(value: str, elem: str) -> str:
    """A 16-bit float's bits in the low half of a u32 (a bfloat16 is an f32 whose high
    half it is: the value is already rounded)."""
    if elem == "f32":
        return f"(bitcast<u32>({value}) >> 16u)"
    return f"pack2x16float(vec2<f32>(f32({value}), 0.0))"


def pack(elem: str, lanes: list[str]) -> str:
    """A chunk of the lane expressions ``lanes``."""
    if elem == "i64":
        return wide.pack(lanes)
    return lanes[0] if len(lanes) == 1 else f"{ty(elem, len(lanes))}({', '.join(lanes)})"


def splat(elem: str, width: int, scalar: str) -> str:
    """A chunk of ``width`` copies of a scalar expression."""
    if elem == "i64":
        return wide.splat(scalar, width)
    return scalar if width == 1 else f"{ty(elem, width)}({scalar})"


def sign_extend(expr: str, bits: int, width: int = 1, offset: str = "0u") -> str:
    """The ``bits``-bit field at ``offset`` of an i32 chunk, sign-extended, as a shift
    left and an arithmetic shift right. Not ``extractBits``: NVIDIA's Vulkan driver
    computes a wrong unsigned remainder of a signed ``extractBits`` of eight bits
    (tests/regressions/test_wgsl_sign_extended_remainder.py)."""
    right = f"{32 - bits}u"
    left = right if offset == "0u" else f"({right} - {offset})"
    if width > 1:
        left, right = f"{ty('u32', width)}({left})", f"{ty('u32', width)}({right})"
    return f"((({expr}) << {left}) >> {right})"


def widths(t: Attribute) -> list[int]:
    """The lane counts of the chunks of a value of type ``t``."""
    k = pymath.prod(t.get_shape()) if isinstance(t, VectorType) else 1
    return [min(4, k - i) for i in range(0, k, 4)]


class Subst(dict):
    """Template keys of one chunk; any other key is a helper of the operand type."""

    def __init__(self, emitter: WGSLEmitter, elem: str, width: int, **keys: str):
        super().__init__(T=ty(elem, width), U=ty("u32", width), I=ty("i32", width),
                         F=ty("f32", width), B=ty("bool", width))
        self.update(keys)
        self.emitter, self.elem, self.width = emitter, elem, width

    def __missing__(self, key: str) -> str:
        return self.emitter.helper(key, self.elem, self.width)


class Val:
    """How an SSA value is spelled: one WGSL expression per chunk of up to 4 lanes."""

    def __init__(self, names: list[str], widths: list[int], elem: str):
        self.names, self.widths, self.elem = names, widths, elem

    def chunk(self, c: int) -> str:
        return self.names[c if len(self.names) > 1 else 0]  # a scalar serves every chunk

    def lane(self, j: int) -> str:
        name, w = self.names[j // 4], self.widths[j // 4]
        if self.elem == "i64":
            return wide.lane(name, w, j % 4)
        return name if w == 1 else f"{name}[{j % 4}]"

    def set_lane(self, j: int, value: str) -> str:
        """Statements storing ``value`` in lane ``j`` (of a ``var``)."""
        name, w = self.names[j // 4], self.widths[j // 4]
        if self.elem == "i64":
            return wide.set_lane(name, w, j % 4, value)
        return f"{self.lane(j)} = {value};"


# ---------------------------------------------------------------- the emitter


class WGSLEmitter:
    """Prints one SIMT kernel as WGSL; all naming state lives on the instance.

    ``atomic`` maps each buffer an atomic uses to its WGSL atomic type
    (``atomics.buffer_types``): every access to such a buffer is atomic.
    """

    def __init__(self, fn: func.FuncOp, atomic: dict[SSAValue, str]):
        self.fn = fn
        self.vals: dict[SSAValue, Val] = {}
        self.buffers: dict[SSAValue, str] = {}
        self.helpers: dict[str, str] = {}
        self.features: set[str] = set()
        self.lines: list[str] = []
        self.counter = 0
        self.depth = 1
        self.op: Operation = fn
        self.loc: tuple[str, int] | None = None
        self.atomic = atomic
        self.exits: list[list[list[str]]] = []  # result variables of the enclosing scf.while
        self.subgroup: dict[str, str] = {}  # helper text -> its subgroup-op version
        self.subgroup_xor: dict[str, list] = {}  # xor wrapper text -> [mask, subgroup version]
        self.shared = 0  # bytes of var<workgroup> arrays
        self.sharing = workgroup.sharing(fn)  # shared buffer -> the one whose array it uses
        self.arrays: dict[Operation, str] = {}  # that one -> its array's name, once declared
        self.packed: dict[SSAValue, int] = {}  # arrays of 8- or 16-bit elements: the bits
        self.written: set[SSAValue] = set()  # arrays the kernel stores to
        self.whole_words: set[SSAValue] = set()  # packed arrays stored a word at a time

    # ------------------------------------------------------------ naming and types

    def fresh(self, value: SSAValue) -> str:
        """A unique local name; the trailing ``_<n>`` keeps it clear of WGSL keywords."""
        hint = re.sub(r"[^A-Za-z0-9_]", "_", value.name_hint or "")
        hint = re.sub(r"(_\d+)+$", "", hint.lstrip("_")) or "v"
        self.counter += 1
        return f"{hint}_{self.counter - 1}"

    def elem(self, t: Attribute) -> str:
        """The WGSL scalar type of a (vector) type, or UnsupportedError naming the dtype;
        8- and 16-bit integers are held sign-extended in an ``i32`` (``narrow_bits``),
        int64 as two words (``wide.py``: ``i64`` names its chunk structs), bfloat16 in an
        ``f32`` (``is_bf16``)."""
        e = element_type(t)
        if narrow_bits(t) is not None:
            return "i32"
        if isinstance(e, IntegerType) and e.width.data == 64:
            self.helpers.setdefault("struct i64", wide.STRUCTS)
            return "i64"
        if isinstance(e, IntegerType) and e.width.data in (1, 32) or isinstance(e, IndexType):
            return "bool" if isinstance(e, IntegerType) and e.width.data == 1 else "i32"
        if isinstance(e, Float16Type):
            self.features.add("shader-f16")
            return "f16"
        if isinstance(e, Float32Type | BFloat16Type):
            return "f32"
        d = str(e)  # the short dtype name: i8, f64, bf16...
        reason = UNSUPPORTED_DTYPES.get(d, (f"WGSL has no {d} arithmetic",))[0]
        raise self.error(f"dtype {d} is not supported by the wgsl backend ({reason})")

    def error(self, message: str) -> UnsupportedError:
        return UnsupportedError(message, source_loc(self.op))

    def define(self, value: SSAValue, names: list[str] | None = None) -> Val:
        chunks = widths(value.type)
        if names is None:
            base = self.fresh(value)
            names = [base] if len(chunks) == 1 else [f"{base}_{c}" for c in range(len(chunks))]
        self.vals[value] = Val(names, chunks, self.elem(value.type))
        return self.vals[value]

    def helper(self, kind: str, elem: str, width: int) -> str:
        template = HELPERS.get(kind) or wide.HELPERS64.get(kind)
        if template is None:
            raise KeyError(kind)
        name = f"{kind}_{elem if width == 1 else f'v{width}{elem}'}"
        if name not in self.helpers:
            text = template.format_map(Subst(self, elem, width, name=name))
            self.helpers[name] = text  # after its own helpers, which format_map added
        return name

    def threads(self) -> int:
        """The workgroup size: 32 invocations per warp of ``simt.num_warps``."""
        warps = self.fn.attributes.get("simt.num_warps")
        return 32 * (warps.value.data if warps is not None else 4)  # pyright: ignore

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

    def guarded(self, mask: Val | None, lane: int, stmts: list[str]) -> None:
        """``stmts`` under ``if`` on the mask's ``lane`` (or plain, with no mask)."""
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

    def assign(self, targets: list[list[str]], values) -> None:
        for names, v in zip(targets, values, strict=True):
            for c, name in enumerate(names):
                self.line(f"{name} = {self.vals[v].chunk(c)};")

    # ------------------------------------------------------------ ops

    def block(self, block: Block, targets: list[list[str]] | None = None) -> None:
        """The block's ops; its ``scf.yield`` assigns ``targets`` (the region's results)."""
        for op in block.ops:
            self.op = op
            self.note_location(op)
            if isinstance(op, scf.YieldOp):
                self.assign(targets or [], op.operands)
                continue
            handler = _lookup(HANDLERS, op)
            if handler is not None:
                handler(self, op)
            else:
                self.elementwise(op, self.template(op))

    def template(self, op: Operation) -> str:
        if isinstance(op, arith.TruncFOp) and is_bf16(op.result.type):
            return "{T}({a})"  # to f32: ``elementwise`` rounds it to bf16
        if rounds_toward_zero(op):
            return "{T}({truncf16}({a}))"  # f32 -> f16 toward zero: the f16() is exact
        if self.is_wide(op):
            return self.wide_template(op)
        is_bool = bool(op.operands) and self.vals[op.operands[0]].elem == "bool"
        is_half = bool(op.operands) and self.vals[op.operands[0]].elem == "f16"
        template = _narrow_template(op) or (_lookup(_BOOL, op) if is_bool else None) or \
            (_lookup(_HALF_IN_F32, op) if is_half else None) or _lookup(_WGSL, op)
        if template is None:
            raise self.error(f"{op.name} is not supported by the wgsl backend"
                             f"{getattr(op, 'UNSUPPORTED', '')}")
        return template

    def is_wide(self, op: Operation) -> bool:
        """Whether an operand or result of ``op`` is int64."""
        return any(self.elem(v.type) == "i64" for v in (*op.operands, *op.results))

    def wide_template(self, op: Operation) -> str:
        src = self.elem(op.operands[0].type)
        narrow = narrow_bits(op.operands[0].type) is not None
        template = wide.template(op, src, self.elem(op.results[0].type), narrow)
        if template is None:
            raise self.error(f"{op.name} on int64 is not supported by the wgsl backend")
        return template

    def elementwise(self, op: Operation, template: str) -> None:
        out = self.define(op.results[0])
        src = self.vals[op.operands[0]] if op.operands else out
        bits = narrow_bits(op.results[0].type)
        narrow = [narrow_bits(v.type) for v in op.operands[:1]] + [bits]
        mask = next((b for b in narrow if b is not None), 32)
        helpers = "i64" if out.elem == "i64" else src.elem  # making int64: its helpers
        rounding = bf16_rounding(op)
        for c, w in enumerate(out.widths):
            ops = {k: self.vals[v].chunk(c) for k, v in zip("abc", op.operands)}
            subst = Subst(self, helpers, w, S=ty(src.elem, w), **ops)
            subst["T"] = ty(out.elem, w)
            subst["Z"] = f"{ty('i32', w)}({(1 << mask) - 1}i)" if mask < 32 else ""
            expr = template.format_map(subst)
            if bits is not None:  # back to the type's range, sign-extended
                expr = sign_extend(expr, bits, w)
            if rounding is not None:
                expr = f"{self.helper(rounding, 'f32', w)}({expr})"
            self.line(f"let {out.names[c]} = {expr};")
