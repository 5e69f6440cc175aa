"""WGSL of the elementwise ops one expression template does not cover.

- ``arith.constant``: literals, a splat spelled inline where used;
- ``vector.broadcast``: a scalar repeated in every chunk;
- ``tile.cmpi``/``tile.cmpf``: a template per predicate;
- ``arith.bitcast`` between 8- or 16-bit types (integers, f16, bfloat16).
"""

from __future__ import annotations

import struct

import numpy as np
from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import SSAValue

from backends.wgsl import wide
from backends.wgsl.core import (
    WGSLEmitter,
    handles,
    is_bf16,
    narrow_bits,
    sign_extend,
    splat,
    ty,
    widths,
)
from dialects import tile

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


def _literal(x: float, elem: str) -> str:
    """A WGSL literal that is also an atomic operand (negatives in parentheses)."""
    if elem == "bool":
        return "true" if x else "false"
    if elem == "i32":
        x = (int(x) + 2**31) % 2**32 - 2**31
        return "i32(-2147483648)" if x == -2**31 else f"({x}i)" if x < 0 else f"{x}i"
    with np.errstate(over="ignore"):
        v = np.float16(x) if elem == "f16" else np.float32(x)
    if not np.isfinite(v):
        # no literal for these, and no constant expression may evaluate to one (Chrome's
        # Tint rejects the shader; Naga folds it): or'ed with a zero no compiler can see
        bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
        return f"{elem}(bitcast<f32>(0x{bits:08x}u | (args.grid_z >> 31u)))"
    s = str(v)
    s += "" if ("." in s or "e" in s) else ".0"
    s += "h" if elem == "f16" else "f"
    return f"({s})" if s.startswith("-") else s


@handles(tile.CmpIOp, tile.CmpFOp)
def cmp(em: WGSLEmitter, op: tile.CmpIOp | tile.CmpFOp) -> None:
    table = _CMPF if isinstance(op, tile.CmpFOp) else \
        wide.CMP if em.vals[op.lhs].elem == "i64" else _CMPI
    if op.predicate.data not in table:
        raise em.error(f"{op.name} {op.predicate.data} is not supported by the wgsl backend")
    em.elementwise(op, table[op.predicate.data])


@handles(arith.ConstantOp)
def constant(em: WGSLEmitter, op: arith.ConstantOp) -> None:
    elem = em.elem(op.result.type)
    attr = op.value
    values = attr.get_values() if isinstance(attr, DenseIntOrFPElementsAttr) else \
        [attr.value.data]
    bits = narrow_bits(op.result.type)
    if bits is not None:  # held sign-extended
        values = [(int(v) + (1 << bits - 1)) % (1 << bits) - (1 << bits - 1) for v in values]
    chunks = widths(op.result.type)
    if elem == "i64":
        _wide_constant(em, op, [int(v) for v in values], chunks)
        return
    lits = [_literal(v, elem) for v in values]
    if len(set(lits)) == 1:  # splat: spelled inline where used
        em.define(op.result, [splat(elem, w, lits[0]) for w in chunks])
        return
    out = em.define(op.result)
    for c, w in enumerate(chunks):
        lanes = ", ".join(lits[4 * c:4 * c + w])
        em.line(f"let {out.names[c]} = {ty(elem, w)}({lanes});")


def _wide_constant(em: WGSLEmitter, op: arith.ConstantOp, values: list[int],
                   chunks: list[int]) -> None:
    """An int64 constant: a splat inline where used, else a ``let`` per chunk."""
    if len(set(values)) == 1:
        em.define(op.result, [wide.literal(values[:1] * w) for w in chunks])
        return
    out = em.define(op.result)
    for c, w in enumerate(chunks):
        em.line(f"let {out.names[c]} = {wide.literal(values[4 * c:4 * c + w])};")


@handles(vector.BroadcastOp)
def broadcast(em: WGSLEmitter, op: vector.BroadcastOp) -> None:
    s = em.vals[op.source].chunk(0)
    elem = em.elem(op.vector.type)
    em.define(op.vector, [splat(elem, w, s) for w in widths(op.vector.type)])


@handles(arith.BitcastOp)
def bitcast(em: WGSLEmitter, op: arith.BitcastOp) -> None:
    """8- and 16-bit integers are held sign-extended in an i32: between two of one width
    the held value stays. Otherwise a 16-bit type's bits go through a sign-extended i32
    chunk: an f16's by ``pack2x16float``/``unpack2x16float`` of the f16 as an f32, lane by
    lane (exact both ways; Naga does not bitcast between vectors of other lengths), a
    bfloat16's as the high half of the f32 that holds it."""
    narrow_in, narrow_out = narrow_bits(op.input.type), narrow_bits(op.result.type)
    src = em.vals[op.input]
    if narrow_in is not None and narrow_out is not None:
        em.define(op.result, list(src.names))
        return
    if not (narrow_in == 16 or is_bf16(op.input.type) or src.elem == "f16"):
        em.elementwise(op, em.template(op))  # 32 or 64 bits: WGSL's bitcast
        return
    out = em.define(op.result)
    for c, w in enumerate(out.widths):
        bits = _bits16(em, op.input, c, w)
        em.line(f"let {out.names[c]} = {_from_bits16(op.result, bits, w)};")


def _bits16(em: WGSLEmitter, value: SSAValue, c: int, w: int) -> str:
    """Chunk ``c`` of a 16-bit ``value``'s bits, sign-extended in i32 (a name)."""
    v = em.vals[value]
    if narrow_bits(value.type) is not None:
        return v.chunk(c)
    if is_bf16(value.type):
        expr = f"bitcast<{ty('i32', w)}>({v.chunk(c)}) >> {ty('u32', w)}(16u)"
    else:  # f16
        lanes = ", ".join(f"i32(pack2x16float(vec2<f32>(f32({v.lane(4 * c + j)}), 0.0)))"
                          for j in range(w))
        expr = sign_extend(f"{ty('i32', w)}({lanes})", 16, w)
    name = f"{em.fresh(value)}_bits"
    em.line(f"let {name} = {expr};")
    return name


def _from_bits16(result: SSAValue, bits: str, w: int) -> str:
    """The 16-bit type of ``result`` from a chunk of its bits sign-extended in i32."""
    if narrow_bits(result.type) is not None:
        return bits
    if is_bf16(result.type):
        return f"bitcast<{ty('f32', w)}>(bitcast<{ty('u32', w)}>({bits}) << {ty('u32', w)}(16u))"
    lanes = [bits if w == 1 else f"{bits}[{j}]" for j in range(w)]
    halves = ", ".join(f"f16(unpack2x16float(bitcast<u32>({x})).x)" for x in lanes)
    return f"{ty('f16', w)}({halves})"
