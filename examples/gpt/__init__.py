"""A GPT-2 whose every operation is a tilec kernel, forward and backward written out:
``config`` (the shape and the flat parameter layout), one module per layer kind
(``embedding``, ``layernorm``, ``matmul``, ``attention``, ``loss``, ``optimizer``: kernels
and the host functions that launch them), ``step`` (a training step's forward and
backward chained from them) and ``reference`` (the same model in plain NumPy, the oracle
of the tests)."""

from examples.gpt.config import GPTConfig

__all__ = ["GPTConfig"]
