"""Profiling aid: compile tilec's f16 matmul (examples/matmul.py) for one tile config, write
its PTX and cubin under a folder, and launch it once on 4096^3 (for ncu / cuobjdump).

    python benchmarks/profile_matmul.py OUTDIR [BM BN BK WARPS]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

import compiler as tc
from examples import matmul


def main() -> None:
    out = Path(sys.argv[1])
    bm, bn, bk, warps = (int(x) for x in (sys.argv[2:6] or (128, 128, 32, 4)))
    size = 4096
    a, b = (torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.empty_like(a)
    args = (a, b, c, size, size, size, size, size, size, bm, bn, bk, 8, "", "ieee")
    ck = tc.compile(matmul.matmul, args=args, backend="ptx", num_warps=warps)
    out.mkdir(parents=True, exist_ok=True)
    (out / "matmul.ptx").write_text(ck.asm["ptx"])
    (out / "matmul.cubin").write_bytes(ck.asm["cubin"])
    matmul.launch(a, b, c, "ptx", BM=bm, BN=bn, BK=bk, num_warps=warps)
    torch.cuda.synchronize()
    print("max error", (c.float() - (a @ b).float()).abs().max().item())


if __name__ == "__main__":
    main()
