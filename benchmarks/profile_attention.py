"""Profiling aid: one launch each of tilec's attention with K and V by TMA
(``examples/attention.py``'s ``attention_descriptor``, BM 128, 8 warps, 4 stages at BN 64)
and of the Triton kernel of the same algorithm that ``benchmarks/matmul.py`` compares it
with, on B4 H32 S4096 f16, for Nsight Compute to set side by side:

    ncu -k regex:attention --section SpeedOfLight --section WarpStateStats \\
        python benchmarks/profile_attention.py [D] [BN] [causal]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from benchmarks.matmul import triton_attention
from examples import attention


def main() -> None:
    d, bn = (int(x) for x in (sys.argv[1:3] or (64, 64)))
    causal = "causal" in sys.argv[3:]
    batch, heads, seq = 4, 32, 4096
    q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.float16)
               for _ in range(3))
    out = torch.empty_like(q)
    attention.launch_descriptor(q, k, v, out, causal, "ptx", BM=128, BN=bn, num_warps=8,
                                num_stages=4 if bn == 64 else 2)
    triton_attention[(seq // 128, batch * heads)](q, k, v, out, 1 / d**0.5, seq,
                                                  CAUSAL=causal, BM=128, BN=bn, D=d,
                                                  num_warps=8, num_stages=3)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
