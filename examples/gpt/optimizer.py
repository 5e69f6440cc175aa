"""The optimizer's kernels over the one flat parameter buffer (``examples.gpt.config``):
AdamW as PyTorch computes it, in one launch, optionally clipping the gradients to a global
norm read from device memory (so no value goes to the host between the norm and the
step); the deterministic two-stage sum behind that norm and the mean loss (each
program sums a fixed stretch into a partial, one program sums the partials); and the
whole-buffer chores around a step: zeroing the gradients, and converting the weights to
the copy the matmuls read in bfloat16.
"""

from __future__ import annotations

import math

import compiler as tc
import compiler.language as tl
from examples.gpt.shapes import expect, size


@tc.kernel
def partial_sums_kernel(x, partial, n, iters, SQUARE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(iters):
        offs = (pid * iters + i) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n, other=0.0).to(tl.float32)
        acc += v * v if SQUARE else v
    tl.store(partial + pid, tl.sum(acc, axis=0))


@tc.kernel
def finish_sum_kernel(partial, out, groups, scale, ROOT: tl.constexpr, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for g0 in range(0, groups, BLOCK):
        at = g0 + tl.arange(0, BLOCK)
        acc += tl.load(partial + at, mask=at < groups, other=0.0)
    total = tl.sum(acc, axis=0) * scale
    tl.store(out, tl.sqrt(total) if ROOT else total)


@tc.kernel
def adamw_kernel(p, g, m, v, norm, n, lr, beta1, beta2, eps, weight_decay, step_size,
                 bc2_sqrt, max_norm, CLIP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    grad = tl.load(g + offs, mask=mask, other=0.0).to(tl.float32)
    if CLIP:
        grad *= tl.minimum(1.0, max_norm / (tl.load(norm) + 1e-6))
    mt = beta1 * tl.load(m + offs, mask=mask, other=0.0) + (1.0 - beta1) * grad
    vt = beta2 * tl.load(v + offs, mask=mask, other=0.0) + (1.0 - beta2) * grad * grad
    tl.store(m + offs, mt, mask=mask)
    tl.store(v + offs, vt, mask=mask)
    param = tl.load(p + offs, mask=mask, other=0.0) * (1.0 - lr * weight_decay)
    param -= step_size * mt / (tl.sqrt(vt) / bc2_sqrt + eps)
    tl.store(p + offs, param, mask=mask)


@tc.kernel
def zero_kernel(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.zeros((BLOCK,), tl.float32).to(x.dtype), mask=offs < n)


@tc.kernel
def convert_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask, other=0.0).to(dst.dtype), mask=mask)


def _groups(n: int, block: int, max_groups: int) -> tuple[int, int]:
    """(programs, blocks per program) covering ``n`` elements."""
    iters = tc.cdiv(tc.cdiv(n, block), max_groups)
    return tc.cdiv(n, block * iters), iters


def sum_scratch(n: int, BLOCK: int = 1024, max_groups: int = 1024) -> int:
    """How many float32 elements ``total``'s ``scratch`` needs for ``n`` elements."""
    return _groups(n, BLOCK, max_groups)[0]


def total(x, out, scratch, scale: float = 1.0, square: bool = False, root: bool = False,
          backend: str | None = None, BLOCK: int = 1024, max_groups: int = 1024) -> None:
    """``out[0] = scale * sum(x)`` (of ``x * x`` when ``square``; its square root when
    ``root``), summed in an order that does not vary between runs."""
    n = size(x)
    groups, iters = _groups(n, BLOCK, max_groups)
    if size(scratch) < groups:
        raise tc.LaunchError(f"scratch must hold at least {groups} elements, got "
                             f"{size(scratch)}")
    partial_sums_kernel[(groups,)](x, scratch, n, iters, SQUARE=square, BLOCK=BLOCK,
                                   backend=backend)
    finish_sum_kernel[(1,)](scratch, out, groups, scale, ROOT=root, BLOCK=BLOCK,
                            backend=backend)


def mean(x, out, scratch, backend: str | None = None) -> None:
    """``out[0]`` = the mean of ``x``."""
    total(x, out, scratch, 1.0 / size(x), backend=backend)


def grad_norm(grads, out, scratch, backend: str | None = None) -> None:
    """``out[0]`` = the 2-norm of every gradient in the flat buffer ``grads``."""
    total(grads, out, scratch, square=True, root=True, backend=backend)


def adamw(params, grads, m, v, t: int, lr: float, beta1: float = 0.9, beta2: float = 0.95,
          eps: float = 1e-8, weight_decay: float = 0.1, norm=None, max_norm: float = 1.0,
          backend: str | None = None, BLOCK: int = 1024) -> None:
    """PyTorch's AdamW step ``t`` (from 1) on the flat buffers ``params`` with moments
    ``m`` and ``v``, weight decay on every element; with ``norm`` (a one-element array
    from ``grad_norm``) the gradients are first scaled by min(1, max_norm / (norm + 1e-6)),
    as ``torch.nn.utils.clip_grad_norm_`` does."""
    n = size(params)
    for name, a in (("grads", grads), ("m", m), ("v", v)):
        expect(name, a, (n,))
    if t < 1:
        raise tc.LaunchError(f"the AdamW step count t starts at 1, got {t}")
    adamw_kernel[(tc.cdiv(n, BLOCK),)](
        params, grads, m, v, grads if norm is None else norm, n, lr, beta1, beta2, eps,
        weight_decay, lr / (1 - beta1 ** t), math.sqrt(1 - beta2 ** t), max_norm,
        CLIP=norm is not None, BLOCK=BLOCK, backend=backend)


def zero(x, backend: str | None = None, BLOCK: int = 1024) -> None:
    """``x[...] = 0`` on the device (no host buffer copied in)."""
    n = size(x)
    zero_kernel[(tc.cdiv(n, BLOCK),)](x, n, BLOCK=BLOCK, backend=backend)


def convert(src, dst, backend: str | None = None, BLOCK: int = 1024) -> None:
    """``dst[...] = src`` in ``dst``'s dtype (rounded to nearest)."""
    n = size(src)
    expect("dst", dst, (n,))
    convert_kernel[(tc.cdiv(n, BLOCK),)](src, dst, n, BLOCK=BLOCK, backend=backend)
