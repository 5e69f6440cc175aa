"""Several GPUs: one kernel, each launch running where its arrays are.

Under ``torchrun --nproc-per-node 2 examples/multi_gpu.py`` every rank owns one GPU
(NCCL): it multiplies its shard of a batch with ``examples.matmul``, applies a tilec fused
kernel (scaled add) to the product, and the ranks sum their results with an all-reduce,
as a data-parallel step would; rank 0 checks the sum against NumPy. Run directly, one
process splits the batch across every visible GPU the same way (``split_matmul``). It
needs PyTorch with two CUDA GPUs (one per rank under torchrun) and tilec's ptx backend,
and says which is missing.

    torchrun --nproc-per-node 2 examples/multi_gpu.py [--batch 8] [--size 512]
    python examples/multi_gpu.py [--batch 8] [--size 512]
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

if __name__ == "__main__":  # run as a script: the repository root, for ``examples.matmul``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import compiler as tc
import compiler.language as tl
from compiler.cli import reported_errors
from examples import matmul

GPUS = 2


@tc.kernel
def scaled_add(x, y, out, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0.0)
    b = tl.load(y + offs, mask=mask, other=0.0)
    tl.store(out + offs, a * alpha + b, mask=mask)


def _product(a: np.ndarray, b: np.ndarray, device: str):
    """``a @ b`` by the tilec matmul on ``device`` (a torch tensor there)."""
    import torch
    x, y = (torch.from_numpy(m).to(device) for m in (a, b))
    c = torch.empty(x.shape[0], y.shape[1], device=device, dtype=x.dtype)
    matmul.launch(x, y, c, backend="ptx", BM=128, BN=128, BK=64, num_warps=4, num_stages=3)
    return c


def split_matmul(a: np.ndarray, b: np.ndarray, devices: int) -> np.ndarray:
    """``a[i] @ b[i]`` for the batch, the i-th product on GPU ``i % devices``."""
    return np.stack([_product(a[i], b[i], f"cuda:{i % devices}").cpu().numpy()
                     for i in range(len(a))])


def data_parallel_step(a: np.ndarray, b: np.ndarray, rank: int, world: int):
    """This rank's shard of the batch: products, ``2 c + c`` by ``scaled_add``, summed
    over the shard and then over the ranks (NCCL all-reduce); the total on every rank."""
    import torch
    import torch.distributed as dist
    device = f"cuda:{rank}"
    total = torch.zeros(a.shape[1], b.shape[2], device=device, dtype=torch.float32)
    for i in range(rank, len(a), world):
        c = _product(a[i], b[i], device).float()
        n = c.numel()
        scaled_add[(tc.cdiv(n, 1024),)](c, c, c, 2.0, n, BLOCK=1024, backend="ptx")
        total += c
    dist.all_reduce(total)
    return total


def _inputs(batch: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal((batch, size, size)).astype(np.float16) for _ in range(2))


def _distributed(batch: int, size: int) -> None:
    import torch
    import torch.distributed as dist
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    a, b = _inputs(batch, size)
    total = data_parallel_step(a, b, rank, world).cpu().numpy()
    if rank == 0:
        want = 3 * (a.astype(np.float64) @ b.astype(np.float64)).sum(axis=0)
        np.testing.assert_allclose(total, want, rtol=0, atol=2.0**-8 * np.abs(want).max())
        print(f"multi_gpu: {batch} products of {size}^3 on {world} ranks, all-reduced: OK")
    dist.destroy_process_group()


def missing() -> str | None:
    """What this machine lacks to run the example, in words (None: nothing)."""
    try:
        import torch
    except ImportError as e:
        return f"PyTorch is not installed ({e})"
    needed = int(os.environ.get("WORLD_SIZE", GPUS))  # torchrun's ranks, one GPU each
    found = torch.cuda.device_count()
    if found < needed:
        return f"found PyTorch {torch.__version__} with {found} CUDA GPU(s), {needed} needed"
    ok, why = tc.backends()["ptx"]
    return None if ok else f"tilec's ptx backend is not available: {why}"


def main(batch: int = 8, size: int = 512) -> None:
    if "RANK" in os.environ:  # started by torchrun
        _distributed(batch, size)
        return
    import torch
    devices = torch.cuda.device_count()
    a, b = _inputs(batch, size)
    c = split_matmul(a, b, devices)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-9 * np.abs(want).max())
    print(f"multi_gpu: {batch} products of {size}^3 on {devices} GPU(s): OK")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--size", type=int, default=512)
    args = p.parse_args()
    lack = missing()
    if lack is not None:
        sys.exit(f"multi_gpu.py needs PyTorch with {GPUS} CUDA GPUs and tilec's ptx backend; "
                 f"{lack}")
    with reported_errors():
        main(args.batch, args.size)
