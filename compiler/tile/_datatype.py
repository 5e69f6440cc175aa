"""cuTile's dtypes as tilec's (``ct.float16`` is ``tl.float16``; ``ct.float8_e4m3fn`` is
``tl.float8e4nv``), ``ct.tfloat32``, and the dtypes of cuTile that tilec lacks: each a
``MissingDType`` that a kernel may name but not use (the frontend says why)."""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.errors import UnsupportedError
from compiler.language import (  # noqa: F401 - cuTile's names for tilec's dtypes
    bfloat16,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

DType = tl.dtype
bool_ = tl.int1
float8_e4m3fn = tl.float8e4nv
float8_e5m2 = tl.float8e5
tfloat32 = tl.dtype("tfloat32", "tf32", 32, "f")
"""TF32 (f32 with a 10-bit mantissa): ``x.astype(ct.tfloat32)`` makes ``ct.mma`` and ``@``
of such operands multiply on tensor cores in TF32; elsewhere the tile is f32."""


class MissingDType:
    """A cuTile dtype tilec has no values of: named here so that ported code imports, and
    refused where it would be used (in a kernel: a ``CompileError`` giving ``reason``)."""

    def __init__(self, name: str, reason: str):
        self.name = name
        self.reason = reason

    def __repr__(self) -> str:
        return f"ct.{self.name}"

    def __call__(self, *_args: Any) -> Any:
        raise UnsupportedError(f"ct.{self.name}: {self.reason}")


float8_e8m0fnu = MissingDType(
    "float8_e8m0fnu", "tilec has no e8m0 dtype; pass e8m0 scales as their bits "
    "(an e8m0 tensor's .view(torch.uint8)), which ct.mma_scaled reads as 2**(bits - 127)")
float8_e5m3fnu = MissingDType("float8_e5m3fnu", "tilec has no e5m3 dtype")
float4_e2m1fn = MissingDType("float4_e2m1fn", "tilec has no 4-bit floats")
MISSING = (float8_e8m0fnu, float8_e5m3fnu, float4_e2m1fn)
