"""The GPT in plain PyTorch, autograd for the backward: the model of examples/gpt (llm.c's
layer-stacked parameters, loaded from the same dict as the tilec GPT), to check the tilec
model against and to time it beside PyTorch eager and ``torch.compile``.

Training computes in the parameters' dtype (``"float32"``, or ``"float64"`` for checks),
or under ``torch.autocast(bfloat16)`` with float32 master weights (``"bfloat16"``).
Generation keeps a static KV cache of ``block_size`` slots per layer, so a decode step has
the same shapes at every position (the position is a tensor, the not-yet-written slots are
masked out): ``torch.compile(mode="reduce-overhead")`` then captures it in one CUDA graph
and replays it for every token.

Needs PyTorch, which tilec does not depend on.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from examples.gpt.config import ConfigError, GPTConfig, param_shapes

EPS = 1e-5
# the parameters' dtype for each ``dtype`` argument: bfloat16 keeps float32 master weights
MASTER = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.float32}


class TorchGPT(nn.Module):
    """The GPT of ``cfg`` holding ``params`` ({name: array}, config.py's names and shapes) on
    ``device`` (CUDA when there is one), trained by ``torch.optim.AdamW`` with the weight
    decay on every parameter. ``compile``: the training forward (and so its backward) under
    ``torch.compile``, the decode step under ``torch.compile(mode="reduce-overhead")``."""

    def __init__(self, cfg: GPTConfig, params: dict[str, np.ndarray], compile: bool = False,
                 dtype: str = "float32", device: str | None = None, *,
                 betas: tuple[float, float] = (0.9, 0.95), eps: float = 1e-8,
                 weight_decay: float = 0.1) -> None:
        super().__init__()
        if dtype not in MASTER:
            raise ConfigError(f"TorchGPT dtype must be one of {', '.join(MASTER)}, "
                              f"got {dtype!r}")
        self.cfg, self.dtype = cfg, dtype
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.scale = 1 / math.sqrt(cfg.head_size)
        for name, shape in param_shapes(cfg).items():
            if name not in params or np.shape(params[name]) != shape:
                got = np.shape(params[name]) if name in params else "nothing"
                raise ConfigError(f"parameter {name} must have shape {shape}, got {got}")
            value = torch.tensor(np.asarray(params[name]), dtype=MASTER[dtype])
            self.register_parameter(name, nn.Parameter(value.to(self.device)))
        self.optimizer = torch.optim.AdamW(
            self.parameters(), lr=0.0, betas=betas, eps=eps, weight_decay=weight_decay,
            fused=True if self.device.type == "cuda" else None)
        self.positions = torch.arange(cfg.block_size, device=self.device)
        self.pos = torch.zeros(1, dtype=torch.long, device=self.device)
        self.k_cache: list[torch.Tensor] = []
        self.v_cache: list[torch.Tensor] = []
        self.compiled = compile
        self.loss_fn = torch.compile(self._loss) if compile else self._loss
        self.decode_fn = (torch.compile(self._decode, mode="reduce-overhead", fullgraph=True,
                                        dynamic=False) if compile else self._decode)

    # -- the model ------------------------------------------------------------------------

    def _autocast(self):
        """bfloat16 autocast for ``dtype="bfloat16"``; nothing otherwise."""
        if self.dtype == "bfloat16":
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _qkv(self, i: int, x: torch.Tensor):
        """Layer ``i``'s Q, K, V of ``x`` (B, T, C), each (B, H, T, C/H)."""
        B, T, C = x.shape
        h = F.layer_norm(x, (C,), self.ln1w[i], self.ln1b[i], EPS)
        qkv = F.linear(h, self.qkvw[i], self.qkvb[i])
        return qkv.view(B, T, 3, self.cfg.n_head, C // self.cfg.n_head).permute(2, 0, 3, 1, 4)

    def _block_rest(self, i: int, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Layer ``i``'s output from its input ``x`` and its attention's heads ``y``."""
        B, H, T, D = y.shape
        x = x + F.linear(y.transpose(1, 2).reshape(B, T, H * D), self.attprojw[i],
                         self.attprojb[i])
        h = F.layer_norm(x, (H * D,), self.ln2w[i], self.ln2b[i], EPS)
        h = F.gelu(F.linear(h, self.fcw[i], self.fcb[i]), approximate="tanh")
        return x + F.linear(h, self.fcprojw[i], self.fcprojb[i])

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        h = F.layer_norm(x, (self.cfg.n_embd,), self.lnfw, self.lnfb, EPS)
        return F.linear(h, self.wte)

    def _hidden(self, idx: torch.Tensor, cache: bool) -> torch.Tensor:
        """The last block's output for ``idx`` (B, T); ``cache``: K and V of every layer
        into the cache's first T slots too."""
        T = idx.shape[1]
        x = F.embedding(idx, self.wte) + self.wpe[:T]
        for i in range(self.cfg.n_layer):
            q, k, v = self._qkv(i, x)
            if cache:
                self.k_cache[i][:, :, :T] = k
                self.v_cache[i][:, :, :T] = v
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale)
            x = self._block_rest(i, x, y)
        return x

    def _loss(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The mean cross-entropy of ``targets`` after ``idx``."""
        with self._autocast():
            logits = self._logits(self._hidden(idx, cache=False))
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def _prefill(self, idx: torch.Tensor) -> torch.Tensor:
        """The next token's logits (B, V) after the prompt ``idx``, whose K and V fill the
        cache."""
        with self._autocast():
            return self._logits(self._hidden(idx, cache=True)[:, -1])

    def _decode(self, tok: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """The next token's logits (B, V) after ``tok`` (B, 1) at position ``pos`` (a
        one-element tensor, so every position is the same graph), its K and V into the
        cache's slot ``pos``; attention sees the slots up to ``pos``."""
        with self._autocast():
            x = F.embedding(tok, self.wte) + F.embedding(pos, self.wpe)
            visible = (self.positions <= pos).view(1, 1, 1, -1)
            for i in range(self.cfg.n_layer):
                q, k, v = self._qkv(i, x)
                self.k_cache[i].index_copy_(2, pos, k)
                self.v_cache[i].index_copy_(2, pos, v)
                y = F.scaled_dot_product_attention(q, self.k_cache[i], self.v_cache[i],
                                                   attn_mask=visible, scale=self.scale)
                x = self._block_rest(i, x, y)
            return self._logits(x[:, -1])

    # -- the API --------------------------------------------------------------------------

    def tokens(self, a) -> torch.Tensor:
        """``a`` (B, T) ints, NumPy or torch, as int64 on the model's device."""
        t = torch.as_tensor(np.asarray(a) if not torch.is_tensor(a) else a)
        if t.ndim != 2 or t.shape[1] > self.cfg.block_size:
            raise ConfigError(f"tokens must have shape (B, T) with T <= block_size "
                              f"({self.cfg.block_size}), got {tuple(t.shape)}")
        return t.to(device=self.device, dtype=torch.long)

    def train_step(self, idx, targets, lr: float, grad_clip: float | None = 1.0) -> float:
        """One AdamW step at rate ``lr`` on the mean loss of ``targets`` after ``idx``,
        gradients clipped to norm ``grad_clip`` (None: not clipped); the loss before it."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.tokens(idx), self.tokens(targets))
        loss.backward()
        if grad_clip is not None:
            nn.utils.clip_grad_norm_(self.parameters(), grad_clip)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()
        return loss.item()

    def forward_loss(self, idx, targets) -> float:
        """The mean loss of ``targets`` after ``idx``, no gradient kept."""
        with torch.no_grad():
            return self.loss_fn(self.tokens(idx), self.tokens(targets)).item()

    def grads(self) -> dict[str, np.ndarray]:
        """The last ``train_step``'s gradients (clipped, when it clipped), on the host."""
        return {name: (p.grad if p.grad is not None else torch.zeros_like(p))
                .detach().cpu().numpy().copy() for name, p in self.named_parameters()}

    def state_dict_numpy(self) -> dict[str, np.ndarray]:
        """The parameters, host copies, in config.py's names and shapes."""
        return {name: p.detach().cpu().numpy().copy() for name, p in self.named_parameters()}

    @torch.no_grad()
    def generate(self, idx, max_new_tokens: int, temperature: float = 0.0,
                 top_k: int | None = None, seed: int | None = None) -> np.ndarray:
        """``idx`` (B, T) followed by ``max_new_tokens`` tokens, (B, T + new) int32: each
        drawn from the softmax of the logits / ``temperature`` (the ``top_k`` largest
        only, when given), the argmax at temperature 0."""
        idx = self.tokens(idx)
        B, T = idx.shape
        if T + max_new_tokens > self.cfg.block_size or temperature < 0 \
                or (top_k is not None and top_k < 1):
            raise ConfigError(f"generate needs T + max_new_tokens <= block_size "
                              f"({self.cfg.block_size}), temperature >= 0 and top_k >= 1; "
                              f"got {T} + {max_new_tokens}, {temperature}, {top_k}")
        gen = torch.Generator(device=self.device)
        if seed is None:
            gen.seed()
        else:
            gen.manual_seed(seed)
        out = [idx]
        if max_new_tokens:
            self._fresh_cache(B)
            logits = self._prefill(idx)
            for n in range(max_new_tokens):
                out.append(self._pick(logits, temperature, top_k, gen))
                if n + 1 < max_new_tokens:
                    logits = self._decode_step(out[-1], T + n)
        return torch.cat(out, dim=1).to(torch.int32).cpu().numpy()

    def _fresh_cache(self, B: int) -> None:
        """A zero K and V cache per layer for batch ``B`` (the same tensors while B stays,
        so a captured decode graph keeps its addresses)."""
        H, D = self.cfg.n_head, self.cfg.head_size
        dtype = torch.bfloat16 if self.dtype == "bfloat16" else MASTER[self.dtype]
        shape = (B, H, self.cfg.block_size, D)
        if self.k_cache and self.k_cache[0].shape == shape:
            for t in self.k_cache + self.v_cache:
                t.zero_()
            return
        make = [torch.zeros(shape, dtype=dtype, device=self.device)
                for _ in range(2 * self.cfg.n_layer)]
        if self.compiled:
            for t in make:  # so CUDA graphs may write them in place
                torch._dynamo.mark_static_address(t)
        self.k_cache, self.v_cache = make[:self.cfg.n_layer], make[self.cfg.n_layer:]

    def _decode_step(self, tok: torch.Tensor, at: int) -> torch.Tensor:
        if self.compiled:
            torch.compiler.cudagraph_mark_step_begin()
        self.pos.fill_(at)  # on the device, without a copy from the host
        return self.decode_fn(tok, self.pos)

    @staticmethod
    def _pick(logits: torch.Tensor, temperature: float, top_k: int | None,
              gen: torch.Generator) -> torch.Tensor:
        """The next token (B, 1) from ``logits`` (B, V), computed in float32 or wider."""
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
        if temperature == 0:
            return logits.argmax(dim=-1, keepdim=True)
        logits = logits / temperature
        if top_k is not None:
            kth = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
            logits = logits.masked_fill(logits < kth, -math.inf)
        return torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)
