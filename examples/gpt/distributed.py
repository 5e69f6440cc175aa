"""Data-parallel training of the GPT over the processes ``torchrun`` starts
(``torchrun --nproc_per_node N -m examples.gpt.train ...``): each process (rank) runs the
whole model on its share of each step's batch, and after the backward the flat gradient
buffer is averaged across the ranks, so every rank takes the same AdamW step (its gradient
clipping seeing the global norm, as PyTorch's DistributedDataParallel with
``clip_grad_norm_`` does) and the parameters stay equal everywhere.

The averaging reduces the buffer where it lies, through ``torch.distributed``: on ptx NCCL
reduces a torch view of the ``DeviceArray`` (DLPack, no copy), on numpy gloo reduces
``torch.from_numpy`` of the array (no copy); on wgsl, whose buffers torch cannot see, the
gradients are copied to the host, reduced by gloo and copied back.

On ptx rank r computes on GPU ``LOCAL_RANK``. tilec has no ``set_device``: ``tc.zeros``
allocates on the GPU whose primary context is current on the thread and a launch runs on
its arrays' GPU, so ``DataParallel`` makes that GPU's context current (as
``torch.cuda.set_device`` does for torch) before the model is built.

PyTorch is imported only when ``WORLD_SIZE`` (which torchrun sets) is above 1: a single
process never needs it.
"""

from __future__ import annotations

import os

from compiler.backend_choice import default_backend, resolve_backend
from compiler.errors import TilecError


class DistributedError(TilecError):
    """Several processes that cannot train together: no PyTorch, or no GPU for a rank."""


class Process:
    """Rank 0 of 1: the single process, which has nothing to share."""

    rank, world = 0, 1

    def __init__(self, backend: str | None):
        self.backend = resolve_backend(backend)

    @property
    def leader(self) -> bool:
        """Whether this rank prints, saves checkpoints and plots."""
        return self.rank == 0

    def rows(self, B: int) -> slice:
        """This rank's rows of a batch of ``B`` rows a rank (``B * world`` in all)."""
        return slice(self.rank * B, (self.rank + 1) * B)

    def average(self, grads) -> None:
        """Replace ``grads`` (a model's ``grad_buffer``) by its mean over the ranks."""

    def mean(self, value: float) -> float:
        """The mean of ``value`` over the ranks."""
        return value

    def close(self) -> None:
        """Leave the process group."""


class DataParallel(Process):
    """This process's place among ``WORLD_SIZE`` ranks (torchrun's ``RANK``,
    ``WORLD_SIZE`` and ``LOCAL_RANK``), joined to their process group: NCCL on ptx, gloo
    on numpy and wgsl."""

    def __init__(self, backend: str | None, world: int):
        try:
            import torch
            import torch.distributed as dist
        except ImportError as e:
            raise DistributedError(f"training on WORLD_SIZE={world} processes needs PyTorch "
                                   f"(torch.distributed) ({e}); run one process without "
                                   f"torchrun, or install torch") from None
        if "RANK" not in os.environ:
            raise DistributedError(f"WORLD_SIZE is {world} but RANK is not set: start the "
                                   f"processes with torchrun, which sets both")
        self._torch, self._dist = torch, dist
        self.rank, self.world = int(os.environ["RANK"]), world
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if (backend or default_backend()) in ("ptx", "auto") and torch.cuda.is_available():
            self._use_gpu(self.local_rank)
        super().__init__(backend)
        nccl = self.backend == "ptx"
        if nccl and not dist.is_nccl_available():
            raise DistributedError("on ptx the gradients are averaged by NCCL, which this "
                                   "PyTorch lacks: install a CUDA build of torch, or train "
                                   "on --backend numpy or wgsl (gloo)")
        self._device = torch.device("cuda", self.local_rank) if nccl else torch.device("cpu")
        dist.init_process_group("nccl" if nccl else "gloo")
        self._views: dict[int, object] = {}

    def _use_gpu(self, ordinal: int) -> None:
        """Make GPU ``ordinal`` this process's, for tilec's arrays and for torch's."""
        count = self._torch.cuda.device_count()
        if ordinal >= count:
            raise DistributedError(f"rank {self.rank} has LOCAL_RANK {ordinal} but this host "
                                   f"has {count} GPUs; start at most {count} processes a host")
        from backends.ptx import Device

        self._torch.cuda.set_device(ordinal)
        Device(ordinal).set_current()

    def average(self, grads) -> None:
        if self.backend == "ptx":
            self._dist.all_reduce(self._view(grads), op=self._dist.ReduceOp.AVG)
            return
        host = grads if self.backend == "numpy" else grads.numpy()
        self._dist.all_reduce(self._torch.from_numpy(host))  # a sum: gloo has no mean
        host /= self.world
        if host is not grads:
            grads[...] = host

    def _view(self, array):
        """The torch tensor (on the GPU, no copy) of the device array ``array``, made
        once: the model's buffers never move."""
        view = self._views.get(id(array))
        if view is None:
            view = self._views[id(array)] = self._torch.from_dlpack(array)
        return view

    def mean(self, value: float) -> float:
        t = self._torch.tensor([value], dtype=self._torch.float64, device=self._device)
        self._dist.all_reduce(t)
        return t.item() / self.world

    def close(self) -> None:
        self._dist.destroy_process_group()


def world_size() -> int:
    """How many processes train together: torchrun's ``WORLD_SIZE``, else 1."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def start(backend: str | None) -> Process:
    """This process's place in training: ``DataParallel`` when torchrun (or anything that
    sets ``WORLD_SIZE``, ``RANK`` and ``MASTER_ADDR``/``MASTER_PORT``) started more than
    one, else the single ``Process``; ``backend`` as ``GPT`` takes it."""
    world = world_size()
    return DataParallel(backend, world) if world > 1 else Process(backend)
