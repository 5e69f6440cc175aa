"""A fused bias + GELU-like activation: y = x * sigmoid(1.702 * (x + bias)), in float16
storage with float32 math, one pass over memory.

    python examples/fused_activation.py [--backend ptx|wgsl|numpy|auto]
"""

import numpy as np

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors, script_parser


@tc.kernel
def bias_gelu(x, bias, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask).to(tl.float32) + tl.load(bias + offs % 64, mask=mask)
    y = v * tl.sigmoid(1.702 * v)
    tl.store(out + offs, y.to(tl.float16), mask=mask)


def reference(x: np.ndarray, bias: np.ndarray) -> np.ndarray:
    v = x.astype(np.float32) + np.resize(bias, x.shape)
    return (v / (1.0 + np.exp(-1.702 * v))).astype(np.float16)


def main(backend: str | None = None, n: int = 50_000) -> None:
    rng = np.random.default_rng()
    x = rng.standard_normal(n).astype(np.float16)
    bias = rng.standard_normal(64, dtype=np.float32)
    out = np.zeros(n, dtype=np.float16)
    bias_gelu[(tc.cdiv(n, 512),)](x, bias, out, n, BLOCK=512, backend=backend)
    np.testing.assert_allclose(out.astype(np.float32), reference(x, bias).astype(np.float32),
                               rtol=2e-3, atol=2e-3)
    print(f"fused_activation: {n} f16 elements on {tc.jit.resolve_backend(backend)}: OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    with reported_errors():
        main(p.parse_args().backend)
