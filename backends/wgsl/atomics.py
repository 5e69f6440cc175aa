"""WGSL of the SIMT atomics (``simt.atomic_rmw``/``simt.atomic_cas``).

A WGSL buffer used atomically must be declared ``array<atomic<i32>>`` or
``array<atomic<u32>>``, and then every access to it is atomic: plain loads and stores
of that buffer become ``atomicLoad``/``atomicStore``. An f32 buffer is ``atomic<u32>``
holding bit patterns; an i32 buffer is ``atomic<u32>`` when it has an unsigned max/min.
Each (buffer, kind) gets one helper function ``fn(index, operands...) -> old``: a
native atomic where WGSL has one for the buffer's atomic type, else a
compare-exchange loop (f32 add/max/min, signed max/min on ``atomic<u32>``; a float16 or
bfloat16 add on the packed word holding the element, ``memory.py``).
``tile.atomic_cas`` loops too, because ``atomicCompareExchangeWeak`` may fail
spuriously: it retries until it either exchanged or saw other bits.

WGSL's atomics are all relaxed, and its only fences are barriers of workgroup scope. So
an atomic's ``sem`` becomes a ``storageBarrier()`` before it (release, acq_rel) and after
it (acquire, acq_rel): the workgroup's storage accesses are ordered around the atomic, as
at ``cta`` scope, which also covers a scalar atomic done by one invocation for all. WGSL
has nothing stronger: ``gpu`` and ``sys`` scope get the same barriers, and ordering
against other workgroups is up to the implementation (README, "Differences from Triton").
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from backends.wgsl.core import WGSLEmitter, half_bits, half_of_word, handles, ty
from dialects import simt
from dialects.tile import memory_order

AtomicOp = simt.AtomicRMWOp | simt.AtomicCASOp

_NATIVE = {"add": "atomicAdd", "xchg": "atomicExchange", "max": "atomicMax",
           "min": "atomicMin", "umax": "atomicMax", "umin": "atomicMin", "and": "atomicAnd",
           "or": "atomicOr", "xor": "atomicXor"}
# Kinds a native atomic computes, per (value type, buffer atomic type): add, xchg and the
# bitwise kinds work on bits; max/min only where the atomic type compares like the kind.
_NATIVE_KINDS = {("i32", "i32"): {"add", "xchg", "max", "min", "and", "or", "xor"},
                 ("i32", "u32"): {"add", "xchg", "umax", "umin", "and", "or", "xor"},
                 ("f32", "u32"): {"xchg"}}
# sem -> whether a storageBarrier() goes (before, after) the atomic
_FENCES = {"relaxed": (False, False), "acquire": (False, True), "release": (True, False),
           "acq_rel": (True, True)}
# The new value of a compare-exchange loop, from the current value c and operand v.
_COMBINE = {"add": "c + v", "xchg": "v", "max": "max(c, v)", "min": "min(c, v)",
            "umax": "bitcast<i32>(max(bitcast<u32>(c), bitcast<u32>(v)))",
            "umin": "bitcast<i32>(min(bitcast<u32>(c), bitcast<u32>(v)))"}
_FLOAT_MINMAX = {"max": "maximumf", "min": "minimumf"}

_LOOP = """fn {name}(i: i32, v: {T}) -> {T} {{
  var cur = atomicLoad(&{buf}[i]);
  loop {{
    let c = {to_t};
    let r = atomicCompareExchangeWeak(&{buf}[i], cur, {to_a_new});
    if (r.exchanged) {{ break; }}
    cur = r.old_value;
  }}
  return {to_t};
}}"""
# A 16-bit float add: a compare-exchange loop on the u32 word holding the element (its
# half at bit s), the sum rounded to the element type.
_HALF_LOOP = """fn {name}(i: i32, v: {T}) -> {T} {{
  let w = u32(i) / 2u;
  let s = (u32(i) % 2u) * 16u;
  var cur = atomicLoad(&{buf}[w]);
  var old: {T};
  loop {{
    old = {half};
    let c = old;
    let n = {total};
    let word = (cur & ~(0xffffu << s)) | ((({bits}) & 0xffffu) << s);
    let r = atomicCompareExchangeWeak(&{buf}[w], cur, word);
    if (r.exchanged) {{ break; }}
    cur = r.old_value;
  }}
  return old;
}}"""
_CAS = """fn {name}(i: i32, c: {T}, v: {T}) -> {T} {{
  var old: {A};
  loop {{
    let r = atomicCompareExchangeWeak(&{buf}[i], {to_a_c}, {to_a_v});
    old = r.old_value;
    if (r.exchanged || old != {to_a_c}) {{ break; }}
  }}
  return {to_t_old};
}}"""


def buffer_types(fn: FuncOp) -> dict[SSAValue, str]:
    """The atomic type (``i32`` or ``u32``) of every buffer an atomic uses."""
    kinds: dict[SSAValue, set[str]] = {}
    for op in fn.walk():
        if isinstance(op, AtomicOp):
            kinds.setdefault(op.base, set()).add(_kind(op))
    return {base: "u32" if isinstance(base.type.pointee, AnyFloat) or k & {"umax", "umin"}
            else "i32" for base, k in kinds.items()}


def _kind(op: AtomicOp) -> str:
    return op.kind.data if isinstance(op, simt.AtomicRMWOp) else "cas"


def _conv(expr: str, frm: str, to: str) -> str:
    return expr if frm == to else f"bitcast<{to}>({expr})"


def read(buf: str, atomic: str, elem: str, index: str) -> str:
    """An expression loading ``buf[index]`` of an atomic buffer as ``elem``."""
    return _conv(f"atomicLoad(&{buf}[{index}])", atomic, elem)


def write(buf: str, atomic: str, elem: str, index: str, value: str) -> str:
    """A statement storing ``value`` (of type ``elem``) into an atomic buffer."""
    return f"atomicStore(&{buf}[{index}], {_conv(value, elem, atomic)});"


def _helper(em: WGSLEmitter, op: AtomicOp, elem: str) -> str:
    """The name of the (buffer, kind) helper function, defined on first use."""
    buf, atomic, kind = em.buffers[op.base], em.atomic[op.base], _kind(op)
    name = f"atomic_{kind}_{buf}"
    if name in em.helpers:
        return name
    if op.base in em.packed:  # a 16-bit float add (the frontend allows no other)
        total = f"{em.helper('roundbf16', 'f32', 1)}(c + v)" if elem == "f32" else "c + v"
        text = _HALF_LOOP.format(name=name, T=elem, buf=buf, total=total,
                                 half=half_of_word("cur", "s", elem), bits=half_bits("n", elem))
    elif kind == "cas":
        text = _CAS.format(name=name, T=elem, A=atomic, buf=buf,
                           to_a_c=_conv("c", elem, atomic), to_a_v=_conv("v", elem, atomic),
                           to_t_old=_conv("old", atomic, elem))
    elif kind in _NATIVE_KINDS[elem, atomic]:
        call = f"{_NATIVE[kind]}(&{buf}[i], {_conv('v', elem, atomic)})"
        text = f"fn {name}(i: i32, v: {elem}) -> {elem} {{\n  return {_conv(call, atomic, elem)};\n}}"
    else:
        combine = _COMBINE[kind]
        if elem == "f32" and kind in _FLOAT_MINMAX:  # NaN-propagating, like tl.maximum
            combine = f"{em.helper(_FLOAT_MINMAX[kind], 'f32', 1)}(c, v)"
        text = _LOOP.format(name=name, T=elem, buf=buf, to_t=_conv("cur", atomic, elem),
                            to_a_new=_conv(f"({combine})", elem, atomic))
    em.helpers[name] = text
    return name


@handles(simt.AtomicRMWOp, simt.AtomicCASOp)
def emit_atomic(em: WGSLEmitter, op: AtomicOp) -> None:
    """One helper call per lane, guarded by the mask; masked-off lanes keep 0."""
    out = em.define(op.result)
    fn = _helper(em, op, out.elem)
    index = em.vals[op.index]
    operands = [em.vals[v] for v in ((op.cmp, op.val) if _kind(op) == "cas" else (op.val,))]
    mask = em.vals[op.mask] if op.mask is not None else None
    before, after = _FENCES[memory_order(op)[0]]
    if before:
        em.line("storageBarrier();")
    for c, w in enumerate(out.widths):
        t = ty(out.elem, w)
        em.line(f"var {out.names[c]}: {t} = {t}();")
        for j in range(4 * c, 4 * c + w):
            args = ", ".join([index.lane(j)] + [v.lane(j) for v in operands])
            em.guarded(mask, j, [f"{out.lane(j)} = {fn}({args});"])
    if after:
        em.line("storageBarrier();")
