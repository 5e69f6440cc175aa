"""What ``tile.atomic_rmw`` and ``tile.atomic_cas`` mean, in NumPy: exact sequential
semantics, the reference the GPU backends' results are checked against.

A kernel holding an atomic runs one program at a time (``needs_serial``; the
interpreter's serial mode), program 0 first, axis 0 fastest, so every memory effect of
every op lands exactly as in sequential execution. Within one op the active elements
apply one after another in row-major order (program-major if a batch holds several
programs), each seeing what the previous ones left, and each returns the value it
replaced. Masked-off elements neither read nor write memory; they return 0.

Kinds (``dialects/tile.py``): ``add`` wraps for integers and rounds once per element for
floats; ``max``/``min`` on floats are ``arith.maximumf``/``minimumf`` (NaN propagates,
-0.0 orders below +0.0); ``umax``/``umin`` read integers as unsigned; ``and``/``or``/``xor``
are bitwise; ``xchg`` stores the value; ``tile.atomic_cas`` stores where the old value has
the comparand's bit pattern. ``sem`` and ``scope`` (checked by the ops' verifiers) need
nothing here: in a sequential execution every order is already the program order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation

from backends.numpy import ops
from backends.numpy.kernel import BUILDERS, SERIAL_CHECKS, Impl, Ptr, np_dtype

Combine = Callable[..., np.ndarray]  # (current memory, *operands) -> new memory

ORDERED_OPS = frozenset({"tile.atomic_rmw", "tile.atomic_cas"})


def needs_serial(fn: func.FuncOp) -> bool:
    """Whether the kernel's programs must run one at a time, in order."""
    return any(op.name in ORDERED_OPS for op in fn.walk())


def _unsigned(fn: Callable) -> Combine:
    return lambda cur, v: fn(ops._unsigned(cur), ops._unsigned(v)).view(cur.dtype)


def _combine(kind: str, is_float: bool) -> Combine:
    table: dict[str, Combine] = {
        "add": np.add, "xchg": lambda _cur, v: v,
        "max": ops._maximumf if is_float else np.maximum,
        "min": ops._minimumf if is_float else np.minimum,
        "umax": _unsigned(np.maximum), "umin": _unsigned(np.minimum),
        "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    }
    return table[kind]


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.itemsize}")) if a.dtype.kind == "f" else a


def _cas(cur: np.ndarray, cmp: np.ndarray, val: np.ndarray) -> np.ndarray:
    return np.where(_bits(cur) == _bits(cmp), val, cur)


def _rounds(addr: np.ndarray) -> Iterator[np.ndarray]:
    """Positions into ``addr`` in rounds: round r holds, for each address, its r-th
    occurrence. Within a round addresses are distinct, so it applies at once; rounds
    apply in order, so repeated addresses see each other in row-major order."""
    n = len(addr)
    order = np.argsort(addr, kind="stable")
    ordered = addr[order]
    starts = np.ones(n, bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    positions = np.arange(n)
    rank = np.empty(n, np.int64)
    rank[order] = positions - np.maximum.accumulate(np.where(starts, positions, 0))
    if n == 0 or rank.max() == 0:  # no address repeats: one round
        yield positions
        return
    by_rank = np.argsort(rank, kind="stable")
    yield from np.split(by_rank, np.cumsum(np.bincount(rank))[:-1])


def apply(batch, op: Operation, ptr: Ptr, combine: Combine, operands: tuple[np.ndarray, ...],
          mask: np.ndarray | None) -> np.ndarray:
    """Run ``combine`` lane by lane in order on ``ptr``'s memory; the old values."""
    mem = batch.bufs[ptr.buf]
    off, *operands = np.broadcast_arrays(ptr.off, *operands)
    if mask is not None:
        mask = np.broadcast_to(mask, off.shape)
        batch._check(op, "atomic", ptr.buf, np.where(mask, off, 0), mask)
        active = np.flatnonzero(mask)
    else:
        batch._check(op, "atomic", ptr.buf, off, None)
        active = np.arange(off.size)
    old = np.zeros(off.shape, mem.dtype)
    flat_old = old.reshape(-1)
    addr = off.reshape(-1)[active]
    args = [o.reshape(-1)[active] for o in operands]
    for lanes in _rounds(addr):
        a = addr[lanes]
        current = mem[a]
        flat_old[active[lanes]] = current
        mem[a] = combine(current, *(x[lanes] for x in args))
    return old


def _atomic_rmw(op: Operation) -> Impl:
    is_float = np_dtype(op.val.type).kind == "f"
    combine = _combine(op.kind.data, is_float)

    def impl(batch, ptr: Ptr, val: np.ndarray, mask: np.ndarray | None = None) -> tuple:
        return (apply(batch, op, ptr, combine, (val,), mask),)
    return impl


def _atomic_cas(op: Operation) -> Impl:
    def impl(batch, ptr: Ptr, cmp: np.ndarray, val: np.ndarray,
             mask: np.ndarray | None = None) -> tuple:
        return (apply(batch, op, ptr, _cas, (cmp, val), mask),)
    return impl


BUILDERS.update({"tile.atomic_rmw": _atomic_rmw, "tile.atomic_cas": _atomic_cas})
SERIAL_CHECKS.append(needs_serial)
