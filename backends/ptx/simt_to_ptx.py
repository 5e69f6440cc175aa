"""simt-to-ptx: SIMT IR -> the ptx dialect.

Input: a ``func.func`` per kernel holding SIMT IR (``arith``, ``math``, ``scf``,
``vector.broadcast``/``shuffle``/``extract``, ``tile.program_id``/``num_programs``/``cmpi``/
``cmpf``/``select``, ``simt`` thread ids, memory, atomics, shared memory, barriers,
shuffles, warp-level matrix ops and the nvgpu dialect's TMA copies and barriers; values are scalars or ``vector<K x T>``). Output: the
same function, arguments unchanged, whose body is ptx-dialect instructions on virtual registers, with
``ptx.maxntid`` (threads per program) as a function attribute.

The lowering is a table from op class to handler (``lower_core.HANDLERS``); the modules
imported here fill it, one per kind of op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from backends.ptx import (  # noqa: F401 - importing them registers their handlers
    lower_arith,
    lower_async,
    lower_casts,
    lower_control,
    lower_cross_thread,
    lower_inline_asm,
    lower_memory,
    lower_mma,
    lower_tma,
)
from backends.ptx.lower_core import Lowering


@dataclass(frozen=True)
class SimtToPtx(ModulePass):
    """Lower every kernel of a SIMT module to the ptx dialect."""

    name = "simt-to-ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.ops:
            if isinstance(kernel, func.FuncOp):
                Lowering(kernel).run()
