"""A GPT-2 whose every operation is a tilec kernel, forward and backward written out:
``config`` (the shape and the flat parameter layout), one module per layer kind
(``embedding``, ``layernorm``, ``matmul``, ``attention``, ``loss``, ``optimizer``: kernels
and the host functions that launch them), ``kvcache`` (generation's cache, attention
over it and the greedy choice on the device), ``step`` (a training step's forward and backward chained from them), ``model``
(``GPT``: the model on one backend, training and generation), ``data`` (bytes of text),
the command lines ``train`` and ``sample``, ``distributed`` (``train``'s data
parallelism over the processes torchrun starts), and ``reference`` (the same model in plain
NumPy, the oracle of the tests)."""

from examples.gpt.config import GPTConfig
from examples.gpt.model import GPT

__all__ = ["GPT", "GPTConfig"]
