"""Part of simt-to-ptx: asynchronous copies from global to shared memory (sm_80 and newer)
-> ``ptx.cp_async`` and ``cp.async.commit_group`` / ``cp.async.wait_group``.

A copy of ``vec`` lanes moves ``vec * sizeof(T)`` bytes from ``base + src * sizeof(T)`` to
the shared ``buffer + index * sizeof(T)``; a masked-off copy reads none of them (source
size 0), so the destination gets zeros and the source address is never touched. An index
that is a place in a stage plus the stage's start (``lanes + broadcast(start)``) is
addressed as ``(buffer + lanes * size) + start * size``: the first part is the same in
every iteration of a pipelined loop (ptxas keeps it in registers), so a copy costs one
add, not a multiply-add and a shift.
"""

from __future__ import annotations

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from backends.ptx.lower_core import BYTES, Lowering, dtype, lowers
from backends.ptx.lower_memory import global_address
from dialects import ptx, simt
from dialects.tile import like


@lowers(simt.CpAsyncOp)
def cp_async(lo: Lowering, op: simt.CpAsyncOp) -> None:
    dt = dtype(op.buffer.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
    size, vec = BYTES[dt], op.width
    src = global_address(lo, lo.values[op.base], lo.pick(lo.values[op.src], vec), dt)
    lanes, start = _stage_parts(op.index)
    index = lo.pick(lo.values[lanes], vec)
    dst = lo.inst("mad.lo.s32", [index, lo.const(size, "i32"), lo.values[op.buffer]],
                  like(index.type, i32))
    if start is not None:  # the lanes' addresses stay the same from stage to stage
        moved = lo.inst("mul.lo.s32", [lo.values[start], lo.const(size, "i32")], i32)
        dst = lo.inst("add.s32", [dst, moved], dst.type)
    full = lo.const(vec * size, "i32")
    if op.mask is not None:
        full = lo.select(lo.pick(lo.values[op.mask], vec), full, lo.const(0, "i32"))
    lo.emit(ptx.CpAsyncOp(dst, src, full, vec * size))


def _stage_parts(index: SSAValue) -> tuple[SSAValue, SSAValue | None]:
    """``index`` as (lanes, start) where it is ``lanes + broadcast(start)`` (a place in a
    stage plus the stage's first element), else (``index``, None)."""
    add = index.owner
    if isinstance(add, arith.AddiOp):
        for lanes, moved in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            if isinstance(moved.owner, vector.BroadcastOp):
                return lanes, moved.owner.source
    return index, None


@lowers(simt.CpAsyncCommitOp)
def cp_async_commit(lo: Lowering, _op: simt.CpAsyncCommitOp) -> None:
    lo.emit(ptx.PlainOp("cp.async.commit_group"))


@lowers(simt.CpAsyncWaitOp)
def cp_async_wait(lo: Lowering, op: simt.CpAsyncWaitOp) -> None:
    lo.emit(ptx.PlainOp(f"cp.async.wait_group {op.pending.value.data}"))
