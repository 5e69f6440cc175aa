"""What ``tile.int_to_ptr`` and ``tile.ptr_to_int`` mean, in NumPy: pointers made of the
process's own addresses, within the arrays of the launch.

A NumPy pointer is an argument's array and element offsets (``kernel.Ptr``), so an
integer address becomes one only where it falls inside an array passed to the same
launch: its offset from that array's first element, counted in its elements. That keeps
every access through it checked against the array's bounds, as any other. An address in
none of them (memory the launch was not given, a device address) is an
``UnsupportedError``: the numpy backend cannot know what is there, where the ptx backend
reads any device address. The addresses of one cast must fall in one array, of the
pointer's element type (NumPy does not reinterpret the memory), at whole elements.

Programs may cast addresses into different arrays, and a pointer value holds one array
for all the programs of a batch, so such a kernel runs one program at a time
(``needs_serial``). ``tile.ptr_to_int`` gives the array's address plus the offset in
bytes: the address the user's array has, as ``x.ctypes.data`` or ``t.data_ptr()`` say.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func
from xdsl.ir import Operation

from backends.numpy.kernel import BUILDERS, SERIAL_CHECKS, Batch, Impl, Ptr, np_dtype
from compiler.context import source_loc
from compiler.errors import UnsupportedError
from compiler.language import dtype_from_str


def needs_serial(fn: func.FuncOp) -> bool:
    """Whether the kernel casts integers to pointers (one program at a time: see above)."""
    return any(op.name == "tile.int_to_ptr" for op in fn.walk())


def _address(mem: np.ndarray) -> int:
    return mem.__array_interface__["data"][0]


def _owner(batch: Batch, op: Operation, addr: np.ndarray, elem: np.dtype) -> tuple[int, int]:
    """(argument index, its address) of the array ``addr`` points into."""
    lo, hi = int(addr.min()), int(addr.max())
    for i, mem in enumerate(batch.bufs):
        if mem is None or not _address(mem) <= lo <= _address(mem) + mem.nbytes:
            continue
        start, name = _address(mem), batch.params[i].name
        if hi > start + mem.nbytes:
            raise _unsupported(batch, op, f"the addresses {lo:#x} to {hi:#x} run from {name} "
                                          "past its end: one cast's addresses must fall in "
                                          "one array")
        if mem.dtype != elem:
            raise _unsupported(batch, op, f"address {lo:#x} is in {name}, an array of "
                               f"{dtype_from_str(batch.params[i].dtype)}, cast to a pointer "
                               f"of another type: NumPy does not reinterpret an array")
        if ((addr - start) % elem.itemsize).any():
            raise _unsupported(batch, op, f"an address in {name} is not at one of its "
                                          f"elements ({elem.itemsize}-byte steps)")
        return i, start
    raise _unsupported(batch, op, f"address {lo:#x} is in none of the arrays passed to this "
                                  "launch, the only memory the numpy backend can follow an "
                                  "integer-to-pointer cast into (ptx takes any device address)")


def _unsupported(batch: Batch, op: Operation, why: str) -> UnsupportedError:
    pid = tuple(int(p[0]) for p in batch.pid)
    return UnsupportedError(f"tile.int_to_ptr in program {pid}: {why}", source_loc(op))


def _int_to_ptr(op: Operation) -> Impl:
    elem = np_dtype(op.results[0].type)

    def impl(batch: Batch, addr: np.ndarray) -> tuple:
        buf, start = _owner(batch, op, addr, elem)
        return (Ptr(buf, (addr - start) // elem.itemsize),)
    return impl


def _ptr_to_int(op: Operation) -> Impl:
    def impl(batch: Batch, p: Ptr) -> tuple:
        mem = batch.bufs[p.buf]
        assert mem is not None
        return (_address(mem) + p.off * mem.itemsize,)
    return impl


BUILDERS.update({"tile.int_to_ptr": _int_to_ptr, "tile.ptr_to_int": _ptr_to_int})
SERIAL_CHECKS.append(needs_serial)
