"""GPT-2 in plain NumPy, forward and backward written out (no autograd): the oracle the
tilec kernels are tested against. Every function computes in the dtype it is given, so
float64 inputs give float64 results (what finite differences need).

The model is GPT-2 as llm.c trains it: linear layers ``x @ W.T + b``; Q, K, V the three
C-wide thirds of the QKV output, heads of width C/H inside each; causal attention scaled
by 1/sqrt(C/H); layer norms with eps 1e-5; tanh GELU; the output head tied to ``wte``;
the mean cross-entropy over all B*T positions. AdamW and gradient clipping are PyTorch's.
"""

from __future__ import annotations

import numpy as np

from examples.gpt.config import GPTConfig

EPS = 1e-5
GELU_SCALE = np.sqrt(2 / np.pi)


def layernorm_forward(x, w, b, eps: float = EPS):
    """``(out, mean, rstd)`` over the last axis."""
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    return (x - mean) * rstd * w + b, mean[..., 0], rstd[..., 0]


def layernorm_backward(dout, x, w, mean, rstd):
    """``(dx, dw, db)``; ``dw`` and ``db`` summed over every leading axis."""
    xhat = (x - mean[..., None]) * rstd[..., None]
    g = dout * w
    dx = (g - g.mean(axis=-1, keepdims=True)
          - xhat * (g * xhat).mean(axis=-1, keepdims=True)) * rstd[..., None]
    lead = tuple(range(x.ndim - 1))
    return dx, (dout * xhat).sum(axis=lead), dout.sum(axis=lead)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(GELU_SCALE * (x + 0.044715 * x ** 3)))


def gelu_grad(x):
    """d gelu(x) / dx."""
    t = np.tanh(GELU_SCALE * (x + 0.044715 * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_SCALE * (1 + 3 * 0.044715 * x * x)


def split_heads(qkv, n_head: int):
    """Q, K, V of ``qkv`` (B, T, 3C), each (B, H, T, C/H)."""
    B, T, C3 = qkv.shape
    return qkv.reshape(B, T, 3, n_head, C3 // 3 // n_head).transpose(2, 0, 3, 1, 4)


def attention_forward(qkv, n_head: int):
    """``(out (B, T, C), probs (B, H, T, T), lse (B, H, T))``: causal self-attention;
    ``lse`` is each query's log-sum-exp of its scaled scores."""
    q, k, v = split_heads(qkv, n_head)
    B, H, T, D = q.shape
    s = q @ k.swapaxes(-1, -2) / np.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - top)
    total = e.sum(axis=-1, keepdims=True)
    probs = e / total
    out = (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    return out, probs, (top + np.log(total))[..., 0]


def attention_backward(dout, qkv, probs, n_head: int):
    """d loss / d qkv (B, T, 3C) from d loss / d out (B, T, C)."""
    q, k, v = split_heads(qkv, n_head)
    B, H, T, D = q.shape
    do = dout.reshape(B, T, H, D).transpose(0, 2, 1, 3)
    dv = probs.swapaxes(-1, -2) @ do
    dp = do @ v.swapaxes(-1, -2)
    ds = probs * (dp - (dp * probs).sum(axis=-1, keepdims=True)) / np.sqrt(D)
    dq, dk = ds @ k, ds.swapaxes(-1, -2) @ q
    return np.stack([dq, dk, dv]).transpose(1, 3, 0, 2, 4).reshape(B, T, 3 * H * D)


def crossentropy(logits, targets):
    """``(mean loss, dlogits)`` over every position (the last axis is the vocabulary)."""
    flat, t = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    top = flat.max(axis=-1, keepdims=True)
    e = np.exp(flat - top)
    total = e.sum(axis=-1, keepdims=True)
    rows = np.arange(len(t))
    losses = (top[:, 0] + np.log(total[:, 0])) - flat[rows, t]
    dlogits = e / total
    dlogits[rows, t] -= 1
    return losses.mean(), (dlogits / len(t)).reshape(logits.shape)


def linear_backward(dout, x, w):
    """``(dx, dw, db)`` of ``x @ w.T + b``, summed over every leading axis of ``x``."""
    d2, x2 = dout.reshape(-1, dout.shape[-1]), x.reshape(-1, x.shape[-1])
    return dout @ w, d2.T @ x2, d2.sum(axis=0)


def forward(params: dict, idx, targets, cfg: GPTConfig):
    """``(mean loss, cache)``: the loss of ``targets`` after ``idx`` (both (B, T) ints);
    ``cache`` holds what ``backward`` needs."""
    p, H = params, cfg.n_head
    T = idx.shape[1]
    x = p["wte"][idx] + p["wpe"][:T]
    layers = []
    for i in range(cfg.n_layer):
        ln1, m1, r1 = layernorm_forward(x, p["ln1w"][i], p["ln1b"][i])
        qkv = ln1 @ p["qkvw"][i].T + p["qkvb"][i]
        att, probs, _ = attention_forward(qkv, H)
        res2 = x + att @ p["attprojw"][i].T + p["attprojb"][i]
        ln2, m2, r2 = layernorm_forward(res2, p["ln2w"][i], p["ln2b"][i])
        pre = ln2 @ p["fcw"][i].T + p["fcb"][i]
        layers.append({"x": x, "ln1": ln1, "m1": m1, "r1": r1, "qkv": qkv, "att": att,
                       "probs": probs, "res2": res2, "ln2": ln2, "m2": m2, "r2": r2,
                       "pre": pre})
        x = res2 + gelu(pre) @ p["fcprojw"][i].T + p["fcprojb"][i]
    lnf, mf, rf = layernorm_forward(x, p["lnfw"], p["lnfb"])
    loss, dlogits = crossentropy(lnf @ p["wte"].T, targets)
    return loss, {"idx": idx, "layers": layers, "x": x, "lnf": lnf, "mf": mf, "rf": rf,
                  "dlogits": dlogits}


def backward(params: dict, cache: dict, cfg: GPTConfig) -> dict:
    """Every parameter's gradient of the mean loss ``forward`` computed."""
    p, H = params, cfg.n_head
    g = {name: np.zeros_like(value) for name, value in p.items()}
    dlnf, g["wte"][...], _ = linear_backward(cache["dlogits"], cache["lnf"], p["wte"])
    dx, g["lnfw"][...], g["lnfb"][...] = layernorm_backward(
        dlnf, cache["x"], p["lnfw"], cache["mf"], cache["rf"])
    for i in reversed(range(cfg.n_layer)):
        c = cache["layers"][i]
        dh, g["fcprojw"][i], g["fcprojb"][i] = linear_backward(dx, gelu(c["pre"]),
                                                               p["fcprojw"][i])
        dln2, g["fcw"][i], g["fcb"][i] = linear_backward(dh * gelu_grad(c["pre"]), c["ln2"],
                                                         p["fcw"][i])
        d, g["ln2w"][i], g["ln2b"][i] = layernorm_backward(dln2, c["res2"], p["ln2w"][i],
                                                           c["m2"], c["r2"])
        dx = dx + d
        datt, g["attprojw"][i], g["attprojb"][i] = linear_backward(dx, c["att"],
                                                                   p["attprojw"][i])
        dqkv = attention_backward(datt, c["qkv"], c["probs"], H)
        dln1, g["qkvw"][i], g["qkvb"][i] = linear_backward(dqkv, c["ln1"], p["qkvw"][i])
        d, g["ln1w"][i], g["ln1b"][i] = layernorm_backward(dln1, c["x"], p["ln1w"][i],
                                                           c["m1"], c["r1"])
        dx = dx + d
    idx = cache["idx"]
    np.add.at(g["wte"], idx, dx)
    g["wpe"][:idx.shape[1]] = dx.sum(axis=0)
    return g


def clip_grad_norm(grads: dict, max_norm: float) -> float:
    """PyTorch's ``clip_grad_norm_``: scales every gradient in place by
    min(1, max_norm / (norm + 1e-6)) and returns the norm before clipping."""
    norm = float(np.sqrt(sum(float((v.astype(np.float64) ** 2).sum()) for v in grads.values())))
    scale = min(1.0, max_norm / (norm + 1e-6))
    for v in grads.values():
        v *= scale
    return norm


def adamw(param, grad, m, v, t: int, lr: float, beta1: float = 0.9, beta2: float = 0.95,
          eps: float = 1e-8, weight_decay: float = 0.1) -> None:
    """PyTorch's AdamW step ``t`` (from 1), in place on ``param``, ``m`` and ``v``."""
    param *= 1 - lr * weight_decay
    m[...] = beta1 * m + (1 - beta1) * grad
    v[...] = beta2 * v + (1 - beta2) * grad * grad
    denom = np.sqrt(v) / np.sqrt(1 - beta2 ** t) + eps
    param -= lr / (1 - beta1 ** t) * m / denom
