"""What a kernel's tiles ask of a GPU, read on the tile dialect before layouts are assigned
(nothing is rewritten): the warps and pipeline stages a kernel gets when its language
leaves the choice to the compiler, and the registers and shared memory it would use where
no GPU compiler says (``chosen`` gives all four to ``compiler.jit``).

``default_warps``: cuTile's kernels name tile shapes, never threads.

Four warps (one warp group) at least, as Triton's default. A kernel with dots gets a warp
for every 4,096 accumulator elements of its dots in one block, up to 8 (two warp groups):
a 128 x 256 f32 accumulator is 128 registers a thread on 8 warps, and 256 on 4, which
spills (cuTile's MatMul sample ran at 9% of cuBLAS so); attention's loop holds ``Q K^T``
and ``P V`` together (128 x 128 + 128 x 64 spilled 396 bytes on 4 warps). Other kernels
get a warp for every 1,024 elements of their largest tile (32 a thread), up to 8.

``default_stages`` (ptx): cuTile's kernels name no stages either. A kernel whose dots run
in loops gets as many stages of their operands as fit in 85% of the shared memory a block
may have on the target (the rest for the epilogue), from 2 to 4: cuTile's MatMul sample
(128 x 256 x 64 f16, 48 KiB a stage) ran at 47% of cuBLAS on 2 stages, and 4 keep its TMA
copies landing in time (pipeline-loads measured 4 against 3 as 99% against 66%).

``estimated_registers``: on numpy and wgsl a compiled kernel's ``n_regs`` (Triton's
tutorials size persistent grids by it: ``65536 // (n_regs * 32 * num_warps)``) is twice the
32-bit words a thread holds of the largest tile, plus 24 for addresses and loop state, at
most 255: the order of what ptxas reports (64 for an 8,192-wide f32 softmax row on 8
warps; this gives 88). ``estimated_shared``: on numpy, ``metadata.shared`` (which the same
arithmetic divides by) is the most shared memory one op would use on a GPU: a reduction's
or scan's word per warp and operand, a dot's staged operands.
"""

from __future__ import annotations

import math

from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation

from compiler.passes.axis_info import bits_of
from dialects.tile import DotOp, PtrType, ReduceOp, ScanOp

LEAST, MOST = 4, 8
PER_WARP_DOT, PER_WARP = 4096, 1024
BASE_REGISTERS, MAX_REGISTERS = 24, 255
MOST_STAGES, STAGE_SHARE = 4, 0.85
HOPPER_SHARED, SMALL_SHARED = 227 * 1024, 99 * 1024
SHARED_PER_BLOCK = {80: 163 * 1024, 87: 163 * 1024}  # else Hopper's from sm_90, 99 KiB below
POINTER_BITS = 32  # a tile of pointers is a base and an offset an element, as ptx keeps it


def chosen(module: ModuleOp, backend: str, arch: str, num_warps: int | None,
           num_stages: int | None, least_stages: int) -> tuple[int, int, dict[str, int]]:
    """``num_warps`` and ``num_stages`` where given, else chosen (stages fitted to the
    shared memory of ``arch`` on ptx, else ``least_stages``); and off ptx the estimated
    ``registers`` and ``shared`` (wgsl's own count of workgroup memory wins over it)."""
    warps = num_warps or default_warps(module)
    if not num_stages:
        num_stages = default_stages(module, arch, least_stages) if backend == "ptx" else \
            least_stages
    estimates = {} if backend == "ptx" else {
        "registers": estimated_registers(module, warps),
        "shared": estimated_shared(module, warps)}
    return warps, num_stages, estimates


def default_warps(module: ModuleOp) -> int:
    """The warps for ``module``'s kernel, from its largest accumulator or tile."""
    held: dict[Block | None, int] = {}  # accumulator elements live together, per block
    for op in module.walk():
        if isinstance(op, DotOp):
            held[op.parent] = held.get(op.parent, 0) + math.prod(op.result.type.get_shape())
    if held:
        return _clamp(max(held.values()) // PER_WARP_DOT)
    return _clamp(max((n for n, _ in _tiles(module)), default=0) // PER_WARP)


def default_stages(module: ModuleOp, arch: str, least: int) -> int:
    """Stages for the operands of ``module``'s dots in loops on ``arch`` (``sm_90``), at
    least ``least``."""
    stage = max((_operand_bytes(op) for op in module.walk()
                 if isinstance(op, DotOp) and _in_loop(op)), default=0)
    if not stage:
        return least
    budget = int(_shared_per_block(arch) * STAGE_SHARE)
    return max(least, min(MOST_STAGES, budget // stage))


def _operand_bytes(op: DotOp) -> int:
    (m, k), n = op.a.type.get_shape(), op.b.type.get_shape()[1]
    return (m + n) * k * _bits(op.a.type.element_type) // 8


def _in_loop(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, scf.ForOp):
        parent = parent.parent_op()
    return parent is not None


def _shared_per_block(arch: str) -> int:
    """Bytes of shared memory a block may opt in to on ``arch``."""
    sm = int(arch.removeprefix("sm_").rstrip("a"))
    return SHARED_PER_BLOCK.get(sm, HOPPER_SHARED if sm >= 90 else SMALL_SHARED)


def estimated_registers(module: ModuleOp, num_warps: int) -> int:
    """Registers a thread of ``num_warps`` warps would use for ``module``'s kernel."""
    words = max((-(-n * bits // 32) for n, bits in _tiles(module)), default=0)
    return min(MAX_REGISTERS, 2 * words // (32 * num_warps) + BASE_REGISTERS)


def estimated_shared(module: ModuleOp, num_warps: int) -> int:
    """Bytes of shared memory a GPU would give ``module``'s kernel, at the least."""
    needs = [0]
    for op in module.walk():
        if isinstance(op, ReduceOp | ScanOp):
            needs.append(num_warps * sum(_bits(s.type.element_type) // 8 for s in op.srcs))
        elif isinstance(op, DotOp):
            needs.append(_operand_bytes(op))
    return max(needs)


def _tiles(module: ModuleOp) -> list[tuple[int, int]]:
    """Each tile value's elements and bits an element."""
    return [(math.prod(r.type.get_shape()), _bits(r.type.element_type))
            for op in module.walk() for r in op.results if isinstance(r.type, TensorType)]


def _bits(t: Attribute) -> int:
    return POINTER_BITS if isinstance(t, PtrType) else bits_of(t)


def _clamp(warps: int) -> int:
    """``warps`` rounded up to a power of two, within [LEAST, MOST]."""
    return min(MOST, max(LEAST, 1 << max(warps - 1, 0).bit_length()))
