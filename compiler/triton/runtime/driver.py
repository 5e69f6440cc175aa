"""``triton.runtime.driver`` on tilec: ``driver.active`` answers for tilec's default
backend (``TILEC_BACKEND``, ``tc.set_backend``, else the first that works here), asked
at each call, so a program that sets the backend later is answered for the new one.

Targets: ``backend`` is ``"cuda"`` on ptx (``arch`` the SM version, 90 on Hopper) and
``"cpu"`` on numpy (``arch`` the machine, as Triton's CPU backend reports it) and on wgsl
(``arch`` the adapter's device name), whose launches take CPU tensors too: code that
picks its PyTorch module by the target (``getattr(torch, target.backend)``, as
flash-linear-attention's device helpers do) finds ``torch.cpu``. ``warp_size`` is 32 on
every backend: tilec's ``num_warps`` counts groups of 32 threads everywhere. Ported code
that takes every target that is not CUDA for AMD's (``else: hip configs``) needs that
branch looked at.

Device properties (``utils.get_device_properties``): on ptx the CUDA driver's, under the
names Triton's CUDA driver gives them. WebGPU and NumPy have no such facts, so there
``max_shared_mem`` is the adapter's workgroup-storage limit (wgsl) or 228 KiB, a Hopper
SM's (numpy); ``max_num_regs`` is 65,536, a CUDA SM's; ``multiprocessor_count`` is the
host's CPU count (numpy, and CPU adapters such as lavapipe; WebGPU does not report a
GPU's, so 64 stands in there); ``warpSize`` is 32. Occupancy arithmetic in ported code
(``NUM_SM * occupancy`` programs) then gives sane grids everywhere.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from typing import Any

from compiler.errors import BackendUnavailableError
from compiler.jit import backend_module, resolve_backend

WARP_SIZE = 32
# CUDA device attributes (CU_DEVICE_ATTRIBUTE_*) under the names Triton's driver uses
CUDA_PROPERTIES = {
    "max_shared_mem": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    "max_num_regs": "MAX_REGISTERS_PER_BLOCK",
    "multiprocessor_count": "MULTIPROCESSOR_COUNT",
    "warpSize": "WARP_SIZE",
    "sm_clock_rate": "CLOCK_RATE",
    "mem_clock_rate": "MEMORY_CLOCK_RATE",
    "mem_bus_width": "GLOBAL_MEMORY_BUS_WIDTH",
}
HOPPER_SHARED = 228 * 1024
SM_REGISTERS = 65536
GPU_COMPUTE_UNITS = 64  # a WebGPU GPU adapter's stand-in count (WebGPU does not say)


@dataclass(frozen=True)
class GPUTarget:
    """What a program runs on, as Triton's ``GPUTarget``."""

    backend: str
    arch: int | str
    warp_size: int


class Utils:
    """``driver.active.utils``."""

    def get_device_properties(self, device: Any = None) -> dict[str, int]:
        """Facts of ``device`` (an index, a ``torch.device``, or None: the current one) on
        the default backend; see the module docstring for wgsl and numpy."""
        backend = resolve_backend(None)
        if backend == "ptx":
            index = getattr(device, "index", device)
            gpu = backend_module("ptx").Device(index)
            return {name: gpu.attribute(attr) for name, attr in CUDA_PROPERTIES.items()}
        if backend == "wgsl":
            import compiler
            wgpu_device = compiler.wgsl_device()
            cpu = wgpu_device.adapter.info.get("adapter_type") == "CPU"
            return _properties(wgpu_device.limits["max-compute-workgroup-storage-size"],
                               (os.cpu_count() or 1) if cpu else GPU_COMPUTE_UNITS)
        return _properties(HOPPER_SHARED, os.cpu_count() or 1)


def _properties(shared: int, units: int) -> dict[str, int]:
    return {"max_shared_mem": shared, "max_num_regs": SM_REGISTERS,
            "multiprocessor_count": units, "warpSize": WARP_SIZE}


class ActiveDriver:
    """``triton.runtime.driver.active``: the default backend's device, target and streams."""

    def __init__(self):
        self.utils = Utils()

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        backend = resolve_backend(None)
        if backend == "ptx":
            arch = backend_module("ptx").device_arch()  # "sm_90": a GPU is there
            return GPUTarget("cuda", int(arch.removeprefix("sm_")), WARP_SIZE)
        if backend == "wgsl":
            import compiler
            info = compiler.wgsl_device().adapter.info
            return GPUTarget("cpu", info.get("device") or info.get("vendor") or "webgpu",
                             WARP_SIZE)
        return GPUTarget("cpu", platform.machine() or "cpu", WARP_SIZE)

    def get_active_torch_device(self):
        """Where a ported program should put its tensors: PyTorch's current CUDA device on
        ptx, its CPU device elsewhere (wgsl and numpy launches take CPU tensors)."""
        try:
            import torch
        except ImportError:
            raise BackendUnavailableError(
                "get_active_torch_device() returns a torch.device, and PyTorch is not "
                "installed; tilec's own arrays need no PyTorch (tc.empty, tc.asarray)") from None
        if resolve_backend(None) == "ptx" and torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")

    def get_device_interface(self):
        """``torch.cuda`` or ``torch.cpu``: the module of the active torch device."""
        import torch
        return getattr(torch, self.get_active_torch_device().type)

    def get_current_device(self) -> int:
        """The current GPU's index on ptx (PyTorch's when it is loaded); 0 elsewhere."""
        if resolve_backend(None) != "ptx":
            return 0
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
        return backend_module("ptx").Device().device_id

    def get_current_stream(self, device: int | None = None) -> int:
        """The CUDA stream tilec launches PyTorch tensors on (PyTorch's current one), or 0:
        the legacy default stream on ptx, no stream elsewhere."""
        torch = sys.modules.get("torch")
        if resolve_backend(None) != "ptx" or torch is None or not torch.cuda.is_available():
            return 0
        return torch.cuda.current_stream(device).cuda_stream

    def get_benchmarker(self):
        """The timer Triton's autotuner uses by default: ``triton.testing.do_bench``."""
        from compiler.triton.testing import do_bench
        return do_bench


class Driver:
    """``triton.runtime.driver``: ``active`` (settable, as Triton's) and ``default``."""

    def __init__(self):
        self.default = ActiveDriver()
        self.active: Any = self.default

    def set_active(self, driver: Any) -> None:
        self.active = driver

    def reset_active(self) -> None:
        self.active = self.default


driver = Driver()

__all__ = ["ActiveDriver", "Driver", "GPUTarget", "Utils", "driver"]
