"""WGSL helper functions that give the NumPy backend's answers where WGSL's own differ.

``HELPERS`` maps a helper kind to its text, a ``str.format`` template (``{name}`` and the
type keys of ``core.Subst``; any other key names a helper it calls). The emitter defines
one function per (kind, type) a kernel uses (``WGSLEmitter.helper``).
"""

HELPERS = {
    # WGSL gives x / 0 = x and x % 0 = 0; the NumPy backend (like PTX) -1 and x
    "divsi": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return select(a / b, {T}(-1), b == {T}(0));
}}""",
    # a - b * (a / b) rather than WGSL's %: NVIDIA's Vulkan driver returned wrong signed
    # remainders for negative operands (seen on an H200, driver 580)
    "remsi": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let q = select(a / b, {T}(0), b == {T}(0));
  return a - b * q;
}}""",
    "divui": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return select(bitcast<{T}>(bitcast<{U}>(a) / bitcast<{U}>(b)), {T}(-1), b == {T}(0));
}}""",
    "remui": """fn {name}(a: {T}, b: {T}) -> {T} {{
  return select(bitcast<{T}>(bitcast<{U}>(a) % bitcast<{U}>(b)), a, b == {T}(0));
}}""",
    # WGSL takes a shift amount modulo 32; from 32 on the NumPy backend (like PTX) gives 0
    "shli": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = bitcast<{U}>(b);
  return select(a << s, {T}(0), s >= {U}(32u));
}}""",
    "shrui": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let s = bitcast<{U}>(b);
  return select(bitcast<{T}>(bitcast<{U}>(a) >> s), {T}(0), s >= {U}(32u));
}}""",
    # WGSL has no 64-bit integers: the high word of a 32x32 product from 16-bit halves;
    # each partial product fits in u32, and so does the sum of the middle column
    "umulhi": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let x = bitcast<{U}>(a);
  let y = bitcast<{U}>(b);
  let m = {U}(0xffffu);
  let s = {U}(16u);
  let lh = (x & m) * (y >> s);
  let hl = (x >> s) * (y & m);
  let mid = (((x & m) * (y & m)) >> s) + (lh & m) + (hl & m);
  return bitcast<{T}>((x >> s) * (y >> s) + (lh >> s) + (hl >> s) + (mid >> s));
}}""",
    "isnan": """fn {name}(x: {T}) -> {B} {{
  return (bitcast<{U}>({F}(x)) & {U}(0x7fffffffu)) > {U}(0x7f800000u);
}}""",
    # WGSL's max/min may return either operand on NaN or on -0.0 vs +0.0; maximumf
    # propagates NaN (a + b) and orders -0.0 below +0.0, decided on the sign bits since
    # a driver may fold float sign tricks such as -(-a - b) (NVIDIA's did)
    "maximumf": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zeros = (a == {T}(0.0)) & (b == {T}(0.0));
  let both = {T}(bitcast<{F}>(bitcast<{U}>({F}(a)) & bitcast<{U}>({F}(b))));
  return select(select(max(a, b), both, zeros), a + b, {isnan}(a) | {isnan}(b));
}}""",
    "minimumf": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let zeros = (a == {T}(0.0)) & (b == {T}(0.0));
  let both = {T}(bitcast<{F}>(bitcast<{U}>({F}(a)) | bitcast<{U}>({F}(b))));
  return select(select(min(a, b), both, zeros), a + b, {isnan}(a) | {isnan}(b));
}}""",
    # f32 -> the nearest f16 value (ties to even), still an f32, in integer arithmetic:
    # NVIDIA's Vulkan driver folds f32(f16(x)) and unpack2x16float(pack2x16float(x)) to x
    # (seen on an H200, driver 580); the f16() of this value is then exact on any driver.
    # Normal f16 range: drop 13 mantissa bits (a carry moves into the exponent, past
    # 65504 is infinity); below 2^-14: multiples of 2^-24, the mantissa shifted right by s.
    "roundf16": """fn {name}(x: {T}) -> {T} {{
  let b = bitcast<{U}>(x);
  let mag = b & {U}(0x7fffffffu);
  let normal = (mag + {U}(0xfffu) + ((mag >> {U}(13u)) & {U}(1u))) & {U}(0xffffe000u);
  let big = select(normal, {U}(0x7f800000u), normal > {U}(0x477fe000u));
  let s = min({U}(126u) - min(mag >> {U}(23u), {U}(126u)), {U}(31u));
  let m = (mag & {U}(0x7fffffu)) | {U}(0x800000u);
  let q = m >> s;
  let rest = m - (q << s);
  let half = {U}(1u) << (s - {U}(1u));
  let up = (rest > half) | ((rest == half) & ((q & {U}(1u)) == {U}(1u)));
  let tiny = bitcast<{U}>({T}(q + select({U}(0u), {U}(1u), up)) * {T}(5.9604644775390625e-8));
  let r = select(big, tiny, mag < {U}(0x38800000u));
  return bitcast<{T}>(select(r, mag, mag >= {U}(0x7f800000u)) | (b & {U}(0x80000000u)));
}}""",
    # f32 -> the f16 toward zero, as an f32: 13 mantissa bits dropped, at most 65504 unless
    # infinite; under 2^-14 whole multiples of 2^-24 (a subnormal f16)
    "truncf16": """fn {name}(x: {T}) -> {T} {{
  let b = bitcast<{U}>(x);
  let mag = b & {U}(0x7fffffffu);
  let normal = min(mag & {U}(0xffffe000u), {U}(0x477fe000u));
  let s = min({U}(126u) - min(mag >> {U}(23u), {U}(126u)), {U}(31u));
  let m = (mag & {U}(0x7fffffu)) | {U}(0x800000u);
  let tiny = bitcast<{U}>({T}(m >> s) * {T}(5.9604644775390625e-8));
  let r = select(normal, tiny, mag < {U}(0x38800000u));
  return bitcast<{T}>(select(r, mag, mag >= {U}(0x7f800000u)) | (b & {U}(0x80000000u)));
}}""",
    # f32 -> the nearest bfloat16 (ties to even), still an f32: the low 16 bits rounded
    # into the high half (a carry may move into the exponent, up to infinity); NaN becomes
    # the quiet NaN of its sign, as ml_dtypes converts
    "roundbf16": """fn {name}(x: {T}) -> {T} {{
  let b = bitcast<{U}>(x);
  let r = (b + {U}(0x7fffu) + ((b >> {U}(16u)) & {U}(1u))) & {U}(0xffff0000u);
  let nan = (b & {U}(0x7fffffffu)) > {U}(0x7f800000u);
  return bitcast<{T}>(select(r, (b & {U}(0x80000000u)) | {U}(0x7fc00000u), nan));
}}""",
    # f32 -> the bfloat16 toward zero, as an f32: the low 16 bits dropped
    "truncbf16": """fn {name}(x: {T}) -> {T} {{
  let b = bitcast<{U}>(x);
  let nan = (b & {U}(0x7fffffffu)) > {U}(0x7f800000u);
  return bitcast<{T}>(select(b & {U}(0xffff0000u), (b & {U}(0x80000000u)) | {U}(0x7fc00000u), nan));
}}""",
    # the NumPy backend's convention: saturate, NaN -> 0 (WGSL's i32() leaves both open)
    "fptosi": """fn {name}(v: {T}) -> {I} {{
  let x = {F}(v);
  let t = {I}(clamp(x, {F}(-2147483648.0), {F}(2147483520.0)));
  return select(select(t, {I}(2147483647), x >= {F}(2147483648.0)), {I}(0), {isnan}(v));
}}""",
    "fptoui": """fn {name}(v: {T}) -> {I} {{
  let x = {F}(v);
  let t = {U}(clamp(x, {F}(0.0), {F}(4294967040.0)));
  let s = select(t, {U}(4294967295u), x >= {F}(4294967296.0));
  return bitcast<{I}>(select(s, {U}(0u), {isnan}(v)));
}}""",
    # WGSL's pow is exp2(b * log2(a)), undefined for a < 0: give C pow's sign and NaN
    # (in f32 for f16, whose exp2/log2 would lose several bits)
    "powf": """fn {name}(a: {T}, b: {T}) -> {T} {{
  let p = {T}(pow(abs({F}(a)), {F}(b)));
  let whole = trunc(b) == b;
  let odd = whole & (abs(b - {T}(2.0) * trunc(b * {T}(0.5))) == {T}(1.0));
  let negative = a < {T}(0.0);
  let r = select(p, -p, negative & odd);
  let nan = {T}({F}(bitcast<f32>(0x7fc00000u)));
  return select(select(r, nan, negative & !whole), {T}(1.0), b == {T}(0.0));
}}""",
}
"""Helper functions, one per (name, type) a kernel uses; ``{T}`` is the operand type."""
