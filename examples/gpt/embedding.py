"""Token and position embeddings: ``out[b, t] = wte[idx[b, t]] + wpe[t]``, and the
backward, which adds each position's gradient into its token's row of ``dwte`` and its
position's row of ``dwpe``.

Several positions may hold the same token, so the rows of ``dwte`` are added to with
``tl.atomic_add`` (in an order that varies between runs on a GPU, so the last bits of
``dwte`` may too). ``dwpe`` needs no atomics: position ``t``'s row is the sum over the
batch of one row each, which one program adds up.
"""

from __future__ import annotations

import compiler as tc
import compiler.language as tl
from examples.gpt.shapes import expect, pow2


@tc.kernel
def embedding_forward_kernel(idx, wte, wpe, pos, out, n_rows, T, C, BR: tl.constexpr,
                             BC: tl.constexpr, AT_POS: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    live = r < n_rows
    mask = live[:, None] & (c[None, :] < C)
    token = tl.load(idx + r, mask=live, other=0)
    t = r % T  # the position, from pos[0] on with AT_POS
    if AT_POS:
        t += tl.load(pos)
    e = tl.load(wte + token[:, None] * C + c[None, :], mask=mask, other=0.0).to(tl.float32) \
        + tl.load(wpe + t[:, None] * C + c[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(out + r[:, None] * C + c[None, :], e.to(out.dtype), mask=mask)


@tc.kernel
def wte_backward_kernel(idx, dout, dwte, n_rows, C, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    live = r < n_rows
    mask = live[:, None] & (c[None, :] < C)
    token = tl.load(idx + r, mask=live, other=0)
    g = tl.load(dout + r[:, None] * C + c[None, :], mask=mask, other=0.0)
    tl.atomic_add(dwte + token[:, None] * C + c[None, :], g, mask=mask)


@tc.kernel
def wpe_backward_kernel(dout, dwpe, B, T, C, BT: tl.constexpr, BC: tl.constexpr):
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    mask = (t[:, None] < T) & (c[None, :] < C)
    acc = tl.load(dwpe + t[:, None] * C + c[None, :], mask=mask, other=0.0).to(tl.float32)
    for b in range(B):
        acc += tl.load(dout + (b * T + t)[:, None] * C + c[None, :], mask=mask,
                       other=0.0).to(tl.float32)
    tl.store(dwpe + t[:, None] * C + c[None, :], acc.to(dwpe.dtype), mask=mask)


def _blocks(n_rows: int, C: int) -> tuple[int, int]:
    return min(16, pow2(n_rows)), min(128, pow2(C))


def embedding_forward(idx, wte, wpe, out, backend: str | None = None, pos=None) -> None:
    """``out`` (B, T, C) from int32 ``idx`` (B, T) at positions 0 .. T, or with ``pos``
    (an int32 array of one element, read on the device) at ``pos[0] ..``, which must
    leave them inside ``wpe``."""
    B, T = idx.shape
    C = wte.shape[1]
    if wpe.shape[1] != C or T > wpe.shape[0]:
        raise tc.LaunchError(f"wpe must have shape (>= {T}, {C}), got {tuple(wpe.shape)}")
    expect("out", out, (B * T, C))
    BR, BC = _blocks(B * T, C)
    embedding_forward_kernel[(tc.cdiv(B * T, BR), tc.cdiv(C, BC))](
        idx, wte, wpe, idx if pos is None else pos, out, B * T, T, C, BR=BR, BC=BC,
        AT_POS=pos is not None, backend=backend)


def embedding_backward(idx, dout, dwte, dwpe, backend: str | None = None) -> None:
    """``dwte[idx[b, t]] += dout[b, t]`` and ``dwpe[t] += dout[b, t]`` for every b, t."""
    B, T = idx.shape
    C = dwte.shape[1]
    expect("dout", dout, (B * T, C))
    if dwpe.shape[1] != C or T > dwpe.shape[0]:
        raise tc.LaunchError(f"dwpe must have shape (>= {T}, {C}), got {tuple(dwpe.shape)}")
    BR, BC = _blocks(B * T, C)
    wte_backward_kernel[(tc.cdiv(B * T, BR), tc.cdiv(C, BC))](
        idx, dout, dwte, B * T, C, BR=BR, BC=BC, backend=backend)
    BT = min(16, pow2(T))
    wpe_backward_kernel[(tc.cdiv(T, BT), tc.cdiv(C, BC))](
        dout, dwpe, B, T, C, BT=BT, BC=BC, backend=backend)
