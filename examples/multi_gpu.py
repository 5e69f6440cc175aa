"""Several GPUs: one kernel, each launch running where its arrays are. A batch of
matrix products is split across every visible GPU (PyTorch tensors on ``cuda:i``), each
GPU multiplies its share with ``examples.matmul``, and the results are checked against
NumPy. With one GPU the whole batch runs there.

    python examples/multi_gpu.py [--batch 8] [--size 512]
"""

import argparse

import numpy as np

from examples import matmul


def split_matmul(a: np.ndarray, b: np.ndarray, devices: int) -> np.ndarray:
    """``a[i] @ b[i]`` for the batch, the i-th product on GPU ``i % devices``."""
    import torch
    outs = []
    for i in range(len(a)):
        device = f"cuda:{i % devices}"
        x, y = (torch.from_numpy(m).to(device) for m in (a[i], b[i]))
        c = torch.empty(x.shape[0], y.shape[1], device=device, dtype=x.dtype)
        matmul.launch(x, y, c, backend="ptx", BM=128, BN=128, BK=64, num_warps=4,
                      num_stages=3)
        outs.append(c)
    return np.stack([c.cpu().numpy() for c in outs])


def main(batch: int = 8, size: int = 512) -> None:
    import torch
    devices = torch.cuda.device_count()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((batch, size, size)).astype(np.float16) for _ in range(2))
    c = split_matmul(a, b, devices)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, rtol=0,
                               atol=2.0**-9 * np.abs(want).max())
    print(f"multi_gpu: {batch} products of {size}^3 on {devices} GPU(s): OK")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--size", type=int, default=512)
    args = p.parse_args()
    main(args.batch, args.size)
