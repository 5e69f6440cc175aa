"""Shared helpers of the benchmark scripts: medians and the RESULTS.md table."""

from __future__ import annotations

import datetime
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


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


def report(title: str, device: str, header: list[str], rows: list[list[str]]) -> str:
    """Print a Markdown table and append it, dated and with the device, to RESULTS.md."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"### {title} — {stamp} — {device}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    with RESULTS.open("a") as f:
        f.write("\n" + text)
    return text
