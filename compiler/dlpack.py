"""DLPack capsules of tilec's own arrays (``DeviceArray.__dlpack__`` on ptx), so PyTorch,
CuPy or JAX take them without a copy (``torch.from_dlpack(a)``); ``device_arrays.py``
reads capsules, with the same structures.

A capsule holds DLPack 0.x's ``DLManagedTensor``, which every consumer takes. Its memory
and the array it describes stay alive, in ``_LIVE``, until the consumer calls its deleter
(or, where no consumer took the capsule, until the capsule goes). Both callbacks are
ctypes functions into Python, which take the GIL whichever thread calls them.
"""

from __future__ import annotations

import ctypes
from typing import Any

from compiler.device_arrays import DL_DTYPES, DLTensor

_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # void (*)(DLManagedTensor *)
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # void (*)(PyObject *capsule)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


_CODES = {short: code_bits for code_bits, short in DL_DTYPES.items()}
_NAME = b"dltensor"  # a consumer renames the capsule it takes "used_dltensor"
_LIVE: dict[int, tuple] = {}
"""Address of a ``DLManagedTensor`` handed out -> what must live as long as it."""


def _release(address: int) -> None:
    _LIVE.pop(address, None)


_DELETE = _DELETER(_release)

# own function objects (item access, not attribute access, which returns the one that
# device_arrays.py gives other argument types)
_is_valid = ctypes.pythonapi["PyCapsule_IsValid"]
_is_valid.restype, _is_valid.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]
_pointer = ctypes.pythonapi["PyCapsule_GetPointer"]
_pointer.restype, _pointer.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
_new = ctypes.pythonapi["PyCapsule_New"]
_new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, _DESTRUCTOR]


def _destroy(capsule: int) -> None:
    """A capsule going away that no consumer took: its tensor is released here (the
    capsule is passed by address: it is being destroyed, so no new reference to it)."""
    if _is_valid(capsule, _NAME):
        _release(_pointer(capsule, _NAME))


_DESTROY = _DESTRUCTOR(_destroy)


def capsule(ptr: int, device: tuple[int, int], dtype: str, shape: tuple[int, ...],
            owner: Any) -> Any:
    """A DLPack capsule of the row-major array of ``dtype`` (short name) and ``shape`` at
    ``ptr`` on ``device`` (DLDeviceType, device id). ``owner``, which keeps the memory,
    lives until the consumer is done with the array."""
    rank = len(shape)
    dims = (ctypes.c_int64 * max(rank, 1))(*shape)
    strides = (ctypes.c_int64 * max(rank, 1))()  # given, though 0.x allows NULL: old consumers
    step = 1
    for i in reversed(range(rank)):
        strides[i], step = step, step * shape[i]
    managed = DLManagedTensor()
    t = managed.dl_tensor
    t.data, t.ndim, t.byte_offset = ptr, rank, 0
    t.device.device_type, t.device.device_id = device
    (t.dtype.code, t.dtype.bits), t.dtype.lanes = _CODES[dtype], 1
    t.shape = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    managed.deleter = _DELETE
    address = ctypes.addressof(managed)
    _LIVE[address] = (managed, dims, strides, owner)
    return _new(address, _NAME, _DESTROY)


def live() -> int:
    """How many capsules' arrays are still held (for tests: each goes when released)."""
    return len(_LIVE)
