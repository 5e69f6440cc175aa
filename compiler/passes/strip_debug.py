"""strip-debug: tile IR -> tile IR without ``tile.print``/``tile.assert``.

``tl.device_print`` and ``tl.device_assert`` are active on the GPU backends only with
``debug=True`` (SPEC section 2); without it the GPU pipelines drop them here, before
layouts are assigned. With ``debug=True`` they must stay, and no GPU backend prints or
asserts yet, so the pass raises ``UnsupportedError`` naming the op and its source line.
The NumPy backend always runs them (its pipeline has no strip-debug).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from compiler.errors import UnsupportedError
from compiler.passes.tile_to_simt import source_loc
from dialects import tile

_DEBUG_OPS = (tile.PrintOp, tile.AssertOp)
_BUILTINS = {"tile.print": "tl.device_print", "tile.assert": "tl.device_assert"}


@dataclass(frozen=True)
class StripDebug(ModulePass):
    """Drop the debugging ops (``debug=False``) or refuse them (``debug=True``)."""

    name = "strip-debug"

    debug: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        found = [o for o in op.walk() if isinstance(o, _DEBUG_OPS)]
        if found and self.debug:
            first = found[0]
            raise UnsupportedError(f"{_BUILTINS[first.name]} ({first.name}) with debug=True is "
                                   "not supported by the GPU backends yet; run with "
                                   "backend='numpy' to see it", source_loc(first))
        for o in found:
            Rewriter.erase_op(o)
