"""The PTX backend as the pipeline sees it: SIMT IR with 128-bit accesses, lowered by
``simt-to-ptx`` to the ptx dialect, printed to PTX text and assembled by nvJitLink."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from backends.ptx import shared_arrays, shared_layout
from backends.ptx.assemble import assemble
from backends.ptx.printer import print_ptx
from compiler import timing
from compiler.target import Generated
from dialects.ptx import TensorMapParamOp

INPUT = "simt"
VECTOR_BITS = 128  # ld/st.global.v4.b32
PASSES = ("place-shared", "simt-to-ptx", "schedule-wgmma")
WGMMA_ARCHS = ("sm_90", "sm_90a")  # Hopper: wgmma exists only in the sm_90a ISA


def tensor_cores(arch: str) -> int:
    """The SM version whose tensor-core instructions dots may use on ``arch``: 90 (wgmma,
    mma.sync where a dot cannot use it) on Hopper, else 80 (mma.sync, sm_80 and newer)."""
    return 90 if arch in WGMMA_ARCHS else 80


def generate(module: ModuleOp, arch: str) -> Generated:
    if any(op.name == "ptx.mma" and op.opcode.data.startswith("wgmma.")
           for op in module.walk()):
        arch = "sm_90a"
    with timing.phase("codegen: print PTX"):
        ptx = print_ptx(module, arch=arch)
    with timing.phase("codegen: nvJitLink PTX -> cubin"):
        cubin = assemble(ptx, arch)
    _, shared = shared_layout(shared_arrays(module))
    extra: dict = {"arch": arch, "shared": shared}
    maps = sorted((op for op in module.walk() if isinstance(op, TensorMapParamOp)),
                  key=lambda op: op.slot.value.data)
    if maps:  # the launcher makes them from the arguments (backends.ptx.tensor_maps)
        extra["tensor_maps"] = [op.recipe() for op in maps]
    return Generated(cubin, {"ptx": ptx, "cubin": cubin}, extra)
