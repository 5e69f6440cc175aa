"""The WGSL backend: SIMT IR -> WGSL text (``emit.py``) -> wgpu (``runtime.py``).

Importing this package loads neither xDSL nor wgpu: ``availability`` and ``Launcher``
import the runtime when first used, and compiling (``emit.py``) is for the pipeline.

An artifact is text, so it can sit in the disk cache: the WGSL source preceded by one
comment line holding the layout facts as JSON (``make_artifact``/``unpack_artifact``).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from collections.abc import MutableMapping

import numpy as np

from compiler.graphs import ACTIVE as _CAPTURES
from compiler.graphs import record
from compiler.kinfo import KernelInfo

_HEADER = "// tilec-wgsl-facts: "

UNSUPPORTED_DTYPES = {"f64": ("WGSL has no 64-bit floats", "float32")}
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


def set_runtime_dir(env: MutableMapping[str, str] = os.environ) -> None:
    """Give ``env`` a private ``XDG_RUNTIME_DIR`` where it has none, or one that is not an
    existing directory. Mesa's device-select layer, an implicit Vulkan layer that is on by
    default, looks for a Wayland display while the Vulkan loader lists the adapters, and
    libwayland-client prints "error: XDG_RUNTIME_DIR is invalid or not set in the
    environment." twice on stderr where the variable is unset or not an absolute path (a
    root shell, CI, a container). tilec calls this before it asks wgpu for an adapter; the
    Deno of the web tests gets it in its environment. The directory is
    ``<tmp>/tilec-runtime-<uid>``, 0700 as the XDG spec requires; the Wayland lookup finds
    no display there, as it would have found none without the variable."""
    current = env.get("XDG_RUNTIME_DIR", "")
    if sys.platform in ("win32", "darwin") or (os.path.isabs(current)
                                               and os.path.isdir(current)):
        return
    try:
        env["XDG_RUNTIME_DIR"] = private_dir(f"tilec-runtime-{os.getuid()}")
    except OSError:  # no writable temporary directory: keep the environment as it is
        pass


def private_dir(name: str) -> str:
    """The directory ``name`` in the temporary directory, made 0700 if new; a fresh one
    where that name is taken by another user, a link or a file, or is open to others."""
    path = os.path.join(tempfile.gettempdir(), name)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    found = os.lstat(path)
    if stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() \
            and not found.st_mode & 0o077:
        return path
    return tempfile.mkdtemp(prefix=f"{name}-")


def availability() -> tuple[bool, str]:
    """(True, adapter description) or (False, why); never raises."""
    try:
        from backends.wgsl import runtime
    except Exception as e:  # noqa: BLE001 - wgpu missing, or its native library failed
        return False, f"wgpu cannot be imported: {e}"
    return runtime.availability()


def read_buffer(buf, dtype=np.uint8) -> np.ndarray:
    """A host copy of a ``wgpu.GPUBuffer``'s contents as a 1-D array of ``dtype``, after
    the launches recorded before it."""
    from backends.wgsl.arrays import buffer_device, flush

    device = buffer_device(buf)
    flush(device)
    data = device.queue.read_buffer(buf)
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
        if _CAPTURES and record(self, grid, args, "wgsl"):  # a tc.graph takes it
            return
        self.kernel(grid, args)
