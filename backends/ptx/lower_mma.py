"""Part of simt-to-ptx: the warp-level matrix ops (tensor cores) -> the ptx dialect.

- ``simt.ldmatrix`` -> ``ptx.ldmatrix`` (``ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16``)
  at ``base + offset * size``, giving 32-bit registers;
- ``simt.mma`` -> ``ptx.mma`` (``mma.sync.aligned.<shape>.row.col.<D>.<A>.<B>.<C>``).

SIMT fragments are vectors of elements; the instructions take 32-bit registers holding 2
halves, 4 bytes or one tf32. ``pack`` and ``unpack`` convert (f16/bf16 pairs by
``mov.b32 %r, {%h0, %h1}``, bytes by ``prmt``/``shr``, f32 by ``cvt.rna.tf32.f32``); the
registers an ``ldmatrix`` loaded are remembered, so a fragment that goes straight from
``ldmatrix`` to ``mma`` is never unpacked and packed again.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, VectorType, i32
from xdsl.ir import SSAValue

from backends.ptx.lower_core import BYTES, Lowering, dtype, lowers
from dialects import ptx, simt

# element dtype -> the type name mma.sync gives it (f32 operands are tf32)
_OPERAND_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "i8": "s8"}
_ACCUMULATOR_TYPES = {"f32": "f32", "f16": "f16", "i32": "s32"}
_PRMT_EVEN_BYTES = 0x6420  # bytes 0, 2 of a then of b: the low bytes of two halves each


def _words(n: int) -> VectorType:
    return VectorType(i32, [n])


@lowers(simt.LdMatrixOp)
def ldmatrix(lo: Lowering, op: simt.LdMatrixOp) -> SSAValue:
    size = BYTES[dtype(op.result.type)]
    addr = lo.inst("mad.lo.s32", [lo.values[op.offset], lo.const(size, "i32"),
                                  lo.values[op.buffer]], i32)
    trans = ".trans" if op.trans is not None else ""
    opcode = f"ldmatrix.sync.aligned.m8n8.x{op.count}{trans}.shared.b16"
    words = lo.value(ptx.LdMatrixOp(opcode, addr, op.count))
    value = unpack(lo, words, op.result.type)
    if dtype(value.type) != "f32":  # f32 still needs rounding to tf32 by pack
        lo.memo[("packed", value)] = words
    return value


@lowers(simt.MmaOp)
def mma(lo: Lowering, op: simt.MmaOp) -> SSAValue:
    elem, acc = dtype(op.a.type), dtype(op.c.type)
    a, b = (pack(lo, lo.values[v]) for v in (op.a, op.b))
    c = lo.values[op.c]
    ab, cd = _OPERAND_TYPES[elem], _ACCUMULATOR_TYPES[acc]
    opcode = f"mma.sync.aligned.{op.shape.data}.row.col.{cd}.{ab}.{ab}.{cd}"
    if acc != "f16":  # f32 and s32 accumulators are one register per element
        return lo.value(ptx.MmaOp(opcode, a, b, c))
    d = lo.value(ptx.MmaOp(opcode, a, b, pack(lo, c)))
    return unpack(lo, d, op.result.type)


def pack(lo: Lowering, v: SSAValue) -> SSAValue:
    """The fragment ``v`` as 32-bit registers (tf32 for f32 elements)."""
    key = ("packed", v)
    if key not in lo.memo:
        dt, n = dtype(v.type), ptx.lanes(v.type)
        if dt == "f32":
            lo.memo[key] = lo.inst("cvt.rna.tf32.f32", [v], _words(n))
        elif dt == "i8":  # halves (byte 0 of each meaningful) -> bytes 0, 2 of two words
            pairs = lo.value(ptx.RepackOp(v, _words(n // 2)))
            even, odd = (lo.value(ptx.LanesOp(pairs, list(range(s, n // 2, 2))))
                         for s in (0, 1))
            lo.memo[key] = lo.inst("prmt.b32", [even, odd, lo.const(_PRMT_EVEN_BYTES, "i32")],
                                   _words(n // 4))
        else:
            lo.memo[key] = lo.value(ptx.RepackOp(v, _words(n // 2)))
    return lo.memo[key]


def unpack(lo: Lowering, words: SSAValue, rtype: VectorType) -> SSAValue:
    """32-bit registers as the fragment vector ``rtype``."""
    dt = dtype(rtype)
    if dt in ("f32", "i32"):
        return lo.inst("mov.b32", [words], rtype)
    if dt != "i8":
        return lo.value(ptx.RepackOp(words, rtype))
    # an i8 register is 16 bits with its upper byte unspecified: the low half-word is
    # byte 0, and shifted right by 8 it is byte 1
    n = ptx.lanes(rtype)
    halves = lo.value(ptx.RepackOp(words, VectorType(IntegerType(8), [n // 2])))
    high = lo.inst("shr.u16", [halves, lo.const(8, "i32")], halves.type)
    both = lo.value(ptx.ConcatOp([halves, high]))
    order = [i // 2 + (n // 2) * (i % 2) for i in range(n)]
    return lo.value(ptx.LanesOp(both, order, rtype))

