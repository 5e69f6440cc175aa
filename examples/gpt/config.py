"""The GPT-2 model's shape and its parameters' layout: llm.c's layer-stacked tensors (one
array per kind of parameter, the layers stacked on the first axis), all held in one flat
buffer so that the optimizer and the gradient norm are one launch each.

Each parameter starts at a multiple of ``ALIGN`` elements (256 bytes of float32), the
alignment WGSL needs to bind a view of a buffer; the gaps hold zeros, which AdamW keeps
at zero and the gradient norm does not see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.errors import TilecError

ALIGN = 64

PARAM_NAMES = ("wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
               "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb")


class ConfigError(TilecError):
    """A model shape the GPT cannot have."""


@dataclass(frozen=True)
class GPTConfig:
    """V tokens, at most ``block_size`` positions, ``n_layer`` blocks of ``n_head``
    heads, ``n_embd`` wide (a multiple of ``n_head``)."""

    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    n_embd: int

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"GPTConfig.{name} must be a positive int, got {value!r}")
        if self.n_embd % self.n_head:
            raise ConfigError(f"GPTConfig.n_embd ({self.n_embd}) must be a multiple of "
                              f"n_head ({self.n_head})")

    @property
    def head_size(self) -> int:
        return self.n_embd // self.n_head


def param_shapes(cfg: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's shape, in ``PARAM_NAMES`` order."""
    V, maxT, L, C = cfg.vocab_size, cfg.block_size, cfg.n_layer, cfg.n_embd
    return {"wte": (V, C), "wpe": (maxT, C), "ln1w": (L, C), "ln1b": (L, C),
            "qkvw": (L, 3 * C, C), "qkvb": (L, 3 * C), "attprojw": (L, C, C),
            "attprojb": (L, C), "ln2w": (L, C), "ln2b": (L, C), "fcw": (L, 4 * C, C),
            "fcb": (L, 4 * C), "fcprojw": (L, C, 4 * C), "fcprojb": (L, C),
            "lnfw": (C,), "lnfb": (C,)}


def param_offsets(cfg: GPTConfig) -> tuple[dict[str, int], int]:
    """Each parameter's first element in the flat buffer (a multiple of ``ALIGN``), and
    the buffer's length (also a multiple of ``ALIGN``)."""
    offsets, at = {}, 0
    for name, shape in param_shapes(cfg).items():
        offsets[name] = at
        at += -(-int(np.prod(shape)) // ALIGN) * ALIGN
    return offsets, at


def views(flat: np.ndarray, cfg: GPTConfig) -> dict[str, np.ndarray]:
    """The parameters as views of the NumPy buffer ``flat``."""
    offsets, total = param_offsets(cfg)
    if flat.shape != (total,):
        raise ConfigError(f"a flat parameter buffer of this GPTConfig has shape ({total},), "
                          f"got {flat.shape}")
    return {name: flat[offsets[name]:offsets[name] + int(np.prod(shape))].reshape(shape)
            for name, shape in param_shapes(cfg).items()}


def flatten(params: dict[str, np.ndarray], cfg: GPTConfig,
            dtype: np.dtype | type = np.float32) -> np.ndarray:
    """One flat buffer holding ``params`` (zeros between them)."""
    flat = np.zeros(param_offsets(cfg)[1], dtype)
    for name, view in views(flat, cfg).items():
        if name not in params or np.shape(params[name]) != view.shape:
            got = np.shape(params[name]) if name in params else "nothing"
            raise ConfigError(f"parameter {name} must have shape {view.shape}, got {got}")
        view[...] = params[name]
    return flat


def init_params(cfg: GPTConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """GPT-2's initialization: normal(0, 0.02) weights, the residual projections scaled by
    1/sqrt(2 n_layer), zero biases, unit layer-norm weights."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(cfg).items():
        if name.startswith("ln") and name.endswith("w"):
            params[name] = np.ones(shape, np.float32)
        elif name.endswith("b"):
            params[name] = np.zeros(shape, np.float32)
        else:
            std = 0.02 / np.sqrt(2 * cfg.n_layer) if name.endswith("projw") else 0.02
            params[name] = (rng.standard_normal(shape) * std).astype(np.float32)
    return params
