"""The WGSL backend: SIMT IR -> WGSL text (``emit.py``) -> wgpu (``runtime.py``).

Importing this package loads neither xDSL nor wgpu: ``availability`` and ``Launcher``
import the runtime when first used, and compiling (``emit.py``) is for the pipeline.

An artifact is text, so it can sit in the disk cache: the WGSL source preceded by one
comment line holding the layout facts as JSON (``make_artifact``/``unpack_artifact``).
"""

from __future__ import annotations

import json

import numpy as np

from compiler.kinfo import KernelInfo

_HEADER = "// tilec-wgsl-facts: "

UNSUPPORTED_DTYPES = {"f64": ("WGSL has no 64-bit types", "float32"),
                      "i64": ("WGSL has no 64-bit types", "int32"),
                      "bf16": ("WGSL has no bfloat16", "float16 or float32")}
"""Short dtype -> (why WGSL cannot hold it, what to use instead). A launch refuses
arguments of these dtypes before compiling, naming them; the emitter says the same of
values inside a kernel."""


def make_artifact(source: str, facts: dict) -> str:
    """The artifact of ``emit.emit_wgsl``'s result (still valid WGSL)."""
    return f"{_HEADER}{json.dumps(facts, sort_keys=True)}\n{source}"


def unpack_artifact(artifact: str) -> tuple[str, dict]:
    first, _, source = artifact.partition("\n")
    if not first.startswith(_HEADER):
        raise ValueError("not a tilec WGSL artifact (missing the facts line)")
    return source, json.loads(first[len(_HEADER):])


def availability() -> tuple[bool, str]:
    """(True, adapter description) or (False, why); never raises."""
    try:
        from backends.wgsl import runtime
    except Exception as e:  # noqa: BLE001 - wgpu missing, or its native library failed
        return False, f"wgpu cannot be imported: {e}"
    return runtime.availability()


def read_buffer(buf, dtype=np.uint8) -> np.ndarray:
    """A host copy of a ``wgpu.GPUBuffer``'s contents as a 1-D array of ``dtype``."""
    from backends.wgsl.runtime import buffer_device

    data = buffer_device(buf).queue.read_buffer(buf)
    return np.frombuffer(data, np.uint8).view(dtype).copy()


def wgsl_device():
    """The ``wgpu.GPUDevice`` tilec uses by default (``tc.wgsl_device()``)."""
    from backends.wgsl import runtime

    return runtime.wgsl_device()


class Launcher:
    """Runs one compiled kernel: ``Launcher(artifact, info)(grid, args)``."""

    def __init__(self, artifact: str, info: KernelInfo):
        from backends.wgsl.runtime import Kernel

        self.kernel = Kernel(*unpack_artifact(artifact), info)

    def __call__(self, grid: tuple[int, int, int], args: list) -> None:
        self.kernel(grid, args)
