"""Part of simt-to-ptx: global memory (``simt.load``/``store``, ``simt.atomic_rmw``/
``atomic_cas``) -> ``ptx.ld_global``/``st_global``/``atom``/``atom_loop``.

An access's address is ``base + index * sizeof(T)`` per lane; consecutive lanes a load or
store marks ``vec`` move as one access of at most 128 bits. Bools are bytes in memory.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

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


@lowers(simt.LoadOp)
def load(lo: Lowering, op: simt.LoadOp) -> SSAValue:
    dt, rtype = dtype(op.result.type), op.result.type
    addr, mask, vec = _access(lo, op, dt)
    other = None if op.other is None else lo.values[op.other]
    if dt != "i1":
        return lo.value(ptx.LdGlobalOp(addr, rtype, mask, other, vec))
    byte_type = like(rtype, IntegerType(8))
    if other is not None:
        other = lo.select(other, lo.const(1, "i8"), lo.const(0, "i8"))
    raw = lo.value(ptx.LdGlobalOp(addr, byte_type, mask, other, vec))
    return lo.inst("setp.ne.u16", [raw, lo.const(0, "i8")], rtype)


@lowers(simt.StoreOp)
def store(lo: Lowering, op: simt.StoreOp) -> None:
    dt = dtype(op.value.type)
    addr, mask, vec = _access(lo, op, dt)
    value = lo.values[op.value]
    if dt == "i1":
        value = lo.select(value, lo.const(1, "i8"), lo.const(0, "i8"))
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
