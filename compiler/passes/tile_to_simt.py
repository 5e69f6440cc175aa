"""tile-to-simt: tile IR with layouts -> SIMT IR (per-thread code).

Each tile value becomes the ``vector<K x T>`` of the K elements one thread owns under its
``#tile.blocked`` or ``#tile.slice`` layout (``layouts.lane_map``); elementwise
``arith``/``math``/``tile.cmpi``/``cmpf``/``select`` ops stay as they are on those vectors.
``tile.range`` becomes ``simt.thread_id`` arithmetic plus a dense per-lane constant,
``tile.splat`` becomes ``vector.broadcast``, shape ops become lane renaming or a trip
through shared memory (``lower_shapes``). Pointers disappear: each one is traced through
``tile.splat``/``tile.addptr``/shape ops to a kernel pointer argument and an i32 element
index, and ``tile.load``/``tile.store`` become ``simt.load``/``simt.store`` on (argument,
index). The kernel must carry ``simt.num_warps`` (set by ``assign-layouts``).

The rewriting itself is ``simt_lowering.Lowering``; this module brings in the feature
modules that register their lowerings with it (casts between addresses and pointers,
atomics, reductions and scans, shape ops,
dots on FMAs and on tensor cores, shared-memory stages filled asynchronously,
join/split/flip/gather).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from compiler.passes import (  # noqa: F401 - register
    lower_addresses,
    lower_async_copy,
    lower_atomic,
    lower_dot,
    lower_mma_dot,
    lower_more_shapes,
    lower_reduce,
    lower_shapes,
    lower_tma_copy,
    lower_wgmma_dot,
)
from compiler.passes.simt_lowering import Lowering


@dataclass(frozen=True)
class TileToSimt(ModulePass):
    """Per-thread code from tile IR with layouts."""

    name = "tile-to-simt"

    # the most shared memory one trip of a layout conversion may use: WebGPU guarantees
    # 16 KiB per workgroup; PTX gives 48 KiB, so most tiles move in one trip there
    shared_trip_bytes: int = 16 * 1024
    # 1: shared memory holds 8- and 16-bit elements in their own size (PTX); 0: each in a
    # 32-bit word (WGSL's workgroup arrays), which a trip's size must count
    narrow_shared: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and f.body.blocks:
                Lowering(f, self.shared_trip_bytes // 4, bool(self.narrow_shared)).run()
