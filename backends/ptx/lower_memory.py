"""Part of simt-to-ptx: global memory (``simt.load``/``store``, ``simt.atomic_rmw``/
``atomic_cas``) -> ``ptx.ld_global``/``st_global``/``atom``/``atom_loop``; an atomic's
``sem`` and ``scope`` become its ``atom.<sem>.<scope>.global`` qualifiers.

An access's address is ``base + index * sizeof(T)`` per lane; consecutive lanes a load or
store marks ``vec`` move as one access of at most 128 bits. Bools are bytes in memory.
A PTX vector access has at most 4 elements, so 8 or 16 lanes of 8 or 16 bits move as
32-bit words (``ld.global.v4.b32``): halves are paired by ``mov.b32 %r, {%h0, %h1}`` and
split by ``mov.b32 {%h0, %h1}, %r``; bytes are packed by ``prmt`` and split by ``shr``.
``tl.load``/``tl.store``'s cache options (``tile.CACHE_HINT_ATTRS``) go along to the
``ptx`` access, whose printer emits them.

A base is a global-space address: a pointer argument's value or an address cast to a
pointer (``tile.int_to_ptr``), both converted from the generic addresses the host and
``tile.ptr_to_int`` deal in by ``cvta``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, VectorType, i32
from xdsl.ir import Attribute, Operation, SSAValue

from backends.ptx.lower_core import BYTES, ELEMS, Lowering, dtype, lowers, unsupported
from dialects import ptx, simt, tile
from dialects.tile import CACHE_HINT_ATTRS, like, memory_order

# Atomics: (kind, dtype) -> the atom.global operation and type. f32 max/min have no atom:
# an atom.global.cas loop applies the NaN-propagating max/min instead.
_ATOM = {("add", "i32"): "add.u32", ("add", "f32"): "add.f32", ("max", "i32"): "max.s32",
         ("min", "i32"): "min.s32", ("umax", "i32"): "max.u32", ("umin", "i32"): "min.u32",
         ("and", "i32"): "and.b32", ("or", "i32"): "or.b32", ("xor", "i32"): "xor.b32",
         ("xchg", "i32"): "exch.b32", ("xchg", "f32"): "exch.b32", ("cas", "i32"): "cas.b32",
         ("cas", "f32"): "cas.b32", ("add", "f16"): "add.noftz.f16",
         ("add", "bf16"): "add.noftz.bf16"}
_ATOM_LOOP = {("max", "f32"): "max.NaN.f32", ("min", "f32"): "min.NaN.f32"}
# The op's sem and scope -> atom's qualifiers (PTX ISA "atom": atom{.sem}{.scope}.global...,
# sm_70 and newer): Triton's names are PTX's.
_SEM = {"relaxed": "relaxed", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
_SCOPE = {"cta": "cta", "gpu": "gpu", "sys": "sys"}
_PRMT_EVEN_BYTES = 0x6420  # bytes 0, 2 of a then of b: the low bytes of two halves each
MAX_ELEMENTS = 4  # a PTX vector access moves at most 4 registers
I8 = IntegerType(8)


def global_address(lo: Lowering, base: SSAValue, index: SSAValue, dt: str) -> SSAValue:
    """``base + index * sizeof(dt)`` per lane of ``index``."""
    wide, key = like(index.type, ELEMS["i64"]), ("offset", index, BYTES[dt])
    if key not in lo.memo:
        if dtype(index.type) == "i64":
            off = lo.inst("mul.lo.s64", [index, lo.const(BYTES[dt], "i64")], wide)
        else:
            off = lo.inst("mul.wide.s32", [index, lo.const(BYTES[dt], "i32")], wide)
        lo.memo[key] = off
    return lo.inst("add.s64", [base, lo.memo[key]], wide)


def access_width(op: simt.LoadOp | simt.StoreOp | simt.SharedLoadOp | simt.SharedStoreOp,
                 dt: str) -> int:
    """The lanes one access of ``op`` moves: its ``vec``, at most 128 bits' worth."""
    return min(op.width, 16 // BYTES[dt])


def _access(lo: Lowering, op: simt.LoadOp | simt.StoreOp, dt: str
            ) -> tuple[SSAValue, SSAValue | None, int]:
    """Addresses and guards of the accesses, and their width in lanes."""
    vec = access_width(op, dt)
    addr = global_address(lo, lo.values[op.base], lo.pick(lo.values[op.index], vec), dt)
    mask = None if op.mask is None else lo.pick(lo.values[op.mask], vec)
    return addr, mask, vec


def as_words(t: Attribute, vec: int) -> tuple[VectorType, int]:
    """The 32-bit words holding the lanes of ``t``, and how many of them ``vec`` lanes are."""
    per_word = 4 // BYTES[dtype(t)]
    return VectorType(i32, [ptx.lanes(t) // per_word]), vec // per_word


def pack_words(lo: Lowering, v: SSAValue) -> SSAValue:
    """The 8- or 16-bit lanes of ``v`` as 32-bit words, lane 0 in the low bits of word 0."""
    key = ("words", v)
    if key not in lo.memo and (picked := _picked_words(lo, v)) is not None:
        lo.memo[key] = picked
    if key not in lo.memo:
        n = ptx.lanes(v.type)
        pairs = lo.value(ptx.RepackOp(v, VectorType(i32, [n // 2])))
        if dtype(v.type) == "i8":  # each half holds its byte in the low 8 bits
            even, odd = (lo.value(ptx.LanesOp(pairs, list(range(s, n // 2, 2))))
                         for s in (0, 1))
            pairs = lo.inst("prmt.b32", [even, odd, lo.const(_PRMT_EVEN_BYTES, "i32")],
                            VectorType(i32, [n // 4]))
        lo.memo[key] = pairs
    return lo.memo[key]


def _picked_words(lo: Lowering, v: SSAValue) -> SSAValue | None:
    """The words of ``v`` without repacking where ``v`` picks whole words, each in lane
    order, of lanes whose words are known (B fragments: halves of an ``ldmatrix.x4``)."""
    per_word = 4 // BYTES[dtype(v.type)]
    picked = list(range(ptx.lanes(v.type)))
    while ("words", v) not in lo.memo:
        if not isinstance(v.owner, ptx.LanesOp):
            return None
        indices = v.owner.indices.get_values()
        picked, v = [indices[i] for i in picked], v.owner.source
    runs = [picked[i:i + per_word] for i in range(0, len(picked), per_word)]
    if any(r[0] % per_word or r != list(range(r[0], r[0] + per_word)) for r in runs):
        return None  # (a short last run fails the second test)
    words = lo.memo[("words", v)]
    chosen = [r[0] // per_word for r in runs]
    if chosen == list(range(ptx.lanes(words.type))):
        return words
    return lo.value(ptx.LanesOp(words, chosen))


def unpack_words(lo: Lowering, words: SSAValue, rtype: Attribute) -> SSAValue:
    """32-bit ``words`` split into the 8- or 16-bit lanes of ``rtype`` (``pack_words``
    undone); a later ``pack_words`` of the lanes gives back these words."""
    if dtype(rtype) != "i8":
        value = lo.value(ptx.RepackOp(words, rtype))
    else:
        # an i8 register's upper byte is unspecified: a half-word is its low byte's lane,
        # and shifted right by 8 it is its high byte's
        n = ptx.lanes(rtype)
        halves = lo.value(ptx.RepackOp(words, VectorType(IntegerType(8), [n // 2])))
        high = lo.inst("shr.u16", [halves, lo.const(8, "i32")], halves.type)
        both = lo.value(ptx.ConcatOp([halves, high]))
        order = [i // 2 + (n // 2) * (i % 2) for i in range(n)]
        value = lo.value(ptx.LanesOp(both, order, rtype))
    lo.memo[("words", value)] = words
    return value


def _cache_hints(source: Operation, access: Operation) -> Operation:
    """``access`` with the cache options of the ``simt`` access it lowers."""
    access.attributes.update({k: v for k, v in source.attributes.items()
                              if k in CACHE_HINT_ATTRS})
    return access


def _ld(lo: Lowering, op: simt.LoadOp, addr: SSAValue, rtype: Attribute,
        mask: SSAValue | None, other: SSAValue | None, vec: int) -> SSAValue:
    """``ld.global`` of ``vec`` lanes per address, as words where that is too many lanes."""
    if vec <= MAX_ELEMENTS:
        return lo.value(_cache_hints(op, ptx.LdGlobalOp(addr, rtype, mask, other, vec)))
    other = None if other is None else pack_words(lo, other)
    wtype, wvec = as_words(rtype, vec)
    ld = _cache_hints(op, ptx.LdGlobalOp(addr, wtype, mask, other, wvec))
    return unpack_words(lo, lo.value(ld), rtype)


def bool_of_byte(lo: Lowering, raw: SSAValue, rtype: Attribute, vec: int) -> SSAValue:
    """Bools (``rtype``) from the bytes memory holds them in, loaded ``vec`` per access.
    ``ld.u8`` zero-extends a byte, but one split from a word load keeps the next lane's
    bool in its upper byte: that byte is cleared first."""
    if vec > MAX_ELEMENTS:
        raw = lo.extend_i8(raw, False)
    return lo.inst("setp.ne.u16", [raw, lo.const(0, "i8")], rtype)


def byte_of_bool(lo: Lowering, v: SSAValue) -> SSAValue:
    return lo.select(v, lo.const(1, "i8"), lo.const(0, "i8"))


@lowers(simt.LoadOp)
def load(lo: Lowering, op: simt.LoadOp) -> SSAValue:
    dt, rtype = dtype(op.result.type), op.result.type
    addr, mask, vec = _access(lo, op, dt)
    other = None if op.other is None else lo.values[op.other]
    if dt != "i1":
        return _ld(lo, op, addr, rtype, mask, other, vec)
    other = None if other is None else byte_of_bool(lo, other)
    return bool_of_byte(lo, _ld(lo, op, addr, like(rtype, I8), mask, other, vec), rtype, vec)


@lowers(simt.StoreOp)
def store(lo: Lowering, op: simt.StoreOp) -> None:
    dt = dtype(op.value.type)
    addr, mask, vec = _access(lo, op, dt)
    value = lo.values[op.value]
    if dt == "i1":
        value = byte_of_bool(lo, value)
    if vec > MAX_ELEMENTS:  # as words, like _ld
        value, vec = pack_words(lo, value), as_words(value.type, vec)[1]
    lo.emit(_cache_hints(op, ptx.StGlobalOp(addr, value, mask, vec)))


@lowers(simt.AtomicRMWOp, simt.AtomicCASOp)
def atomic(lo: Lowering, op: simt.AtomicRMWOp | simt.AtomicCASOp) -> SSAValue:
    dt = dtype(op.result.type)
    kind = op.kind.data if isinstance(op, simt.AtomicRMWOp) else "cas"
    addr = global_address(lo, lo.values[op.base], lo.values[op.index], dt)
    pred = None if op.mask is None else lo.values[op.mask]
    val = lo.values[op.val]
    sem, scope = memory_order(op)
    order = f"{_SEM[sem]}.{_SCOPE[scope]}"
    if (kind, dt) in _ATOM_LOOP:
        return lo.value(ptx.AtomLoopOp(_ATOM_LOOP[kind, dt], addr, val, pred, order))
    if (kind, dt) not in _ATOM:
        raise unsupported(op, f"{op.name} {kind} on {dt}")
    args = [lo.values[op.cmp], val] if kind == "cas" else [val]
    return lo.value(ptx.AtomOp(f"atom.{order}.global.{_ATOM[kind, dt]}", addr, args, pred))


@lowers(tile.IntToPtrOp)
def int_to_ptr(lo: Lowering, op: tile.IntToPtrOp) -> SSAValue:
    address = lo.values[op.x]
    return lo.inst("cvta.to.global.u64", [address], address.type)


@lowers(tile.PtrToIntOp)
def ptr_to_int(lo: Lowering, op: tile.PtrToIntOp) -> SSAValue:
    address = lo.values[op.x]
    return lo.inst("cvta.global.u64", [address], address.type)
