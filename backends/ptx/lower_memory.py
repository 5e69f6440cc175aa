"""Part of simt-to-ptx: global memory (``simt.load``/``store``, ``simt.atomic_rmw``/
``atomic_cas``) -> ``ptx.ld_global``/``st_global``/``atom``/``atom_loop``.

An access's address is ``base + index * sizeof(T)`` per lane; consecutive lanes a load or
store marks ``vec`` move as one access of at most 128 bits. Bools are bytes in memory.
A PTX vector access has at most 4 elements, so 8 or 16 lanes of 8 or 16 bits move as
32-bit words (``ld.global.v4.b32``): halves are paired by ``mov.b32 %r, {%h0, %h1}`` and
split by ``mov.b32 {%h0, %h1}, %r``; bytes are packed by ``prmt`` and split by ``shr``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, VectorType, i32
from xdsl.ir import Attribute, SSAValue

from backends.ptx.lower_core import BYTES, ELEMS, Lowering, dtype, lowers, unsupported
from dialects import ptx, simt
from dialects.tile import like

# Atomics: (kind, dtype) -> the atom.global operation and type. f32 max/min have no atom:
# an atom.global.cas loop applies the NaN-propagating max/min instead.
_ATOM = {("add", "i32"): "add.u32", ("add", "f32"): "add.f32", ("max", "i32"): "max.s32",
         ("min", "i32"): "min.s32", ("umax", "i32"): "max.u32", ("umin", "i32"): "min.u32",
         ("xchg", "i32"): "exch.b32", ("xchg", "f32"): "exch.b32", ("cas", "i32"): "cas.b32",
         ("cas", "f32"): "cas.b32"}
_ATOM_LOOP = {("max", "f32"): "max.NaN.f32", ("min", "f32"): "min.NaN.f32"}
_PRMT_EVEN_BYTES = 0x6420  # bytes 0, 2 of a then of b: the low bytes of two halves each
_MAX_ELEMENTS = 4  # a PTX vector access moves at most 4 registers


def _address(lo: Lowering, base: SSAValue, index: SSAValue, dt: str) -> SSAValue:
    """``base + index * sizeof(dt)`` per lane of ``index``."""
    wide, key = like(index.type, ELEMS["i64"]), ("offset", index, BYTES[dt])
    if key not in lo.memo:
        if dtype(index.type) == "i64":
            off = lo.inst("mul.lo.s64", [index, lo.const(BYTES[dt], "i64")], wide)
        else:
            off = lo.inst("mul.wide.s32", [index, lo.const(BYTES[dt], "i32")], wide)
        lo.memo[key] = off
    return lo.inst("add.s64", [base, lo.memo[key]], wide)


def _access(lo: Lowering, op: simt.LoadOp | simt.StoreOp, dt: str
            ) -> tuple[SSAValue, SSAValue | None, int]:
    """Addresses and guards of the accesses, and their width in lanes."""
    vec = min(op.width, 16 // BYTES[dt])  # PTX accesses are at most 128 bits wide
    addr = _address(lo, lo.values[op.base], lo.pick(lo.values[op.index], vec), dt)
    mask = None if op.mask is None else lo.pick(lo.values[op.mask], vec)
    return addr, mask, vec


def _words(n: int) -> VectorType:
    return VectorType(i32, [n])


def _pack(lo: Lowering, v: SSAValue) -> SSAValue:
    """The 8- or 16-bit lanes of ``v`` as 32-bit words, lane 0 in the low bits of word 0."""
    key = ("words", v)
    if key not in lo.memo:
        n = ptx.lanes(v.type)
        pairs = lo.value(ptx.RepackOp(v, _words(n // 2)))
        if dtype(v.type) == "i8":  # each half holds its byte in the low 8 bits
            even, odd = (lo.value(ptx.LanesOp(pairs, list(range(s, n // 2, 2))))
                         for s in (0, 1))
            pairs = lo.inst("prmt.b32", [even, odd, lo.const(_PRMT_EVEN_BYTES, "i32")],
                            _words(n // 4))
        lo.memo[key] = pairs
    return lo.memo[key]


def _unpack(lo: Lowering, words: SSAValue, rtype: Attribute) -> SSAValue:
    """32-bit ``words`` split into the 8- or 16-bit lanes of ``rtype`` (``_pack`` undone)."""
    if dtype(rtype) != "i8":
        return lo.value(ptx.RepackOp(words, rtype))
    # an i8 register's upper byte is unspecified: a half-word is its low byte's lane, and
    # shifted right by 8 it is its high byte's
    n = ptx.lanes(rtype)
    halves = lo.value(ptx.RepackOp(words, VectorType(IntegerType(8), [n // 2])))
    high = lo.inst("shr.u16", [halves, lo.const(8, "i32")], halves.type)
    both = lo.value(ptx.ConcatOp([halves, high]))
    return lo.value(ptx.LanesOp(both, [i // 2 + (n // 2) * (i % 2) for i in range(n)], rtype))


def _ld(lo: Lowering, addr: SSAValue, rtype: Attribute, mask: SSAValue | None,
        other: SSAValue | None, vec: int) -> SSAValue:
    """``ld.global`` of ``vec`` lanes per address, as words where that is too many lanes."""
    if vec <= _MAX_ELEMENTS:
        return lo.value(ptx.LdGlobalOp(addr, rtype, mask, other, vec))
    per_word = 4 // BYTES[dtype(rtype)]
    other = None if other is None else _pack(lo, other)
    words = lo.value(ptx.LdGlobalOp(addr, _words(ptx.lanes(rtype) // per_word), mask, other,
                                    vec // per_word))
    value = _unpack(lo, words, rtype)
    lo.memo[("words", value)] = words  # a store of what was loaded reuses the words
    return value


@lowers(simt.LoadOp)
def load(lo: Lowering, op: simt.LoadOp) -> SSAValue:
    dt, rtype = dtype(op.result.type), op.result.type
    addr, mask, vec = _access(lo, op, dt)
    other = None if op.other is None else lo.values[op.other]
    if dt != "i1":
        return _ld(lo, addr, rtype, mask, other, vec)
    byte_type = like(rtype, IntegerType(8))
    if other is not None:
        other = lo.select(other, lo.const(1, "i8"), lo.const(0, "i8"))
    raw = _ld(lo, addr, byte_type, mask, other, vec)
    return lo.inst("setp.ne.u16", [raw, lo.const(0, "i8")], rtype)


@lowers(simt.StoreOp)
def store(lo: Lowering, op: simt.StoreOp) -> None:
    dt = dtype(op.value.type)
    addr, mask, vec = _access(lo, op, dt)
    value = lo.values[op.value]
    if dt == "i1":
        value = lo.select(value, lo.const(1, "i8"), lo.const(0, "i8"))
    if vec > _MAX_ELEMENTS:  # as words, like _ld
        value, vec = _pack(lo, value), vec * BYTES[dt] // 4
    lo.emit(ptx.StGlobalOp(addr, value, mask, vec))


@lowers(simt.AtomicRMWOp, simt.AtomicCASOp)
def atomic(lo: Lowering, op: simt.AtomicRMWOp | simt.AtomicCASOp) -> SSAValue:
    dt = dtype(op.result.type)
    kind = op.kind.data if isinstance(op, simt.AtomicRMWOp) else "cas"
    addr = _address(lo, lo.values[op.base], lo.values[op.index], dt)
    pred = None if op.mask is None else lo.values[op.mask]
    val = lo.values[op.val]
    if (kind, dt) in _ATOM_LOOP:
        return lo.value(ptx.AtomLoopOp(_ATOM_LOOP[kind, dt], addr, val, pred))
    if (kind, dt) not in _ATOM:
        raise unsupported(op, f"{op.name} {kind} on {dt}")
    args = [lo.values[op.cmp], val] if kind == "cas" else [val]
    return lo.value(ptx.AtomOp(f"atom.global.{_ATOM[kind, dt]}", addr, args, pred))
