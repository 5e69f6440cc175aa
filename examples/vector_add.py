"""Vector add: the "hello world" of tile kernels.

    python examples/vector_add.py [--backend ptx|wgsl|numpy|auto] [--n N]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def add(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0)
    b = tl.load(y + offs, mask=mask, other=0.0)
    tl.store(out + offs, a + b, mask=mask)


def main(backend: str | None = None, n: int = 98_765) -> None:
    rng = np.random.default_rng()
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    add[(tc.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024, backend=backend)
    np.testing.assert_allclose(out, x + y, rtol=1e-6)
    print(f"vector_add: {n} elements on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--n", type=int, default=98_765)
    a = p.parse_args()
    with reported_errors():
        main(a.backend, a.n)
