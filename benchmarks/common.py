"""Shared helpers of the benchmark scripts: their command line, medians and the RESULTS.md
table.

A benchmark prints its tables; only ``--record`` appends them to RESULTS.md (and writes
plots into ``benchmarks/``), so that running one leaves the tracked files as they are.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def arguments(doc: str | None, plots: bool = False) -> argparse.ArgumentParser:
    """The command line every benchmark starts from: its docstring as help and ``--record``;
    ``plots``: also ``--out DIR``, where a plot goes (see ``plot_path``)."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--record", action="store_true",
                   help=f"append the tables to {RESULTS.name}"
                        + (" and write the plot into benchmarks/" if plots else ""))
    if plots:
        p.add_argument("--out", help="where the plot goes (default: benchmarks/ with "
                                     "--record, else no plot)")
    return p


def plot_path(args: argparse.Namespace, name: str) -> Path | None:
    """Where plot ``name`` goes: ``--out``, else beside RESULTS.md when recording, else
    nowhere (None, said on stdout)."""
    if args.out:
        return Path(args.out) / name
    if args.record:
        return RESULTS.with_name(name)
    print(f"no plot written: --out DIR, or --record for benchmarks/{name}")
    return None


def median_seconds(fn, *, warmup: int = 3, repeat: int = 20, sync=lambda: None) -> float:
    """Median wall time of ``fn()`` (``sync`` waits for device work before each clock read)."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def report(title: str, device: str, header: list[str], rows: list[list[str]], *,
           record: bool) -> str:
    """Print a Markdown table, dated and with the device; ``record``: append it to
    RESULTS.md too."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"### {title} — {stamp} — {device}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if record:
        with RESULTS.open("a") as f:
            f.write("\n" + text)
    return text
