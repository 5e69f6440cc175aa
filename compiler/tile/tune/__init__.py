"""``compiler.tile.tune``, cuTile's tuning: ``exhaustive_search`` launches a kernel with
every configuration of a search space, times each, and returns them all with the fastest
(``TuningResult``), as ``cuda.tile.tune`` does.

A configuration is any object: ``grid_fn(cfg)`` gives the grid, ``args_fn(cfg)`` the
arguments (called again before every launch, so a trial may write fresh outputs) and
``hints_fn(cfg)`` the kernel's compiler hints (``kernel.replace_hints``). Each
configuration is launched once untimed (it compiles), then timed one launch at a time
until the mean is known to within 1% (or 0.5 us) at 95% confidence, or after 100
launches or about a second. A configuration that fails to compile or launch is recorded
with its error and skipped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from compiler.arrays import TileKernel
from compiler.errors import LaunchError
from compiler.jit import resolve_backend
from compiler.tile._execution import launch

__all__ = ["Measurement", "TuningResult", "exhaustive_search"]

T = TypeVar("T")

MIN_SAMPLES, MAX_SAMPLES, MAX_SECONDS = 5, 100, 1.0
Z95 = 1.96  # a normal distribution's 95% interval, in standard deviations


@dataclass(frozen=True, kw_only=True)
class Measurement(Generic[T]):
    """One configuration's time per launch."""

    config: T
    mean_us: float
    num_samples: int
    error_margin_us: float
    """Half the width of the mean's 95% confidence interval."""


@dataclass(frozen=True, kw_only=True)
class TuningResult(Generic[T]):
    """Every configuration's outcome: ``best`` (the least mean time), the ``successes``
    and the ``failures`` as ``(config, exception type, message)``."""

    best: Measurement[T]
    successes: Sequence[Measurement[T]]
    failures: Sequence[tuple[T, type[BaseException], str]]

    def summary(self, *, top_k: int = 10, bottom_k: int = 2) -> str:
        """A table of the ``top_k`` fastest and ``bottom_k`` slowest configurations (the
        best marked ``*``), then up to ``top_k`` failures."""
        ranked = sorted(self.successes, key=lambda m: m.mean_us)
        lines = [f"{len(ranked)} succeeded, {len(self.failures)} failed"]
        shown = ranked if len(ranked) <= top_k + bottom_k + 1 else \
            [*ranked[:top_k], None, *ranked[len(ranked) - bottom_k:]]
        width = max(len(str(m.config)) for m in ranked)
        for m in shown:
            if m is None:
                lines.append(f"    ... {len(ranked) - top_k - bottom_k} more")
                continue
            mark = "*" if m is self.best else " "
            lines.append(f"{mark} {m.config!s:<{width}}: {m.mean_us:.1f} +- "
                         f"{m.error_margin_us:.1f} us ({m.num_samples} samples)")
        for config, kind, message in self.failures[:top_k]:
            lines.append(f"  failed {config}: {kind.__name__}: {message.splitlines()[0]}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def exhaustive_search(search_space: Sequence[T], stream: Any,
                      grid_fn: Callable[[T], tuple[int, ...]],
                      kernel: Any, args_fn: Callable[[T], tuple[Any, ...]],
                      hints_fn: Callable[[T], dict[str, Any]] | None = None, *,
                      quiet: bool = False, single_run_timeout_sec: float | None = None,
                      backend: str | None = None) -> TuningResult[T]:
    """Time ``kernel`` (or ``kernel(cfg)``, a function of the configuration) with each
    configuration of ``search_space``; print the summary unless ``quiet``.

    ``single_run_timeout_sec``: a configuration whose timed launch takes longer fails
    (tilec does not interrupt it: cuTile runs trials in a subprocess to do that).
    ``stream`` is taken and ignored, as by ``ct.launch``; ``backend`` (tilec's) picks
    the backend that runs and times the trials (default: tilec's default backend)."""
    if not search_space:
        raise LaunchError("exhaustive_search: the search space is empty")
    backend = resolve_backend(backend)
    from compiler.testing import clock
    timer = clock(backend)
    successes, failures = [], []
    for cfg in search_space:
        try:
            successes.append(_measure(cfg, timer, stream, grid_fn, kernel, args_fn,
                                      hints_fn, single_run_timeout_sec, backend))
        except Exception as e:  # noqa: BLE001 - a configuration that fails is one result
            failures.append((cfg, type(e), str(e)))
    if not successes:
        cfg, kind, message = failures[0]
        raise LaunchError(f"exhaustive_search: no configuration ran; the first, {cfg}, "
                          f"failed with {kind.__name__}: {message}")
    best = min(successes, key=lambda m: m.mean_us)
    result = TuningResult(best=best, successes=tuple(successes), failures=tuple(failures))
    if not quiet:
        print(result)
    return result


def _measure(cfg: Any, timer: Any, stream: Any, grid_fn: Callable, kernel: Any,
             args_fn: Callable, hints_fn: Callable | None, timeout: float | None,
             backend: str) -> Measurement:
    """One configuration's ``Measurement`` (its errors raised)."""
    k = kernel if isinstance(kernel, TileKernel) else kernel(cfg)
    hints = hints_fn(cfg) if hints_fn is not None else {}
    if hints:
        k = k.replace_hints(**hints)
    grid = grid_fn(cfg)

    def run(args: tuple) -> None:
        launch(stream, grid, k, args, backend=backend)

    run(args_fn(cfg))  # compiles
    timer.sync()
    samples: list[float] = []
    start = time.perf_counter()
    while True:
        args = args_fn(cfg)
        samples.append(timer.times(lambda a=args: run(a), 1)[0] * 1e3)
        if timeout is not None and samples[-1] > timeout * 1e6:
            raise LaunchError(f"a launch took {samples[-1] / 1e6:.2f} s, more than "
                              f"single_run_timeout_sec={timeout}")
        mean, margin = _statistics(samples)
        if len(samples) >= MIN_SAMPLES and (margin <= max(0.01 * mean, 0.5)) or \
                len(samples) >= MAX_SAMPLES or time.perf_counter() - start > MAX_SECONDS:
            return Measurement(config=cfg, mean_us=mean, num_samples=len(samples),
                               error_margin_us=margin)


def _statistics(samples: list[float]) -> tuple[float, float]:
    """The mean of ``samples`` and half its 95% confidence interval."""
    n = len(samples)
    mean = sum(samples) / n
    if n < 2:
        return mean, math.inf
    variance = sum((s - mean) ** 2 for s in samples) / (n - 1)
    return mean, Z95 * math.sqrt(variance / n)
