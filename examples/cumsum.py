"""Prefix sums of an array in blocks: each program scans its BLOCK elements (tl.cumsum),
so out[i] is the sum of x from the start of i's block to i. Integers, so the check is exact.

    python examples/cumsum.py [--backend ptx|wgsl|numpy|auto] [--n N] [--block B]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def block_cumsum(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.cumsum(tl.load(x + offs, mask=mask, other=0), axis=0), mask=mask)


def reference(x: np.ndarray, block: int) -> np.ndarray:
    padded = np.zeros(-(-len(x) // block) * block, np.int64)
    padded[:len(x)] = x
    return np.cumsum(padded.reshape(-1, block), axis=1).reshape(-1)[:len(x)]


def main(backend: str | None = None, n: int = 100_000, block: int = 2048) -> None:
    x = np.random.default_rng().integers(-1000, 1000, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    block_cumsum[(tc.cdiv(n, block),)](x, out, n, BLOCK=block, backend=backend)
    np.testing.assert_array_equal(out, reference(x, block))
    print(f"cumsum: {n} int32 in blocks of {block} on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--block", type=int, default=2048)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.n, a.block)
