"""``tc.export``: a kernel compiled for another runtime to launch. Target ``"web"``: an
ES module with the kernel's WGSL and a launcher, for WebGPU in browsers and Deno
(``backends/wgsl/web.py``; the launcher's shared half is ``tilec-runtime.js``)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import replace
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

    _check_target(target)
    kf, ck, types = _compiled(fn, signature, constants, num_warps)
    text = web.module_text(ck._artifact, ck.metadata, _header(kf, ck, types, constants),
                           dict(constants or {}), _divisible(types), runtime)
    _write(text, output, runtime)
    return text


def export_program(kernels: Mapping[str, tuple], target: str = "web",
                   output: str | Path | None = None,
                   runtime: str = f"./{RUNTIME_NAME}") -> str:
    """One module of several kernels, ``name -> (fn, signature, constants[, num_warps])``
    (``name`` is the launcher's; one kernel may be exported twice under two names), and a
    ``program`` of them whose ``run(device, launches)`` encodes many launches into one
    command buffer. ``output`` and ``runtime`` as ``export``'s."""
    from backends.wgsl import web
    from compiler import __version__

    _check_target(target)
    if not kernels:
        raise LaunchError("export_program needs at least one kernel")
    title = f"a program of {len(kernels)} kernels exported by tilec {__version__} for WebGPU"
    parts, lines = [], [title, ""]
    for name, entry in kernels.items():
        if not name.isidentifier() or not isinstance(entry, tuple) or not 2 <= len(entry) <= 4:
            raise LaunchError(f"export_program: {name!r} must be an identifier naming "
                              "(fn, signature, constants[, num_warps])")
        fn, signature, *more = entry
        constants, num_warps = (more[0] if more else None), (more[1] if len(more) > 1 else 4)
        kf, ck, types = _compiled(fn, signature, constants, num_warps)
        info = ck.metadata if name == ck.metadata.name else replace(ck.metadata, name=name)
        header = _header(kf, ck, types, constants)
        parts.append((ck._artifact, info, dict(constants or {}), _divisible(types),
                      f"{name}: {header[2].removeprefix('signature: ')}, {header[3]}"))
    text = web.program_text(parts, lines, runtime)
    _write(text, output, runtime)
    return text


def export_graph(graph, output: str | Path, names: Mapping[str, Any] | None = None,
                 keep: Sequence[Any] = (), runtime: str = f"./{RUNTIME_NAME}") -> str:
    """A ``tc.graph`` captured on wgsl as a web module: its kernels, its launches in order
    and a table of the buffers they bind, written to ``output`` (a ``.js`` file), with
    ``<stem>.bin`` beside it holding the bytes of the buffers of the arrays in ``keep``
    (weights; the other buffers start zeroed). The module's ``load(device, bytes or URL)``
    makes the buffers and gives ``{ run, buffers }``: ``run()`` replays the launches as one
    ``program.run`` (one command buffer), and ``buffers`` holds the GPUBuffers of the
    arrays ``names`` names (what JavaScript writes and reads between runs)."""
    from backends.wgsl import read_buffer, web
    from backends.wgsl.arrays import WgslArray

    if getattr(graph, "backend", None) != "wgsl" or getattr(graph, "_state", "") != "ready":
        raise LaunchError("export_graph takes a tc.graph('wgsl') whose capture has ended")
    buffers: dict[int, int] = {}  # id of a GPUBuffer -> its index
    table: list[dict] = []
    kernels: dict[int, int] = {}  # id of a captured kernel -> its index
    parts, launches = [], []
    for launcher, grid, args in graph.launches:
        k = launcher.kernel
        if id(k) not in kernels:
            kernels[id(k)] = len(parts)
            info = replace(k.info, name=f"{k.info.name}_{len(parts)}")
            parts.append((k.source, k.facts, info))
        bound = []
        for a in args:
            if isinstance(a, WgslArray):
                if id(a.buffer) not in buffers:
                    buffers[id(a.buffer)] = len(table)
                    table.append({"size": a.buffer.size, "buffer": a.buffer})
                offset, size = a.bound_range()
                bound.append({"b": buffers[id(a.buffer)], "offset": offset, "size": size})
            else:
                bound.append(a.item() if hasattr(a, "item") else a)
        launches.append([kernels[id(k)], list(grid), *bound])
    out = Path(output)
    blob, kept = bytearray(), {id(a.buffer) for a in keep}
    for entry in table:
        buf = entry.pop("buffer")
        if id(buf) in kept:
            data = read_buffer(buf).tobytes()
            entry["contents"] = [len(blob), len(data)]
            blob += data
        entry["name"] = next((n for n, a in (names or {}).items() if a.buffer is buf), None)
    missing = [n for n, a in (names or {}).items() if id(a.buffer) not in buffers]
    if missing:
        raise LaunchError(f"export_graph: no launch of the graph binds {', '.join(missing)}")
    text = web.graph_text(parts, table, launches, f"{out.stem}.bin", runtime)
    _write(text, out, runtime)
    out.with_suffix(".bin").write_bytes(bytes(blob))
    return text


def _check_target(target: str) -> None:
    if target not in TARGETS:
        raise LaunchError(f"export target {target!r}: choose from {TARGETS}")


def _compiled(fn, signature, constants, num_warps: int):
    kf = fn if isinstance(fn, KernelFunction) else KernelFunction(fn)
    ck = compile(kf, signature=signature, constants=constants, backend="wgsl",
                 num_warps=num_warps)
    return kf, ck, _parse_signature(kf, signature)


def _divisible(types: dict[str, str]) -> dict[str, int]:
    """The integer parameters exported for multiples of 16 (``i32:16``)."""
    return {n: 16 for n, t in types.items() if not t.startswith("*") and t.endswith(":16")}


def _write(text: str, output: str | Path | None, runtime: str) -> None:
    from backends.wgsl import web

    if output is not None:
        out = Path(output)
        out.write_text(text)
        if runtime == f"./{RUNTIME_NAME}":
            shutil.copyfile(web.RUNTIME, out.parent / RUNTIME_NAME)


def _header(kf: KernelFunction, ck, types: dict[str, str], constants) -> list[str]:
    from compiler import __version__

    info = ck.metadata
    params = ", ".join(f"{n}: {t.strip()}" for n, t in types.items())
    consts = ", ".join(f"{k}={v!r}" for k, v in (constants or {}).items()) or "none"
    origin = f"{kf.fn.__module__}.{kf.fn.__qualname__}"
    return [f"{info.name}: exported by tilec {__version__} for WebGPU from {origin}", "",
            f"signature: {info.name}({params})", f"constants: {consts}",
            f"num_warps: {info.num_warps}"]
