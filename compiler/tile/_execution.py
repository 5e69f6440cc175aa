"""Kernels and launches, cuTile style: ``@ct.kernel`` with cuTile's compiler hints (values
per architecture through ``ct.ByTarget``), ``kernel.replace_hints``, ``ct.launch``,
``@ct.function`` and ``ct.compiler_timeout``.

cuTile's hints (``num_ctas``, ``occupancy``, ``opt_level``, ``num_worker_warps``) tune its
own compiler; tilec checks them as cuTile does and keeps them (``kernel.hints(target)``),
but they change nothing it computes: a block is one program (no thread-block clusters),
and occupancy, registers and warps are tilec's own choices. A kernel's results are
the same with any hints, as they are in cuTile.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from compiler.arrays import TileKernel
from compiler.errors import LaunchError, describe_value
from compiler.jit import _public

_UNSPECIFIED = object()

HINTS = {"num_ctas": None, "occupancy": None, "opt_level": 3, "num_worker_warps": None}
"""cuTile's compiler hints and their defaults."""


class ByTarget:
    """A hint's value per GPU architecture: ``ct.ByTarget(sm_100=2, default=1)`` is 2 when
    compiling for ``sm_100`` and 1 elsewhere; without ``default``, the hint's own default.
    Keys are ``sm_<major><minor>``."""

    def __init__(self, *, default: Any = _UNSPECIFIED, **value_by_target: Any):
        for arch in value_by_target:
            if not (arch.startswith("sm_") and arch[3:].isdigit()):
                raise LaunchError(f"ct.ByTarget: {arch!r} is not a GPU architecture; keys "
                                  f"are sm_<major><minor>, such as sm_90 or sm_100")
        self.default = default
        self.by_target = value_by_target

    def resolve(self, target: str, default: Any) -> Any:
        """The value for ``target`` (``"sm_90"``; another name, such as a backend's, takes
        the default): its own, else ``default=``, else ``default``."""
        if target in self.by_target:
            return self.by_target[target]
        return default if self.default is _UNSPECIFIED else self.default

    def values(self) -> list[Any]:
        given = list(self.by_target.values())
        return given if self.default is _UNSPECIFIED else [*given, self.default]

    def __repr__(self) -> str:
        parts = [f"{k}={v!r}" for k, v in self.by_target.items()]
        if self.default is not _UNSPECIFIED:
            parts.append(f"default={self.default!r}")
        return f"ByTarget({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByTarget) and (self.default, self.by_target) == (
            other.default, other.by_target)

    __hash__ = None  # type: ignore[assignment] - equal by value, like the dict it holds


def _check_hint(name: str, value: Any) -> None:
    """A ``LaunchError`` unless ``value`` is one cuTile takes for hint ``name``."""
    if value is None:
        return
    whole = isinstance(value, int) and not isinstance(value, bool)
    ok = {"num_ctas": whole and 1 <= value <= 16 and value & (value - 1) == 0,
          "occupancy": whole and 1 <= value <= 32,
          "opt_level": whole and 0 <= value <= 3,
          "num_worker_warps": value in (4, 8) and whole}[name]
    if not ok:
        allowed = {"num_ctas": "a power of two from 1 to 16", "occupancy": "1 to 32",
                   "opt_level": "0 to 3", "num_worker_warps": "4 or 8"}[name]
        raise LaunchError(f"ct.kernel: {name} must be None, {allowed} or a ct.ByTarget of "
                          f"those, got {value!r}")


class CuTileKernel(TileKernel):
    """A ``@ct.kernel`` with cuTile's compiler hints."""

    def __init__(self, fn: Callable, source: str | None = None, **hints: Any):
        unknown = sorted(set(hints) - set(HINTS))
        if unknown:
            raise LaunchError(f"ct.kernel: unknown option(s) {', '.join(unknown)}; cuTile's "
                              f"are {', '.join(HINTS)}")
        self._hints = {**HINTS, **hints}
        for name, value in self._hints.items():
            for v in value.values() if isinstance(value, ByTarget) else [value]:
                _check_hint(name, v)
        self._source_text = source
        super().__init__(fn, source)

    def hints(self, target: str | None = None) -> dict[str, Any]:
        """The hints for ``target`` (``"sm_100"``), each ``ct.ByTarget`` resolved; None: the
        architecture a PTX launch here compiles for (the GPU's, else sm_90)."""
        target = target or _ptx_target()
        return {name: v.resolve(target, HINTS[name]) if isinstance(v, ByTarget) else v
                for name, v in self._hints.items()}

    def replace_hints(self, **hints: Any) -> CuTileKernel:
        """A new kernel of this function with ``hints`` in place of these (it compiles and
        caches on its own, as in cuTile)."""
        return CuTileKernel(self.fn, self._source_text, **{**self._hints, **hints})


def _ptx_target() -> str:
    from backends.ptx import device_arch  # the launch path's own: imports no xDSL
    return device_arch() or "sm_90"


@_public
def kernel(fn: Callable | None = None, *, source: str | None = None, **hints: Any):
    """Decorator: ``@ct.kernel`` makes a kernel over arrays and tiles; ``@ct.kernel(
    num_ctas=..., occupancy=..., opt_level=..., num_worker_warps=...)`` gives cuTile's
    compiler hints (checked and kept; they change no result). ``source=``: the kernel's
    text, for a kernel Python keeps none of (defined by ``exec`` of a string)."""
    if fn is None:
        return _public(lambda f: CuTileKernel(f, source, **hints))
    return CuTileKernel(fn, source, **hints)


def function(func: Callable | None = None, /, *, host: bool = False, tile: bool = True):
    """cuTile's ``@ct.function``: marks a function kernels call. tilec inlines any plain
    function a kernel calls, so this returns ``func`` itself (callable on the host too)."""
    del host, tile
    return func if func is not None else (lambda f: f)


def launch(stream: Any, grid: Any, kernel: TileKernel, kernel_args: Sequence[Any], *,
           programmatic_dependent_launch: bool = False, **options: Any) -> None:
    """cuTile's launch: ``kernel[grid](*kernel_args, **options)`` (tilec's launch options,
    ``backend=`` ...). The PTX backend runs on the current CuPy/PyTorch stream: pass that
    one as ``stream``. ``kernel_args`` is a tuple, as cuTile requires: an array passed
    bare would otherwise be taken as its rows. ``programmatic_dependent_launch`` is
    Triton's ``launch_pdl``: taken, and each launch still starts after the one before
    ends, which is what ``ct.grid_dependency_control_wait`` waits for."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out
    del stream
    if not isinstance(kernel_args, tuple):
        name = getattr(kernel, "__name__", "the kernel")
        params = ", ".join(getattr(kernel, "arg_names", ()))
        raise LaunchError(f"ct.launch(stream, grid, kernel, args): args must be a tuple of "
                          f"{name}'s arguments ({params}), got {describe_value(kernel_args)}")
    if programmatic_dependent_launch:
        options["launch_pdl"] = True
    kernel[grid](*kernel_args, **options)


@contextlib.contextmanager
def compiler_timeout(timeout_sec: float) -> Iterator[None]:
    """cuTile's ``with ct.compiler_timeout(seconds):``, a limit on each compilation inside.
    Accepted (a positive number) but not enforced: tilec compiles in this process, and
    stops no compilation part way."""
    if isinstance(timeout_sec, bool) or not isinstance(timeout_sec, int | float) \
            or not timeout_sec > 0:
        raise LaunchError(f"ct.compiler_timeout takes a positive number of seconds, got "
                          f"{timeout_sec!r}")
    yield
