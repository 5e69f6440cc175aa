"""The PTX backend as the pipeline sees it: SIMT IR with 128-bit accesses, lowered by
``simt-to-ptx`` to the ptx dialect, printed to PTX text and assembled by nvJitLink."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from backends.ptx import shared_layout
from backends.ptx.assemble import assemble
from backends.ptx.printer import print_ptx
from compiler import timing
from compiler.target import Generated

INPUT = "simt"
VECTOR_BITS = 128  # ld/st.global.v4.b32
MMA = 80  # dots on tensor cores by mma.sync (every supported arch, sm_80 and newer)
PASSES = ("simt-to-ptx",)


def generate(module: ModuleOp, arch: str) -> Generated:
    with timing.phase("codegen: print PTX"):
        ptx = print_ptx(module, arch=arch)
    with timing.phase("codegen: nvJitLink PTX -> cubin"):
        cubin = assemble(ptx, arch)
    _, shared = shared_layout([op.size.value.data for op in module.walk()
                               if op.name == "ptx.shared"])
    return Generated(cubin, {"ptx": ptx, "cubin": cubin}, {"arch": arch, "shared": shared})
