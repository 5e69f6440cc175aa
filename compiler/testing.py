"""``tc.testing``: honest timing and performance reports, with Triton's names and meaning.

``do_bench(fn)`` times ``fn()`` in milliseconds with the clock the backend offers: CUDA
events around each call with the L2 cache flushed before it (``ptx``), wgpu timestamp
queries, or a wall clock fenced by waiting for the queue when the adapter has none
(``wgsl``), the wall clock (``numpy``; it runs synchronously). ``Benchmark`` describes a
sweep and ``perf_report`` turns a function measuring one point into a report that prints
a table and saves it as CSV and as a PNG line plot (matplotlib, the optional ``plot``
extra: without it the table and the CSV are still made).

Importing this module imports neither a backend nor matplotlib.
"""

from __future__ import annotations

import csv
import importlib
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compiler.jit import resolve_backend

RETURN_MODES = ("min", "max", "mean", "median", "all")


# ---------------------------------------------------------------- do_bench

class WallClock:
    """Wall-clock time of each call: right where the work is done when ``fn`` returns."""

    def sync(self) -> None:
        pass

    def times(self, fn: Callable[[], Any], n: int) -> list[float]:
        out = []
        for _ in range(n):
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1e3)
        return out


def clock(backend: str, flush: bool = True):
    """The clock ``do_bench`` uses for ``backend`` (GPU ones in ``backends/<name>/timing``);
    ``flush=False``: one that leaves the caches as they are before each call."""
    if backend == "numpy":
        return WallClock()
    return importlib.import_module(f"backends.{backend}.timing").clock(flush)


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100,
             quantiles: Sequence[float] | None = None, return_mode: str = "mean",
             backend: str | None = None) -> float | list[float]:
    """Milliseconds one call of ``fn()`` takes on ``backend`` (default: tilec's default
    backend). As in Triton, ``warmup`` and ``rep`` are durations in milliseconds: after
    one untimed call (compilation, loading) and an estimate from five calls, ``fn`` is
    called for about ``warmup`` ms untimed, then for about ``rep`` ms, each call timed.
    Returns the ``return_mode`` statistic of those times (``"all"``: the list), or the
    ``quantiles`` of them when given (one value when one quantile is asked for)."""
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {RETURN_MODES}, got {return_mode!r}")
    timer = clock(resolve_backend(backend))
    fn()
    timer.sync()
    # Like Triton's, the estimate covers what each timed call costs besides ``fn`` (the L2
    # flush, the markers), so a cheap ``fn`` does not get tens of thousands of repetitions.
    start = time.perf_counter()
    timer.times(fn, 5)
    estimate = max((time.perf_counter() - start) * 1e3 / 5, 1e-6)
    for _ in range(max(1, int(warmup / estimate))):
        fn()
    timer.sync()
    return summarize(timer.times(fn, max(1, int(rep / estimate))), quantiles, return_mode)


def summarize(times: list[float], quantiles: Sequence[float] | None,
              return_mode: str) -> float | list[float]:
    """The statistic ``do_bench`` returns from per-call times (linear-interpolated
    quantiles, the way ``torch.quantile`` computes them)."""
    ordered = sorted(times)
    if quantiles is not None:
        values = [quantile(ordered, q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return list(times)
    if return_mode == "mean":
        return sum(times) / len(times)
    return {"min": ordered[0], "max": ordered[-1],
            "median": quantile(ordered, 0.5)}[return_mode]


def quantile(ordered: list[float], q: float) -> float:
    if not 0 <= q <= 1:
        raise ValueError(f"quantiles must lie in [0, 1], got {q}")
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# ---------------------------------------------------------------- perf_report

@dataclass
class Benchmark:
    """One sweep: ``x_names`` take each of ``x_vals`` (a value for all of them, or a tuple
    with one value each); for each, ``line_arg`` takes each of ``line_vals``, shown as
    ``line_names`` with ``styles`` (``(color, linestyle)`` pairs)."""

    x_names: list[str]
    x_vals: list[Any]
    line_arg: str
    line_vals: list[Any]
    line_names: list[str]
    plot_name: str
    args: dict[str, Any] = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    x_log: bool = False
    y_log: bool = False
    styles: list[tuple[str, str]] | None = None

    def __post_init__(self) -> None:
        if len(self.line_names) != len(self.line_vals):
            raise ValueError(f"{self.plot_name}: {len(self.line_names)} line_names for "
                             f"{len(self.line_vals)} line_vals")


@dataclass
class Sweep:
    """The measured points of one benchmark: per row the x values, then per line the
    value and its (min, max) band, each None when the function gave only one value."""

    bench: Benchmark
    rows: list[tuple[list[Any], list[tuple[float, float | None, float | None]]]]

    def header(self) -> list[str]:
        return [*self.bench.x_names, *self.bench.line_names]

    def table_rows(self) -> list[list[Any]]:
        return [[*xs, *(y for y, _, _ in ys)] for xs, ys in self.rows]

    def dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.header(), row)) for row in self.table_rows()]


class Mark:
    """A function measuring one point of its benchmarks; ``run`` sweeps them."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | list[Benchmark]):
        self.fn = fn
        self.benchmarks = benchmarks

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str = "",
            return_df: bool = False, **kwargs):
        """Sweep every benchmark: print its table (``print_data``), write
        ``<save_path>/<plot_name>.csv`` and ``.png`` (``save_path``), show the plot
        (``show_plots``). ``return_df``: the rows as dicts (one list per benchmark when
        there are several)."""
        many = isinstance(self.benchmarks, list)
        results = []
        for bench in self.benchmarks if many else [self.benchmarks]:
            sweep = self.sweep(bench, kwargs)
            if print_data:
                print(f"{bench.plot_name}:\n{format_table(sweep)}")
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                write_csv(sweep, os.path.join(save_path, f"{bench.plot_name}.csv"))
            if save_path or show_plots:
                plot(sweep, os.path.join(save_path, f"{bench.plot_name}.png")
                     if save_path else None, show_plots)
            results.append(sweep.dicts())
        if return_df:
            return results if many else results[0]
        return None

    def sweep(self, bench: Benchmark, kwargs: dict) -> Sweep:
        rows = []
        for x in bench.x_vals:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise ValueError(f"{bench.plot_name}: x value {x!r} does not give one value "
                                 f"for each of {bench.x_names}")
            point = dict(zip(bench.x_names, xs))
            ys = [_point(self.fn(**point, **{bench.line_arg: y}, **bench.args, **kwargs))
                  for y in bench.line_vals]
            rows.append((xs, ys))
        return Sweep(bench, rows)


def _point(ret: Any) -> tuple[float, float | None, float | None]:
    """A measured value, with its band when the function returned (value, min, max)."""
    if isinstance(ret, (list, tuple)):
        if len(ret) != 3:
            raise ValueError(f"a benchmark returns a value or (value, min, max), got {ret!r}")
        return float(ret[0]), float(ret[1]), float(ret[2])
    return float(ret), None, None


def perf_report(benchmarks: Benchmark | list[Benchmark]) -> Callable[[Callable], Mark]:
    """Decorator: ``@tc.testing.perf_report(tc.testing.Benchmark(...))`` above a function
    of the x names, the line argument and ``args`` that returns one measurement."""
    return lambda fn: Mark(fn, benchmarks)


def _cell(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def format_table(sweep: Sweep) -> str:
    """The sweep as right-aligned columns, a header line first."""
    cells = [sweep.header()] + [[_cell(v) for v in row] for row in sweep.table_rows()]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells)


def write_csv(sweep: Sweep, path: str) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(sweep.header())
        out.writerows(sweep.table_rows())


def plot(sweep: Sweep, path: str | None, show: bool) -> None:
    """One line per ``line_names`` entry against the first x name, its band shaded."""
    try:
        fig = _figure(show)
    except ImportError:
        print(f"tilec: matplotlib is not installed, so no plot for {sweep.bench.plot_name} "
              f"(pip install 'tilec[plot]'); the table and CSV are complete", file=sys.stderr)
        return
    bench = sweep.bench
    ax = fig.subplots()
    xs = [xs[0] for xs, _ in sweep.rows]
    for i, name in enumerate(bench.line_names):
        color, style = bench.styles[i] if bench.styles else (None, "-")
        ys = [ys[i] for _, ys in sweep.rows]
        ax.plot(xs, [y for y, _, _ in ys], label=name, color=color, linestyle=style,
                marker="o")
        if all(lo is not None for _, lo, _ in ys):
            ax.fill_between(xs, [lo for _, lo, _ in ys], [hi for _, _, hi in ys],
                            alpha=0.2, color=color)
    if bench.x_log:  # sweeps over powers of two get one labelled tick per point
        ax.set_xscale("log", base=2 if all(_power_of_two(x) for x in xs) else 10)
        ax.xaxis.set_minor_formatter("")  # the minor labels of a log axis overlap
    if bench.y_log:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter("")
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    ax.set_title(bench.plot_name)
    ax.legend()
    ax.grid(True, alpha=0.3)
    if path:
        fig.savefig(path, dpi=100)
    if show:
        import matplotlib.pyplot as plt
        plt.show()


def _power_of_two(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and x > 0 and x & (x - 1) == 0


def _figure(show: bool):
    """A pyplot figure when it is to be shown; else a bare one, which needs no display."""
    if show:
        import matplotlib.pyplot as plt
        return plt.figure(figsize=(7, 4.5), layout="tight")
    from matplotlib.figure import Figure
    return Figure(figsize=(7, 4.5), layout="tight")
