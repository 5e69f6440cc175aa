"""``tc.export``: a kernel compiled for another runtime to launch. Target ``"web"``: an
ES module with the kernel's WGSL and a launcher, for WebGPU in browsers and Deno
(``backends/wgsl/web.py``; the launcher's shared half is ``tilec-runtime.js``)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler.ahead_of_time import _parse_signature, compile
from compiler.errors import LaunchError
from compiler.jit import KernelFunction

TARGETS = ("web",)
RUNTIME_NAME = "tilec-runtime.js"


def export(fn, signature, constants: Mapping[str, Any] | None = None, target: str = "web",
           num_warps: int = 4, output: str | Path | None = None,
           runtime: str = f"./{RUNTIME_NAME}") -> str:
    """The module text of ``fn`` compiled for ``signature`` and ``constants``. With
    ``output``, also writes it there, and the runtime beside it when ``runtime`` is the
    default relative path."""
    from backends.wgsl import web

    if target not in TARGETS:
        raise LaunchError(f"export target {target!r}: choose from {TARGETS}")
    kf = fn if isinstance(fn, KernelFunction) else KernelFunction(fn)
    ck = compile(kf, signature=signature, constants=constants, backend="wgsl",
                 num_warps=num_warps)
    types = _parse_signature(kf, signature)
    text = web.module_text(ck._artifact, ck.metadata, _header(kf, ck, types, constants),
                           dict(constants or {}), {n: 16 for n, t in types.items()
                            if not t.startswith("*") and t.endswith(":16")}, runtime)
    if output is not None:
        out = Path(output)
        out.write_text(text)
        if runtime == f"./{RUNTIME_NAME}":
            shutil.copyfile(web.RUNTIME, out.parent / RUNTIME_NAME)
    return text


def _header(kf: KernelFunction, ck, types: dict[str, str], constants) -> list[str]:
    from compiler import __version__

    info = ck.metadata
    params = ", ".join(f"{n}: {t.strip()}" for n, t in types.items())
    consts = ", ".join(f"{k}={v!r}" for k, v in (constants or {}).items()) or "none"
    origin = f"{kf.fn.__module__}.{kf.fn.__qualname__}"
    return [f"{info.name}: exported by tilec {__version__} for WebGPU from {origin}", "",
            f"signature: {info.name}({params})", f"constants: {consts}",
            f"num_warps: {info.num_warps}"]
