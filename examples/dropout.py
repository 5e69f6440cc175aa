"""Seeded dropout: each element is kept where ``tl.rand(seed, offset)`` exceeds ``p`` and
scaled by ``1 / (1 - p)``, zeroed otherwise. The mask lives only in the seed: the same seed
redraws it (a backward pass needs nothing stored), another seed draws a new one.

    python examples/dropout.py [--backend ptx|wgsl|numpy|auto] [--n N] [--p P] [--seed S]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def dropout(x, out, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out + offs, tl.where(keep, v / (1 - p), 0.0), mask=mask)


def launch(x: np.ndarray, out: np.ndarray, p: float, seed: int, backend: str | None = None,
           block: int = 1024) -> None:
    dropout[(tc.cdiv(x.size, block),)](x, out, x.size, p, seed, BLOCK=block, backend=backend)


M32 = 0xFFFFFFFF


def philox_first_word(seed: int, offsets: np.ndarray) -> np.ndarray:
    """Word 0 of Philox4x32-10 with Triton's layout: key = the seed's 64 bits (low word
    first), counter = (offset, 0, 0, 0). uint64 arithmetic keeps the 32x32 products exact."""
    k0, k1 = np.uint64(seed & M32), np.uint64((seed >> 32) & M32)
    zero = np.zeros(offsets.shape, np.uint64)
    c0, c1, c2, c3 = offsets.astype(np.uint64), zero, zero, zero
    a, b, m = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57), np.uint64(M32)
    for _ in range(10):
        pa, pb = a * c0, b * c2
        c0, c1, c2, c3 = ((pb >> np.uint64(32)) ^ c1 ^ k0, pb & m,
                          (pa >> np.uint64(32)) ^ c3 ^ k1, pa & m)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return c0.astype(np.uint32)


def uniform(word: np.ndarray) -> np.ndarray:
    """Triton's uint32 -> [0, 1): the word as int32, negatives folded to -x - 1, times 2**-31."""
    x = word.view(np.int32).astype(np.int64)
    return np.where(x < 0, -x - 1, x).astype(np.float32) * np.float32(4.6566127342e-10)


def reference(x: np.ndarray, p: float, seed: int) -> np.ndarray:
    keep = uniform(philox_first_word(seed, np.arange(x.size))) > np.float32(p)
    return np.where(keep, x / (np.float32(1) - np.float32(p)), np.float32(0)).astype(np.float32)


def main(backend: str | None = None, n: int = 5000, p: float = 0.3, seed: int = 1234) -> None:
    # no zeros in x, so a zero in the output always means "dropped"
    x = np.random.default_rng().uniform(0.5, 2.0, n).astype(np.float32)
    runs = {}
    for s in (seed, seed, seed + 1):
        out = np.full_like(x, np.nan)
        launch(x, out, p, s, backend)
        np.testing.assert_allclose(out, reference(x, p, s), rtol=1e-6)
        runs.setdefault(s, []).append(out != 0)
    first, again = runs[seed]
    assert np.array_equal(first, again), "the same seed drew a different mask"
    assert not np.array_equal(first, runs[seed + 1][0]), "another seed drew the same mask"
    kept = first.mean()
    print(f"dropout: {n} float32, p={p}, kept {kept:.3f} on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    ap = script_parser(__doc__)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--p", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    with reported_errors():
        main(a.backend, a.n, a.p, a.seed)
