"""One training step's forward and backward of the GPT, every operation a tilec kernel
launched by the host functions of ``examples.gpt``'s layer modules, in llm.c's order.

``forward`` and ``backward`` work on arrays already allocated (``activation_shapes`` says
which), so they launch the same way on NumPy arrays and on device arrays; only
``forward_backward``, the NumPy entry point the tests use, allocates.
"""

from __future__ import annotations

import numpy as np

from examples.gpt import attention, embedding, layernorm, loss, matmul, optimizer
from examples.gpt.config import GPTConfig, flatten, param_offsets, views
from examples.gpt.shapes import padded_width


def activation_shapes(cfg: GPTConfig, B: int, T: int) -> dict[str, tuple[int, ...]]:
    """The float32 arrays a step of (B, T) tokens needs: the forward's activations (kept
    for the backward, layers stacked first) and the backward's buffers. The logits' rows
    are ``padded_width(V)`` long, as llm.c pads them, so that the output head's products
    run on TMA and the tensor cores whatever the vocabulary."""
    L, H, C, V, N = cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.vocab_size, B * T
    return {"encoded": (N, C), "ln1": (L, N, C), "ln1_mean": (L, N), "ln1_rstd": (L, N),
            "qkv": (L, N, 3 * C), "att": (L, N, C), "lse": (L, B, H, T), "res2": (L, N, C),
            "ln2": (L, N, C), "ln2_mean": (L, N), "ln2_rstd": (L, N), "pre": (L, N, 4 * C),
            "fch": (L, N, 4 * C), "res3": (L, N, C), "lnf": (N, C), "lnf_mean": (N,),
            "lnf_rstd": (N,), "logits": (N, padded_width(V)), "losses": (N,), "loss": (1,),
            "dres": (N, C), "dC": (N, C), "d3C": (N, 3 * C), "d4C": (N, 4 * C),
            "delta": (B, H, T),
            "scratch": (max(layernorm.backward_scratch(N, C), optimizer.sum_scratch(N)),)}


def forward(p: dict, a: dict, idx, targets, cfg: GPTConfig, backend: str | None = None) -> None:
    """The loss of ``targets`` after ``idx`` (int32 (B, T)) into ``a["loss"]``; the
    logits' gradient of the mean loss replaces ``a["logits"]``."""
    embedding.embedding_forward(idx, p["wte"], p["wpe"], a["encoded"], backend=backend)
    x = a["encoded"]
    for i in range(cfg.n_layer):
        layernorm.layernorm_forward(x, p["ln1w"][i], p["ln1b"][i], a["ln1"][i],
                                    a["ln1_mean"][i], a["ln1_rstd"][i], backend=backend)
        matmul.linear_forward(a["ln1"][i], p["qkvw"][i], p["qkvb"][i], a["qkv"][i],
                              backend=backend)
        attention.attention_forward(a["qkv"][i], a["att"][i], a["lse"][i],
                                    backend=backend)
        matmul.linear_forward(a["att"][i], p["attprojw"][i], p["attprojb"][i], a["res2"][i],
                              residual=x, backend=backend)
        layernorm.layernorm_forward(a["res2"][i], p["ln2w"][i], p["ln2b"][i], a["ln2"][i],
                                    a["ln2_mean"][i], a["ln2_rstd"][i], backend=backend)
        matmul.linear_forward(a["ln2"][i], p["fcw"][i], p["fcb"][i], a["fch"][i],
                              pre=a["pre"][i], backend=backend)
        matmul.linear_forward(a["fch"][i], p["fcprojw"][i], p["fcprojb"][i], a["res3"][i],
                              residual=a["res2"][i], backend=backend)
        x = a["res3"][i]
    layernorm.layernorm_forward(x, p["lnfw"], p["lnfb"], a["lnf"], a["lnf_mean"],
                                a["lnf_rstd"], backend=backend)
    matmul.linear_forward(a["lnf"], p["wte"], None, a["logits"], backend=backend)
    loss.crossentropy(a["logits"], targets, a["losses"], a["logits"],
                      backend=backend, V=cfg.vocab_size)
    optimizer.mean(a["losses"], a["loss"], a["scratch"], backend=backend)


def backward(p: dict, g: dict, a: dict, idx, cfg: GPTConfig,
             backend: str | None = None) -> None:
    """Adds every parameter's gradient of ``forward``'s mean loss into ``g``."""
    L = cfg.n_layer
    dres, dC, d3C, d4C = a["dres"], a["dC"], a["d3C"], a["d4C"]
    matmul.linear_backward(a["logits"], a["lnf"], p["wte"], dC, g["wte"],
                           backend=backend)
    x = a["res3"][L - 1]
    layernorm.layernorm_backward(dC, x, p["lnfw"], a["lnf_mean"], a["lnf_rstd"], dres,
                                 g["lnfw"], g["lnfb"], a["scratch"], backend=backend)
    for i in reversed(range(L)):
        x = a["res3"][i - 1] if i else a["encoded"]
        matmul.linear_backward(dres, a["fch"][i], p["fcprojw"][i], d4C, g["fcprojw"][i],
                               g["fcprojb"][i], pre=a["pre"][i], backend=backend)
        matmul.linear_backward(d4C, a["ln2"][i], p["fcw"][i], dC, g["fcw"][i], g["fcb"][i],
                               backend=backend)
        layernorm.layernorm_backward(dC, a["res2"][i], p["ln2w"][i], a["ln2_mean"][i],
                                     a["ln2_rstd"][i], dres, g["ln2w"][i], g["ln2b"][i],
                                     a["scratch"], accumulate=True, backend=backend)
        matmul.linear_backward(dres, a["att"][i], p["attprojw"][i], dC, g["attprojw"][i],
                               g["attprojb"][i], backend=backend)
        attention.attention_backward(dC, a["qkv"][i], a["att"][i], a["lse"][i],
                                     a["delta"], d3C, backend=backend)
        matmul.linear_backward(d3C, a["ln1"][i], p["qkvw"][i], dC, g["qkvw"][i],
                               g["qkvb"][i], backend=backend)
        layernorm.layernorm_backward(dC, x, p["ln1w"][i], a["ln1_mean"][i],
                                     a["ln1_rstd"][i], dres, g["ln1w"][i], g["ln1b"][i],
                                     a["scratch"], accumulate=True, backend=backend)
    embedding.embedding_backward(idx, dres, g["wte"], g["wpe"], backend=backend)


def forward_backward(params: dict, idx, targets, cfg: GPTConfig,
                     backend: str | None = None) -> tuple[float, dict]:
    """The mean loss and every parameter's gradient (NumPy arrays, the names and shapes
    of ``config.param_shapes``) of one step on NumPy arrays."""
    B, T = idx.shape
    p = views(flatten(params, cfg), cfg)
    g = views(np.zeros(param_offsets(cfg)[1], np.float32), cfg)
    a = {name: np.zeros(shape, np.float32)
         for name, shape in activation_shapes(cfg, B, T).items()}
    idx, targets = (np.ascontiguousarray(t, np.int32) for t in (idx, targets))
    forward(p, a, idx, targets, cfg, backend)
    backward(p, g, a, idx, cfg, backend)
    return float(a["loss"][0]), {name: v.copy() for name, v in g.items()}
