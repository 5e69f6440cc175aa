"""int64 on WGSL, which has no 64-bit types: every value held as two u32 words.

A chunk of ``w`` lanes (``core.widths``) of an i64 value is one struct ``i64x<w>`` with
fields ``lo`` and ``hi``, each a ``u32`` for one lane and a ``vec<w><u32>`` for more. So a
chunk is still one WGSL value, spelled by one expression and returned by one function
call, and lane-wise arithmetic is still vector arithmetic on the words; signed readings
bitcast the high word. Anything beyond a plain word operation is a helper function
(``HELPERS64``, defined once per chunk width a kernel uses): an op is one call a chunk, as
a 32-bit op is one expression, and the 64-bit division's loop is written once.
An int64 array is ``array<i64x1>``: eight bytes an element, low word first, as int64 is
laid out on every little-endian host; a scalar argument is two uniform words.

Answers are the NumPy backend's (its module docstring): wrap-around, ``//`` and ``%``
truncating with x / 0 = -1 and x % 0 = x, shifts from 64 on giving 0 or the sign fill,
float conversions saturating with NaN -> 0 and int64 -> float rounded to nearest even.
A pointer offset of int64 is already an i32 index in SIMT IR (``tile-to-simt`` truncates
it, as WGSL indexes buffers with 32-bit integers).
"""

from __future__ import annotations

import re

from xdsl.dialects import arith, math, vector
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr
from xdsl.ir import Operation

from dialects import tile

STRUCTS = "\n".join(f"struct i64x{w} {{ lo: {t}, hi: {t} }}" for w, t in
                    ((1, "u32"), (2, "vec2<u32>"), (3, "vec3<u32>"), (4, "vec4<u32>")))
"""The chunk types, declared once in a kernel that has int64 values."""


def type_name(width: int) -> str:
    return f"i64x{width}"


def _words(v: int) -> tuple[str, str]:
    return f"{v & 0xFFFFFFFF}u", f"{(v >> 32) & 0xFFFFFFFF}u"


def literal(values: list[int]) -> str:
    """A chunk of constant lanes."""
    los, his = zip(*(_words(int(v)) for v in values), strict=True)
    if len(values) == 1:
        return f"i64x1({los[0]}, {his[0]})"
    u = f"vec{len(values)}<u32>"
    if len(set(values)) == 1:
        return f"i64x{len(values)}({u}({los[0]}), {u}({his[0]}))"
    return f"i64x{len(values)}({u}({', '.join(los)}), {u}({', '.join(his)}))"


def splat(scalar: str, width: int) -> str:
    """A chunk of ``width`` copies of an ``i64x1`` (a literal's words taken as they are)."""
    if width == 1:
        return scalar
    u = f"vec{width}<u32>"
    words = re.fullmatch(r"i64x1\((\w+), (\w+)\)", scalar)
    lo, hi = words.groups() if words else (f"{scalar}.lo", f"{scalar}.hi")
    return f"i64x{width}({u}({lo}), {u}({hi}))"


def lane(name: str, width: int, k: int) -> str:
    """Lane ``k`` of a chunk, as an ``i64x1``."""
    return name if width == 1 else f"i64x1({name}.lo[{k}], {name}.hi[{k}])"


def set_lane(name: str, width: int, k: int, value: str) -> str:
    """Statements storing the ``i64x1`` ``value`` in lane ``k`` of the variable ``name``."""
    if width == 1:
        return f"{name} = {value};"
    return f"{name}.lo[{k}] = {value}.lo; {name}.hi[{k}] = {value}.hi;"


def pack(lanes: list[str]) -> str:
    """A chunk of the ``i64x1`` expressions ``lanes``."""
    if len(lanes) == 1:
        return lanes[0]
    u = f"vec{len(lanes)}<u32>"
    return (f"i64x{len(lanes)}({u}({', '.join(f'{x}.lo' for x in lanes)}), "
            f"{u}({', '.join(f'{x}.hi' for x in lanes)}))")


# ---------------------------------------------------------------- templates

# Keys as in core's table: {T} the result's chunk type, {U}/{I}/{F}/{B} the u32/i32/f32/
# bool types of the chunk, {Z} the mask of an 8- or 16-bit operand; other keys name
# helpers, here always of the i64 chunk type.
_WORDWISE = "{T}({a}.lo OP {b}.lo, {a}.hi OP {b}.hi)"
_SELECT = "{T}(select({c}.lo, {b}.lo, {a}), select({c}.hi, {b}.hi, {a}))"
_ON_I64: dict[type[Operation], str] = {
    arith.AddiOp: "{add64}({a}, {b})", arith.SubiOp: "{sub64}({a}, {b})",
    arith.MuliOp: "{mul64}({a}, {b})", tile.UMulHiOp: "{umulhi64}({a}, {b})",
    arith.DivSIOp: "{divsi64}({a}, {b})", arith.RemSIOp: "{remsi64}({a}, {b})",
    arith.DivUIOp: "{divui64}({a}, {b})", arith.RemUIOp: "{remui64}({a}, {b})",
    arith.AndIOp: _WORDWISE.replace("OP", "&"), arith.OrIOp: _WORDWISE.replace("OP", "|"),
    arith.XOrIOp: _WORDWISE.replace("OP", "^"),
    arith.ShLIOp: "{shl64}({a}, {b})", arith.ShRSIOp: "{shrsi64}({a}, {b})",
    arith.ShRUIOp: "{shrui64}({a}, {b})",
    arith.MaxSIOp: "{pick64}({slt64}({a}, {b}), {b}, {a})",
    arith.MinSIOp: "{pick64}({slt64}({a}, {b}), {a}, {b})",
    arith.MaxUIOp: "{pick64}({ult64}({a}, {b}), {b}, {a})",
    arith.MinUIOp: "{pick64}({ult64}({a}, {b}), {a}, {b})",
    arith.SelectOp: _SELECT, tile.SelectOp: _SELECT,
    arith.SIToFPOp: "{T}({i64tof}({a}))", arith.UIToFPOp: "{T}({u64tof}({a}))",
    arith.TruncIOp: "bitcast<{T}>({a}.lo)",
    math.AbsIOp: "{abs64}({a})",
    math.CtPopOp: "{T}(countOneBits({a}.lo) + countOneBits({a}.hi), {U}(0u))",
    math.CountLeadingZerosOp: "{T}(select(countLeadingZeros({a}.hi), {U}(32u) + "
                              "countLeadingZeros({a}.lo), {a}.hi == {U}(0u)), {U}(0u))",
    math.CountTrailingZerosOp: "{T}(select(countTrailingZeros({a}.lo), {U}(32u) + "
                               "countTrailingZeros({a}.hi), {a}.lo == {U}(0u)), {U}(0u))",
    tile.BrevOp: "{T}(reverseBits({a}.hi), reverseBits({a}.lo))",
}
"""Ops whose first operand is i64 (a select's: its values)."""

_SIGN_EXTENDED = "{T}(bitcast<{U}>({a}), bitcast<{U}>({a} >> {U}(31u)))"
_INTO_I64: dict[tuple[type[Operation], str], str] = {
    (arith.ExtSIOp, "int"): _SIGN_EXTENDED, (arith.ExtSIOp, "narrow"): _SIGN_EXTENDED,
    (arith.ExtSIOp, "bool"): "{T}(select({U}(0u), ~{U}(0u), {a}), "
                             "select({U}(0u), ~{U}(0u), {a}))",
    (arith.ExtUIOp, "int"): "{T}(bitcast<{U}>({a}), {U}(0u))",
    (arith.ExtUIOp, "narrow"): "{T}(bitcast<{U}>({a} & {Z}), {U}(0u))",
    (arith.ExtUIOp, "bool"): "{T}({U}({a}), {U}(0u))",
    (arith.FPToSIOp, "float"): "{fptosi64}({F}({a}))",
    (arith.FPToUIOp, "float"): "{fptoui64}({F}({a}))",
}
"""Ops making i64 from another type, by what the operand is (8- and 16-bit integers are
held sign-extended in an i32: ``core.narrow_bits``)."""

CMP: dict[str, str] = {
    "eq": "{eq64}({a}, {b})", "ne": "!{eq64}({a}, {b})",
    **{f"{s}lt": f"{{{s}lt64}}({{a}}, {{b}})" for s in "su"},
    **{f"{s}gt": f"{{{s}lt64}}({{b}}, {{a}})" for s in "su"},
    **{f"{s}le": f"!{{{s}lt64}}({{b}}, {{a}})" for s in "su"},
    **{f"{s}ge": f"!{{{s}lt64}}({{a}}, {{b}})" for s in "su"},
}
"""``tile.cmpi`` of i64 operands, by predicate."""


def _chunk(v: int) -> str:
    """A constant in every lane of the chunk type ``{T}``."""
    lo, hi = _words(v)
    return f"{{T}}({{U}}({lo}), {{U}}({hi}))"


_TRUNCATED = "{shrsi64}({add64}({a}, {shrui64}({shrsi64}({a}, $SIGN), $SPARE)), $K)"
_BY_POWER_OF_TWO: dict[type[Operation], str] = {
    # truncating toward zero: a negative a is biased by 2^k - 1 before the shift
    arith.DivSIOp: _TRUNCATED,
    arith.RemSIOp: "{sub64}({a}, {shl64}(" + _TRUNCATED + ", $K))",
    arith.DivUIOp: "{shrui64}({a}, $K)",
    arith.RemUIOp: "{T}({a}.lo & {U}($LOW), {a}.hi & {U}($HIGH))",
}
_BY_MAGIC: dict[type[Operation], str] = {
    arith.DivSIOp: "{divsic64}({a}, $MAGIC, $SHIFT)",
    arith.RemSIOp: "{remsic64}({a}, $D, $MAGIC, $SHIFT)",
    arith.DivUIOp: "{udivc64}({a}, $MAGIC, $SHIFT)",
    arith.RemUIOp: "{sub64}({a}, {mul64}({udivc64}({a}, $MAGIC, $SHIFT), $D))",
}
"""i64 ``//`` and ``%`` by a constant: by 2^k as shifts and masks, by any other d > 2 as a
multiply-high by a magic number (``udivc64``); ``$NAME`` is a constant of the divisor.
The division helper's loop, inlined at each of a thread's divisions, made lavapipe take
minutes to compile a kernel dividing a 256-lane tile a thread (``row = offs // D`` with
``D`` a constexpr)."""


def _divisor(op: Operation) -> int | None:
    """The constant every lane of ``op`` divides by, as an unsigned 64-bit number."""
    const = op.operands[1].owner
    if isinstance(const, vector.BroadcastOp):
        const = const.source.owner
    if not isinstance(const, arith.ConstantOp):
        return None
    value = const.value
    values = (value.get_values() if isinstance(value, DenseIntOrFPElementsAttr)
              else [value.value.data] if isinstance(value, IntegerAttr) else [])
    return int(values[0]) % (1 << 64) if len(set(values)) == 1 else None


def _by_constant(op: Operation) -> str | None:
    """The template of a division by a constant, or None (not one, or not handled)."""
    kind = next((c for c in type(op).__mro__ if c in _BY_MAGIC), None)
    d = _divisor(op) if kind is not None else None
    signed = kind in (arith.DivSIOp, arith.RemSIOp)
    if kind is None or d is None or d < 2 or (signed and d >= 1 << 63):
        return None
    if d & (d - 1) == 0:
        k = d.bit_length() - 1
        text, values = _BY_POWER_OF_TWO[kind], {
            "SIGN": _chunk(63), "SPARE": _chunk(64 - k), "K": _chunk(k),
            "LOW": f"{(d - 1) & 0xFFFFFFFF}u", "HIGH": f"{(d - 1) >> 32}u"}
    else:
        shift = d.bit_length()  # ceil(log2 d): n // d = (t + (n - t) / 2) >> (shift - 1)
        magic = (1 << (64 + shift)) // d - (1 << 64) + 1
        text, values = _BY_MAGIC[kind], {"MAGIC": _chunk(magic), "SHIFT": _chunk(shift - 1),
                                         "D": _chunk(d)}
    return re.sub(r"\$(\w+)", lambda m: values[m[1]], text)


def template(op: Operation, src: str, dst: str, narrow_src: bool) -> str | None:
    """The template of an op with an i64 operand or result (None: not supported): ``src``
    and ``dst`` are the WGSL element types of its first operand and result."""
    classes = type(op).__mro__  # subclasses (dialects/arith_shaped.py) use the base's entry
    if src == "i64" or isinstance(op, arith.SelectOp | tile.SelectOp):
        if isinstance(op, arith.TruncIOp) and dst == "bool":
            return "({a}.lo & {U}(1u)) != {U}(0u)"
        return _by_constant(op) or next((_ON_I64[c] for c in classes if c in _ON_I64), None)
    kind = ("bool" if src == "bool" else "float" if src in ("f32", "f16") else
            "narrow" if narrow_src else "int")
    return next((_INTO_I64[c, kind] for c in classes if (c, kind) in _INTO_I64), None)


# ---------------------------------------------------------------- helper functions

# Keys as in helpers.py, of the i64 chunk type: {T} i64x<w>, {U}/{I}/{F}/{B} the u32/
# i32/f32/bool types of its lanes; any other key names another helper.
_ARITHMETIC = {
    "add64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let lo = a.lo + b.lo;
  return {T}(lo, a.hi + b.hi + {U}(lo < a.lo));
}}""",
    "sub64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return {T}(a.lo - b.lo, a.hi - b.hi - {U}(a.lo < b.lo));
}}""",
    "neg64": """fn {name}(a: {T}) -> {T} {{
  return {T}({U}(0u) - a.lo, ~a.hi + {U}(a.lo == {U}(0u)));
}}""",
    "abs64": """fn {name}(a: {T}) -> {T} {{
  return {pick64}(bitcast<{I}>(a.hi) < {I}(0), {neg64}(a), a);
}}""",
    # the whole 64-bit product of two words from 16-bit halves: each partial product
    # fits in a u32, and so does the sum of the middle column
    "mulwide": """fn {name}(x: {U}, y: {U}) -> {T} {{
  let m = {U}(0xffffu);
  let s = {U}(16u);
  let lh = (x & m) * (y >> s);
  let hl = (x >> s) * (y & m);
  let mid = (((x & m) * (y & m)) >> s) + (lh & m) + (hl & m);
  return {T}(x * y, (x >> s) * (y >> s) + (lh >> s) + (hl >> s) + (mid >> s));
}}""",
    "mul64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let p = {mulwide}(a.lo, b.lo);
  return {T}(p.lo, p.hi + a.lo * b.hi + a.hi * b.lo);
}}""",
    # the high half of the 128-bit product, from the four word products
    "umulhi64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let z = {U}(0u);
  let p01 = {mulwide}(a.lo, b.hi);
  let p10 = {mulwide}(a.hi, b.lo);
  let mid = {add64}({add64}({T}({mulwide}(a.lo, b.lo).hi, z), {T}(p01.lo, z)), {T}(p10.lo, z));
  let hi = {add64}({add64}({mulwide}(a.hi, b.hi), {T}(p01.hi, z)), {T}(p10.hi, z));
  return {add64}(hi, {T}(mid.hi, z));
}}""",
    "pick64": """fn {name}(c: {B}, t: {T}, f: {T}) -> {T} {{
  return {T}(select(f.lo, t.lo, c), select(f.hi, t.hi, c));
}}""",
    "eq64": """fn {name}(a: {T}, b: {T}) -> {B} {{
  return (a.lo == b.lo) & (a.hi == b.hi);
}}""",
    "ult64": """fn {name}(a: {T}, b: {T}) -> {B} {{
  return select(a.hi < b.hi, a.lo < b.lo, a.hi == b.hi);
}}""",
    "slt64": """fn {name}(a: {T}, b: {T}) -> {B} {{
  return select(bitcast<{I}>(a.hi) < bitcast<{I}>(b.hi), a.lo < b.lo, a.hi == b.hi);
}}""",
}

# Shift amounts are read as unsigned; from 64 on the result is 0 or the sign fill. Within
# a word, s = amount % 32; the bits crossing words shift in two steps, as a shift by 32
# is not defined.
_SHIFTS = {
    "shl64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = b.lo & {U}(31u);
  let far = b.lo >= {U}(32u);
  let lo = a.lo << s;
  let hi = select((a.hi << s) | ((a.lo >> {U}(1u)) >> ({U}(31u) - s)), lo, far);
  let out = (b.hi != {U}(0u)) | (b.lo >= {U}(64u));
  return {T}(select(lo, {U}(0u), far | out), select(hi, {U}(0u), out));
}}""",
    "shrui64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = b.lo & {U}(31u);
  let far = b.lo >= {U}(32u);
  let hi = a.hi >> s;
  let lo = select((a.lo >> s) | ((a.hi << {U}(1u)) << ({U}(31u) - s)), hi, far);
  let out = (b.hi != {U}(0u)) | (b.lo >= {U}(64u));
  return {T}(select(lo, {U}(0u), out), select(hi, {U}(0u), far | out));
}}""",
    "shrsi64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = b.lo & {U}(31u);
  let far = b.lo >= {U}(32u);
  let fill = bitcast<{U}>(bitcast<{I}>(a.hi) >> {U}(31u));
  let hi = bitcast<{U}>(bitcast<{I}>(a.hi) >> s);
  let lo = select((a.lo >> s) | ((a.hi << {U}(1u)) << ({U}(31u) - s)), hi, far);
  let out = (b.hi != {U}(0u)) | (b.lo >= {U}(64u));
  return {T}(select(lo, fill, out), select(hi, fill, far | out));
}}""",
}

_DIVISION = {
    # a / b and a % b unsigned, b != 0: WGSL's own division where every lane fits in a
    # word, else restoring long division a bit a step (the remainder, at most the bits of
    # a shifted in so far, fits in 64 bits)
    "udivmod64": """fn {name}(a: {T}, b: {T}) -> array<{T}, 2> {{
  if (all((a.hi | b.hi) == {U}(0u))) {{
    return array<{T}, 2>({T}(a.lo / b.lo, {U}(0u)), {T}(a.lo % b.lo, {U}(0u)));
  }}
  var q = a;
  var r = {T}();
  for (var i = 0u; i < 64u; i++) {{
    r = {T}((r.lo << {U}(1u)) | (q.hi >> {U}(31u)), (r.hi << {U}(1u)) | (r.lo >> {U}(31u)));
    q = {T}(q.lo << {U}(1u), (q.hi << {U}(1u)) | (q.lo >> {U}(31u)));
    let ge = !{ult64}(r, b);
    r = {pick64}(ge, {sub64}(r, b), r);
    q.lo = q.lo | {U}(ge);
  }}
  return array<{T}, 2>(q, r);
}}""",
    # n // d for a constant d > 2 not a power of two (Granlund and Montgomery's
    # round-up method: m = 2^(64 + l) / d - 2^64 + 1 and s = l - 1, l = ceil(log2 d),
    # exact for every unsigned 64-bit n); signed: on |a|, the sign put back
    "udivc64": """fn {name}(n: {T}, m: {T}, s: {T}) -> {T} {{
  let t = {umulhi64}(n, m);
  return {shrui64}({add64}(t, {shrui64}({sub64}(n, t), {T}({U}(1u), {U}(0u)))), s);
}}""",
    "divsic64": """fn {name}(a: {T}, m: {T}, s: {T}) -> {T} {{
  let q = {udivc64}({abs64}(a), m, s);
  return {pick64}(bitcast<{I}>(a.hi) < {I}(0), {neg64}(q), q);
}}""",
    "remsic64": """fn {name}(a: {T}, d: {T}, m: {T}, s: {T}) -> {T} {{
  let n = {abs64}(a);
  let r = {sub64}(n, {mul64}({udivc64}(n, m, s), d));
  return {pick64}(bitcast<{I}>(a.hi) < {I}(0), {neg64}(r), r);
}}""",
    "divsi64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zero = {eq64}(b, {T}());
  let qr = {udivmod64}({abs64}(a), {pick64}(zero, {T}({U}(1u), {U}(0u)), {abs64}(b)));
  let neg = (bitcast<{I}>(a.hi) < {I}(0)) != (bitcast<{I}>(b.hi) < {I}(0));
  return {pick64}(zero, {T}(~{U}(0u), ~{U}(0u)), {pick64}(neg, {neg64}(qr[0]), qr[0]));
}}""",
    "remsi64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zero = {eq64}(b, {T}());
  let qr = {udivmod64}({abs64}(a), {pick64}(zero, {T}({U}(1u), {U}(0u)), {abs64}(b)));
  let r = {pick64}(bitcast<{I}>(a.hi) < {I}(0), {neg64}(qr[1]), qr[1]);
  return {pick64}(zero, a, r);
}}""",
    "divui64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zero = {eq64}(b, {T}());
  let qr = {udivmod64}(a, {pick64}(zero, {T}({U}(1u), {U}(0u)), b));
  return {pick64}(zero, {T}(~{U}(0u), ~{U}(0u)), qr[0]);
}}""",
    "remui64": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zero = {eq64}(b, {T}());
  let qr = {udivmod64}(a, {pick64}(zero, {T}({U}(1u), {U}(0u)), b));
  return {pick64}(zero, a, qr[1]);
}}""",
}

_FLOATS = {
    # rounded to nearest even, as NumPy converts: the magnitude shifted until its top bit
    # is bit 63, its top 24 bits rounded on the rest (a sticky bit for the low word),
    # then scaled by a power of two (exact)
    "u64tof": """fn {name}(a: {T}) -> {F} {{
  let n = select(countLeadingZeros(a.hi), {U}(32u) + countLeadingZeros(a.lo), a.hi == {U}(0u));
  let x = {shl64}(a, {T}(n, {U}(0u)));
  let m = x.hi >> {U}(8u);
  let rest = (x.hi & {U}(0xffu)) | {U}(x.lo != {U}(0u));
  let up = (rest > {U}(0x80u)) | ((rest == {U}(0x80u)) & ((m & {U}(1u)) == {U}(1u)));
  return ldexp({F}(m + {U}(up)), {I}(40) - bitcast<{I}>(n));
}}""",
    "i64tof": """fn {name}(a: {T}) -> {F} {{
  let f = {u64tof}({abs64}(a));
  return select(f, -f, bitcast<{I}>(a.hi) < {I}(0));
}}""",
    # saturating, NaN -> 0: the words of the magnitude from the float (exact: a float of
    # 2^32 or more is a multiple of 2^9), then the sign; NaN tested on the bits
    "fptosi64": """fn {name}(v: {F}) -> {T} {{
  let x = trunc(v);
  let m = min(abs(x), {F}(0x1p63f));
  let hi = {U}(m * {F}(0x1p-32f));
  let r = {T}({U}(m - {F}(hi) * {F}(0x1p32f)), hi);
  let nan = (bitcast<{U}>(v) & {U}(0x7fffffffu)) > {U}(0x7f800000u);
  let top = {T}(~{U}(0u), {U}(0x7fffffffu));
  return {pick64}(nan, {T}(), {pick64}(x >= {F}(0x1p63f), top,
                                       {pick64}(x < {F}(0.0), {neg64}(r), r)));
}}""",
    "fptoui64": """fn {name}(v: {F}) -> {T} {{
  let m = clamp(trunc(v), {F}(0.0), {F}(0x1.fffffep63f));
  let hi = {U}(m * {F}(0x1p-32f));
  let r = {T}({U}(m - {F}(hi) * {F}(0x1p32f)), hi);
  let nan = (bitcast<{U}>(v) & {U}(0x7fffffffu)) > {U}(0x7f800000u);
  return {pick64}(nan, {T}(), {pick64}(v >= {F}(0x1p64f), {T}(~{U}(0u), ~{U}(0u)), r));
}}""",
}

HELPERS64 = _ARITHMETIC | _SHIFTS | _DIVISION | _FLOATS
"""Helper functions of i64 chunks, by kind (``core.WGSLEmitter.helper``)."""
