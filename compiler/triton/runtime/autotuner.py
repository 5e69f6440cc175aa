"""``@triton.autotune`` and ``@triton.heuristics`` with Triton's signatures, on tilec's
autotuner (``compiler.autotune``): the fastest config per key, remembered on disk.

How Triton's arguments map: ``configs``, ``key``, ``prune_configs_by``, ``reset_to_zero``
and ``restore_value`` as tilec's (an empty ``configs`` is one default ``Config``, as in
Triton); ``pre_hook(args, reset_only=False)`` and ``post_hook(args, exception)`` run
around each trial, and ``pre_hook`` once more with ``reset_only=True`` after tuning, as
Triton's do (tilec still zeroes ``reset_to_zero`` and restores ``restore_value`` too);
``do_bench(fn, quantiles)`` times a trial (its first value is taken); Triton's deprecated
``warmup``/``rep`` reach ``do_bench`` on the default backend, and ``use_cuda_graph``
times with ``do_bench_cudagraph``; ``cache_results`` is what tilec always does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MethodType
from typing import Any

from compiler.autotune import Autotuner as TilecAutotuner
from compiler.autotune import Config, Heuristics, heuristics
from compiler.errors import OutOfResources, TilecError
from compiler.jit import KernelFunction
from compiler.tracebacks import triton_grid_launch
from compiler.triton import testing

QUANTILES = (0.5, 0.2, 0.8)  # what Triton's autotuner asks a do_bench for: median first


class Autotuner(TilecAutotuner):
    """tilec's autotuner with Triton's constructor, ``run(*args, grid=, warmup=, **kwargs)``
    and attributes (``cache``, ``keys``, ``arg_names``, ``pre_hook``/``post_hook`` and
    ``user_defined_pre_hook``/``user_defined_post_hook``), so a project's subclass of
    Triton's ``Autotuner`` works on it: one that overrides ``run`` and fills ``cache``
    with configs of its own choosing is launched through that ``run``."""

    triton_run = True  # wrappers launch it as Triton's (``compiler.autotune.run_wrapped``)

    def __init__(self, fn: Any, arg_names: Sequence[str], configs: Sequence[Config],
                 key: Sequence[str], reset_to_zero: Sequence[str] | None,
                 restore_value: Sequence[str] | None, pre_hook: Callable | None = None,
                 post_hook: Callable | None = None, prune_configs_by: dict | None = None,
                 warmup: float | None = None, rep: float | None = None,
                 use_cuda_graph: bool = False, do_bench: Callable | None = None,
                 cache_results: bool = False):
        super().__init__(fn, list(configs) or [Config({})], key, prune_configs_by,
                         restore_value or (), reset_to_zero or (),
                         _bench(do_bench, warmup, rep, use_cuda_graph))
        self.arg_names = list(arg_names)
        self.pre_hook = pre_hook
        self.post_hook = post_hook
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self.num_warmups, self.num_reps, self.use_cuda_graph = warmup, rep, use_cuda_graph
        self.cache_results = cache_results

    def __getitem__(self, grid):
        return MethodType(triton_grid_launch, (self, grid))

    def run(self, *args, grid=None, warmup: bool = False, **kwargs):
        """One launch on ``grid`` with the config chosen for these arguments
        (``warmup``: compile every config instead, as ``warmup`` does)."""
        __tracebackhide__ = True  # IPython and pytest leave this frame out
        if warmup:
            return self.warmup(*args, grid=grid, **kwargs)
        return TilecAutotuner.run(self, grid, args, kwargs)

    def warmup(self, *args, grid=None, **kwargs) -> list:
        """Every config compiled for these arguments, none launched."""
        return [self.fn.warmup(*args, grid=grid, **kwargs, **config.launch_kwargs())
                for config in self.prune(self.named(args, kwargs), kwargs)]

    def trial(self, config: Config, grid, args, kwargs: dict, named: dict[str, Any],
              saved: list) -> None:
        hook_args = {**named, **config.all_kwargs()}
        if self.pre_hook is not None:
            self.pre_hook(hook_args)
        try:
            super().trial(config, grid, args, kwargs, named, saved)
        except Exception as e:
            if self.post_hook is not None:
                self.post_hook(hook_args, exception=e)
            raise
        if self.post_hook is not None:
            self.post_hook(hook_args, exception=None)

    def tune(self, grid, args, kwargs: dict) -> Config:
        config = super().tune(grid, args, kwargs)
        if self.pre_hook is not None:
            self.pre_hook({**self.named(args, kwargs), **config.all_kwargs()}, reset_only=True)
        return config


def _bench(do_bench: Callable | None, warmup: float | None, rep: float | None,
           use_cuda_graph: bool) -> Callable[[Callable], float] | None:
    """The trial timer for Triton's options; None: tilec's (the launch's backend)."""
    if do_bench is not None:
        return lambda fn: _first(do_bench(fn, quantiles=QUANTILES))
    if use_cuda_graph:
        return lambda fn: testing.do_bench_cudagraph(
            fn, rep=100 if rep is None else rep, return_mode="median")
    if warmup is not None or rep is not None:
        return lambda fn: testing.do_bench(fn, warmup=25 if warmup is None else warmup,
                                           rep=100 if rep is None else rep,
                                           return_mode="median")
    return None


def _first(timing: Any) -> float:
    return float(timing[0] if isinstance(timing, (list, tuple)) else timing)


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: dict | None = None,
             reset_to_zero: Sequence[str] | None = None,
             restore_value: Sequence[str] | None = None, pre_hook: Callable | None = None,
             post_hook: Callable | None = None, warmup: float | None = None,
             rep: float | None = None, use_cuda_graph: bool = False,
             do_bench: Callable | None = None, cache_results: bool = False
             ) -> Callable[[Any], Autotuner]:
    """Decorator above ``@triton.jit``, with Triton's signature (see the module docstring)."""
    def decorate(fn: Any) -> Autotuner:
        if not isinstance(fn, (KernelFunction, TilecAutotuner, Heuristics)):
            raise TilecError(f"@triton.autotune goes above @triton.jit (it got "
                             f"{type(fn).__name__} {getattr(fn, '__name__', '')!r})")
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook, post_hook, prune_configs_by, warmup, rep, use_cuda_graph,
                         do_bench, cache_results)
    return decorate


__all__ = ["Autotuner", "Config", "Heuristics", "OutOfResources", "autotune", "heuristics"]
