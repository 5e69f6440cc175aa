"""The NumPy meaning of ``tile.reduce`` and ``tile.scan`` (registered into ``kernel.BUILDERS``).

The combiner region runs on whole arrays, so a reduction or scan of n elements costs
log2(n) evaluations of the region, each on every program and element at once:

- reduce: a pairwise tree, ``combine(x[2i], x[2i+1])`` per level (adjacent pairs, so the
  order of operands is kept and an associative combiner gives the in-order result). A
  combiner that is one op whose result no order of operands can change (integer add, mul,
  and, or, xor, signed max and min wrap or pick exactly; float maximum and minimum pick
  one value, unique in its bits unless it is a zero or NaN) is one NumPy reduction
  instead; the tree still runs when a float result is a zero or NaN;
- scan: Hillis-Steele, ``x[i] = combine(x[i - s], x[i])`` for s = 1, 2, 4, ...;
  ``reverse`` flips, scans and flips back.

Operands carry the program axis first (see ``kernel.py``), so ``axis`` of the op is
array axis ``axis + 1``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from backends.numpy.kernel import BUILDERS, Impl, np_dtype, release
from compiler.errors import UnsupportedError
from dialects import tile


class Combiner:
    """The combiner region of a reduce or scan compiled to a list of NumPy steps."""

    def __init__(self, op: tile.ReduceOp | tile.ScanOp):
        block = op.combiner.block
        slots: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
        self.steps: list[tuple[Impl, list[int], list[int]]] = []
        self.out: list[int] = []
        for inner in block.ops:
            if isinstance(inner, tile.YieldOp):
                self.out = [slots[v] for v in inner.values]
                continue
            if inner.regions or any(v not in slots for v in inner.operands):
                raise UnsupportedError(f"{op.name}: the numpy backend runs combiners of "
                                       f"straight-line ops on their own arguments only")
            builder = BUILDERS.get(inner.name)
            if builder is None:
                raise UnsupportedError(f"{inner.name} is not supported by the numpy backend")
            outs = [slots.setdefault(r, len(slots)) for r in inner.results]
            self.steps.append((builder(inner), [slots[v] for v in inner.operands], outs))
        self.size = len(slots)

    def __call__(self, batch: Any, a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
        env: list[Any] = [*a, *b] + [None] * (self.size - 2 * len(a))
        for impl, ins, outs in self.steps:
            for slot, value in zip(outs, impl(batch, *[env[i] for i in ins]), strict=True):
                env[slot] = value
        value = None  # the releases below must see the only references
        shape = a[0].shape
        if any(x.shape != shape for x in a + b):
            shape = np.broadcast_shapes(*(x.shape for x in a + b))
        # a combiner may yield a constant: give every result the operands' shape
        results = [env[i] if env[i].shape == shape else np.broadcast_to(env[i], shape)
                   for i in self.out]
        for i in range(len(env)):
            release(batch, env, i)  # temporaries go back to the pool, results stay
        return results


def _part(x: np.ndarray, axis: int, start: int, stop: int | None, step: int = 1) -> np.ndarray:
    index: list[Any] = [slice(None)] * x.ndim
    index[axis] = slice(start, stop, step)
    return x[tuple(index)]


_EXACT_INT = {"arith.addi": np.add, "arith.muli": np.multiply, "arith.andi": np.bitwise_and,
              "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
              "arith.maxsi": np.maximum, "arith.minsi": np.minimum}
_EXTREMA = {"arith.maximumf": np.maximum, "arith.minimumf": np.minimum}


def _direct(op: tile.ReduceOp) -> Callable[[np.ndarray, int], np.ndarray | None] | None:
    """The one NumPy reduction a combiner amounts to (see the module docstring); it
    answers None where only the tree gives the exact bits."""
    block = op.combiner.block
    ops = list(block.ops)
    if len(block.args) != 2 or len(ops) != 2 or not isinstance(ops[1], tile.YieldOp):
        return None
    inner, yielded = ops
    if list(yielded.values) != [inner.results[0]] or len(inner.operands) != 2 \
            or set(inner.operands) != set(block.args):
        return None
    if inner.name in _EXACT_INT and np_dtype(inner.results[0].type) != np.bool_:
        fn = _EXACT_INT[inner.name]
        return lambda x, axis: fn.reduce(x, axis=axis, dtype=x.dtype)
    if inner.name in _EXTREMA:
        extremum = _EXTREMA[inner.name]

        def exact(x: np.ndarray, axis: int) -> np.ndarray | None:
            r = extremum.reduce(x, axis=axis)
            return None if np.isnan(r).any() or (r == 0).any() else r
        return exact
    return None


def _reduce(op: tile.ReduceOp) -> Impl:
    combine, axis, direct = Combiner(op), op.axis.value.data + 1, _direct(op)

    def impl(batch: Any, *xs: np.ndarray) -> tuple:
        if direct is not None and xs[0].shape[axis]:
            r = direct(xs[0], axis)
            if r is not None:
                return (r,)
        level = list(xs)
        while (n := level[0].shape[axis]) > 1:
            pairs = combine(batch, [_part(x, axis, 0, n - 1, 2) for x in level],
                            [_part(x, axis, 1, n, 2) for x in level])
            if n % 2:  # the odd one out joins the next level, still last
                pairs = [np.concatenate([p, _part(x, axis, n - 1, n)], axis)
                         for p, x in zip(pairs, level, strict=True)]
            for i in range(len(level)):
                release(batch, level, i)  # the operands' own arrays are still held
            level = pairs
        return tuple(np.take(x, 0, axis) for x in level)
    return impl


def _scan(op: tile.ScanOp) -> Impl:
    combine, axis, reverse = Combiner(op), op.axis.value.data + 1, op.is_reverse

    def impl(batch: Any, *xs: np.ndarray) -> tuple:
        level = [np.flip(x, axis) if reverse else x for x in xs]
        n, s = level[0].shape[axis], 1
        while s < n:
            later = combine(batch, [_part(x, axis, 0, n - s) for x in level],
                            [_part(x, axis, s, None) for x in level])
            level = [np.concatenate([_part(x, axis, 0, s), y], axis)
                     for x, y in zip(level, later, strict=True)]
            s *= 2
        return tuple(np.flip(x, axis) if reverse else x for x in level)
    return impl


BUILDERS.update({"tile.reduce": _reduce, "tile.scan": _scan})
