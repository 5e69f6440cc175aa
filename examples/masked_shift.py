"""Masked shift-and-scale of int32 data: out[i] = (x[i + shift] * scale) // 7 for i + shift
inside the array, else a fill value. Shows integer C-semantics division, masks that do
not line up with the block, and `other`.

    python examples/masked_shift.py [--backend ptx|wgsl|numpy|auto]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def shift_scale(x, out, n, shift, scale, fill, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = offs + shift
    inside = (src >= 0) & (src < n)
    v = tl.load(x + src, mask=inside & (offs < n), other=fill)
    v = tl.where(inside, (v * scale) // 7, v)
    tl.store(out + offs, v, mask=offs < n)


def reference(x: np.ndarray, shift: int, scale: int, fill: int) -> np.ndarray:
    n = x.size
    src = np.arange(n) + shift
    inside = (src >= 0) & (src < n)
    v = np.where(inside, x[np.clip(src, 0, n - 1)] * scale, fill).astype(np.int64)
    q = np.where(inside, np.trunc(v / 7).astype(np.int64), v)  # C division truncates
    return q.astype(np.int32)


def main(backend: str | None = None, n: int = 10_007) -> None:
    rng = np.random.default_rng()
    x = rng.integers(-1000, 1000, n, dtype=np.int32)
    out = np.zeros(n, dtype=np.int32)
    shift, scale, fill = int(rng.integers(-300, 300)), 3, -1
    shift_scale[(tc.cdiv(n, 256),)](x, out, n, shift, scale, fill, BLOCK=256, backend=backend)
    np.testing.assert_array_equal(out, reference(x, shift, scale, fill))
    print(f"masked_shift: {n} int32 elements, shift {shift}, on "
          f"{tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    with reported_errors():
        main(p.parse_args().backend)
