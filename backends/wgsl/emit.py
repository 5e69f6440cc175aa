"""SIMT IR -> WGSL text: the WGSL backend's entry point, ``emit_wgsl``.

Input: a ``builtin.module`` holding one ``func.func`` in SIMT form (per-thread code, see
CONTRIBUTING.md "IR conventions"). Output: WGSL source plus the layout facts the runtime
needs to bind and dispatch it.

The emitter is a core (``core.py``: ``WGSLEmitter``, the expression table, the handler
table) and feature modules that register their ops' handlers on import:
``elementwise.py`` (constants, broadcasts, comparisons), ``memory.py`` (global loads and
stores), ``control.py`` (``scf``), ``cross_thread.py`` (shared memory, barriers,
shuffles), ``atomics.py``, and ``kernel.py`` (bindings, entry point, program ids).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

# every feature module is imported: importing one registers its handlers
from backends.wgsl import atomics, control, cross_thread, elementwise, kernel, memory  # noqa: F401
from backends.wgsl.core import WGSLEmitter


def emit_wgsl(module: ModuleOp) -> tuple[str, dict]:
    """WGSL source of the module's kernel and the facts its launcher needs.

    Facts: ``name``, ``entry``, ``workgroup_size``, ``features`` (adapter features to
    request), ``uniform`` (``binding``, ``size`` in bytes; the u32 words
    ``kernel.GRID_FIELDS`` come first), ``subgroup`` and ``shared`` (``cross_thread.py``)
    and ``params``, one per kernel parameter in order: pointers
    ``{"kind": "ptr", "binding", "dtype", "access": "read" | "read_write"}``, scalars
    ``{"kind": "scalar", "offset", "type": "i32" | "u32" | "f32" | "i64"}`` (f16 travels
    as f32, i64 as two words, low first, i1 as u32).
    """
    fns = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(fns) != 1:
        raise ValueError(f"expected one func.func in the module, found {len(fns)}")
    fn = fns[0]
    return kernel.emit_kernel(WGSLEmitter(fn, atomics.buffer_types(fn)))
