"""Differential testing: random valid programs must give the same answer on every backend.

    .venv/bin/python scripts/difftest.py --seconds 600            # numpy vs wgsl (+ ptx)
    .venv/bin/python scripts/difftest.py --seconds 3600 --backends ptx --wide
    .venv/bin/python scripts/difftest.py --seconds 600 --threads 8

Each program (tests/progen.py: elementwise of every dtype, 2-D tiles, reductions, scans,
loops, tl.dot) runs on numpy, the reference, and on each other backend; outputs must
agree within the dtype's tolerance. A disagreement is minimized and written as a
regression test under --out. Prints how many programs were checked and what disagreed.

``--threads N`` launches each program from N threads at once, on numpy and then on each
backend (``progen.check_threads``): every thread launches the same kernel with its own
sizes and data, since what a backend keeps per kernel (a uniform buffer of arguments,
bind groups, a first launch's compilation) is where launches from threads mix up their
arguments; different kernels at once would share little but the device's queue. Each
result is judged against numpy's, computed alone; a mismatch is minimized and recorded
in threads too.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TILEC_CACHE", "0")  # thousands of one-off kernels: keep no files

from tests import progen  # after the path and the cache setting


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget")
    ap.add_argument("--backends", default=None,
                    help="comma-separated backends to check against numpy (default: all present)")
    ap.add_argument("--kinds", default=",".join(progen.KINDS))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--wide", action="store_true",
                    help="also 64-bit dtypes (int64 only on wgsl)")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "regressions",
                    help="where minimized mismatches are written as tests")
    ap.add_argument("--no-write", action="store_true", help="report mismatches only")
    ap.add_argument("--threads", type=int, default=1,
                    help="launch each program from this many threads at once")
    args = ap.parse_args(argv)
    backends = args.backends.split(",") if args.backends else progen.available_backends()
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    stats = run_budget(args.seconds, backends, args.kinds.split(","), seed, args.wide,
                       None if args.no_write else args.out, max(args.threads, 1))
    threads = f" from {args.threads} threads at once" if args.threads > 1 else ""
    print(f"seed {seed}: {stats['programs']} programs checked on numpy vs "
          f"{','.join(backends)}{threads} in {stats['seconds']:.0f} s; "
          f"{len(stats['mismatches'])} mismatching, {stats['invalid']} rejected by numpy, "
          f"{len(stats['refused'])} refused by a backend (UnsupportedError)")
    for path, problems in stats["mismatches"]:
        print(f"  {path}: {problems}")
    return 1 if stats["mismatches"] else 0


def run_budget(seconds: float, backends: list[str], kinds: list[str], seed: int,
               wide: bool, out: Path | None, threads: int = 1) -> dict:
    """Check random programs for ``seconds`` (each launched from ``threads`` threads at
    once, where more than one); minimize and record each disagreement."""
    rng = random.Random(seed)
    dtypes = progen.dtypes_for(backends, wide)
    stats = {"programs": 0, "invalid": 0, "mismatches": [], "seconds": 0.0, "refused": []}
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() - start < seconds:
            prog = progen.generate(rng, kinds, dtypes)
            try:
                problems = progen.checked(prog, backends, Path(tmp), threads,
                                          stats["refused"])
            except progen.tc.TilecError as e:  # numpy refused it: a generator bug
                stats["invalid"] += 1
                print(f"numpy rejected a generated program: {e}\n{prog.source()}",
                      file=sys.stderr)
                continue
            stats["programs"] += 1
            progen.forget()
            if problems:
                small = progen.minimize(prog, backends, Path(tmp), threads=threads)
                problems = progen.checked(small, backends, Path(tmp), threads) or problems
                where = (progen.regression_test(small, problems, out, threads) if out
                         else small.to_json())
                stats["mismatches"].append((str(where), problems))
                print(f"mismatch: {problems}\n{small.source()}", file=sys.stderr)
    stats["seconds"] = time.monotonic() - start
    return stats


if __name__ == "__main__":
    sys.exit(main())
