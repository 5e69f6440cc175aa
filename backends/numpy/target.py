"""The NumPy backend as the pipeline sees it: it interprets tile IR, so it takes the module
straight after the tile passes; its artifact is the IR text with every op's source location
(the interpreter's errors point at the user's line)."""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer

from compiler import timing
from compiler.target import Generated

INPUT = "tile"


class _LocationPrinter(Printer):
    """xDSL 0.74 prints an op's ``loc(...)`` after it and also inside
    ``print_operation_type``, which custom formats (``scf.while``) call mid-op, where the
    parser does not take it: only the generic format keeps it there."""

    def print_operation_type(self, op: Operation) -> None:
        if self.print_generic_format or type(op).print is Operation.print:
            super().print_operation_type(op)
        else:
            self.print_function_type(op.operand_types, op.result_types)


def print_with_locations(module: ModuleOp) -> str:
    """IR text with ``loc(...)`` on every op."""
    out = io.StringIO()
    _LocationPrinter(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue()


def generate(module: ModuleOp, arch: str) -> Generated:
    with timing.phase("codegen: print IR with locations"):
        text = print_with_locations(module)
    return Generated(text, live=module)  # a launch in this process need not parse text
