"""Part of simt-to-ptx: the warp-level matrix ops (tensor cores) -> the ptx dialect.

- ``simt.ldmatrix`` -> ``ptx.ldmatrix`` (``ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16``)
  at ``base + offset * size``, giving 32-bit registers;
- ``simt.mma`` -> ``ptx.mma`` (``mma.sync.aligned.<shape>.row.col.<D>.<A>.<B>.<C>``);
- ``simt.wgmma`` -> ``ptx.mma`` with a ``wgmma.mma_async.sync.aligned.m64n<N>k16.f32``
  opcode on two shared-memory matrix descriptors (64 bits: start address >> 4 in bits
  0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, the 128-byte
  swizzle in 62-63); ``wgmma_commit``/``wait`` and ``fence_proxy_async`` are one
  instruction each.

SIMT fragments are vectors of elements; the instructions take 32-bit registers holding 2
halves, 4 bytes or one tf32. ``pack`` and ``unpack`` convert: 16- and 8-bit lanes by the
global-memory word packing (``lower_memory.pack_words``/``unpack_words``, which remember
the words, so a fragment that goes straight from ``ldmatrix`` to ``mma`` is never unpacked
and packed again), f32 by ``cvt.rna.tf32.f32``.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, VectorType, i32, i64
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


SWIZZLE_128B = 1 << 62  # the descriptor's layout type


@lowers(simt.WgmmaOp)
def wgmma(lo: Lowering, op: simt.WgmmaOp) -> SSAValue:
    if op.a_index is None:  # A in registers: its fragment as 4 words
        a = pack(lo, lo.values[op.a])
    else:
        assert op.a_sbo is not None
        a = _descriptor(lo, op.a, op.a_index, simt.K_MAJOR_LBO, op.a_sbo.value.data)
    b = _descriptor(lo, op.b, op.b_index, op.b_lbo.value.data, op.b_sbo.value.data)
    elem = dtype(op.a.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
    opcode = f"wgmma.mma_async.sync.aligned.m64n{op.n}k16.f32.{elem}.{elem}"
    c = lo.values[op.c]
    if op.in_place is not None:
        _scale_in_place(c)
    return lo.value(ptx.MmaOp(opcode, a, b, c, op.in_place is not None,
                              op.b_k_major is not None))


def _scale_in_place(c: SSAValue) -> None:
    """Where an in-place wgmma's C is a loop's accumulator scaled (``acc * alpha``, acc
    first), the product is written over the accumulator's registers: the wgmma then
    writes them too, and the loop hands them on without a copy that would wait for it."""
    scale = ptx.register_source(c).owner
    if (isinstance(scale, ptx.InstOp) and isinstance(scale.args[0].owner, ptx.RegOp)
            and scale.args[0].type == scale.result.type):
        scale.into = IntegerAttr(0, i32)


def _descriptor(lo: Lowering, buffer: SSAValue, index: SSAValue, lbo: int, sbo: int
                ) -> SSAValue:
    """The matrix descriptor of the operand at element ``index`` of shared ``buffer``. An
    index ``x + c`` whose constant ``c`` is a whole number of 16-byte units is ``x``'s start
    field plus those units: the k steps of a dot (and the dots of one stage) share the
    address arithmetic of ``x``; a constant index (A kept in shared memory through a loop,
    read at k steps 0, 16, ...) is the buffer's own start plus units, with no address
    arithmetic at all (18 of a loop's 22 start fields in tutorial 06's backward). The field
    cannot carry into the next: shared addresses are below 2**18, so every start field
    (address >> 4) fits its 14 bits. (One 64-bit add to a whole descriptor instead of the
    add to its low word: the same SASS count in the hot loops, ptxas splits it in two.)"""
    size = BYTES[dtype(buffer.type.element_type)]  # pyright: ignore[reportAttributeAccessIssue]
    base, units = _constant_part(index, size)
    start_key, low_key = ("start", buffer, base), ("low", buffer, base, lbo)
    if start_key not in lo.memo:
        addr = lo.values[buffer] if base is None else lo.inst(
            "mad.lo.s32", [lo.values[base], lo.const(size, "i32"), lo.values[buffer]], i32)
        lo.memo[start_key] = lo.inst("bfe.u32", [addr, lo.const(4, "i32"),
                                                 lo.const(14, "i32")], i32)
    if low_key not in lo.memo:  # start address and leading byte offset
        lo.memo[low_key] = lo.inst("or.b32", [lo.memo[start_key],
                                              lo.const((lbo >> 4) << 16, "i32")], i32)
    low = lo.memo[low_key]
    if units:
        low = lo.inst("add.s32", [low, lo.const(units, "i32")], i32)
    high = SWIZZLE_128B | (sbo >> 4) << 32
    return lo.inst("or.b64", [lo.inst("cvt.u64.u32", [low], i64), lo.const(high, "i64")], i64)


def _constant_part(index: SSAValue, size: int) -> tuple[SSAValue | None, int]:
    """``(x, c * size / 16)`` for ``index = x + c`` (SIMT ``arith.addi``s of non-negative
    constants) where ``c * size`` is a multiple of 16 bytes, ``(None, c * size / 16)`` for
    ``index = c`` (a buffer read from its start: A kept in shared memory through a loop),
    else ``(index, 0)``."""
    base: SSAValue | None = index
    offset = 0
    while base is not None:
        add = base.owner
        const = add if isinstance(add, arith.ConstantOp) else \
            add.rhs.owner if isinstance(add, arith.AddiOp) else None
        if not (isinstance(const, arith.ConstantOp) and isinstance(const.value, IntegerAttr)
                and const.value.value.data >= 0):
            break
        base = add.lhs if isinstance(add, arith.AddiOp) else None
        offset += const.value.value.data
    if offset * size % 16:
        return index, 0
    return base, offset * size // 16


_PLAIN = {simt.WgmmaCommitOp: "wgmma.commit_group.sync.aligned",
          simt.FenceProxyAsyncOp: "fence.proxy.async.shared::cta"}


@lowers(*_PLAIN)
def plain(lo: Lowering, op: simt.WgmmaCommitOp | simt.FenceProxyAsyncOp) -> None:
    lo.emit(ptx.PlainOp(_PLAIN[type(op)]))


@lowers(simt.WgmmaWaitOp)
def wgmma_wait(lo: Lowering, op: simt.WgmmaWaitOp) -> None:
    lo.emit(ptx.PlainOp(f"wgmma.wait_group.sync.aligned {op.pending.value.data}"))


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
