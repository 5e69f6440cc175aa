"""Part of tile-to-simt: ``math.erf`` and ``math.tanh`` (tile IR with layouts) -> SIMT IR
of ``arith``/``math`` ops every target has.

PTX has no erf and only a coarse ``tanh.approx.f32``; WGSL has no erf and leaves tanh's
accuracy open. Both get the same f32 sequences here, so their answers agree to an ulp or
two (the README's accuracy table has the measured errors):

- ``erf``: for ``|x| < 1``, ``x + x * P(x^2)``; above, ``1 - 2^Q(|x|)`` with ``Q`` fitted
  to ``log2(erfc)`` on ``[1, 3.92]`` (from 3.92 on erf rounds to 1 in f32);
- ``tanh``: for ``|x| < 1``, ``x + x * x^2 * P(x^2)``; above, ``1 - 2 / (e^(2|x|) + 1)``.

The polynomials were fitted in float64 for least relative (erf, tanh) or absolute
(``log2(erfc)``) error with Lawson's reweighting, then rounded to f32; they are evaluated
with fused multiply-adds. f16 and bf16 operands are computed in f32; f64 operands keep the
op, which a target may refuse.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, VectorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from compiler.passes.simt_lowering import Lowering, lowers, per_thread_type
from dialects import tile
from dialects.tile import element_type, like

# highest power first
ERF_SMALL = (7.964892574818805e-05, -0.0008037715451791883, 0.005190611816942692,
             -0.02685445547103882, 0.1128358319401741, -0.376126229763031,
             0.12837916612625122)
ERF_LOG2_ERFC = (2.3544673695141682e-06, -6.624581874348223e-05, 0.0008588372147642076,
                 -0.006854241248220205, 0.038075972348451614, -0.15872721374034882,
                 -0.9116346836090088, -1.6305149793624878, 0.00044350820826366544)
ERF_ONE = 3.92  # erf(x) rounds to 1.0 in f32 from here on
TANH_SMALL = (-4.862481728196144e-05, 0.00033836005604825914, -0.0012433301890268922,
              0.0034794749226421118, -0.008826825767755508, 0.02186274714767933,
              -0.05396762490272522, 0.13333331048488617, -0.3333333432674408)
TWO_LOG2E = 2.8853900817779268


class _Builder:
    """Emits f32 ops of one type (scalar or per-thread vector) before ``at``."""

    def __init__(self, lo: Lowering, at: Operation, t: Attribute):
        self.lo, self.at, self.t = lo, at, t

    def const(self, v: float) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(self.t, [v]) \
            if isinstance(self.t, VectorType) else FloatAttr(v, f32)
        return self.lo.emit(arith.ConstantOp(attr, self.t), self.at)

    def op(self, new: Operation) -> SSAValue:
        return self.lo.emit(new, self.at)

    def poly(self, coeffs: Sequence[float], z: SSAValue) -> SSAValue:
        """Horner's rule with fused multiply-adds."""
        r = self.const(coeffs[0])
        for c in coeffs[1:]:
            r = self.op(math.FmaOp(r, z, self.const(c)))
        return r

    def below(self, a: SSAValue, bound: float) -> SSAValue:
        return self.op(tile.CmpFOp("olt", a, self.const(bound)))

    def with_sign_of(self, x: SSAValue, r: SSAValue) -> SSAValue:
        negative = self.below(x, 0.0)
        return self.op(tile.SelectOp(negative, self.op(arith.NegfOp(r)), r))


def _erf(b: _Builder, x: SSAValue) -> SSAValue:
    a = b.op(math.AbsFOp(x))
    small = b.op(math.FmaOp(x, b.poly(ERF_SMALL, b.op(arith.MulfOp(x, x))), x))
    t = b.op(arith.MinimumfOp(a, b.const(ERF_ONE)))
    erfc = b.op(math.Exp2Op(b.poly(ERF_LOG2_ERFC, t)))
    large = b.with_sign_of(x, b.op(arith.SubfOp(b.const(1.0), erfc)))
    return b.op(tile.SelectOp(b.below(a, 1.0), small, large))


def _tanh(b: _Builder, x: SSAValue) -> SSAValue:
    a = b.op(math.AbsFOp(x))
    z = b.op(arith.MulfOp(x, x))
    small = b.op(math.FmaOp(x, b.op(arith.MulfOp(z, b.poly(TANH_SMALL, z))), x))
    zero = b.op(tile.CmpFOp("oeq", x, b.const(0.0)))
    small = b.op(tile.SelectOp(zero, x, small))  # the fma gives +0.0 for -0.0
    e = b.op(math.Exp2Op(b.op(arith.MulfOp(a, b.const(TWO_LOG2E)))))
    tail = b.op(arith.DivfOp(b.const(2.0), b.op(arith.AddfOp(e, b.const(1.0)))))
    large = b.with_sign_of(x, b.op(arith.SubfOp(b.const(1.0), tail)))
    return b.op(tile.SelectOp(b.below(a, 1.0), small, large))


_EXPANSIONS = {math.ErfOp: _erf, math.TanhOp: _tanh}


@lowers(math.ErfOp, math.TanhOp)
def lower_erf_tanh(lo: Lowering, op: math.ErfOp | math.TanhOp) -> None:
    """Replace ``op`` by its f32 sequence (registered with tile-to-simt)."""
    t = per_thread_type(lo.operand_types[op][0])
    elem = element_type(t)
    if elem.bitwidth > 32:  # pyright: ignore[reportAttributeAccessIssue]
        Lowering._generic(lo, op)
        return
    wide = like(t, f32)
    x = op.operand if elem == f32 else lo.emit(arith.ExtFOp(op.operand, wide), op)
    r = _EXPANSIONS[type(op)](_Builder(lo, op, wide), x)
    lo.replace(op, r if elem == f32 else lo.emit(arith.TruncFOp(r, t), op))
