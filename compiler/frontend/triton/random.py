"""Triton's random numbers: ``tl.philox``, ``tl.randint``, ``tl.randint4x``, ``tl.rand``,
``tl.randn``, and ``tl.umulhi`` that they rest on; the same seed and offsets draw the same
bits as under Triton.

The stream is Philox 4x32 (Salmon et al., SC'11) with Triton's layout. The key is the seed
as 64 bits (an int32 seed sign-extended, an unsigned one zero-extended, a constexpr as
Python's two's complement): ``k0`` its low 32 bits, ``k1`` its high 32 bits. The counter
is four uint32 words ``(c0, c1, c2, c3)``; ``randint4x(seed, offset)`` uses
``(offset, 0, 0, 0)``, the offset's 32 bits read as unsigned. Each of ``n_rounds``
(default 10) rounds maps ``(c0, c1, c2, c3)`` to ``(hi(B * c2) ^ c1 ^ k0, lo(B * c2),
hi(A * c0) ^ c3 ^ k1, lo(A * c0))`` with ``A = 0xD2511F53``, ``B = 0xCD9E8D57``, then
adds ``0x9E3779B9`` to ``k0`` and ``0xBB67AE85`` to ``k1`` (mod 2**32). ``randint`` is the
first output word (uint32). ``rand`` reads that word as int32 ``x``, folds it to
``x`` or ``-x - 1`` (whichever is >= 0) and multiplies by ``4.6566127342e-10`` in float32:
a float in [0, 1). ``randn`` turns the first two words into uniforms ``u1, u2`` that way and
returns ``sqrt(-2 log(max(u1, 1e-7))) * cos(2 pi u2)`` (Box-Muller, first of the pair).

Everything expands here into uint32 ``arith`` ops (multiplication wraps), ``tile.umulhi``
and float ``math`` ops. Words known at compile time (a constexpr seed, the zero counter
words) stay Python ints and fold, so ``randint4x`` with a constexpr seed emits no key
arithmetic and a first round of two multiplications. 64-bit counters (Triton's Philox
4x64) are not supported.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import math
from xdsl.ir import Operation

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.triton.table import builtin
from compiler.frontend.values import Builder, Value, broadcast_shapes, cast
from dialects import tile

PHILOX_KEY_A, PHILOX_KEY_B = 0x9E3779B9, 0xBB67AE85
PHILOX_ROUND_A, PHILOX_ROUND_B = 0xD2511F53, 0xCD9E8D57
N_ROUNDS_DEFAULT = 10
UNIFORM_SCALE = 4.6566127342e-10  # the largest scale with (2**31 - 1) * scale < 1 in f32
NORMAL_MIN_UNIFORM = 1.0e-7  # keeps log(u1) finite
TWO_PI = 6.283185307179586
MASK32 = 0xFFFFFFFF

Word = Value | int
"""A uint32 word: a Value, or a Python int in [0, 2**32) known at compile time."""

# Python's meaning of the word operations, for words known at compile time.
_FOLD = {"xor": lambda x, y: x ^ y, "mul": lambda x, y: x * y, "add": lambda x, y: x + y,
         "umulhi": lambda x, y: x * y >> 32}
_IDENTITY = {"xor": 0, "add": 0}


# ---------------------------------------------------------------- umulhi

def _umulhi(b: Builder, x: Word, y: Word) -> Value:
    xv, yv = ops.operands(b, x, y)
    return b.value(tile.UMulHiOp(xv.ssa, yv.ssa), xv.dtype, xv.shape)


@builtin("umulhi")
def umulhi(cg: CodeGenerator, x: Any, y: Any) -> Value:
    xv, yv = ops.operands(cg.b, x, y)
    if xv.is_ptr or not xv.dtype.is_int() or xv.dtype.bits not in tile.UMulHiOp.WIDTHS:
        cg.fail(f"tl.umulhi takes 32- or 64-bit integers, got {xv.describe()}")
    return _umulhi(cg.b, xv, yv)


# ---------------------------------------------------------------- words

def _word_op(b: Builder, name: str, x: Word, y: Word) -> Word:
    """``x name y`` on uint32 words, folded when both are known or one is the identity
    (the zero counter words of ``randint4x`` meet ``^`` in the first rounds)."""
    if isinstance(x, int) and isinstance(y, int):
        return _FOLD[name](x, y) & MASK32
    identity = _IDENTITY.get(name)
    if isinstance(y, int) and y == identity:
        return x
    if isinstance(x, int) and x == identity:
        return y
    if name == "umulhi":
        return _umulhi(b, x, y)
    return ops.binary(b, name, x, y)


def _word(b: Builder, w: Word, shape: tuple[int, ...]) -> Value:
    return ops.materialize(b, w, tl.uint32, shape)


def _shape(*words: Word) -> tuple[int, ...]:
    return broadcast_shapes(*(w.shape for w in words if isinstance(w, Value)))


def _counter(cg: CodeGenerator, c: Any) -> Word:
    """A counter word: a 32-bit integer's bits, read as unsigned."""
    if isinstance(c, Value):
        if c.is_ptr or not c.dtype.is_int() or c.dtype.bits != 32:
            cg.fail(f"Philox counters must be 32-bit integers, got {c.describe()} "
                    "(64-bit Philox is not supported)")
        return cast(cg.b, c, tl.uint32)
    if not isinstance(c, int) or not -2**31 <= c < 2**32:
        cg.fail(f"Philox counters must be 32-bit integers, got {c!r}")
    return c & MASK32


def _seed_key(cg: CodeGenerator, seed: Any) -> tuple[Word, Word]:
    """``(k0, k1)``: the low and high 32 bits of the seed extended to 64 bits (by its
    signedness, as Triton's ``seed.to(tl.uint64)``)."""
    b = cg.b
    if not isinstance(seed, Value):
        return cg.const_int(seed, "the seed") & MASK32, (seed >> 32) & MASK32
    d = seed.dtype
    if seed.is_ptr or not d.is_int():
        cg.fail(f"the seed must be an integer, got {seed.describe()}")
    if d.bits == 64:
        return cast(b, seed, tl.uint32), cast(b, ops.binary(b, "rshift", seed, 32), tl.uint32)
    if not d.is_signed:
        return cast(b, seed, tl.uint32), 0
    s = cast(b, seed, tl.int32)
    return cast(b, s, tl.uint32), cast(b, ops.binary(b, "rshift", s, 31), tl.uint32)  # sign fill


# ---------------------------------------------------------------- Philox

def _round(b: Builder, c: tuple[Word, ...], k0: Word, k1: Word) -> tuple[Word, ...]:
    c0, c1, c2, c3 = c
    hi_b = _word_op(b, "umulhi", PHILOX_ROUND_B, c2)
    hi_a = _word_op(b, "umulhi", PHILOX_ROUND_A, c0)
    return (_word_op(b, "xor", _word_op(b, "xor", hi_b, c1), k0),
            _word_op(b, "mul", PHILOX_ROUND_B, c2),
            _word_op(b, "xor", _word_op(b, "xor", hi_a, c3), k1),
            _word_op(b, "mul", PHILOX_ROUND_A, c0))


def _philox(cg: CodeGenerator, seed: Any, counters: tuple[Any, ...],
            n_rounds: Any) -> tuple[Value, ...]:
    """The four uint32 output words, each in the shape of the counters and seed."""
    b = cg.b
    rounds = cg.const_int(n_rounds, "n_rounds")
    k0, k1 = _seed_key(cg, seed)
    c = tuple(_counter(cg, x) for x in counters)
    shape = _shape(k0, k1, *c)
    for _ in range(rounds):
        c = _round(b, c, k0, k1)
        k0 = _word_op(b, "add", k0, PHILOX_KEY_A)
        k1 = _word_op(b, "add", k1, PHILOX_KEY_B)
    return tuple(_word(b, w, shape) for w in c)


@builtin("philox")
def philox(cg: CodeGenerator, seed: Any, c0: Any, c1: Any, c2: Any, c3: Any,
           n_rounds: Any = N_ROUNDS_DEFAULT) -> tuple[Value, ...]:
    return _philox(cg, seed, (c0, c1, c2, c3), n_rounds)


@builtin("randint4x")
def randint4x(cg: CodeGenerator, seed: Any, offset: Any,
              n_rounds: Any = N_ROUNDS_DEFAULT) -> tuple[Value, ...]:
    return _philox(cg, seed, (offset, 0, 0, 0), n_rounds)


@builtin("randint")
def randint(cg: CodeGenerator, seed: Any, offset: Any,
            n_rounds: Any = N_ROUNDS_DEFAULT) -> Value:
    return randint4x(cg, seed, offset, n_rounds)[0]


# ---------------------------------------------------------------- floats

def _uniform(b: Builder, w: Value) -> Value:
    """Triton's ``uint_to_uniform_float``: a uint32 word -> float32 in [0, 1)."""
    x = cast(b, w, tl.int32)
    x = ops.select(b, ops.compare(b, "lt", x, 0), ops.unary(b, "invert", x), x)  # ~x = -x-1
    return ops.binary(b, "mul", x, UNIFORM_SCALE)


def _math(b: Builder, op: type[Operation], x: Value) -> Value:
    return b.value(op(x.ssa), x.dtype, x.shape)


@builtin("rand")
def rand(cg: CodeGenerator, seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT) -> Value:
    return _uniform(cg.b, randint(cg, seed, offset, n_rounds))


@builtin("randn")
def randn(cg: CodeGenerator, seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT
          ) -> Value:
    b = cg.b
    i1, i2, _, _ = randint4x(cg, seed, offset, n_rounds)
    u1 = ops.binary(b, "max", _uniform(b, i1), NORMAL_MIN_UNIFORM)
    theta = ops.binary(b, "mul", _uniform(b, i2), TWO_PI)
    r = _math(b, math.SqrtOp, ops.binary(b, "mul", _math(b, math.LogOp, u1), -2.0))
    return ops.binary(b, "mul", r, _math(b, math.CosOp, theta))
