"""The PTX backend as the pipeline sees it: SIMT IR with 128-bit accesses, lowered by
``simt-to-ptx`` to the ptx dialect, printed to PTX text and assembled by nvJitLink."""

from __future__ import annotations

import re

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32

from backends.ptx import shared_arrays, shared_layout
from backends.ptx.assemble import Assembled, assemble_counting
from backends.ptx.occupancy import SPILL_BUDGET, register_cap
from backends.ptx.print_core import MIN_BLOCKS_ATTR
from backends.ptx.printer import print_ptx
from compiler import timing
from compiler.errors import CompileError
from compiler.target import Generated
from dialects.ptx import TensorMapParamOp, has_wgmma

INPUT = "simt"
VECTOR_BITS = 128  # ld/st.global.v4.b32
SHARED_TRIP_BYTES = 48 * 1024  # a layout conversion's trip: the static shared-memory limit
HOPPER_TRIP_BYTES = 96 * 1024  # sm_90's: see ``shared_trip_bytes``
NARROW_SHARED = True  # shared memory holds 8- and 16-bit elements in their own size
FUSED_FMA = True  # fma.rn.f32 rounds once: expand-math takes exact products from it
# dce after simt-to-ptx: the SIMT indices of a dot's k steps are lowered where they stand,
# and unread once each wgmma's descriptor adds its step to the first one's (lower_mma); left
# between the wgmmas of a group, they would stop schedule-wgmma issuing it back to back
PASSES = ("sink-wgmma-waits", "place-shared", "simt-to-ptx", "dce", "inline-slow-paths",
          "schedule-wgmma", "spread-copies")
WGMMA_ARCHS = ("sm_90", "sm_90a")  # Hopper: wgmma exists only in the sm_90a ISA
# A kernel of more PTX lines than this is not assembled again with a register cap: a cap
# costs a second assembly, and ptxas' time grows with the PTX (a 128x64 one-warp transpose
# took 26 s, twice). Lines, not the measured time, so that the code does not depend on how
# busy the machine was (7,200 lines assemble in under a second; 4,000 in 0.2 s).
RETRY_LINES = 10_000


def tensor_cores(arch: str) -> int:
    """The SM version whose tensor-core instructions dots may use on ``arch``: 90 (wgmma,
    mma.sync where a dot cannot use it) on Hopper, else 80 (mma.sync, sm_80 and newer)."""
    return 90 if arch in WGMMA_ARCHS else 80


def shared_trip_bytes(arch: str) -> int:
    """The most a layout conversion moves through shared memory at once on ``arch``: the
    static limit, or twice that on Hopper, whose blocks may take 227 KiB and whose
    conversions after a pipelined loop reuse its stages: an epilogue's 128 x 256 f16 or
    128 x 128 f32 tile (66 KiB with its padding) then goes in one trip. In two, each lane
    checking each trip, it cost more than moving the accumulator as it lies (an H200)."""
    return HOPPER_TRIP_BYTES if arch in WGMMA_ARCHS else SHARED_TRIP_BYTES


def converts_fp8(arch: str) -> int:
    """1 where tilec converts fp8 with ``cvt`` (``e4m3x2``/``e5m2x2``), so ``lower-fp8``
    keeps its conversions as ops; else 0, and it expands them into arithmetic. sm_89 has
    the instructions too, but from PTX ISA 8.1, and tilec declares 8.0 there."""
    m = re.fullmatch(r"sm_(\d+)[af]?", arch)
    return int(m is not None and int(m.group(1)) >= 90)


def _occupied(module: ModuleOp, arch: str, ptx: str, built: Assembled, shared: int
              ) -> tuple[str, Assembled]:
    """The PTX and its assembly again with ``.minnctapersm`` where a kernel is a few
    registers above full occupancy and the cap spills next to nothing (``occupancy``);
    else as they are."""
    kernels = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if len(kernels) != 1:
        return ptx, built
    threads = kernels[0].attributes["ptx.maxntid"]
    assert isinstance(threads, IntegerAttr)
    cap = register_cap(built.registers, threads.value.data, shared)
    if cap is None:
        return ptx, built
    kernels[0].attributes[MIN_BLOCKS_ATTR] = IntegerAttr(cap[0], i32)
    with timing.phase("codegen: nvJitLink PTX -> cubin, registers capped"):
        capped_ptx = print_ptx(module, arch=arch)
        try:
            capped = assemble_counting(capped_ptx, arch)
        except CompileError:  # an instruction needs more (a wgmma's accumulator)
            capped = None
    if capped is not None and capped.registers <= cap[1] and capped.spilled <= SPILL_BUDGET:
        return capped_ptx, capped
    del kernels[0].attributes[MIN_BLOCKS_ATTR]
    return ptx, built


def generate(module: ModuleOp, arch: str) -> Generated:
    if has_wgmma(module):
        arch = "sm_90a"
    with timing.phase("codegen: print PTX"):
        ptx = print_ptx(module, arch=arch)
    with timing.phase("codegen: nvJitLink PTX -> cubin"):
        built = assemble_counting(ptx, arch)
    _, shared = shared_layout(shared_arrays(module))
    if ptx.count("\n") <= RETRY_LINES:  # a capped try costs as much again
        ptx, built = _occupied(module, arch, ptx, built, shared)
    cubin = built.cubin
    extra: dict = {"arch": arch, "shared": shared, "registers": built.registers,
                   "spills": built.spilled}
    maps = sorted((op for op in module.walk() if isinstance(op, TensorMapParamOp)),
                  key=lambda op: op.slot.value.data)
    if maps:  # the launcher makes them from the arguments (backends.ptx.tensor_maps)
        extra["tensor_maps"] = [op.recipe() for op in maps]
    return Generated(cubin, {"ptx": ptx, "cubin": cubin}, extra)
