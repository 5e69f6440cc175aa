"""inline-slow-paths: the ptx dialect -> the same, with no instruction that ptxas compiles
to a call in a kernel that has ``wgmma``.

ptxas compiles a correctly rounded f32 division (``div.rn.f32``) to a fast path and a
called slow path, and a call anywhere in a function makes it serialize every wgmma of
that function (its C7509 note): each waits for the one before to finish, so a single
``1 / l`` in attention's epilogue made every wgmma of its loops wait for the last. Here
each such division becomes inline instructions that compute the same correctly rounded
quotient: in f64, where an f32 quotient's operands are exact and far from the ends of
the range, a reciprocal refined by Newton's method and one remainder correction give
the quotient within half an f64 ulp and a little more; rounding that to f32 is correct,
because an f32 quotient is either a midpoint of two f32 values exactly (then the
corrected f64 quotient is that midpoint) or at least 2^-49 of itself away from every
midpoint. Zero, infinite and NaN operands take a product with the same IEEE special
value and sign as the quotient (``special``). Other instructions ptxas calls for
(``sqrt.rn``, f64 division, 64-bit integer division) are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32, f64, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dialects import ptx
from dialects.tile import like

INF = float("inf")
NEWTON_STEPS = 2  # each squares rcp.approx's relative error: below f64's rounding


class _Builder:
    """PTX instructions inserted before one op, each as wide as its widest operand."""

    def __init__(self, before: Operation):
        self.point = InsertPoint.before(before)
        self.location = before.location
        self.consts: dict[float, SSAValue] = {}

    def inst(self, opcode: str, args: list[SSAValue], elem: Attribute) -> SSAValue:
        widest = max(args, key=lambda v: ptx.lanes(v.type)).type
        return self.add(ptx.InstOp(opcode, args, like(widest, elem)))

    def const(self, value: float) -> SSAValue:
        if value not in self.consts:
            self.consts[value] = self.add(ptx.MovImmOp(FloatAttr(value, f64)))
        return self.consts[value]

    def add(self, op: Operation) -> SSAValue:
        op.location = self.location
        Rewriter.insert_op(op, self.point)
        return op.results[0]


def divide(b: _Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """``x / y`` of f32 values, correctly rounded, with no call (see the module's text)."""
    a, d = (b.inst("cvt.f64.f32", [v], f64) for v in (x, y))
    minus_d, one, r = b.inst("neg.f64", [d], f64), b.const(1.0), \
        b.inst("rcp.approx.ftz.f64", [d], f64)
    for _ in range(NEWTON_STEPS):
        r = b.inst("fma.rn.f64", [r, b.inst("fma.rn.f64", [minus_d, r, one], f64), r], f64)
    q = b.inst("mul.rn.f64", [a, r], f64)
    q = b.inst("fma.rn.f64", [b.inst("fma.rn.f64", [minus_d, q, a], f64), r, q], f64)
    # both finite and not zero: so is their product (f64 holds it), which is ordered
    size, inf = b.inst("abs.f64", [b.inst("mul.rn.f64", [a, d], f64)], f64), b.const(INF)
    finite = b.inst("and.pred", [b.inst("setp.gt.f64", [size, b.const(0.0)], i1),
                                 b.inst("setp.lt.f64", [size, inf], i1)], i1)
    return b.inst("cvt.rn.f32.f64", [b.inst("selp.b64", [q, special(b, a, d), finite], f64)],
                  f32)


def special(b: _Builder, a: SSAValue, d: SSAValue) -> SSAValue:
    """``a / d`` where either is zero, infinite or NaN (f64 values of f32 ones, so no
    other is subnormal): ``a`` times ``d``, except that a zero ``d`` becomes an infinity
    and an infinite one a zero (of its sign), which is the quotient's value and sign."""
    zero = b.inst("setp.eq.f64", [d, b.const(0.0)], i1)
    infinite = b.inst("setp.eq.f64", [b.inst("abs.f64", [d], f64), b.const(INF)], i1)
    flipped = b.inst("selp.b64", [b.inst("copysign.f64", [d, b.const(INF)], f64),
                                  b.inst("copysign.f64", [d, b.const(0.0)], f64), zero], f64)
    return b.inst("mul.rn.f64", [a, b.inst("selp.b64", [flipped, d,
                                                        b.inst("or.pred", [zero, infinite],
                                                               i1)], f64)], f64)


def inline_divisions(kernel: Operation) -> None:
    for op in list(kernel.walk()):
        if isinstance(op, ptx.InstOp) and op.opcode.data == "div.rn.f32":
            x, y = op.args
            Rewriter.replace_op(op, [], [divide(_Builder(op), x, y)])


@dataclass(frozen=True)
class InlineSlowPaths(ModulePass):
    """Correctly rounded f32 divisions inline, in kernels with wgmma."""

    name = "inline-slow-paths"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.body.block.ops:
            if ptx.has_wgmma(kernel):
                inline_divisions(kernel)
