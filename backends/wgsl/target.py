"""The WGSL backend as the pipeline sees it: SIMT IR with 32-bit accesses (WGSL arrays
hold scalars), printed to WGSL by the emitter; the artifact carries the binding facts."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from backends.wgsl import make_artifact
from backends.wgsl.emit import emit_wgsl
from compiler import timing
from compiler.target import Generated

INPUT = "simt"
VECTOR_BITS = 32
SHARED_TRIP_BYTES = 16 * 1024  # a layout conversion's trip: what WebGPU guarantees
PASSES = ()
# why casts between integers and pointers cannot run here (the pipeline refuses them)
NO_ADDRESSES = "WGSL has no raw pointers (an array is a binding, not an address)"


def generate(module: ModuleOp, arch: str) -> Generated:
    with timing.phase("codegen: emit WGSL"):
        text, facts = emit_wgsl(module)
    return Generated(make_artifact(text, facts), {"wgsl": text}, {"shared": facts["shared"]})
