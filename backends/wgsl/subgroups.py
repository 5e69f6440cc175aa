"""Subgroups on a wgpu device: a probe dispatch finds their size, and a kernel's
shuffles through workgroup memory are swapped for subgroup shuffles where that size makes
them exact (the facts ``cross_thread.py`` writes). The web runtime (``tilec-runtime.js``)
does the same in JavaScript; keep the two in step.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import wgpu

SUBGROUP_SIZES = (4, 8, 16, 32)  # where a warp of 32 threads is whole subgroups
_PROBE_THREADS = 128
_PROBE = f"""
@group(0) @binding(0) var<storage, read_write> out: array<u32, {_PROBE_THREADS}>;

@compute @workgroup_size({_PROBE_THREADS})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_size) size: u32,
        @builtin(subgroup_invocation_id) id: u32) {{
  out[lid] = size * 65536u + id;
}}"""
_SUBGROUP_SIZE: dict[wgpu.GPUDevice, int | None] = {}
_PROBING = threading.Lock()


def subgroup_size(device: wgpu.GPUDevice) -> int | None:
    """The size ``S`` of every subgroup of ``device`` where subgroup ops work and each
    subgroup is ``S`` consecutive invocations of a workgroup, ``S`` in ``SUBGROUP_SIZES``
    (lavapipe's 8, NVIDIA's 32); else None (``TILEC_WGSL_SUBGROUPS=0``: None). WebGPU
    promises neither the size nor the order, and wgpu-py does not pass the adapter's
    reported sizes through, so a dispatch of one workgroup asks, once a device."""
    if "subgroup" not in device.features or os.environ.get("TILEC_WGSL_SUBGROUPS") == "0":
        return None
    with _PROBING:
        if device not in _SUBGROUP_SIZE:
            _SUBGROUP_SIZE[device] = _probe_subgroups(device)
        return _SUBGROUP_SIZE[device]


def _probe_subgroups(device: wgpu.GPUDevice) -> int | None:
    buf = device.create_buffer(size=4 * _PROBE_THREADS, usage=wgpu.BufferUsage.STORAGE
                               | wgpu.BufferUsage.COPY_SRC)
    pipe = device.create_compute_pipeline(layout="auto", compute={
        "module": device.create_shader_module(code=_PROBE), "entry_point": "main"})
    group = device.create_bind_group(layout=pipe.get_bind_group_layout(0),
                                     entries=[{"binding": 0, "resource": {"buffer": buf}}])
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipe)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(1)
    compute.end()
    device.queue.submit([encoder.finish()])
    seen = np.frombuffer(device.queue.read_buffer(buf), np.uint32)
    buf.destroy()
    sizes = set((seen >> 16).tolist())
    size = sizes.pop() if len(sizes) == 1 else None
    lids = np.arange(_PROBE_THREADS, dtype=np.uint32)
    ok = size in SUBGROUP_SIZES and np.array_equal(seen & 0xFFFF, lids % size)
    return size if ok else None


def with_subgroups(device: wgpu.GPUDevice, source: str, facts: dict) -> str:
    """The kernel with its shuffles through workgroup memory swapped for subgroup
    shuffles where those are exact (see ``cross_thread.py``): every one where a subgroup is
    a warp (``facts["subgroup"]``), the xor shuffles of masks below the subgroup size
    anywhere subgroups are consecutive invocations (``facts["subgroup_xor"]``)."""
    size = subgroup_size(device)
    if size is None:
        return source
    for wrapper, (mask, native) in (facts.get("subgroup_xor") or {}).items():
        if mask < size:
            source = source.replace(wrapper, native)
    if size == 32:
        for emulated, native in (facts.get("subgroup") or {}).items():
            source = source.replace(emulated, native)
    return source  # no `enable subgroups;`: wgpu 0.32's Naga rejects it, the feature suffices
