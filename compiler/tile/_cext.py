"""The host helpers cuTile's samples import from ``cuda.tile._cext``: ``launch``,
``get_compute_capability`` and ``dev_features_enabled``."""

from __future__ import annotations

from compiler.tile._execution import launch  # noqa: F401 - cuTile's launch lives here too


def get_compute_capability(device_id: int = 0) -> tuple[int, int]:
    """``(major, minor)`` of CUDA device ``device_id`` (an H200: ``(9, 0)``). Without a
    usable CUDA device, that of the architecture tilec's PTX backend compiles for where
    there is none, sm_90: ``(9, 0)``."""
    try:
        from backends.ptx import Device
        return Device(device_id).compute_capability
    except Exception:  # noqa: BLE001 - no cuda-python, driver or device: the default target
        from compiler.pipeline import DEFAULT_ARCH
        digits = DEFAULT_ARCH.removeprefix("sm_")
        return int(digits[:-1]), int(digits[-1])


def dev_features_enabled() -> bool:
    """Whether cuTile's development-only features are on: never, in tilec."""
    return False
