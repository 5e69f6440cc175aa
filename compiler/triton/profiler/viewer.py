"""``triton.profiler.viewer`` (proton's viewer) on tilec: read a hatchet file that
``proton.finalize()`` wrote and print its tree with metrics derived from what it holds.

    tree, metrics = viewer.parse(["tflop16/s", "time/ms"], "matmul.hatchet")
    viewer.print_tree(tree, metrics)

Metric names, each a node's value inclusive of the nodes under it: ``time/s``,
``time/ms``, ``time/us``, ``time/ns``; ``avg_time/<unit>`` (time per launch);
``flop<N>/s``, ``gflop<N>/s``, ``tflop<N>/s`` from the ``flops<N>`` recorded (``N`` one
of 8, 16, 32, 64; without ``N``, all widths together); ``byte/s``, ``gbyte/s``,
``tbyte/s`` from ``bytes``; and any metric the file holds, by its name (``count``,
``bytes``). A node without what a metric needs (no launch under it: no time) shows ``-``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from compiler.errors import TilecError
from compiler.triton.profiler.session import COUNT, TIME

TIME_UNITS = {"s": 1e-9, "ms": 1e-6, "us": 1e-3, "ns": 1.0}  # per nanosecond
PREFIXES = {"": 1.0, "g": 1e-9, "t": 1e-12}
FLOP_WIDTHS = ("8", "16", "32", "64")
_TIME = re.compile(r"(avg_)?time/(s|ms|us|ns)")
_RATE = re.compile(r"([gt]?)(flop|byte)(\d*)/s")
ACCEPTED = ("time/s, time/ms, time/us, time/ns, avg_time/<unit>, [g|t]flop[8|16|32|64]/s, "
            "[g|t]byte/s, or a metric the file holds (count, bytes, flops16, time (ns))")


@dataclass
class Node:
    """One frame of a profile: its name, metrics as the file gives them, children."""

    name: str
    metrics: dict[str, float]
    children: list[Node] = field(default_factory=list)

    def walk(self, depth: int = 0):
        """``(depth, node)`` of this node and every node under it, depth first."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


def parse(metric_names: list[str], path: str) -> tuple[Node, list[str]]:
    """The tree in hatchet file ``path`` and ``metric_names`` checked: each must be
    derivable (the module docstring)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise TilecError(f"cannot read the profile {path!r}: {e}") from None
    root = _node(data[0] if isinstance(data, list) and data else data, path)
    held = {key for _, node in root.walk() for key in node.metrics}
    for name in metric_names:
        if not (name in held or _TIME.fullmatch(name) or _rate(name)):
            raise TilecError(f"unknown metric {name!r} for {path!r}; use {ACCEPTED}")
    return root, list(metric_names)


def _node(d: Any, path: str) -> Node:
    try:
        return Node(str(d["frame"]["name"]), dict(d.get("metrics", {})),
                    [_node(c, path) for c in d.get("children", [])])
    except (KeyError, TypeError, AttributeError):
        raise TilecError(f"{path!r} is not a hatchet profile: a node needs a frame with a "
                         "name, and may have metrics and children") from None


def _rate(name: str) -> re.Match | None:
    match = _RATE.fullmatch(name)
    if match and match[3] and (match[2] == "byte" or match[3] not in FLOP_WIDTHS):
        return None
    return match


def derive(node: Node, name: str) -> float | None:
    """Metric ``name`` of ``node``, or None where the node lacks what it needs."""
    m = node.metrics
    time_ns, count = m.get(TIME, 0), m.get(COUNT, 0)
    if match := _TIME.fullmatch(name):
        if not count:
            return None
        return time_ns * TIME_UNITS[match[2]] / (count if match[1] else 1)
    if match := _rate(name):
        prefix, quantity, width = match.groups()
        if quantity == "byte":
            keys = ["bytes"]
        else:
            keys = [f"flops{width}"] if width else [f"flops{w}" for w in FLOP_WIDTHS]
        amounts = [m[k] for k in keys if k in m]
        if not count or not time_ns or not amounts:
            return None
        return sum(amounts) / (time_ns * 1e-9) * PREFIXES[prefix]
    return m.get(name)


def print_tree(tree: Node, metrics: list[str]) -> None:
    """Print ``tree``, one node a line: the ``metrics`` (``parse``'s) as columns, then
    the node's name, indented under its parent."""
    rows = [([_cell(derive(node, name)) for name in metrics], depth, node.name)
            for depth, node in tree.walk()]
    widths = [max(len(name), *(len(r[0][i]) for r in rows)) for i, name in enumerate(metrics)]
    print("  ".join(n.rjust(w) for n, w in zip(metrics, widths)))
    for cells, depth, name in rows:
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths)) + "  " +
              "  " * depth + name)


def _cell(value: float | None) -> str:
    """A value as a column shows it: counts as integers, anything else to 3 decimals."""
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.3f}"


__all__ = ["Node", "derive", "parse", "print_tree"]
