"""What ``triton_tutorials.py`` and ``cutile_samples.py`` share: timing one call at a time
with CUDA events after an L2 flush (as ``do_bench``), and their table of tilec against a
peer. Needs torch and a CUDA GPU."""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable

import torch

_FLUSH: list = []


def time_ms(fn, reps: int) -> float:
    """Median milliseconds of ``fn()``, one call per CUDA-event pair, L2 flushed between."""
    if not _FLUSH:
        _FLUSH.append(torch.empty(256 << 20, dtype=torch.int8, device="cuda"))
    times = []
    for _ in range(reps):
        _FLUSH[0].zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def lower_of_two_medians(calls: dict[str, Callable[[], object]], reps: int,
                         around: Callable[[str], contextlib.AbstractContextManager]
                         = lambda side: contextlib.nullcontext()) -> dict[str, float]:
    """Per side of ``calls``, the lower of two ``time_ms`` medians, the sides timed in
    turn (a clock or a neighbour's cache that favours one round favours each side once);
    ``around(side)`` is entered for each of that side's timings."""
    ms: dict[str, list[float]] = {side: [] for side in calls}
    for _ in range(2):
        for side, fn in calls.items():
            with around(side):
                ms[side].append(time_ms(fn, reps))
    return {side: min(v) for side, v in ms.items()}


def _rate(row: dict, ms: float) -> str:
    if row["flops"]:
        return f"{row['flops'] / ms / 1e9:.0f} TFLOP/s"
    return f"{row['bytes'] / ms / 1e6:.0f} GB/s"


def print_table(rows: list[dict], what: str, peer: str) -> None:
    """Rows of ``what``, ``bytes``, ``flops`` and the medians under "tilec" and ``peer``
    (a row without them failed)."""
    print(f"\n{torch.cuda.get_device_name()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"| {what} | tilec | {peer} | tilec of {peer} |\n|---|---|---|---|")
    for r in rows:
        if "tilec" not in r:
            print(f"| {r['what']} | | | |")
            continue
        print(f"| {r['what']} | {r['tilec'] * 1e3:.1f} us, {_rate(r, r['tilec'])} | "
              f"{r[peer] * 1e3:.1f} us, {_rate(r, r[peer])} | "
              f"{100 * r[peer] / r['tilec']:.1f}% |")
