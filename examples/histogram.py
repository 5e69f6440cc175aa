"""Histogram: count integer values into bins with tl.atomic_add.

    python examples/histogram.py [--backend ptx|wgsl|numpy|auto] [--n N] [--bins B]

Values outside ``[0, bins)`` are skipped by the mask, so they are neither counted nor
read from memory.
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def histogram(data, bins, n, num_bins, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(data + offs, mask=mask)
    inside = mask & (x >= 0) & (x < num_bins)
    tl.atomic_add(bins + x, 1, mask=inside)


def main(backend: str | None = None, n: int = 100_003, num_bins: int = 64) -> None:
    rng = np.random.default_rng()
    data = rng.integers(-3, num_bins + 3, n).astype(np.int32)
    bins = np.zeros(num_bins, dtype=np.int32)
    histogram[(tc.cdiv(n, 1024),)](data, bins, n, num_bins, BLOCK=1024, backend=backend)
    inside = data[(data >= 0) & (data < num_bins)]
    np.testing.assert_array_equal(bins, np.bincount(inside, minlength=num_bins))
    print(f"histogram: {n} values into {num_bins} bins on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--n", type=int, default=100_003)
    p.add_argument("--bins", type=int, default=64)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.n, a.bins)
