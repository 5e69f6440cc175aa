"""expand-math: tile IR -> tile IR in which the math functions no GPU target has are
sequences of ``arith``/``math``/``tile`` ops every target has.

PTX has no instruction for ``asin``, ``erf``, ``lgamma``...; WGSL has builtins for some of
them, but loosely specified (thousands of ulps for ``atan``, textbook formulas that cancel
or overflow for ``asinh``) and far off in practice (README). So both targets get the same
sequences, expanded here once, on tiles, before the pipeline splits: the xDSL ``math``
ops ``asin acos atan atan2 sinh cosh tanh asinh acosh atanh expm1 log1p log10 cbrt tan
erf round copysign`` and every ``tile.libm`` function, in f32 (f16 and bf16 computed in
f32) and, where a feature module has one, f64 (``exp``, ``exp2``, ``log``, ``log2`` are
expanded for f64 only: f32 keeps the fast approximate instructions).

The sequences are built from ops every target computes as IEEE does and survive WGSL's
liberties (``math_values``), so their error is the algorithm's, the same on every target,
and the NumPy backend measures it on a CPU when told to run this pass too
(``TILEC_EXPAND_MATH=1``). The algorithms are described in the feature modules:
``math_exp_log``, ``math_trig``, ``math_special``, ``math_misc``. A function with an f32
sequence only is refused for f64 here; any other op without one is left for the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, ModuleOp, f32, f64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from compiler.context import source_loc
from compiler.errors import UnsupportedError
from compiler.passes import (  # noqa: F401 - register
    math_exp_log,
    math_misc,
    math_special,
    math_trig,
)
from compiler.passes.math_values import EXPANSIONS, Emitter, Expansion, F, I
from dialects import arith_shaped as casts
from dialects import tile
from dialects.tile import element_type, like


def function_name(op: Operation) -> str | None:
    """The name ``EXPANSIONS`` knows ``op`` by, if it is a math function."""
    if isinstance(op, tile.LibmOp):
        return op.fn.data
    if op.name.startswith("math."):
        return op.name[5:]
    return None


def _expansion(op: Operation) -> Expansion | None:
    """``op``'s expansion for its type; an f32-only function of f64 is refused here."""
    name = function_name(op)
    widths = EXPANSIONS.get(name) if name else None
    if not widths:
        return None
    wide = element_type(op.results[0].type) == f64
    if wide and False in widths and True not in widths:
        raise UnsupportedError(f"{name} ({op.name}) of float64 is not supported by tilec's "
                               "GPU targets (it has a float32 sequence only)", source_loc(op))
    return widths.get(wide)


def _operand(e: Emitter, v: SSAValue) -> F | I:
    """An operand in the computation type: floats widened, integers of the float's width."""
    if isinstance(element_type(v.type), IntegerType):
        return I(e, v if v.type == e.it else e.emit(casts.ExtSIOp(v, e.it)))
    return F(e, v if v.type == e.ft else e.emit(arith.ExtFOp(v, e.ft)))


def expand(op: Operation, exp: Expansion, fused: bool = False) -> None:
    """Replace ``op`` by its expansion, computed in f32 for narrower floats; ``fused``:
    the target's f32 ``fma`` is rounded once."""
    t = op.results[0].type
    e = Emitter(op, t if element_type(t) == f64 else like(t, f32), fused=fused)
    r: SSAValue = exp(*(_operand(e, v) for v in op.operands)).v
    if r.type != t:
        r = e.emit(casts.TruncFOp(r, t))
    op.results[0].replace_all_uses_with(r)
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class ExpandMath(ModulePass):
    """Math functions as sequences of ops every target has; ``fused_fma``: the target
    rounds an f32 ``fma`` once (exact products then cost one ``fma``, not Dekker's
    splitting; the results are the same bits)."""

    name = "expand-math"
    fused_fma: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in list(op.walk()):
            exp = _expansion(o)
            if exp is not None:
                expand(o, exp, bool(self.fused_fma))

