"""``device_print``/``device_assert`` on the GPU backends (``debug=True``): the host side.

The ``strip-debug`` pass turns each print/assert into records appended to a hidden int32
buffer (the last kernel parameter): word 0 counts the words used; a record is
``[op, pid x, pid y, pid z, flat element index, value bits...]``. After the launch this
module reads the records back, prints them the way the NumPy backend does and raises
``DeviceAssertionError`` for a failed assert, ``OutOfBoundsError`` for an access outside
its array (``check-bounds``; the arrays' lengths go in as hidden i32 parameters before
the buffer, ``extents``). No xDSL import (launch path).
"""

from __future__ import annotations

import linecache
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import compiler.language as tl
from compiler.errors import DeviceAssertionError, OutOfBoundsError, SourceLoc

CAPACITY = 1 << 20  # words in the debug buffer
HEADER = 5  # op, pid x, pid y, pid z, element index
HIDDEN = "__tilec_"  # the prefix of the parameters a launch adds to the user's
PARAM = HIDDEN + "debug"
EXTENT = HIDDEN + "extent_"
_NO_LIMIT = 2**31 - 1  # the largest i32 extent: offsets are i32 on the GPUs


def extents(args: Sequence[Any], bounds: Sequence[int]) -> list[int]:
    """The lengths of the array arguments at positions ``bounds``, as i32 values."""
    return [min(_length(args[i]), _NO_LIMIT) for i in bounds]


def _length(a: Any) -> int:
    """Elements in an array argument (any kind a launch accepts; unknown: no limit)."""
    if isinstance(a, np.ndarray):
        return a.size
    try:
        cai = getattr(a, "__cuda_array_interface__", None)
    except (KeyError, TypeError):  # PyTorch's fp8: the interface cannot name the dtype
        cai = None
    if cai is not None:
        return math.prod(cai["shape"])
    if type(a).__name__ == "GPUBuffer":
        return a.size // (tl.dtype_from_str(getattr(a, "tilec_dtype", "f32")).bits // 8)
    if type(a).__name__ == "WgslArray":
        return a.size
    shape = getattr(a, "shape", None)
    return math.prod(shape) if shape is not None else _NO_LIMIT


def new_buffer() -> np.ndarray:
    return np.zeros(CAPACITY, np.int32)


def report(buf: np.ndarray, records: list[dict]) -> None:
    """Print the records of ``buf``; raise for the first failed assertion."""
    used = min(int(buf[0]), CAPACITY - 1)
    rows, pos = [], 1
    while pos < 1 + used:
        desc = records[int(buf[pos])]
        end = pos + HEADER + len(desc["dtypes"])
        if end > 1 + used:
            break
        rows.append((int(buf[pos]), tuple(int(v) for v in buf[pos + 1:pos + 4][::-1]),
                     int(buf[pos + 4]), buf[pos + HEADER:end], desc))
        pos = end
    rows.sort(key=lambda r: r[:3])
    failed = [r for r in rows if r[4]["kind"] != "print"]
    lines = [_line(r) for r in rows if r[4]["kind"] == "print"]
    if lines:
        print("\n".join(lines), flush=True)
    if int(buf[0]) >= CAPACITY - 1:
        print(f"tilec: debug buffer full, {int(buf[0]) - used} words of device output lost",
              flush=True)
    if failed:
        raise _failure(failed[0])


def _failure(row) -> DeviceAssertionError | OutOfBoundsError:
    """The NumPy backend's error for a failed assert or an out-of-bounds access."""
    _, zyx, index, words, desc = row
    loc = SourceLoc(desc["file"], desc["line"], desc["col"],
                    linecache.getline(desc["file"], desc["line"]).rstrip("\n"))
    if desc["kind"] == "bounds":
        offset, n = (int(w) for w in words)
        return OutOfBoundsError(f"out-of-bounds {desc['text']}[{offset}] (array length {n}) "
                                f"in program {zyx[::-1]}", loc)
    shape = tuple(desc["shape"])
    where = f" at index {tuple(map(int, np.unravel_index(index, shape)))}" if shape else ""
    message = desc["text"]
    return DeviceAssertionError(f"device assertion failed in program {zyx[::-1]}{where}"
                                + (f": {message}" if message else ""), loc)


def _line(row) -> str:
    _, zyx, index, words, desc = row
    shape = tuple(desc["shape"])
    idx = tuple(int(i) for i in np.unravel_index(index, shape)) if shape else ()
    prefix = desc["text"]
    prefix = prefix if not prefix or prefix[-1].isspace() else prefix + " "
    values = ", ".join(_value(w, d) for w, d in zip(words, desc["dtypes"], strict=True))
    pid = ", ".join(map(str, zyx[::-1]))
    return f"pid ({pid}) idx ({', '.join(map(str, idx))}) {prefix}{values}"


def _value(word: np.int32, dtype: str) -> str:
    """The NumPy backend's text for a value sent as 32 bits (floats as f32 bits)."""
    if dtype in ("f32", "f16", "bf16"):
        f = np.array([word], np.int32).view(np.float32)[0]
        return str(f if dtype == "f32" else np.float16(f) if dtype == "f16" else f)
    if dtype == "i1":
        return str(int(word != 0))
    return str(int(word))
