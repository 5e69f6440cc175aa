"""What one profile session holds: a tree of frames (the scopes open at launches, and the
kernels launched under them) with launch counts, times and metrics, and its two written
forms, the text table and proton's hatchet JSON (``viewer`` reads the latter)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from compiler.errors import TilecError

DEFAULT_PROFILE_NAME = "proton"
ROOT = "ROOT"
TIME = "time (ns)"
COUNT = "count"


@dataclass
class Frame:
    """A scope, or a kernel under the scopes open at its launches: its own launches and
    milliseconds (a scope has none of its own) and its own metrics (``bytes``,
    ``flops16``, ...: a scope's from ``proton.scope(name, metrics)``, a kernel's from
    its launch metadata), each summed over occurrences."""

    name: str
    launches: int = 0
    total_ms: float = 0.0
    metrics: dict[str, float] = field(default_factory=dict)
    children: dict[str, Frame] = field(default_factory=dict)

    def at(self, path: list[str]) -> Frame:
        """The frame ``path`` names under this one, made where missing."""
        frame = self
        for name in path:
            child = frame.children.get(name)
            if child is None:
                child = frame.children[name] = Frame(name)
            frame = child
        return frame

    def add(self, metrics: dict[str, Any]) -> None:
        for key, value in metrics.items():
            self.metrics[key] = self.metrics.get(key, 0) + value

    def walk(self, path: tuple[str, ...] = ()):
        """``(path, frame)`` of every frame under this one, depth first."""
        for child in self.children.values():
            yield (*path, child.name), child
            yield from child.walk((*path, child.name))

    def hatchet(self) -> dict[str, Any]:
        """This frame as a hatchet node, its metrics inclusive of its children's (as
        proton's are): ``count`` launches, ``time (ns)``, and each recorded metric. A
        child with no launch under it (a scope around work tilec does not launch) keeps
        its metrics to itself: a rate above it divides the work timed by its time."""
        children = [c.hatchet() for c in self.children.values()]
        metrics: dict[str, float] = {COUNT: self.launches, TIME: self.total_ms * 1e6}
        for key, value in self.metrics.items():
            metrics[key] = metrics.get(key, 0) + value
        for child in children:
            if not child["metrics"][COUNT]:
                continue
            for key, value in child["metrics"].items():
                metrics[key] = metrics.get(key, 0) + value
        metrics[TIME] = round(metrics[TIME])
        return {"frame": {"name": self.name, "type": "function"}, "metrics": metrics,
                "children": children}


def numbers(metrics: dict[str, Any], what: str) -> dict[str, float]:
    """The metrics to record from ``metrics``: every entry but ``name``, each a number."""
    out = {}
    for key, value in metrics.items():
        if key == "name":
            continue
        if not isinstance(value, Real) or isinstance(value, bool):
            raise TilecError(f"{what}: metric {key!r} must be a number, got {value!r}")
        out[str(key)] = value
    return out


class Session:
    """One ``start()``: its name (None: not written to a file), whether it uses launch
    metadata (``hook="triton"``), whether it records now, and its frames."""

    def __init__(self, name: str | None, hook: str | None):
        self.name = name
        self.hook = hook
        self.active = True
        self.root = Frame(ROOT)

    def rows(self) -> list[dict[str, Any]]:
        """The kernels launched, by path (``scope/kernel``), slowest first."""
        rows = [{"name": "/".join(path), "launches": f.launches, "total_ms": f.total_ms,
                 "mean_ms": f.total_ms / f.launches, "metrics": dict(f.metrics)}
                for path, f in self.root.walk() if f.launches]
        return sorted(rows, key=lambda r: -r["total_ms"])

    def table(self) -> str:
        cells = [["kernel", "launches", "total ms", "mean ms"]] + [
            [r["name"], str(r["launches"]), f"{r['total_ms']:.4f}", f"{r['mean_ms']:.4f}"]
            for r in self.rows()]
        widths = [max(len(row[i]) for row in cells) for i in range(4)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(row, widths))) for row in cells]
        return f"profile {self.name or DEFAULT_PROFILE_NAME!r}:\n" + "\n".join(lines)

    def write(self, output_format: str) -> None:
        """Write the session to ``<name>.hatchet`` (JSON: a list holding the root node) or
        ``<name>.txt`` (the table)."""
        path = f"{self.name}.{'hatchet' if output_format == 'hatchet' else 'txt'}"
        with open(path, "w", encoding="utf-8") as f:
            if output_format == "hatchet":
                json.dump([self.root.hatchet()], f, indent=1)
            else:
                f.write(self.table() + "\n")
