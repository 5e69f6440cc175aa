"""The NumPy meaning of the hint ops (registered into ``kernel.BUILDERS``):
``tile.assume_facts`` is its operand (the facts only help the GPU compilers), and
``tile.barrier`` does nothing (a program here is not split over threads)."""

from __future__ import annotations

from xdsl.ir import Operation

from backends.numpy.kernel import BUILDERS, Impl


def _assume_facts(op: Operation) -> Impl:
    return lambda batch, x: (x,)


def _barrier(op: Operation) -> Impl:
    return lambda batch: ()


BUILDERS.update({"tile.assume_facts": _assume_facts, "tile.barrier": _barrier})
