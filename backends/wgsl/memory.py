"""WGSL of global memory access: ``simt.load``/``simt.store`` on the kernel's buffers.

A pointer parameter is a storage ``array<T>`` (``kernel.py`` declares it) indexed by
element. A masked access is an ``if`` per run of ``vec`` lanes that share one mask value;
a masked load starts from ``other`` (or zero) so masked-off lanes read nothing. Buffers
an atomic uses go through ``atomicLoad``/``atomicStore`` (``atomics.py``). An array of 8-
or 16-bit elements (bools are bytes, bfloat16 too, and float16 an atomic adds to) is
packed four or two to a ``u32``: a load extracts its bits sign-extended (a bfloat16's
become the high half of an f32, which is its value; a float16's are unpacked by
``unpack2x16float``); a store clears and sets them with ``atomicAnd``/``atomicOr``, as
the word's other elements may be another thread's, unless every store to the array
writes aligned whole words (its ``vec`` covers them) and no atomic touches it: then they
are plain word stores. A bf16 value stored is already rounded (``core.bf16_rounding``):
its f32's high half is the bf16.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from backends.wgsl import atomics
from backends.wgsl.core import (
    WGSLEmitter,
    half_bits,
    half_of_word,
    handles,
    pack,
    sign_extend,
    ty,
)
from dialects import simt


def _groups(op: simt.LoadOp | simt.StoreOp, c: int, w: int) -> list[list[int]]:
    """Lanes of chunk c in runs that share one mask value (``vec`` of the access)."""
    lanes = range(4 * c, 4 * c + w)
    return [[j for j in lanes if j // op.width == g]
            for g in sorted({j // op.width for j in lanes})]


def _word(index: str, bits: int) -> tuple[str, str]:
    """The u32 word holding element ``index`` of a packed array, and its bit offset."""
    per = 32 // bits
    return f"u32({index}) / {per}u", f"(u32({index}) % {per}u) * {bits}u"


def _bits(value: str, elem: str, bits: int) -> str:
    """``value``'s ``bits`` low bits as a u32 (a bool: 0 or 1; a float, which in a packed
    array is a bfloat16: its f32's high half)."""
    if elem == "bool":
        return f"select(0u, 1u, {value})"
    if elem in ("f32", "f16"):
        return half_bits(value, elem)
    return f"(bitcast<u32>({value}) & {(1 << bits) - 1}u)"


def _read(em: WGSLEmitter, base: SSAValue, index: str, elem: str) -> str:
    buf = em.buffers[base]
    if base in em.packed:
        bits = em.packed[base]
        word, shift = _word(index, bits)
        w = f"{buf}[{word}]"
        w = f"atomicLoad(&{w})" if base in em.written - em.whole_words else w
        if elem in ("f32", "f16"):  # bfloat16, or float16 an atomic adds to
            return half_of_word(w, shift, elem)
        v = sign_extend(f"bitcast<i32>({w})", bits, offset=shift)
        return f"({v} != 0i)" if elem == "bool" else v
    if base in em.atomic:
        return atomics.read(buf, em.atomic[base], elem, index)
    return f"{buf}[{index}]"


def _write(em: WGSLEmitter, base: SSAValue, index: str, value: str, elem: str) -> str:
    buf = em.buffers[base]
    if base in em.packed:  # other threads may write the word's other elements
        bits = em.packed[base]
        word, shift = _word(index, bits)
        return (f"atomicAnd(&{buf}[{word}], ~({(1 << bits) - 1}u << {shift})); "
                f"atomicOr(&{buf}[{word}], {_bits(value, elem, bits)} << {shift});")
    if base in em.atomic:
        return atomics.write(buf, em.atomic[base], elem, index, value)
    return f"{buf}[{index}] = {value};"


@handles(simt.LoadOp)
def load(em: WGSLEmitter, op: simt.LoadOp) -> None:
    index = em.vals[op.index]
    out = em.define(op.result)
    types = [ty(out.elem, w) for w in out.widths]
    if op.mask is None:
        for c, w in enumerate(out.widths):
            lanes = [_read(em, op.base, index.lane(j), out.elem) for j in range(4 * c, 4 * c + w)]
            em.line(f"let {out.names[c]} = {pack(out.elem, lanes)};")
        return
    mask = em.vals[op.mask]
    other = em.vals[op.other] if op.other is not None else None
    for c, w in enumerate(out.widths):
        init = other.chunk(c) if other else f"{types[c]}()"
        em.line(f"var {out.names[c]}: {types[c]} = {init};")  # masked-off lanes: no read
        for group in _groups(op, c, w):
            em.guarded(mask, group[0], [
                out.set_lane(j, _read(em, op.base, index.lane(j), out.elem)) for j in group])


def _word_stores(em: WGSLEmitter, op: simt.StoreOp, group: list[int]) -> list[str]:
    """Plain stores of whole u32 words of a packed array: ``group`` is aligned runs of
    the elements one word holds (the store's ``vec`` is a multiple of them)."""
    index, value = em.vals[op.index], em.vals[op.value]
    bits = em.packed[op.base]
    per = 32 // bits
    lines = []
    for first in range(0, len(group), per):
        lanes = group[first:first + per]
        parts = [_bits(value.lane(j), value.elem, bits) for j in lanes]
        word = " | ".join(p if k == 0 else f"({p} << {k * bits}u)" for k, p in enumerate(parts))
        lines.append(f"{em.buffers[op.base]}[{_word(index.lane(lanes[0]), bits)[0]}] = {word};")
    return lines


@handles(simt.StoreOp)
def store(em: WGSLEmitter, op: simt.StoreOp) -> None:
    index, value = em.vals[op.index], em.vals[op.value]
    mask = em.vals[op.mask] if op.mask is not None else None
    for c, w in enumerate(value.widths):
        for group in _groups(op, c, w):
            if op.base in em.whole_words:
                em.guarded(mask, group[0], _word_stores(em, op, group))
                continue
            em.guarded(mask, group[0], [
                _write(em, op.base, index.lane(j), value.lane(j), value.elem)
                for j in group])
