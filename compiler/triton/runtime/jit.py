"""``@triton.jit`` on tilec: a ``JITFunction`` is a tilec kernel (``KernelFunction``), so
it launches as ``kernel[grid](...)``, is called from other kernels (inlined), and goes
under ``@triton.autotune``/``@triton.heuristics``.

Triton's decorator options are accepted. ``debug=True`` makes ``debug=True`` its
launches' default (device asserts and bounds checks). ``launch_metadata=fn`` names and
measures launches for proton (below). The others are hints tilec does not need:
``do_not_specialize`` and ``do_not_specialize_on_alignment`` (tilec specializes an
integer only on its width, divisibility by 16 and being 1, and a kernel compiles once per
such case), ``noinline`` (every call is inlined), ``repr``, ``version``.

A ``compiler.triton.profiler`` session started with ``hook="triton"`` records a launch
of a kernel with ``launch_metadata=fn`` under ``fn(grid, kernel, args)["name"]``, with
the numbers the dict gives (``flops16``, ``bytes``): ``kernel.name`` is the function's
name, ``args`` every parameter by name, constexprs included.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import MethodType
from typing import Any

from compiler.autotune import Autotuner as TilecAutotuner
from compiler.autotune import Heuristics
from compiler.errors import TilecError
from compiler.jit import KernelFunction
from compiler.tracebacks import triton_grid_launch


class KernelInterface(abc.ABC):
    """What Triton's launchable objects share. tilec's kernels, autotuners and heuristics
    are instances (registered); a subclass written for Triton launches through ``run(*args,
    grid=..., warmup=False, **kwargs)``, as Triton's ``__getitem__`` calls it."""

    def __getitem__(self, grid) -> Callable[..., Any]:
        return MethodType(triton_grid_launch, (self, grid))

    @abc.abstractmethod
    def run(self, *args, grid, warmup, **kwargs):
        """One launch on ``grid`` (``warmup``: compile only)."""


KernelInterface.register(KernelFunction)
KernelInterface.register(TilecAutotuner)
KernelInterface.register(Heuristics)


@dataclass(frozen=True)
class KernelParam:
    """One parameter of a ``JITFunction``, as Triton's ``params`` list describes it (PyTorch
    reads this list to trace launches through ``torch.library.wrap_triton``)."""

    num: int
    name: str
    is_constexpr: bool
    default: Any
    annotation: Any

    @property
    def has_default(self) -> bool:
        return self.default is not inspect.Parameter.empty


class JITFunction(KernelFunction):
    """A ``@triton.jit`` function (see the module docstring for its options)."""

    def __init__(self, fn: Callable, *, version: Any = None,
                 do_not_specialize: Iterable[int | str] = (),
                 do_not_specialize_on_alignment: Iterable[int | str] = (),
                 debug: bool | None = None, noinline: bool | None = None,
                 repr: Callable | None = None, launch_metadata: Callable | None = None):
        super().__init__(fn)
        self.version = version
        self.do_not_specialize = self._parameters(do_not_specialize, "do_not_specialize")
        self.do_not_specialize_on_alignment = self._parameters(
            do_not_specialize_on_alignment, "do_not_specialize_on_alignment")
        self.debug = debug
        self.noinline = noinline
        self.repr = repr
        self.launch_metadata = launch_metadata
        if debug:  # only such a kernel's launches pay for the default
            self.run = self._run_debug

    @property
    def params(self) -> list[KernelParam]:
        """The parameters in order, each a ``KernelParam``."""
        sig = inspect.signature(self.fn).parameters
        return [KernelParam(i, n, n in self.constexprs, sig[n].default, sig[n].annotation)
                for i, n in enumerate(self.arg_names)]

    @property
    def src(self) -> str:
        """The function's source text, as Triton keeps it."""
        return inspect.getsource(self.fn)

    def _parameters(self, names: Iterable[int | str], option: str) -> list[str]:
        """``names`` (parameter names or positions) as names; unknown ones are an error."""
        out = []
        for n in names:
            if isinstance(n, int) and 0 <= n < len(self.arg_names):
                out.append(self.arg_names[n])
            elif n in self.arg_names:
                out.append(n)
            else:
                raise TilecError(f"@triton.jit({option}=...) on {self.__name__}: {n!r} is not "
                                 f"one of its parameters ({', '.join(self.arg_names)})")
        return out

    def profile_metadata(self, grid: tuple, ck: Any, args: Sequence[Any],
                         kwargs: dict) -> Callable[[], dict] | None:
        """``launch_metadata(grid, kernel, args)`` of one launch, as a call (made only
        when a profile asks): ``kernel`` is the compiled kernel's metadata, whose
        ``name`` is the function's, as Triton's is."""
        metadata = self.launch_metadata
        if metadata is None:
            return None
        return lambda: metadata(grid, ck.metadata, self.bind(args, kwargs))

    def _run_debug(self, grid, args, kwargs) -> None:
        KernelFunction.run(self, grid, args, {"debug": True, **kwargs})


def jit(fn: Callable | None = None, *, version: Any = None, repr: Callable | None = None,
        launch_metadata: Callable | None = None,
        do_not_specialize: Iterable[int | str] | None = None,
        do_not_specialize_on_alignment: Iterable[int | str] | None = None,
        debug: bool | None = None, noinline: bool | None = None):
    """Decorator, bare (``@triton.jit``) or with Triton's options (``@triton.jit(debug=True)``):
    the function as a ``JITFunction``."""
    def decorate(f: Callable) -> JITFunction:
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize or (),
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment or (),
                           debug=debug, noinline=noinline, repr=repr,
                           launch_metadata=launch_metadata)
    return decorate if fn is None else decorate(fn)


__all__ = ["JITFunction", "KernelInterface", "KernelParam", "jit"]
