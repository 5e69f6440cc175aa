"""Mixture-of-experts top-k routing: one program per token takes the softmax of its router
logits over the experts, picks the ``K`` most probable experts and writes their ids and
their probabilities renormalized to sum to 1.

The top ``K`` come from ``tl.sort`` (descending) and ``tl.gather`` of its first ``K``
values; each value's expert id is the column where the probabilities equal it (exact, as
long as no two experts tie, which random logits make so).

    python examples/topk_routing.py [--backend ptx|wgsl|numpy|auto] [--tokens T] [--experts E]
                                    [--top K]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def topk_routing(logits, ids, weights, n_experts, BLOCK: tl.constexpr, K: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_experts
    v = tl.load(logits + row * n_experts + cols, mask=mask, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    # padding columns have probability 0: they sort behind every real expert
    p = e / tl.sum(e, axis=0)
    top = tl.gather(tl.sort(p, descending=True), tl.arange(0, K), 0)
    hit = (p[None, :] == top[:, None]) & mask[None, :]
    expert = tl.min(tl.where(hit, cols[None, :], BLOCK), axis=1)
    ks = tl.arange(0, K)
    tl.store(ids + row * K + ks, expert)
    tl.store(weights + row * K + ks, top / tl.sum(top, axis=0))


def block_for(n: int) -> int:
    """The tile width: the next power of two holding every expert."""
    return 1 << max(0, n - 1).bit_length()


def launch(logits: np.ndarray, ids: np.ndarray, weights: np.ndarray, backend: str | None = None,
           num_warps: int = 1) -> None:
    tokens, experts = logits.shape
    topk_routing[(tokens,)](logits, ids, weights, experts, BLOCK=block_for(experts),
                            K=ids.shape[1], backend=backend, num_warps=num_warps)


def reference(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    x = logits.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    ids = np.argsort(-p, axis=1)[:, :k]
    top = np.take_along_axis(p, ids, axis=1)
    return ids.astype(np.int32), top / top.sum(axis=1, keepdims=True)


def main(backend: str | None = None, tokens: int = 64, experts: int = 24, k: int = 2) -> None:
    logits = np.random.default_rng().standard_normal((tokens, experts), dtype=np.float32) * 2
    ids = np.full((tokens, k), -1, np.int32)
    weights = np.full((tokens, k), np.nan, np.float32)
    launch(logits, ids, weights, backend)
    want_ids, want_weights = reference(logits, k)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(weights, want_weights, rtol=1e-5, atol=1e-6)
    print(f"topk_routing: {tokens} tokens, {experts} experts, top-{k} "
          f"on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--experts", type=int, default=24)
    p.add_argument("--top", type=int, default=2, help="K, a power of two")
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.tokens, a.experts, a.top)
