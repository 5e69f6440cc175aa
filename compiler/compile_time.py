"""``constexpr_function``: the mark of a plain Python function that kernels call at compile
time. Imports nothing, so the dtypes and the language can mark their own."""

from __future__ import annotations


def constexpr_function(fn):
    """Mark a plain Python function as callable in kernels at compile time: a call whose
    arguments are all compile-time values runs in Python while the kernel compiles
    (``BLOCK: tl.constexpr = next_power_of_2(N)``), as Triton's ``constexpr_function``."""
    fn.__tilec_constexpr_function__ = True
    return fn
