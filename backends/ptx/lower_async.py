"""Part of simt-to-ptx: asynchronous copies from global to shared memory (sm_80 and newer)
-> ``ptx.cp_async`` and ``cp.async.commit_group`` / ``cp.async.wait_group``.

A copy of ``vec`` lanes moves ``vec * sizeof(T)`` bytes from ``base + src * sizeof(T)`` to
the shared ``buffer + index * sizeof(T)``; a masked-off copy reads none of them (source
size 0), so the destination gets zeros and the source address is never touched.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32

from backends.ptx.lower_core import BYTES, Lowering, dtype, lowers
from backends.ptx.lower_memory import global_address
from dialects import ptx, simt
from dialects.tile import like


@lowers(simt.CpAsyncOp)
def cp_async(lo: Lowering, op: simt.CpAsyncOp) -> None:
    dt = dtype(op.buffer.type.element_type)  # pyright: ignore[reportAttributeAccessIssue]
    size, vec = BYTES[dt], op.width
    src = global_address(lo, lo.values[op.base], lo.pick(lo.values[op.src], vec), dt)
    index = lo.pick(lo.values[op.index], vec)
    dst = lo.inst("mad.lo.s32", [index, lo.const(size, "i32"), lo.values[op.buffer]],
                  like(index.type, i32))
    full = lo.const(vec * size, "i32")
    if op.mask is not None:
        full = lo.select(lo.pick(lo.values[op.mask], vec), full, lo.const(0, "i32"))
    lo.emit(ptx.CpAsyncOp(dst, src, full, vec * size))


@lowers(simt.CpAsyncCommitOp)
def cp_async_commit(lo: Lowering, _op: simt.CpAsyncCommitOp) -> None:
    lo.emit(ptx.PlainOp("cp.async.commit_group"))


@lowers(simt.CpAsyncWaitOp)
def cp_async_wait(lo: Lowering, op: simt.CpAsyncWaitOp) -> None:
    lo.emit(ptx.PlainOp(f"cp.async.wait_group {op.pending.value.data}"))
