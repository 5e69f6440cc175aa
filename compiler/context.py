"""The xDSL context with every dialect tilec's IR uses, and text <-> IR helpers."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func, math, scf, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from dialects.arith_shaped import ShapedArith
from dialects.ptx import PTX
from dialects.simt import SIMT
from dialects.tile import Tile

DIALECTS = (builtin.Builtin, func.Func, ShapedArith, math.Math, scf.Scf, vector.Vector,
            Tile, SIMT, PTX)


def make_context() -> Context:
    ctx = Context()
    for d in DIALECTS:
        ctx.load_dialect(d)
    return ctx


def parse_module(text: str) -> ModuleOp:
    """Parse IR text (any tilec level) into a verified module."""
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module
