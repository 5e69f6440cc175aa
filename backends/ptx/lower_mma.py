"""Part of simt-to-ptx: the warp-level matrix ops (tensor cores) -> the ptx dialect.

- ``simt.ldmatrix`` -> ``ptx.ldmatrix`` (``ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16``)
  at ``base + offset * size``, giving 32-bit registers;
- ``simt.mma`` -> ``ptx.mma`` (``mma.sync.aligned.<shape>.row.col.<D>.<A>.<B>.<C>``).

SIMT fragments are vectors of elements; the instructions take 32-bit registers holding 2
halves, 4 bytes or one tf32. ``pack`` and ``unpack`` convert: 16- and 8-bit lanes by the
global-memory word packing (``lower_memory.pack_words``/``unpack_words``, which remember
the words, so a fragment that goes straight from ``ldmatrix`` to ``mma`` is never unpacked
and packed again), f32 by ``cvt.rna.tf32.f32``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import VectorType, i32
from xdsl.ir import SSAValue

from backends.ptx.lower_core import BYTES, Lowering, dtype, lowers
from backends.ptx.lower_memory import pack_words, unpack_words
from dialects import ptx, simt

# element dtype -> the type name mma.sync gives it (f32 operands are tf32)
_OPERAND_TYPES = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "i8": "s8"}
_ACCUMULATOR_TYPES = {"f32": "f32", "f16": "f16", "i32": "s32"}


def _words(n: int) -> VectorType:
    return VectorType(i32, [n])


@lowers(simt.LdMatrixOp)
def ldmatrix(lo: Lowering, op: simt.LdMatrixOp) -> SSAValue:
    size = BYTES[dtype(op.result.type)]
    addr = lo.inst("mad.lo.s32", [lo.values[op.offset], lo.const(size, "i32"),
                                  lo.values[op.buffer]], i32)
    trans = ".trans" if op.trans is not None else ""
    opcode = f"ldmatrix.sync.aligned.m8n8.x{op.count}{trans}.shared.b16"
    return unpack(lo, lo.value(ptx.LdMatrixOp(opcode, addr, op.count)), op.result.type)


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
    if dtype(v.type) != "f32":
        return pack_words(lo, v)
    key = ("tf32", v)
    if key not in lo.memo:
        lo.memo[key] = lo.inst("cvt.rna.tf32.f32", [v], _words(ptx.lanes(v.type)))
    return lo.memo[key]


def unpack(lo: Lowering, words: SSAValue, rtype: VectorType) -> SSAValue:
    """32-bit registers as the fragment vector ``rtype`` (16- and 8-bit lanes remember
    their words, so a fragment going straight on to ``mma`` is not packed again)."""
    if dtype(rtype) in ("f32", "i32"):
        return lo.inst("mov.b32", [words], rtype)
    return unpack_words(lo, words, rtype)
