"""The xDSL context with every dialect tilec's IR uses, text <-> IR helpers, and the
user's source position of an op."""

from __future__ import annotations

import linecache

from xdsl.context import Context
from xdsl.dialects import builtin, func, math, scf, vector
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from compiler.errors import SourceLoc
from dialects.arith_shaped import ShapedArith
from dialects.nvgpu import NVGPU
from dialects.ptx import PTX
from dialects.simt import SIMT
from dialects.tile import Tile

DIALECTS = (builtin.Builtin, func.Func, ShapedArith, math.Math, scf.Scf, vector.Vector,
            Tile, SIMT, NVGPU, PTX)


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


def source_loc(op: Operation) -> SourceLoc | None:
    """The user's source position of ``op``, if the frontend recorded one."""
    loc = op.location
    if not isinstance(loc, FileLineColLoc):
        return None
    file, line = loc.filename.data, loc.line.data
    return SourceLoc(file, line, loc.column.data, linecache.getline(file, line).rstrip("\n"))
