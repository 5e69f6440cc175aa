"""Tensor maps (TMA descriptors) made at launch from a kernel's arguments.

A kernel that copies by TMA takes, after its own parameters, one 128-byte tensor map per
recipe in ``KernelInfo.extra["tensor_maps"]`` (``ptx.tensor_map_param``): the array at
parameter ``base`` with ``sizes`` and ``strides`` in elements, row-major (each entry a
triple ``i, scale, divisor``: parameter ``i``'s value, or 1 for -1, times ``scale`` over
``divisor``), read in boxes of ``box``. ``TensorMaps.fill`` encodes
each with ``cuTensorMapEncodeTiled`` (innermost dimension first, strides in bytes) from the
values the launch put into the parameter slots, into the buffers the launch passes; the
maps of recent argument values are kept, so a launch with the last launch's arguments
does nothing and one with earlier ones copies 128 bytes per map.
"""

from __future__ import annotations

import ctypes
from typing import Any

from compiler.errors import LaunchError

MAP_BYTES = 128
KEPT = 64  # maps remembered per recipe
_DTYPES = {"f16": ("FLOAT16", 2), "bf16": ("BFLOAT16", 2), "f32": ("FLOAT32", 4),
           "i32": ("INT32", 4)}
_SWIZZLES = {0: "NONE", 128: "128B"}


class TensorMaps:
    """The tensor-map parameters of one kernel, made from its parameter ``slots``."""

    def __init__(self, recipes: list[dict], slots: list[Any]):
        self._recipes, self._slots = recipes, slots
        self.buffers = [(ctypes.c_uint8 * MAP_BYTES)() for _ in recipes]
        # the parameters the maps are made of: their values are the key of made maps
        self._used = sorted({*(r["base"] for r in recipes),
                             *(i for r in recipes for i in (*r["sizes"][::3],
                                                            *r["strides"][::3]) if i >= 0)})
        self._made: dict[tuple, list[bytes]] = {}
        self._last: tuple | None = None

    def _values(self, entries: list[int]) -> list[int]:
        """The values of the triples ``entries`` with the slots as they are now. A count of
        whole blocks (a divisor) is at least 1: an array shorter than one block has none,
        and the kernel never copies through that map, but it must still be made."""
        return [max((int(self._slots[i].value) if i >= 0 else 1) * scale // divisor,
                    int(divisor > 1))
                for i, scale, divisor in zip(*(iter(entries),) * 3, strict=True)]

    def fill(self) -> None:
        """Encode (or recall) the maps for the arguments now in the slots; nothing to do
        where they are the last launch's."""
        key = tuple([self._slots[i].value for i in self._used])
        if key == self._last:
            return
        maps = self._made.get(key)
        if maps is None:
            if len(self._made) >= KEPT:
                self._made.clear()
            maps = self._made[key] = [_encode(r, int(self._slots[r["base"]].value),
                                              self._values(r["sizes"]),
                                              self._values(r["strides"]))
                                      for r in self._recipes]
        for buf, data in zip(self.buffers, maps, strict=True):
            ctypes.memmove(buf, data, MAP_BYTES)
        self._last = key


def _encode(recipe: dict, address: int, sizes: list[int], strides: list[int]) -> bytes:
    from cuda.bindings import driver
    name, size = _DTYPES[recipe["dtype"]]
    rank = len(recipe["box"])
    err, tensor_map = driver.cuTensorMapEncodeTiled(
        getattr(driver.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{name}"), rank, address,
        [driver.cuuint64_t(n) for n in reversed(sizes)],
        [driver.cuuint64_t(s * size) for s in reversed(strides[:-1])],
        [driver.cuuint32_t(n) for n in reversed(recipe["box"])], [driver.cuuint32_t(1)] * rank,
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(driver.CUtensorMapSwizzle,
                f"CU_TENSOR_MAP_SWIZZLE_{_SWIZZLES[recipe['swizzle']]}"),
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if int(err) != 0:
        raise LaunchError(
            f"cuTensorMapEncodeTiled failed ({driver.cuGetErrorName(err)[1].decode()}) for "
            f"an array of {recipe['dtype']} at 0x{address:x}, shape {list(sizes)}, strides "
            f"{list(strides)}: TMA needs a 16-byte-aligned array whose rows start 16 bytes "
            "apart (a multiple of) and no dimension of size 0")
    return ctypes.string_at(tensor_map.getPtr(), MAP_BYTES)
