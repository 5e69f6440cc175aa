"""Part of simt-to-ptx: ``tile.inline_asm`` (``tl.inline_asm_elementwise``) -> the user's
text as ``ptx.user_asm``.

With ``pack = 1`` the text runs lane by lane on the operands' and results' registers as
they are. Otherwise once for each group of ``pack`` consecutive lanes (a thread's
elements; the text is elementwise, so which elements share a group does not matter): an
element of 32 bits or more passes in a register of its own, smaller ones packed into
32-bit words (two 16-bit lanes by ``mov.b32``, four bytes by ``bfi``) and the results'
words unpacked after (``mov.b32``, or ``bfe`` and the low half).
"""

from __future__ import annotations

from xdsl.dialects.builtin import VectorType, i32
from xdsl.ir import Attribute, SSAValue

from backends.ptx.lower_core import Lowering, dtype, lowers, unsupported
from dialects import ptx, tile
from dialects.tile import element_type


@lowers(tile.InlineAsmOp)
def inline_asm(lo: Lowering, op: tile.InlineAsmOp) -> None:
    args, pack, pure = lo.args(op), op.pack.value.data, op.pure is not None
    if pack == 1:
        asm = ptx.UserAsmOp(op.asm.data, args, [r.type for r in op.outs], pure)
        lo.emit(asm)
        lo.values.update(zip(op.outs, asm.outs, strict=True))
        return
    k = ptx.lanes(op.outs[0].type)
    if k % pack:
        raise unsupported(op, f"pack={pack} where a thread holds {k} elements")
    groups: list[list[SSAValue]] = []
    for g in range(k // pack):
        lanes = list(range(g * pack, (g + 1) * pack))
        regs = [w for a in args for w in _words(lo, _pick(lo, a, lanes))]
        shapes = [_word_types(element_type(r.type), pack) for r in op.outs]
        asm = ptx.UserAsmOp(op.asm.data, regs, [t for ts in shapes for t in ts], pure)
        lo.emit(asm)
        outs, groups_of = list(asm.outs), []
        for r, types in zip(op.outs, shapes, strict=True):
            words, outs = outs[:len(types)], outs[len(types):]
            groups_of.append(_unpacked(lo, words, element_type(r.type), pack))
        groups.append(groups_of)
    for i, r in enumerate(op.outs):
        parts = [g[i] for g in groups]
        lo.values[r] = parts[0] if len(parts) == 1 else lo.value(ptx.ConcatOp(parts))


def _pick(lo: Lowering, v: SSAValue, lanes: list[int]) -> SSAValue:
    """``v``'s ``lanes`` (a scalar repeated) as one vector."""
    if ptx.lanes(v.type) == 1:
        return lo.value(ptx.ConcatOp([v] * len(lanes)))
    return lo.value(ptx.LanesOp(v, lanes))


def _word_types(elem: Attribute, pack: int) -> list[Attribute]:
    bits = elem.bitwidth  # pyright: ignore[reportAttributeAccessIssue]
    count, size = tile.asm_registers(bits, pack)
    return [elem if size == bits else i32] * count


def _words(lo: Lowering, v: SSAValue) -> list[SSAValue]:
    """The registers the text reads for the lanes of ``v``."""
    n, bits = ptx.lanes(v.type), element_type(v.type).bitwidth  # pyright: ignore
    if bits == 16:
        words = lo.value(ptx.RepackOp(v, VectorType(i32, [n // 2]) if n > 2 else i32))
        return _each(lo, words)
    if bits == 8:
        wide = [lo.cvt(b, "cvt.u32.u8", "i32") for b in _each(lo, v)]
        out = []
        for w in range(n // 4):
            word = wide[4 * w]
            for j in range(1, 4):
                word = lo.inst("bfi.b32", [wide[4 * w + j], word, lo.const(8 * j, "i32"),
                                           lo.const(8, "i32")], i32)
            out.append(word)
        return out
    return _each(lo, v)


def _unpacked(lo: Lowering, words: list[SSAValue], elem: Attribute, pack: int) -> SSAValue:
    """``pack`` lanes of ``elem`` from the registers the text wrote."""
    bits = elem.bitwidth  # pyright: ignore[reportAttributeAccessIssue]
    if bits >= 32:
        return words[0] if pack == 1 else lo.value(ptx.ConcatOp(words))
    joined = words[0] if len(words) == 1 else lo.value(ptx.ConcatOp(words))
    if bits == 16:
        return lo.value(ptx.RepackOp(joined, VectorType(elem, [pack])))
    lanes = [lo.low_half(lo.inst("bfe.u32", [w, lo.const(8 * j, "i32"), lo.const(8, "i32")],
                                 i32), dtype(elem))
             for w in words for j in range(4)]
    return lo.value(ptx.ConcatOp(lanes))


def _each(lo: Lowering, v: SSAValue) -> list[SSAValue]:
    n = ptx.lanes(v.type)
    return [v] if n == 1 else [lo.value(ptx.LanesOp(v, [i])) for i in range(n)]
