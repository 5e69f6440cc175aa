"""``GPT``: the GPT-2 of ``examples.gpt`` as one object, trained and sampled on one
backend, every operation a tilec kernel (``step`` chains a training step's, ``kvcache``
adds generation's), no PyTorch anywhere.

Memory. Parameters, gradients and AdamW's two moments are one flat array each on the
backend's device (``tc.zeros``, in ``config.param_offsets``'s layout), and each parameter,
and each layer's slice of a stacked one, is a view into them: zeroing the gradients, their
norm and the optimizer step are one launch each over a whole buffer. WGSL binds a view
only at a multiple of 256 bytes, which every layer's slice is when ``n_embd`` is a multiple
of 64 (``check_config`` asks it there); the activations that have a layer axis are one
array a layer for the same reason. A training step's activations are allocated for its
(B, T) and reused while that stays; generation's buffers and key/value cache for its B.

Precision. ``dtype="float32"`` computes in float32 throughout. ``"bfloat16"`` (tensor cores
on ptx; numpy emulates it, WGSL has none) keeps float32 master weights, gradients and
moments and gives the matmuls and attention bfloat16 inputs: a copy of the weights
(converted after each step) and the activations and gradients that feed products
(``LOW_PRECISION``), accumulated in float32; a training step's logits are bfloat16 too
(as PyTorch's autocast leaves them: the output head's product writes half the bytes and
the loss reads them into float32), their gradient overwriting them, and so is the GELU's
pre-activation the MLP's backward reads; the residual stream, the layer-norm statistics,
generation's logits and the loss stay float32.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.errors import TilecError
from compiler.jit import resolve_backend
from examples.gpt import embedding, kvcache, layernorm, matmul, optimizer, step
from examples.gpt.config import (
    ALIGN,
    PARAM_NAMES,
    ConfigError,
    GPTConfig,
    flatten,
    init_params,
    param_offsets,
    param_shapes,
    views,
)

DTYPES = {"float32": tl.float32, "bfloat16": tl.bfloat16}
PER_LAYER = frozenset({"ln1", "ln1_mean", "ln1_rstd", "qkv", "att", "lse", "res2", "ln2",
                       "ln2_mean", "ln2_rstd", "pre", "fch", "res3"})
"""``step.activation_shapes``' arrays with a leading layer axis."""
LAYER_PARAMS = ("ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb", "ln2w", "ln2b", "fcw",
                "fcb", "fcprojw", "fcprojb")
"""The parameters stacked by layer (``config.param_shapes``)."""
LOW_PRECISION = frozenset({"ln1", "qkv", "att", "ln2", "pre", "fch", "lnf", "dres", "dC",
                           "d3C", "d4C", "ln", "cache", "lnl"})
"""The activations (a training step's and generation's) held in bfloat16 in that mode."""
LOW_IN_TRAINING = LOW_PRECISION | {"logits"}
"""A training step's: also the logits, which the loss's gradient then overwrites
(generation's choose tokens, in float32)."""


class ModelError(TilecError):
    """A call the GPT cannot answer: tokens of the wrong shape or range, a backward with no
    forward before it, an unreadable checkpoint."""


def check_config(cfg: GPTConfig, backend: str, dtype: str) -> None:
    """What a backend needs of the model: WGSL has no bfloat16 and binds per-layer views
    only at 256-byte multiples (so ``n_embd`` a multiple of 64)."""
    if dtype not in DTYPES:
        raise ConfigError(f"GPT dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if backend == "wgsl" and dtype != "float32":
        raise ConfigError("GPT dtype='bfloat16' runs on ptx (tensor cores) and numpy; WGSL "
                          "has no bfloat16: use dtype='float32' on wgsl")
    if backend == "wgsl" and cfg.n_embd % ALIGN:
        raise ConfigError(f"on wgsl the GPT's n_embd must be a multiple of {ALIGN} (each "
                          f"layer's parameters must start at a 256-byte multiple to be "
                          f"bound), got {cfg.n_embd}")


def tokens(a, cfg: GPTConfig, what: str, max_len: int | None = None) -> np.ndarray:
    """``a`` as a contiguous int32 (B, T) array of tokens below ``vocab_size``, T >= 1
    (and at most ``max_len``)."""
    t = np.asarray(a)
    if t.ndim != 2 or 0 in t.shape or not np.issubdtype(t.dtype, np.integer):
        raise ModelError(f"{what} must be a (B, T) array of integer tokens with B, T >= 1, "
                         f"got {t.dtype} of shape {t.shape}")
    if t.min() < 0 or t.max() >= cfg.vocab_size:
        raise ModelError(f"{what} must hold tokens in 0..{cfg.vocab_size - 1}, got "
                         f"{t.min()}..{t.max()}")
    if max_len is not None and t.shape[1] > max_len:
        raise ModelError(f"{what} has {t.shape[1]} positions, more than the block size "
                         f"{max_len}")
    return np.ascontiguousarray(t, np.int32)


def pick(logits: np.ndarray, temperature: float, top_k: int | None,
         rng: np.random.Generator) -> np.ndarray:
    """Each row's next token (int32): the most likely at temperature 0, else a draw from
    softmax(logits / temperature) over the ``top_k`` most likely (all when None)."""
    if temperature == 0:
        return logits.argmax(axis=-1).astype(np.int32)
    z = logits.astype(np.float64) / temperature
    if top_k is not None:
        kth = np.sort(z, axis=-1)[:, -top_k][:, None]
        z = np.where(z >= kth, z, -np.inf)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    cdf = np.cumsum(p / p.sum(axis=-1, keepdims=True), axis=-1)
    drawn = (cdf < rng.random((len(cdf), 1))).sum(axis=-1)
    return np.minimum(drawn, logits.shape[-1] - 1).astype(np.int32)


class GPT:
    """The GPT-2 of ``cfg`` on ``backend`` in ``dtype`` ("float32" or "bfloat16"), its
    parameters ``init_params(cfg)`` until ``load_state_dict``."""

    def __init__(self, cfg: GPTConfig, backend: str | None = "numpy", dtype: str = "float32"):
        self.backend = resolve_backend(backend)
        check_config(cfg, self.backend, dtype)
        self.cfg, self.dtype, self.t = cfg, dtype, 0
        n = param_offsets(cfg)[1]
        self._flat = {k: self._zeros(n) for k in ("params", "grads", "m", "v")}
        self.params, self._grads = views(self._flat["params"], cfg), views(self._flat["grads"], cfg)
        self._low = self._zeros(n, DTYPES[dtype]) if dtype != "float32" else None
        self._weights = self.params if self._low is None else views(self._low, cfg)
        self._norm, self._norm_scratch = self._zeros(1), self._zeros(optimizer.sum_scratch(n))
        self._acts: dict | None = None
        self._gen: dict | None = None
        self._ready = False
        self.load_state_dict(init_params(cfg))

    @property
    def num_params(self) -> int:
        return sum(int(np.prod(s)) for s in param_shapes(self.cfg).values())

    def _zeros(self, shape, dtype=tl.float32):
        return tc.zeros(shape, dtype, backend=self.backend)

    def _activation(self, name: str, shape: tuple[int, ...], low=LOW_PRECISION):
        return self._zeros(shape, DTYPES[self.dtype] if name in low else tl.float32)

    # ------------------------------------------------------------ parameters

    def load_state_dict(self, params: dict[str, np.ndarray]) -> None:
        """Take ``params`` ({name: array}, the names and shapes of ``param_shapes``)."""
        unknown = sorted(set(params) - set(PARAM_NAMES))
        if unknown:
            raise ConfigError(f"unknown GPT parameters {', '.join(unknown)}; the names are "
                              f"{', '.join(PARAM_NAMES)}")
        self._flat["params"][...] = flatten(params, self.cfg)
        self._refresh_low()

    def state_dict(self) -> dict[str, np.ndarray]:
        """Host copies of the (float32) parameters."""
        return views(tc.to_numpy(self._flat["params"]), self.cfg)

    def grads(self) -> dict[str, np.ndarray]:
        """Host copies of the gradients, by parameter name."""
        return views(tc.to_numpy(self._flat["grads"]), self.cfg)

    @property
    def grad_buffer(self):
        """The gradients as the one flat array they are on the device
        (``config.param_offsets``' layout), which data parallelism averages across
        processes between ``backward`` and ``step``."""
        return self._flat["grads"]

    def _refresh_low(self) -> None:
        if self._low is not None:
            optimizer.convert(self._flat["params"], self._low, backend=self.backend)

    # ------------------------------------------------------------ training

    def forward(self, idx, targets=None):
        """With ``targets``: the mean cross-entropy loss of ``targets`` after ``idx`` (both
        int (B, T), T at most the block size), a float, kept for ``backward``. Without:
        the logits (B, V) of the token after each row of ``idx`` (a NumPy array)."""
        idx = tokens(idx, self.cfg, "idx", self.cfg.block_size)
        if targets is None:
            g = self._generation(idx.shape[0])
            self._prefill(g, idx)
            return tc.to_numpy(g["logits"])
        targets = tokens(targets, self.cfg, "targets")
        if targets.shape != idx.shape:
            raise ModelError(f"targets must have idx's shape {idx.shape}, got {targets.shape}")
        a = self._activations(*idx.shape)
        a["idx"][...], a["targets"][...] = idx, targets
        step.forward(self._weights, a, a["idx"], a["targets"], self.cfg, self.backend)
        self._ready = True
        return float(tc.to_numpy(a["loss"])[0])

    def zero_grad(self) -> None:
        optimizer.zero(self._flat["grads"], backend=self.backend)

    def backward(self) -> None:
        """Add every parameter's gradient of the last ``forward``'s loss to the gradients."""
        if not self._ready:
            raise ModelError("GPT.backward needs a GPT.forward(idx, targets) before it")
        a = self._acts
        step.backward(self._weights, self._grads, a, a["idx"], self.cfg, self.backend)

    def step(self, lr: float, beta1: float = 0.9, beta2: float = 0.95, eps: float = 1e-8,
             weight_decay: float = 0.1, grad_clip: float | None = 1.0) -> None:
        """PyTorch's AdamW step on every parameter (step count ``t`` += 1), the gradients
        first scaled to a 2-norm of at most ``grad_clip`` (None: not clipped) as
        ``clip_grad_norm_`` does; the norm is computed on the device either way."""
        if grad_clip is not None and not grad_clip > 0:
            raise ModelError(f"grad_clip must be positive or None, got {grad_clip}")
        self.t += 1
        f = self._flat
        optimizer.grad_norm(f["grads"], self._norm, self._norm_scratch, backend=self.backend)
        optimizer.adamw(f["params"], f["grads"], f["m"], f["v"], self.t, lr, beta1, beta2, eps,
                        weight_decay, norm=None if grad_clip is None else self._norm,
                        max_norm=grad_clip or 1.0, backend=self.backend)
        self._refresh_low()

    def grad_norm(self) -> float:
        """The gradients' 2-norm (before clipping) of the last ``step``."""
        return float(tc.to_numpy(self._norm)[0])

    def _activations(self, B: int, T: int) -> dict:
        """The arrays of a (B, T) step: ``step.activation_shapes``' (one array a layer for
        those with a layer axis) and the tokens."""
        if self._acts is not None and tuple(self._acts["idx"].shape) == (B, T):
            return self._acts
        self._acts, self._ready = None, False  # the old ones go before the new ones come
        shapes = step.activation_shapes(self.cfg, B, T)
        a = {name: [self._activation(name, shape[1:], LOW_IN_TRAINING)
                    for _ in range(shape[0])]
             if name in PER_LAYER else self._activation(name, shape, LOW_IN_TRAINING)
             for name, shape in shapes.items()}
        a["idx"], a["targets"] = self._zeros((B, T), tl.int32), self._zeros((B, T), tl.int32)
        self._acts = a
        return a

    # ------------------------------------------------------------ generation

    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None, seed: int | None = None,
                 graph: bool | None = None) -> np.ndarray:
        """``idx`` (int (B, T)) followed by ``max_new_tokens`` tokens drawn one at a time
        (``pick``; ``seed`` seeds the draws), as int32 (B, T + max_new_tokens). The prompt
        runs once and each new token alone against the key/value cache; past the block
        size the model sees the last ``block_size`` tokens, which have all moved one
        position, so each such step runs them anew. ``graph``: replay one ``tc.graph`` of
        the decoding step, captured per batch size, instead of launching its kernels
        (None: on ptx, where that saves the host about a hundred launches a token)."""
        idx = tokens(idx, self.cfg, "idx")
        if max_new_tokens < 0 or temperature < 0:
            raise ModelError(f"generate needs max_new_tokens >= 0 and temperature >= 0, got "
                             f"{max_new_tokens} and {temperature}")
        if top_k is not None and not 1 <= top_k <= self.cfg.vocab_size:
            raise ModelError(f"top_k must be in 1..{self.cfg.vocab_size} or None, got {top_k}")
        draw = None if temperature == 0 else \
            functools.partial(pick, temperature=temperature, top_k=top_k,
                              rng=np.random.default_rng(seed))
        g = self._generation(idx.shape[0])
        use_graph = self.backend == "ptx" if graph is None else graph
        out, block, left = [idx], self.cfg.block_size, max_new_tokens
        while left:
            window = np.concatenate(out, axis=1)[:, -block:]
            out.append(self._continue(g, window, min(left, block + 1 - window.shape[1]),
                                      draw, use_graph))
            left -= out[-1].shape[1]
        return np.concatenate(out, axis=1)

    def _continue(self, g: dict, window: np.ndarray, n: int, draw, use_graph: bool):
        """``n`` tokens after ``window`` (B, T), T + n - 1 at most the block size: the
        window's prefill, then a decoding step per token but the last. Greedy choices
        stay on the device until all ``n`` are made (``kvcache.next_token``); ``draw``
        (a partial ``pick``) draws each from logits brought back."""
        B, T = window.shape
        self._prefill(g, window)
        drawn = []
        for i in range(n):
            if draw is not None:
                drawn.append(draw(tc.to_numpy(g["logits"])))
                g["tok"][:B] = drawn[-1]
            if i + 1 < n:
                self._decode(g, B, use_graph)
        if draw is not None:
            return np.stack(drawn, axis=1)
        return tc.to_numpy(g["hist"])[:, T:T + n]

    def _generation(self, B: int) -> dict:
        """Generation's buffers for B sequences of up to ``block_size`` positions, a
        (B, block_size, 2C) key/value cache a layer, the position of a step's first token
        (``pos``) and the greedy tokens by position (``hist``); each layer's weights as
        views, made once; and the views of a step and the decoding step's graph, made
        when first needed."""
        if self._gen is not None and self._gen["last"].shape[0] == B:
            return self._gen
        self._gen = None
        cfg = self.cfg
        n, C = B * cfg.block_size, cfg.n_embd
        shapes = {"tok": (n,), "x": (n, C), "x2": (n, C), "ln": (n, C), "mean": (n,),
                  "rstd": (n,), "qkv": (n, 3 * C), "att": (n, C), "pre": (n, 4 * C),
                  "fch": (n, 4 * C), "last": (B, C), "lnl": (B, C), "lmean": (B,),
                  "lrstd": (B,), "logits": (B, cfg.vocab_size)}
        g = {name: self._activation(name, shape) for name, shape in shapes.items()}
        g["tok"] = self._zeros(n, tl.int32)
        g["pos"] = self._zeros(1, tl.int32)
        g["hist"] = self._zeros((B, cfg.block_size + 1), tl.int32)
        g["cache"] = [self._activation("cache", (B, cfg.block_size, 2 * C))
                      for _ in range(cfg.n_layer)]
        g["layers"] = [{k: self._weights[k][i] for k in LAYER_PARAMS}
                       for i in range(cfg.n_layer)]
        g["views"], g["graph"], g["warm"] = {}, None, False
        self._gen = g
        return g

    def _prefill(self, g: dict, toks: np.ndarray) -> None:
        """A step on ``toks`` (B, Tn) from position 0."""
        B, Tn = toks.shape
        self._views(g, B, Tn)["tok"][...] = toks
        g["pos"][...] = 0
        self._step(g, B, Tn)

    def _decode(self, g: dict, B: int, use_graph: bool) -> None:
        """A step on the token of each row in ``g["tok"]``: launched, or with
        ``use_graph`` a replay of the step captured once (after a launched one, which
        compiled its kernels)."""
        if use_graph and g["graph"] is None and g["warm"]:
            with tc.graph(self.backend) as captured:
                self._step(g, B, 1)
            g["graph"] = captured
        if use_graph and g["graph"] is not None:
            g["graph"].replay()
            return
        self._step(g, B, 1)
        g["warm"] = True

    def _views(self, g: dict, B: int, Tn: int) -> dict:
        """The arrays of a step on (B, Tn) tokens, views of generation's buffers, made
        once for each Tn."""
        v = g["views"].get(Tn)
        if v is None:
            n, C = B * Tn, self.cfg.n_embd
            v = {k: g[k][:n] for k in ("x", "x2", "ln", "mean", "rstd", "att", "pre", "fch")}
            v["tok"] = g["tok"][:n].reshape(B, Tn)
            v["heads"] = g["qkv"][:n].reshape(B, Tn, 3 * C)
            v["qkv"] = g["qkv"][:n]
            v["next"] = g["tok"][:B]  # the next step's tokens, one a row
            v["last"] = v["x"] if Tn == 1 else g["last"]
            g["views"][Tn] = v
        return v

    def _step(self, g: dict, B: int, Tn: int) -> None:
        """The model on the (B, Tn) tokens in ``g["tok"]`` at positions ``g["pos"]`` on,
        their keys and values added to the cache: the logits (B, V) of the token after each
        row's last, the likeliest such token into ``g["tok"]`` (the next step's input) and
        ``g["hist"]``, and ``g["pos"]`` moved on by Tn. All on the device, from arrays
        whose addresses stay, so a decoding step is the same launches every time."""
        cfg, w, be, pos = self.cfg, self._weights, self.backend, g["pos"]
        v, C = self._views(g, B, Tn), cfg.n_embd
        x, x2, ln, mean, rstd = (v[k] for k in ("x", "x2", "ln", "mean", "rstd"))
        embedding.embedding_forward(v["tok"], w["wte"], w["wpe"], x, backend=be, pos=pos)
        for lw, cache in zip(g["layers"], g["cache"], strict=True):
            layernorm.layernorm_forward(x, lw["ln1w"], lw["ln1b"], ln, mean, rstd, backend=be)
            matmul.linear_forward(ln, lw["qkvw"], lw["qkvb"], v["qkv"], backend=be)
            kvcache.cache_keys_values(v["heads"], cache, pos, backend=be)
            kvcache.cached_attention(v["heads"], cache, v["att"], pos, cfg.n_head, backend=be)
            matmul.linear_forward(v["att"], lw["attprojw"], lw["attprojb"], x2, residual=x,
                                  backend=be)
            layernorm.layernorm_forward(x2, lw["ln2w"], lw["ln2b"], ln, mean, rstd, backend=be)
            matmul.linear_forward(ln, lw["fcw"], lw["fcb"], v["fch"], pre=v["pre"], backend=be)
            matmul.linear_forward(v["fch"], lw["fcprojw"], lw["fcprojb"], x, residual=x2,
                                  backend=be)
        if Tn > 1:
            kvcache.last_rows(x.reshape(B, Tn, C), g["last"], backend=be)
        layernorm.layernorm_forward(v["last"], w["lnfw"], w["lnfb"], g["lnl"], g["lmean"],
                                    g["lrstd"], backend=be)
        matmul.linear_forward(g["lnl"], w["wte"], None, g["logits"], backend=be)
        kvcache.next_token(g["logits"], v["next"], g["hist"], pos, Tn, backend=be)
        kvcache.advance(pos, Tn, backend=be)

    # ------------------------------------------------------------ checkpoints

    def save(self, path: str) -> None:
        """An npz at ``path``: the config, the parameters (``param.<name>``), AdamW's
        moments (``m.<name>``, ``v.<name>``) and the step count."""
        arrays = {"config": np.array(dataclasses.astuple(self.cfg)), "step": np.array(self.t)}
        for key, flat in (("param", "params"), ("m", "m"), ("v", "v")):
            for name, a in views(tc.to_numpy(self._flat[flat]), self.cfg).items():
                arrays[f"{key}.{name}"] = a
        with open(path, "wb") as f:
            np.savez(f, **arrays)

    @classmethod
    def load(cls, path: str, backend: str | None = "numpy", dtype: str = "float32") -> GPT:
        """The model ``save`` wrote to ``path``, on ``backend`` in ``dtype``."""
        try:
            with np.load(path) as f:
                cfg = GPTConfig(*(int(v) for v in f["config"]))
                parts = {key: {name: f[f"{key}.{name}"] for name in PARAM_NAMES}
                         for key in ("param", "m", "v")}
                t = int(f["step"])
        except (OSError, KeyError, ValueError, TypeError) as e:
            raise ModelError(f"{path} is not a GPT checkpoint ({type(e).__name__}: "
                             f"{e})".splitlines()[0]) from None
        model = cls(cfg, backend, dtype)
        model.load_state_dict(parts["param"])
        model._flat["m"][...] = flatten(parts["m"], cfg)
        model._flat["v"][...] = flatten(parts["v"], cfg)
        model.t = t
        return model
