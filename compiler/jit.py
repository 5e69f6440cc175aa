"""``@tc.kernel``, ``tc.compile``: specialization, caches and the launch path.

The launch path imports no xDSL: a kernel found in the memory or disk cache launches
without loading the compiler. Compiling imports ``compiler.frontend``/``pipeline`` lazily.
``TileFunction`` (``@tc.func``) lives in ``compiler.source``, which the frontend imports
instead of this module.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import inspect
import operator
import os
import threading
from collections.abc import Callable, Sequence
from types import MethodType
from typing import Any

import numpy as np

import compiler.language as tl
from compiler import cache, descriptors, graphs, launch_hints, progress
from compiler import debug as debug_output
from compiler.backend_choice import (  # noqa: F401 - the launch API's names
    BACKEND_NAMES,
    BACKENDS,
    availability,
    backend_module,
    backends,
    default_backend,
    resolve_backend,
    set_backend,
)
from compiler.dependencies import NONE as NO_DEPENDENCIES
from compiler.dependencies import Dependencies
from compiler.dependencies import find as find_dependencies
from compiler.errors import ArgumentError, LaunchError, TilecError
from compiler.kinfo import ArgSpec, KernelInfo, Param
from compiler.source import TileFunction
from compiler.specialize import (
    arg_spec,
    check_dtypes,
    compiled_for,
    descriptor_key,
    descriptor_spec,
    fast_spec,
    is_one,
)
from compiler.tracebacks import grid_launch

_COMPILING = threading.RLock()
"""Held while a kernel is compiled or its launcher made: threads launching a new
specialization at once compile it once (compiling holds the GIL anyway)."""


def normalize_grid(grid: Any, meta: dict) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(meta)
    if isinstance(grid, (int, np.integer)):
        grid = (grid,)
    try:
        dims = tuple(operator.index(g) for g in grid)  # ints only: no "g", no 1.5
    except TypeError:
        raise LaunchError(f"grid must be a tuple of up to 3 ints, got {grid!r}") from None
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"grid must have 1 to 3 dimensions, got {len(dims)}")
    if any(g <= 0 for g in dims):
        raise LaunchError(f"grid dimensions must be positive, got {dims}")
    return dims + (1,) * (3 - len(dims))


# ---------------------------------------------------------------- compiled kernels

class CompiledKernel:
    """A kernel compiled for one specialization and backend; launches like a kernel."""

    def __init__(self, info: KernelInfo, artifact: str | bytes, asm: dict,
                 stages: list[tuple[str, str]] | None, launcher=None):
        self.metadata = info
        self.asm = asm
        self._stages = stages
        self._artifact = artifact
        self._launcher = launcher
        self.live = None  # ``Generated.live`` of a compilation in this process
        self.restage: Callable[[], list[tuple[str, str]]] | None = None  # stages not kept
        # the arguments as the kernel's parameters take them: arrays' (ct) or tensor
        # descriptors' parts; None: as given
        self.expand_args: Callable[[Sequence[Any]], list] | None = None
        # ``(grid, args)`` of a plain launch (no debug buffer, not verified) once the
        # launcher is made: the launcher's fastest entry, called by ``kernel[grid](...)``
        self.direct: Callable[[tuple[int, int, int], Sequence[Any]], None] | None = None
        # position -> value of the kernel's constexprs, for a kernel from ``warmup``: it
        # launches with every argument (``arity`` of them), as Triton's compiled kernels do
        self.constexprs: dict[int, Any] = {}
        self.arity = 0
        # (position, ``fast_spec``) of arguments already checked against the parameters:
        # ``arg_spec`` asks a PyTorch tensor for its interface, microseconds a launch
        self._checked: set[tuple[int, Any]] = set()

    @property
    def n_regs(self) -> int:
        """Registers a thread uses: ptxas's count on ptx, an estimate from the kernel's largest
        tile elsewhere (``compiler.passes.tile_budget``), so that occupancy arithmetic
        written for GPUs runs on every backend."""
        return self.metadata.registers or 0

    @property
    def n_spills(self) -> int:
        """Bytes of registers spilled to local memory (ptx; 0 elsewhere)."""
        return self.metadata.spills

    def _init_handles(self) -> None:
        """Load the kernel where it runs (Triton's name): its module on ptx."""
        _ = self.launcher

    @property
    def stages(self) -> list[tuple[str, str]]:
        if self._stages is None and self.restage is not None:
            self._stages = self.restage()
        return [tuple(s) for s in self._stages or []]

    @property
    def launcher(self):
        if self._launcher is None:
            with _COMPILING:
                if self._launcher is None:
                    mod = backend_module(self.metadata.backend)
                    live = self.live
                    self._launcher = mod.Launcher(self._artifact if live is None else live,
                                                  self.metadata)
                    self.live = None  # the launcher holds what it needs
        return self._launcher

    def __getitem__(self, grid):
        return MethodType(grid_launch, (self, grid))

    def run(self, grid, args: Sequence[Any], kwargs: dict, verify: bool = False) -> None:
        params = [p for p in self.metadata.params
                  if not p.name.startswith(debug_output.HIDDEN)]
        try:
            if self.constexprs and len(args) == self.arity:
                args = self._runtime_only(args)
            if self.expand_args is not None:
                args = self.expand_args(args)
            if kwargs:
                raise LaunchError(f"a compiled kernel takes its {len(params)} runtime "
                                  f"arguments positionally, got keywords {sorted(kwargs)}")
            if len(args) != len(params):
                raise LaunchError(f"{self.metadata.name} expects {len(params)} arguments "
                                  f"({', '.join(p.name for p in params)}), got {len(args)}")
            for i, (p, a) in enumerate(zip(params, args, strict=True)):
                try:
                    key = (i, fast_spec(a))
                    if key in self._checked:
                        continue
                    kind, dtype, _ = arg_spec(a)
                except ArgumentError as e:
                    raise e.named(p.name) from None
                if (kind == "ptr") != p.is_ptr or (p.is_ptr and dtype != p.dtype):
                    raise compiled_for(p, a)
                self._checked.add(key)
            self.launch(normalize_grid(grid, {}), list(args), verify)
        except TilecError as e:
            __tracebackhide__ = True  # IPython and pytest leave this frame out
            raise e.with_traceback(None) from None

    def _runtime_only(self, args: Sequence[Any]) -> list:
        """``args`` without the constexprs, each checked to be the value compiled in."""
        for i, value in self.constexprs.items():
            if args[i] != value:
                raise LaunchError(f"{self.metadata.name} was compiled with argument {i} = "
                                  f"{value!r} (a constexpr), got {args[i]!r}")
        return [a for i, a in enumerate(args) if i not in self.constexprs]

    def launch(self, grid: tuple[int, int, int], args: list, verify: bool = False) -> None:
        records = self.metadata.extra.get("debug")
        if (records or verify) and graphs.capturing() is not None:
            raise LaunchError(f"a launch with {'debug=True' if records else 'verify=True'} "
                              "reads results back after it runs, which a tc.graph capture "
                              "cannot: capture launches without it")
        if records and verify:  # the reference would run without the debug records
            raise LaunchError("verify=True and debug=True cannot be combined on the GPU "
                              "backends: launch with one of them")
        if records:  # debug=True: array lengths in, the debug buffer in and out
            extents = debug_output.extents(args, self.metadata.extra.get("bounds", ()))
            buf = debug_output.new_buffer()
            self.launcher(grid, [*args, *extents, buf])
            debug_output.report(buf, records)
        elif verify:
            from compiler.verify import verified_launch
            verified_launch(self, grid, args)
        else:
            launcher = self.launcher
            launcher(grid, args)
            self.direct = getattr(launcher, "direct", launcher)


NUM_WARPS = (1, 2, 4, 8, 16, 32)  # 32 warps: 1,024 threads, the most a block has
DEFAULT_STAGES = 2  # k-loop loads feeding a dot are prefetched one iteration ahead
_OPTION_DEFAULTS = (("backend", None), ("num_warps", None), ("debug", False),
                    ("num_stages", None))


# ``TILEC_CHECK_BOUNDS=1``: every launch runs as with ``debug=True`` (bounds checks on the
# GPU backends, and asserts and prints with them); read once: launches are hot
CHECK_BOUNDS = os.environ.get("TILEC_CHECK_BOUNDS", "") not in ("", "0")

# ``PROFILE(kernel name, backend, launch, metadata)`` runs ``launch()`` and records its
# time (``metadata``: None, or a call giving Triton's launch metadata); set only while a
# ``compiler.triton.profiler`` session records, so a launch otherwise pays one test
PROFILE: Callable[[str, str, Callable[[], None], Callable[[], dict] | None], None] | None = None


def _launch_arch(backend: str) -> str | None:
    """The target a launch compiles for: the current GPU's ``sm_XY`` on PTX, else None
    (the default target: PTX compiled where no GPU is)."""
    if backend != "ptx":
        return None
    return importlib.import_module("backends.ptx").device_arch()


def _compile(fn: TileFunction, specs: list, backend: str, num_warps: int | None, debug: bool,
             dump: Any = None, key: str | None = None, arch: str | None = None,
             num_stages: int | None = DEFAULT_STAGES, language: str = "triton") -> CompiledKernel:
    with _COMPILING:
        return _compile_locked(fn, specs, backend, num_warps, debug, dump, key, arch,
                               num_stages, language)


def _compile_locked(fn: TileFunction, specs: list, backend: str, num_warps: int | None,
                    debug: bool,
                    dump: Any, key: str | None, arch: str | None, num_stages: int | None,
                    language: str) -> CompiledKernel:
    options = (backend, num_warps, debug, arch, num_stages, language)
    if key is not None and not dump:
        hit = cache.load(key)  # None also for a bad entry, which it deleted with a warning
        if hit is not None:
            ck = CompiledKernel(hit.info, hit.artifact, hit.asm, hit.stages or None)
            ck.restage = functools.partial(_stages, fn, specs, *options)
            return ck
    with collector_paused(), progress.step(f"compiling {fn.__name__} for {backend}"):
        from compiler import frontend, pipeline, timing
        warps = f" ({num_warps} warps)" if num_warps else ""  # else chosen below
        with timing.compilation(f"{fn.__name__} on {backend}{warps}"):
            with timing.phase("frontend"):
                module, params = frontend.generate(fn.kernel_source(), specs, language)
                num_warps, num_stages, estimates = _chosen(module, backend, arch, num_warps,
                                                           num_stages)
            # No stage is kept: a third of a compilation went to printing or copying them,
            # for the few callers that read them (``ck.stages`` compiles again).
            compiled = pipeline.run(module, backend, num_warps, dump=dump, debug=debug,
                                    arch=arch or pipeline.DEFAULT_ARCH, num_stages=num_stages,
                                    keep_stages=False)
    target = compiled.extra.get("arch", backend)
    if compiled.extra.get("debug"):  # check-bounds' extents, strip-debug's buffer
        params = params + [Param(debug_output.EXTENT + params[i].name, "i32", False)
                           for i in compiled.extra.get("bounds", ())]
        params = params + [Param(debug_output.PARAM, "i32", True, True)]
    info = KernelInfo(fn.__name__, params, backend, target, num_warps,
                      shared=compiled.extra.get("shared", estimates.get("shared", 0)),
                      registers=compiled.extra.get("registers", estimates.get("registers")),
                      extra=compiled.extra,
                      num_stages=num_stages, spills=compiled.extra.get("spills", 0))
    if key is not None:
        cache.store(key, cache.Entry(info, compiled.artifact, compiled.asm, compiled.stages))
    ck = CompiledKernel(info, compiled.artifact, compiled.asm, compiled.stages or None)
    ck.live = compiled.live
    ck.restage = functools.partial(_stages, fn, specs, *options)
    return ck


def _chosen(module, backend: str, arch: str | None, num_warps: int | None,
            num_stages: int | None) -> tuple[int, int, dict[str, int]]:
    """Warps and stages a launch left to the compiler (cuTile's), and the register and
    shared-memory figures no GPU compiler gives (``compiler.passes.tile_budget``)."""
    from compiler import pipeline
    from compiler.passes import tile_budget
    return tile_budget.chosen(module, backend, arch or pipeline.DEFAULT_ARCH, num_warps,
                              num_stages, DEFAULT_STAGES)


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while compiling. A compilation (with the first
    one's imports) allocates a few hundred thousand objects, so the collector ran often,
    and each of its full passes walked the whole heap of the process: torch's alone is
    200,000 objects. 80 of the 640 ms of a first launch beside torch on an H200. The
    cycles a compilation leaves are collected after it, on the next allocations."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _stages(fn: TileFunction, specs: list, backend: str, num_warps: int | None, debug: bool,
            arch: str | None, num_stages: int | None, language: str) -> list[tuple[str, str]]:
    """Every stage's IR, from a compilation that keeps them (``ck.stages``)."""
    from compiler import frontend, pipeline
    with _COMPILING, collector_paused():
        module, _ = frontend.generate(fn.kernel_source(), specs, language)
        num_warps, num_stages, _ = _chosen(module, backend, arch, num_warps, num_stages)
        compiled = pipeline.run(module, backend, num_warps, debug=debug, num_stages=num_stages,
                                arch=arch or pipeline.DEFAULT_ARCH, eager_stages=True)
    return list(compiled.stages)


def _public(fn):
    """Re-raise a TilecError without compiler-internal frames."""
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TilecError as e:
            __tracebackhide__ = True  # IPython and pytest leave this frame out
            raise e.with_traceback(None) from None
    return functools.update_wrapper(wrapper, fn)  # help() shows fn's signature


# ---------------------------------------------------------------- @kernel

class KernelFunction:
    """A ``@tc.kernel`` function: ``kernel[grid](*args, backend=, num_warps=, verify=)``."""

    language = "triton"  # the frontend's builtin table: "triton" (tl.*) or "cutile" (ct.*)
    decorator = "@tc.kernel"
    default_warps: int | None = 4  # None: the compiler's choice (compiler.passes.tile_budget)
    default_stages: int | None = DEFAULT_STAGES  # likewise

    def __init__(self, fn: Callable, source: str | None = None):
        # the function checked and its source text found now, while it is at hand
        self._tile_function = TileFunction(fn, source, self.decorator)
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        sig = inspect.signature(fn)
        self.arg_names = list(sig.parameters)
        self.constexprs = {n for n, p in sig.parameters.items() if _is_constexpr(p.annotation)}
        self.defaults = {n: p.default for n, p in sig.parameters.items()
                         if p.default is not inspect.Parameter.empty}
        self._cache: dict[tuple, CompiledKernel] = {}
        self._launches: dict[tuple, tuple] = {}
        self._constexpr_positions = frozenset(
            i for i, n in enumerate(self.arg_names) if n in self.constexprs)
        self._first_constexpr_position = min(self._constexpr_positions,
                                             default=len(self.arg_names))
        self._dependencies = NO_DEPENDENCIES
        self._check_globals: Callable[[], bool] | None = None  # its ``check``, at hand
        self._option_params = {n: self.arg_names.index(n) for n, _ in _OPTION_DEFAULTS
                               if n in self.arg_names}  # option -> its parameter's position

    @property
    def source(self) -> str:
        """What the compiled code depends on, as text for cache keys: the sources of this
        kernel and of the functions it inlines, and the values of the globals they read."""
        return self.dependencies().key

    def dependencies(self) -> Dependencies:
        """What ``source`` is made of; found again when a global it read has changed."""
        deps = self._dependencies
        if deps is NO_DEPENDENCIES or deps.changed():
            with _COMPILING:
                deps = self._dependencies
                if deps is NO_DEPENDENCIES or deps.changed():
                    new = find_dependencies(self.fn, self._tile_function.text,
                                            plain=self.language == "cutile")
                    if new.key != deps.key:
                        self._launches = {}  # they launch what the old values compiled
                    self._dependencies = deps = new
                    self._check_globals = new.check
        return deps

    @property
    def tile_function(self) -> TileFunction:
        """This kernel as a function other kernels call (inlined), as a ``@triton.jit``
        function may be both launched and called."""
        return self._tile_function

    def __call__(self, *args, **kwargs):
        raise TilecError(f"{self.__name__} is a kernel: launch it as "
                         f"{self.__name__}[grid](...)")

    def __getitem__(self, grid):
        return MethodType(grid_launch, (self, grid))

    def bind(self, args: Sequence[Any], kwargs: dict) -> dict[str, Any]:
        if len(args) > len(self.arg_names):
            raise LaunchError(f"{self.__name__}() takes {len(self.arg_names)} arguments, "
                              f"got {len(args)}")
        bound = dict(zip(self.arg_names, args))
        for k, v in kwargs.items():
            if k not in self.arg_names:
                if k in launch_hints.NAMES:  # checked by ``_prepare``; no parameter's
                    continue
                raise LaunchError(f"{self.__name__}() got an unexpected argument {k!r}")
            if k in bound:
                raise LaunchError(f"{self.__name__}() got argument {k!r} twice")
            bound[k] = v
        missing = [n for n in self.arg_names if n not in bound and n not in self.defaults]
        if missing:
            raise LaunchError(f"{self.__name__}() missing argument(s): {', '.join(missing)}")
        return {n: bound.get(n, self.defaults.get(n)) for n in self.arg_names}

    def specialize(self, bound: dict[str, Any]):
        specs = []
        for name, v in bound.items():
            if name in self.constexprs or v is None:  # None: a constexpr, as in Triton
                specs.append(ArgSpec(name, "constexpr", value=v))
            elif self.language == "triton" and descriptors.is_descriptor(v):
                specs.append(descriptor_spec(name, v))
            else:
                kind, d, div16 = arg_spec(v)
                specs.append(ArgSpec(name, kind, tl.dtype_from_str(d), div16, one=is_one(v)))
        return specs

    def _spec_key(self, bound: dict[str, Any]) -> tuple:
        return tuple(("c", repr(v)) if n in self.constexprs or v is None
                     else descriptor_key(v, arg_spec) if descriptors.is_descriptor(v)
                     else (*arg_spec(v), is_one(v)) for n, v in bound.items())

    def compile_for(self, bound: dict[str, Any], backend: str, num_warps: int | None,
                    debug: bool = False, dump: Any = None,
                    num_stages: int | None = DEFAULT_STAGES) -> CompiledKernel:
        arch = _launch_arch(backend)
        key = (backend, num_warps, debug, num_stages, arch, self._spec_key(bound))
        source = self.source
        ck = self._cache.get((source, key))
        if ck is None or dump:
            with _COMPILING:
                ck = self._cache.get((source, key))  # another thread may have compiled it
                if ck is None or dump:
                    disk_key = cache.make_key(source, key)
                    specs = self.specialize(bound)
                    ck = _compile(self._tile_function, specs, backend, num_warps, debug,
                                  dump, disk_key, arch, num_stages=num_stages,
                                  language=self.language)
                    if any(s.kind == "descriptor" for s in specs):
                        ck.expand_args = descriptors.expand
                    self._cache[source, key] = ck
        return ck

    def profile_metadata(self, grid: tuple, ck: CompiledKernel, args: Sequence[Any],
                         kwargs: dict) -> Callable[[], dict] | None:
        """What a profile may ask of a launch besides its time: nothing here (a Triton
        kernel's ``launch_metadata``: ``compiler.triton.runtime.jit``)."""
        return None

    def run(self, grid, args, kwargs) -> None:
        """One launch. Its hot path, a launch like an earlier one, is a key of cheap facts
        about the arguments, a dict lookup and the launcher's call (CPU time per launch
        is what a small kernel costs); a new key compiles, or explains what is wrong."""
        try:
            opts = self._options(kwargs, len(args))
            backend = opts[0]
            verify = bool(kwargs.pop("verify", False))
            ck, sources = self._prepared(opts, args, kwargs)
            runtime = self.runtime_args(args, kwargs, sources)
            if ck.expand_args is not None:  # tensor descriptors: their parts
                runtime = ck.expand_args(runtime)
            if callable(grid):
                grid = grid(self.bind(args, kwargs))
            grid = _fast_grid(grid) or normalize_grid(grid, {})
            direct = ck.direct
            if PROFILE is not None:  # a profile is recording: it times the launch
                PROFILE(self.__name__, backend, lambda: ck.launch(grid, list(runtime), verify),
                        self.profile_metadata(grid, ck, args, kwargs))
            elif direct is not None and not verify:
                direct(grid, runtime)
            else:
                ck.launch(grid, list(runtime), verify)
        except TilecError as e:  # ``_public``, written out: one call less a launch
            __tracebackhide__ = True  # IPython and pytest leave this frame out
            raise self._named(e, args, kwargs).with_traceback(None) from None

    def _named(self, error: TilecError, args: Sequence[Any], kwargs: dict) -> TilecError:
        """``error``, naming its argument where it is an ``ArgumentError``: found by the
        launch key, which sees values, not parameters. The argument is the one that
        specializes with that error."""
        if not isinstance(error, ArgumentError):
            return error
        try:
            bound = self.bind(args, kwargs)
        except TilecError as e:  # the wrong number of arguments says more
            return e
        for name, value in bound.items():
            try:
                self.specialize({name: value})
            except ArgumentError as e:
                return e.named(name)
        return error

    def _options(self, kwargs: dict, nargs: int) -> tuple:
        """(backend, num_warps, debug, num_stages) of a launch, taken out of ``kwargs``;
        an option that names a parameter not given by position (Triton's tutorials pass
        ``num_stages=`` to a ``num_stages: tl.constexpr``) stays there and is both."""
        if not self._option_params:
            return (resolve_backend(kwargs.pop("backend", None)),
                    kwargs.pop("num_warps", self.default_warps),
                    bool(kwargs.pop("debug", False)) or CHECK_BOUNDS,
                    kwargs.pop("num_stages", self.default_stages))
        o = {n: (kwargs.get if self._option_params.get(n, -1) >= nargs else kwargs.pop)(n, d)
             for n, d in _OPTION_DEFAULTS}
        if o["num_warps"] is None:
            o["num_warps"] = self.default_warps
        if o["num_stages"] is None:
            o["num_stages"] = self.default_stages
        return (resolve_backend(o["backend"]), o["num_warps"],
                bool(o["debug"]) or CHECK_BOUNDS, o["num_stages"])

    def _prepared(self, opts: tuple, args: Sequence[Any], kwargs: dict) -> tuple:
        """``_prepare``'s answer for a launch like an earlier one, from the launch cache."""
        key = self._launch_key(opts, args, kwargs)
        check = self._check_globals
        if check is not None and check():  # a global the kernel read was assigned
            self.dependencies()
        try:
            prepared = self._launches.get(key)
        except TypeError:  # an unhashable constexpr (a list, say) cannot specialize
            raise LaunchError(self._unhashable(args, kwargs)) from None
        if prepared is None:
            prepared = self._launches[key] = self._prepare(opts, args, kwargs)
        return prepared

    def warmup(self, *args, grid: Any = None, **kwargs) -> CompiledKernel:
        """Compile for these arguments, as a launch would, without launching (Triton's
        ``kernel.warmup(*args, grid=..., **meta)``); the compiled kernel launches with
        the runtime arguments or with all of them. A warmup like an earlier one costs
        what a launch does (Triton's fused-softmax tutorial warms up before every launch)."""
        try:
            ck, _ = self._prepared(self._options(kwargs, len(args)), args, kwargs)
            if not ck.arity:
                bound = self.bind(args, kwargs)
                ck.constexprs = {i: bound[n] for i, n in enumerate(self.arg_names)
                                 if n in self.constexprs}
                ck.arity = len(self.arg_names)
            return ck
        except TilecError as e:
            __tracebackhide__ = True  # IPython and pytest leave this frame out
            raise self._named(e, args, kwargs).with_traceback(None) from None

    def _unhashable(self, args: Sequence[Any], kwargs: dict) -> str:
        for name, v in self.bind(args, kwargs).items():
            if name not in self.constexprs:
                continue
            try:
                hash(v)
            except TypeError:
                return (f"constexpr {name!r} must be hashable (an int, float, bool, str, "
                        f"dtype or tuple), got {type(v).__name__} {v!r}")
        return f"{self.__name__}(): unhashable launch arguments"

    def runtime_args(self, args: Sequence[Any], kwargs: dict,
                     sources: tuple | None) -> Sequence[Any]:
        """The launcher's arguments: the runtime ones, each from its position or keyword
        (None: exactly the positional ones)."""
        if sources is None:
            return args
        return [args[i] if isinstance(i, int) else kwargs[i] for i in sources]

    def _launch_key(self, opts: tuple, args: Sequence[Any], kwargs: dict) -> tuple:
        """What decides the compiled kernel, cheaply: the options, constexpr values, and
        for runtime arguments their type, dtype and alignment/divisibility (never their
        values)."""
        if len(args) > self._first_constexpr_position:
            cpos = self._constexpr_positions
            key = [a if i in cpos else fast_spec(a) for i, a in enumerate(args)]
        else:
            key = list(map(fast_spec, args))
        if kwargs.keys() <= self.constexprs:
            return (opts, *key, *kwargs.items())
        return (opts, *key, *[(k, v if k in self.constexprs else repr(v)
                               if k in launch_hints.NAMES else fast_spec(v))
                              for k, v in kwargs.items()])

    def _prepare(self, opts: tuple, args: Sequence[Any], kwargs: dict):
        """Compile for a new launch key; returns the kernel and where each runtime
        argument comes from (a position in args, or a keyword)."""
        backend, num_warps, debug, num_stages = opts
        if (num_warps not in NUM_WARPS or isinstance(num_warps, bool)) and not (
                num_warps is None and self.default_warps is None):
            raise LaunchError(f"num_warps must be 1, 2, 4, 8, 16 or 32, got {num_warps!r}")
        if num_stages is not None or self.default_stages is not None:
            _check_stages(num_stages)
        launch_hints.check(kwargs, self.arg_names)
        bound = self.bind(args, kwargs)
        if any(n not in self.constexprs and n not in kwargs and i >= len(args)
               for i, n in enumerate(self.arg_names)):
            raise LaunchError(f"{self.__name__}(): runtime arguments cannot take defaults")
        refused = getattr(backend_module(backend), "UNSUPPORTED_DTYPES", None)
        if refused:  # named here: the compiler would point at the kernel's ``def``
            check_dtypes(self.specialize(bound), bound, backend, refused)
        ck = self.compile_for(bound, backend, num_warps, debug, num_stages=num_stages)
        sources = tuple(i if i < len(args) else n for i, n in enumerate(self.arg_names)
                        if n not in self.constexprs and bound[n] is not None)
        return ck, None if sources == tuple(range(len(args))) else sources


_PADDING = {1: (1, 1), 2: (1,), 3: ()}


def _fast_grid(grid: Any) -> tuple[int, int, int] | None:
    """A grid of one to three positive ints, as a 3-tuple (None: take the slow path)."""
    if type(grid) is tuple:
        padding = _PADDING.get(len(grid))
        if padding is not None:
            for g in grid:
                if type(g) is not int or g <= 0:
                    return None
            return grid + padding
    return None


def _is_constexpr(annotation: Any) -> bool:
    return annotation is tl.constexpr or isinstance(annotation, tl.constexpr) or (
        isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr")


@_public
def func(fn: Callable | None = None, *, source: str | None = None):
    """Decorator: ``@tc.func`` marks a helper that kernels call (inlined). ``source=``:
    its text, for a function Python keeps none of (defined by ``exec`` of a string)."""
    if fn is None:
        return _public(lambda f: TileFunction(f, source))
    return TileFunction(fn, source)


@_public
def kernel(fn: Callable | None = None, *, source: str | None = None, **_options):
    """Decorator: ``@tc.kernel`` makes a launchable tile kernel. ``source=``: its text,
    for a kernel Python keeps none of (defined by ``exec`` of a string)."""
    if fn is None:
        return _public(lambda f: KernelFunction(f, source))
    return KernelFunction(fn, source)


def _check_stages(num_stages: Any) -> None:
    if not isinstance(num_stages, int) or isinstance(num_stages, bool) or num_stages < 1:
        raise LaunchError(f"num_stages must be a positive integer, got {num_stages!r}")
