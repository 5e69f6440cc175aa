"""``@tc.autotune`` and ``@tc.heuristics``: launch options chosen per launch, as in Triton.

An ``Autotuner`` wraps a kernel (or another wrapper) and, the first time a launch brings
a new key (the values of the ``key`` arguments, the dtypes of the array arguments and
the backend), launches the kernel with every config under ``tc.testing.do_bench`` and
keeps the fastest: in memory, and in the disk cache (``compiler.cache`` records), so a
later process launches the chosen config at once. Arguments the kernel writes are zeroed
(``reset_to_zero``) before each trial and put back (``restore_value``) after it, so the
launch that follows tuning sees the user's data. ``TILEC_PRINT_AUTOTUNING=1`` prints
each choice. A ``Heuristics`` wrapper computes constexprs from the arguments instead.
"""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections.abc import Callable, Sequence
from types import MethodType
from typing import Any

import numpy as np

from compiler import cache, graphs, progress, testing
from compiler.device_views import DeviceView
from compiler.errors import (
    CompileError,
    LaunchError,
    OutOfResources,
    TilecError,
    UnsupportedError,
)
from compiler.jit import (
    DEFAULT_STAGES,
    KernelFunction,
    _public,
    availability,
    resolve_backend,
)
from compiler.tracebacks import grid_launch, triton_grid_launch

LAUNCH_OPTIONS = ("num_warps", "num_stages")


class Config:
    """Constexpr values and launch options for one trial: ``tc.Config({"BLOCK": 128},
    num_warps=4, num_stages=2)``; ``pre_hook(args)`` runs before each launch with it.
    ``num_ctas`` and ``maxnreg`` are Triton's too: kept (they tell configs apart and reach
    ``pre_hook`` and ``perf_model``) but not launched with, since a launch does not take
    them yet; in Triton both change speed, never results."""

    def __init__(self, kwargs: dict[str, Any], num_warps: int = 4,
                 num_stages: int = DEFAULT_STAGES, num_ctas: int = 1,
                 maxnreg: int | None = None, pre_hook: Callable | None = None):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def launch_kwargs(self) -> dict[str, Any]:
        """What a launch with this config is given: the constexprs and launch options."""
        return {**self.kwargs, "num_warps": self.num_warps, "num_stages": self.num_stages}

    def all_kwargs(self) -> dict[str, Any]:
        """The launch's, with ``num_ctas``/``maxnreg`` where not the default, as Triton's."""
        return {**self.launch_kwargs(), **self._hints()}

    def _hints(self) -> dict[str, Any]:
        hints = {"num_ctas": self.num_ctas} if self.num_ctas != 1 else {}
        return hints | ({"maxnreg": self.maxnreg} if self.maxnreg is not None else {})

    def _identity(self) -> tuple:
        return (tuple(sorted((k, repr(v)) for k, v in self.kwargs.items())),
                self.num_warps, self.num_stages, self.num_ctas, self.maxnreg)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __str__(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in self.all_kwargs().items())

    def __repr__(self) -> str:
        hints = "".join(f", {k}={v!r}" for k, v in self._hints().items())
        return (f"Config({self.kwargs!r}, num_warps={self.num_warps}, "
                f"num_stages={self.num_stages}{hints})")


def _launchable(fn: Any, decorator: str) -> Any:
    if not isinstance(fn, (KernelFunction, Autotuner, Heuristics)):
        raise TilecError(f"@tc.{decorator} goes above @tc.kernel (it got "
                         f"{type(fn).__name__} {getattr(fn, '__name__', '')!r})")
    return fn


def _known_keys(fn: Any, key: Sequence[str]) -> list[str]:
    """The ``key`` names that are arguments; the others warned about and dropped, as
    Triton ignores them (a misspelt key leaves that argument out of the tuning key)."""
    unknown = [n for n in key if n not in fn.arg_names]
    if unknown:
        warnings.warn(f"{fn.__name__}: autotune key names {', '.join(map(repr, unknown))}, "
                      f"not among its arguments ({', '.join(fn.arg_names)}); ignored",
                      stacklevel=4)
    return [n for n in key if n in fn.arg_names]


def _check_names(fn: Any, what: str, names: Sequence[str]) -> list[str]:
    unknown = [n for n in names if n not in fn.arg_names]
    if unknown:
        raise TilecError(f"{fn.__name__}: {what} names {', '.join(unknown)}, which "
                         f"{'is' if len(unknown) == 1 else 'are'} not among its arguments "
                         f"({', '.join(fn.arg_names)})")
    return list(names)


def run_wrapped(fn: Any, grid, args: Sequence[Any], kwargs: dict) -> None:
    """A launch of what a wrapper wraps: tilec's ``run(grid, args, kwargs)``, or Triton's
    ``run(*args, grid=, warmup=False, **kwargs)`` for an object launched that way (a
    ``compiler.triton`` autotuner, which a project may subclass as it would Triton's)."""
    if getattr(fn, "triton_run", False):
        return triton_grid_launch((fn, grid), *args, **kwargs)
    return fn.run(grid, args, kwargs)


class _Wrapper:
    """What ``Autotuner`` and ``Heuristics`` share: they launch like the kernel they wrap."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.arg_names = fn.arg_names
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    @property
    def source(self) -> str:
        return self.fn.source

    def __getitem__(self, grid):
        return MethodType(grid_launch, (self, grid))

    def __call__(self, *args, **kwargs):
        raise TilecError(f"{self.__name__} is a kernel: launch it as "
                         f"{self.__name__}[grid](...)")

    def named(self, args: Sequence[Any], kwargs: dict) -> dict[str, Any]:
        return {**dict(zip(self.arg_names, args)), **kwargs}

    def run(self, grid, args, kwargs) -> None:
        raise NotImplementedError


class Heuristics(_Wrapper):
    """Constexprs (or launch options, ``num_warps``, as in Triton) computed from the
    launch's arguments: ``values[name](args)``, in order (a later rule sees the values of
    earlier ones)."""

    def __init__(self, fn: Any, values: dict[str, Callable[[dict], Any]]):
        super().__init__(fn)
        self.values = dict(values)
        _check_names(fn, "@tc.heuristics", [n for n in self.values if n not in LAUNCH_OPTIONS])

    @_public
    def run(self, grid, args, kwargs) -> None:
        kwargs = dict(kwargs)
        for name, rule in self.values.items():
            kwargs[name] = rule(self.named(args, kwargs))
        return run_wrapped(self.fn, grid, args, kwargs)


class Autotuner(_Wrapper):
    """A kernel whose constexprs and launch options are chosen among ``configs``."""

    def __init__(self, fn: Any, configs: Sequence[Config], key: Sequence[str],
                 prune_configs_by: dict | None = None, restore_value: Sequence[str] = (),
                 reset_to_zero: Sequence[str] = (), do_bench: Callable | None = None):
        super().__init__(fn)
        if not configs:
            raise TilecError(f"@tc.autotune on {fn.__name__} needs at least one tc.Config")
        self.configs = list(configs)
        self.keys = _known_keys(fn, key)
        self.restore_value = _check_names(fn, "restore_value", restore_value)
        self.reset_to_zero = _check_names(fn, "reset_to_zero", reset_to_zero)
        prune = dict(prune_configs_by or {})
        self.early_config_prune = prune.pop("early_config_prune", None)
        self.perf_model = prune.pop("perf_model", None)
        self.top_k = prune.pop("top_k", 1.0)
        if prune:
            raise TilecError(f"prune_configs_by takes early_config_prune, perf_model and "
                             f"top_k, not {', '.join(prune)}")
        self.do_bench = do_bench
        self.tuned = set().union(*(c.kwargs for c in self.configs), LAUNCH_OPTIONS)
        self.caches: dict[str, dict[tuple, Config]] = {}  # backend -> launch key -> choice
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, float] | None = None
        self.bench_time: float | None = None

    @_public
    def run(self, grid, args, kwargs) -> None:
        clash = sorted(self.tuned & set(kwargs))
        if clash:
            raise LaunchError(f"{self.__name__}: {', '.join(clash)} "
                              f"{'is' if len(clash) == 1 else 'are'} chosen by @tc.autotune; "
                              "do not pass them at launch")
        backend = resolve_backend(kwargs.get("backend"))
        kwargs = {**kwargs, "backend": backend}
        if len(self.configs) == 1:
            config = self.configs[0]
        else:
            key = self.launch_key(self.named(args, kwargs))
            config = self.caches.setdefault(backend, {}).get(key) \
                or self.choose(backend, key, grid, args, kwargs)
        self.best_config = config
        self.launch(config, grid, args, kwargs)

    @property
    def cache(self) -> dict[tuple, Config]:
        """The choices for the default backend by launch key, as Triton's ``cache``
        (which a subclass written for Triton reads and fills)."""
        return self.caches.setdefault(resolve_backend(None), {})

    def launch(self, config: Config, grid, args, kwargs: dict) -> None:
        if config.pre_hook is not None:
            config.pre_hook({**self.named(args, kwargs), **config.all_kwargs()})
        run_wrapped(self.fn, grid, args, {**kwargs, **config.launch_kwargs()})

    def launch_key(self, named: dict[str, Any]) -> tuple:
        """The values of the key arguments, then the dtype of every argument that has one,
        as Triton keys tuning (per backend: ``caches``). Cheap: it runs on every launch."""
        return (*(_key_value(named[k]) for k in self.keys if k in named),
                *(str(v.dtype) for v in named.values() if hasattr(v, "dtype")))

    # ------------------------------------------------------------ choosing

    def choose(self, backend: str, key: tuple, grid, args, kwargs: dict) -> Config:
        disk_key = cache.make_key("autotune", self.source, self.configs, backend, key,
                                  availability(backend)[1])
        config = self.from_disk(disk_key)
        if config is not None:
            self.report(backend, key, config, "from the disk cache")
        else:
            config = self.tune(grid, args, kwargs)
            cache.store_record("autotune", disk_key, {"index": self.configs.index(config),
                                                      "config": repr(config)})
            self.report(backend, key, config, f"after {self.bench_time:.2f}s of benchmarking")
            for name in self.reset_to_zero:  # the trials wrote them: the real launch starts clean
                _zero(self.named(args, kwargs)[name])
        self.caches.setdefault(backend, {})[key] = config
        return config

    def from_disk(self, disk_key: str) -> Config | None:
        record = cache.load_record("autotune", disk_key)
        if record is None:
            return None
        index = record.get("index")
        if not isinstance(index, int) or not 0 <= index < len(self.configs) \
                or repr(self.configs[index]) != record.get("config"):
            return None  # written for another config list (the key makes this rare)
        return self.configs[index]

    def tune(self, grid, args, kwargs: dict) -> Config:
        if graphs.capturing() is not None:
            raise LaunchError(f"autotuning {self.__name__} times launches, which a tc.graph "
                              "capture cannot: launch it once before the capture (it keeps "
                              "its choice)")
        start = time.perf_counter()
        named = self.named(args, kwargs)
        saved = [_snapshot(named[n]) for n in self.restore_value]
        timings: dict[Config, float] = {}
        errors: list[TilecError] = []
        configs = self.prune(named, kwargs)
        with progress.step(f"autotuning {self.__name__}") as line:
            for i, config in enumerate(configs):
                line.update(f"autotuning {self.__name__}: {i + 1}/{len(configs)} configs")
                timings[config] = self.bench(config, grid, args, kwargs, saved, errors)
        if all(t == float("inf") for t in timings.values()):
            raise errors[0] if errors else LaunchError(f"{self.__name__}: no config ran")
        for config, error in zip((c for c, t in timings.items() if t == float("inf")),
                                 errors, strict=False):
            self.note(f"skipped config {config}: {type(error).__name__}: {error}")
        self.configs_timings = timings
        self.bench_time = time.perf_counter() - start
        return min(timings, key=timings.__getitem__)

    def bench(self, config: Config, grid, args, kwargs: dict, saved: list,
              errors: list[TilecError]) -> float:
        """Median milliseconds of a launch with ``config`` (infinite when the config does
        not compile, the backend cannot run it or the device has too little for it)."""
        named, trial_kwargs = self.named(args, kwargs), {**kwargs, "verify": False}
        bench = self.do_bench or functools.partial(
            testing.do_bench, backend=kwargs["backend"], return_mode="median")
        try:
            return float(bench(lambda: self.trial(config, grid, args, trial_kwargs, named,
                                                  saved)))
        except (CompileError, UnsupportedError, OutOfResources) as e:
            errors.append(e)
            return float("inf")

    def trial(self, config: Config, grid, args, kwargs: dict, named: dict[str, Any],
              saved: list) -> None:
        """One timed launch: the arguments it writes zeroed before, restored after."""
        for name in self.reset_to_zero:
            _zero(named[name])
        self.launch(config, grid, args, kwargs)
        for restore in saved:
            restore()

    def prune(self, named: dict[str, Any], kwargs: dict) -> list[Config]:
        """Triton's pruning: ``early_config_prune(configs, named_args, **kwargs)``, then the
        ``top_k`` (a count, or a fraction of the configs) with the least ``perf_model``."""
        extra = {k: v for k, v in kwargs.items() if k not in named}
        configs = self.configs
        if self.early_config_prune is not None:  # every keyword of the launch, as Triton
            configs = list(self.early_config_prune(configs, named, **kwargs))
        top_k = self.top_k
        if isinstance(top_k, float) and top_k <= 1.0:
            top_k = max(1, int(len(self.configs) * top_k))
        if self.perf_model is not None and len(configs) > top_k:
            estimate = {c: self.perf_model(**named, **extra, **c.all_kwargs())
                        for c in configs}
            configs = sorted(configs, key=estimate.__getitem__)[:top_k]
        if not configs:
            raise LaunchError(f"{self.__name__}: pruning left no config to try")
        return configs

    def report(self, backend: str, key: tuple, config: Config, how: str) -> None:
        self.note(f"best config selected {how} for key {key} on {backend}: {config}")

    def note(self, text: str) -> None:
        """A line under ``TILEC_PRINT_AUTOTUNING=1``."""
        if os.environ.get("TILEC_PRINT_AUTOTUNING", "") not in ("", "0"):
            print(f"tilec autotuning {self.__name__}: {text}")


def _key_value(v: Any) -> Any:
    """A key argument's value; for an array (unhashable, and its data is no key) its
    dtype and shape where it has them."""
    if isinstance(v, (bool, int, float, str, np.number, np.bool_)) or v is None:
        return v
    return (type(v).__name__, str(getattr(v, "dtype", "")), tuple(getattr(v, "shape", ())))


def _zero(a: Any) -> None:
    if isinstance(a, np.ndarray):
        a.fill(0)
    elif isinstance(a, DeviceView):  # tc.empty's, tc.wgsl_array's
        a[...] = 0
    elif hasattr(a, "zero_"):  # PyTorch
        a.zero_()
    elif hasattr(a, "fill"):  # CuPy
        a.fill(0)
    elif type(a).__name__ == "GPUBuffer":
        from backends.wgsl.arrays import buffer_device
        device = buffer_device(a)
        encoder = device.create_command_encoder()
        encoder.clear_buffer(a)
        device.queue.submit([encoder.finish()])
    else:
        raise LaunchError(f"reset_to_zero: cannot zero a {type(a).__name__}")


def _snapshot(a: Any) -> Callable[[], None]:
    """A copy of ``a`` now, and the function that writes it back into ``a``."""
    if isinstance(a, np.ndarray):
        copy = a.copy()
        return lambda: np.copyto(a, copy)
    if isinstance(a, DeviceView):
        copy = a.numpy()
        return lambda: a.__setitem__(Ellipsis, copy)
    if hasattr(a, "copy_") and hasattr(a, "clone"):  # PyTorch
        copy = a.clone()
        return lambda: a.copy_(copy)
    if hasattr(a, "__cuda_array_interface__") and hasattr(a, "copy"):  # CuPy
        copy = a.copy()
        return lambda: a.__setitem__(Ellipsis, copy)
    if type(a).__name__ == "GPUBuffer":
        from backends.wgsl.arrays import buffer_device
        queue = buffer_device(a).queue
        data = queue.read_buffer(a)
        return lambda: queue.write_buffer(a, 0, data)
    raise LaunchError(f"restore_value: cannot save a {type(a).__name__}")


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict | None = None,
             restore_value: Sequence[str] = (), reset_to_zero: Sequence[str] = (),
             do_bench: Callable | None = None) -> Callable[[Any], Autotuner]:
    """Decorator above ``@tc.kernel``: choose among ``configs`` on the first launch of each
    ``key`` (see ``Autotuner``)."""
    return lambda fn: Autotuner(_launchable(fn, "autotune"), configs, key, prune_configs_by,
                                restore_value, reset_to_zero, do_bench)


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable[[Any], Heuristics]:
    """Decorator above ``@tc.kernel``: ``{"EVEN": lambda args: args["n"] % 1024 == 0}``
    sets constexprs from the launch's arguments."""
    return lambda fn: Heuristics(_launchable(fn, "heuristics"), values)
