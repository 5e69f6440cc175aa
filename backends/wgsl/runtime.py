"""The WGSL backend's runtime: the wgpu device, buffers, the pipeline cache and dispatch.

Input: an artifact's WGSL text and layout facts (see ``emit.emit_wgsl``) plus the
kernel's ``KernelInfo``. No xDSL here: a kernel found in the disk cache launches without
the compiler.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import wgpu

from backends.wgsl import set_runtime_dir
from backends.wgsl.aliasing import Aliasing, aliasing
from backends.wgsl.arrays import WgslArray, buffer_device
from backends.wgsl.recorder import flush, recorder
from backends.wgsl.subgroups import with_subgroups
from compiler.device_arrays import INDEX_REACH, check_reach, host_view, span_view
from compiler.errors import (
    ArgumentError,
    BackendUnavailableError,
    LaunchError,
    OutOfResources,
    UnsupportedError,
    argument_error,
    describe_value,
)
from compiler.kinfo import KernelInfo, Param
from compiler.language import dtype_from_str
from compiler.progress import step
from compiler.timing import compilation, phase

_LIMITS = ("max-storage-buffers-per-shader-stage", "max-storage-buffer-binding-size",
           "max-buffer-size", "max-compute-invocations-per-workgroup",
           "max-compute-workgroup-size-x", "max-compute-workgroup-storage-size")
"""Limits requested at the adapter's maximum: wgpu's defaults (8 storage buffers per
stage, 128 MiB bindings) are below what kernels and GPUs commonly need."""

_INT_RANGE = {"i32": (-2**31, 2**31), "u32": (0, 2**32), "i1": (0, 2), "i8": (-2**7, 2**7),
              "u8": (0, 2**8), "i16": (-2**15, 2**15), "u16": (0, 2**16),
              "i64": (-2**63, 2**63), "u64": (0, 2**64)}
_STORAGE = wgpu.BufferUsage.STORAGE

_PIPELINES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per device: WGSL text hash -> (compute pipeline, bind group layout)."""
_BUILDING = threading.Lock()
"""Held while a pipeline is built and cached: threads launching a new kernel at once
build it once."""
_FENCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per device: the small buffer ``drain`` reads back."""
_OWN: weakref.WeakSet = weakref.WeakSet()
"""The buffers of tilec's arrays (``new_buffer``): a launch binding only these is
recorded (``recorder``), since tilec sees every host access to them."""


@functools.cache
def adapter() -> wgpu.GPUAdapter:
    set_runtime_dir()  # before the Vulkan loader lists the adapters
    try:
        found = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:  # noqa: BLE001 - no Vulkan/Metal/D3D12 driver or native library
        raise BackendUnavailableError(f"no WebGPU adapter: {e}") from None
    if found is None:
        raise BackendUnavailableError("no WebGPU adapter found")
    return found


def describe(a: wgpu.GPUAdapter) -> str:
    return f"{a.info['device']} on {a.info['backend_type']}"


def driver_name(device: wgpu.GPUDevice) -> str:
    """The adapter's name without its details ("llvmpipe", "NVIDIA H200")."""
    return device.adapter.info["device"].split(" (")[0]


@functools.cache
def wgsl_device() -> wgpu.GPUDevice:
    """The device tilec launches on unless a ``wgpu.GPUBuffer`` argument names another."""
    a = adapter()
    return a.request_device_sync(
        label="tilec", required_limits={k: a.limits[k] for k in _LIMITS},
        required_features=[f for f in ("shader-f16", "subgroup", "timestamp-query")
                           if f in a.features])


def availability() -> tuple[bool, str]:
    try:
        return True, describe(adapter())
    except BackendUnavailableError as e:
        return False, e.message


def fold(grid: tuple[int, int, int], most: int) -> tuple[tuple[int, int, int], int, int]:
    """Dispatch size, ``fold_x`` and ``fold_n`` for a grid: axis 0 beyond ``most``
    workgroups is split into ``fold_n`` rows of ``fold_x`` (the last row padded)."""
    g0, g1, g2 = grid
    rows = -(-g0 // most)
    width = -(-g0 // rows)
    if g1 * rows > most or g2 > most:
        raise LaunchError(f"grid {grid} is too large for WGSL: at most {most} programs on "
                          f"axes 1 and 2, and axis 1 times {rows} (folding axis 0)")
    return (width, g1 * rows, g2), width, rows


class Plan(NamedTuple):
    """What a launch on the same arrays as an earlier launch of its kernel reuses: their
    checks, the dispatcher, the bind group (making one, 18 us on lavapipe, costs several
    times what recording the launch does) and whether it is submitted at once."""

    buffers: list  # weak references to the arrays' buffers: a freed buffer's id may recur
    dispatcher: Dispatcher
    group: object
    now: bool


class Kernel:
    """One compiled kernel; ``__call__`` validates the arguments and runs one launch."""

    PLANS = 64  # plans kept: a 12-layer GPT's step launches a kernel on up to 49 sets

    def __init__(self, source: str, facts: dict, info: KernelInfo):
        if len(facts["params"]) != len(info.params):
            raise ValueError("artifact and KernelInfo disagree on the parameters")
        self.source, self.facts, self.info = source, facts, info
        self.dtypes = [dtype_from_str(p.dtype).numpy for p in info.params]
        self.pipelines: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.wide = list(info.extra.get("wide_offsets", ()))  # see ``check_reach``
        self.pointers = [i for i, f in enumerate(facts["params"]) if f["kind"] == "ptr"]
        self.scalars = [(i, f, p) for i, (f, p) in enumerate(zip(facts["params"], info.params))
                        if f["kind"] == "scalar"]
        self.plans: dict[tuple, Plan] = {}  # by ``arrays_key``
        self.lock = threading.Lock()  # over changes to ``plans``

    def __call__(self, grid: tuple[int, int, int], args: list) -> None:
        """Launch on ``args``: recorded, and submitted later, where every array is one
        of tilec's (``recorder``); submitted now otherwise. Arrays an earlier launch
        bound are not checked again (``Plan``)."""
        grid = self.check_grid(grid)
        if len(args) != len(self.info.params):
            raise LaunchError(f"{self.info.name} takes {len(self.info.params)} arguments, "
                              f"got {len(args)}")
        for i in self.wide:
            self.check_reach(i, args[i])
        key, buffers = self.arrays_key(args)
        plan = self.plans.get(key) if key is not None else None
        if plan is None or any(r() is not b for r, b in zip(plan.buffers, buffers)):
            self.launch(grid, args, key, buffers)
            return
        words, dispatch = self.uniform(grid, plan.dispatcher.device)
        for i, f, p in self.scalars:
            self.pack(words, f, p, args[i])
        plan.dispatcher.run(plan.group, words, dispatch, plan.now)

    def launch(self, grid: tuple[int, int, int], args: list, key: tuple | None,
               buffers: list) -> None:
        """A launch on arrays new to this kernel, or on NumPy arrays (``key`` None):
        checked, copied in and out, and its ``Plan`` kept."""
        device = self.device(args)
        words, dispatch = self.uniform(grid, device)
        bound: list[Binding] = []
        uploads: dict[int, wgpu.GPUBuffer] = {}
        readback: dict[int, np.ndarray] = {}
        for p, f, arg, dt in zip(self.info.params, self.facts["params"], args, self.dtypes):
            if f["kind"] == "scalar":
                self.pack(words, f, p, arg)
            elif isinstance(arg, wgpu.GPUBuffer):
                bound.append(whole(self.check_buffer(device, p, arg)))
            elif isinstance(arg, WgslArray):  # the kernel was specialized on its dtype
                bound.append(self.check_view(device, p, arg))
            else:
                arr = self.check_array(p, arg, dt)
                if id(arg) not in uploads:  # one buffer per array, so aliasing is kept
                    uploads[id(arg)] = upload(device, p, arr)
                if p.written:
                    readback[id(arg)] = arr
                bound.append(whole(uploads[id(arg)]))
        shape = aliasing(bound, self.facts["params"], self.info)
        now = any(b.buffer not in _OWN for b in bound)  # the caller may read it through wgpu
        dispatcher = self.pipelines.get(device, {}).get(shape)
        if dispatcher is None:
            dispatcher, group = self.first_launch(device, shape, bound, words, dispatch)
        else:
            group = dispatcher.group(bound)
            dispatcher.run(group, words, dispatch, now)
        if key is not None:
            self.remember(key, Plan([weakref.ref(b) for b in buffers], dispatcher, group, now))
        for at, arr in readback.items():
            download(device, uploads[at], arr)

    def arrays_key(self, args: list) -> tuple[tuple | None, list]:
        """What identifies the arrays of a launch (their buffers, and a view's place in
        its buffer; a ``WgslArray``'s dtype is the kernel's), and their buffers. None for
        a launch with a NumPy array, which is copied in anew."""
        key, buffers = [], []
        for i in self.pointers:
            arg = args[i]
            if isinstance(arg, WgslArray):
                buffers.append(arg.buffer)
                key.append((id(arg.buffer), arg.offset, arg.shape))
            elif isinstance(arg, wgpu.GPUBuffer):
                buffers.append(arg)
                key.append(id(arg))
            else:
                return None, buffers
        return tuple(key), buffers

    def remember(self, key: tuple, plan: Plan) -> None:
        """Keep ``plan``; drop the plans of freed buffers (their bind groups would keep
        them on the device) and, when full, the oldest."""
        with self.lock:
            for k in [k for k, p in self.plans.items() if any(r() is None for r in p.buffers)]:
                del self.plans[k]
            if len(self.plans) >= self.PLANS:
                del self.plans[next(iter(self.plans))]
            self.plans[key] = plan

    def uniform(self, grid: tuple[int, int, int], device: wgpu.GPUDevice):
        """The uniform words with the grid filled in (the scalars are ``pack``'s), and
        the dispatch size."""
        words = np.zeros(self.facts["uniform"]["size"] // 4, np.uint32)
        dispatch, words[3], words[4] = fold(grid, device.limits[
            "max-compute-workgroups-per-dimension"])
        words[:3] = grid
        return words, dispatch

    # ------------------------------------------------------------ validation

    def check_grid(self, grid) -> tuple[int, int, int]:
        g = tuple(int(x) for x in grid) + (1,) * (3 - len(grid))
        if len(g) != 3 or min(g) <= 0:
            raise LaunchError(f"grid {tuple(grid)} must have 1 to 3 positive sizes")
        return g  # type: ignore[return-value]

    def device(self, args: list) -> wgpu.GPUDevice:
        buffers = [a.buffer if isinstance(a, WgslArray) else a for a in args]
        owners = {id(d): d for a in buffers if isinstance(a, wgpu.GPUBuffer)
                  for d in [buffer_device(a)]}
        if len(owners) > 1:
            raise LaunchError("wgpu.GPUBuffer arguments belong to different devices")
        return next(iter(owners.values())) if owners else wgsl_device()

    def check_array(self, p: Param, arg, dt: np.dtype) -> np.ndarray:
        # A DLPack producer's CPU memory (a PyTorch CPU tensor) is viewed, not copied.
        try:
            view = arg if isinstance(arg, np.ndarray) else host_view(arg)
        except ArgumentError as e:
            raise e.named(p.name) from None
        if view is None:
            raise argument_error(p.name, "the wgsl backend takes NumPy arrays, CPU arrays "
                                         "with __dlpack__ and wgpu.GPUBuffers, got "
                                         f"{describe_value(arg)}")
        arg = view
        if arg.dtype != dt:
            raise argument_error(p.name, f"expected an array of {dtype_from_str(p.dtype)}, "
                                         f"got {describe_value(arg)}")
        try:
            arg = span_view(arg)
        except ArgumentError as e:
            raise e.named(p.name) from None
        if p.written and not arg.flags.writeable:
            raise argument_error(p.name, f"{describe_value(arg)} is read-only, and the kernel "
                                         "writes it")
        return arg

    def check_reach(self, i: int, arg) -> None:
        """A kernel moving through argument ``i`` by 64-bit offsets indexes it with 32
        bits here too (``device_arrays.check_reach``)."""
        elements = arg.size if isinstance(arg, WgslArray) else \
            arg.size // self.dtypes[i].itemsize if isinstance(arg, wgpu.GPUBuffer) else None
        if elements is not None:
            if elements > INDEX_REACH:
                raise argument_error(self.info.params[i].name, f"{describe_value(arg)} holds "
                                     "more than 2**31 elements, which the kernel's 64-bit "
                                     "offsets reach but WGSL's 32-bit indices do not")
        else:
            check_reach(self.info.params[i].name, arg)

    def check_buffer(self, device: wgpu.GPUDevice, p: Param, buf: wgpu.GPUBuffer,
                     size: int | None = None):
        """``buf`` if ``size`` bytes of it (all of it: None) can be bound as storage."""
        if not buf.usage & _STORAGE:
            raise argument_error(p.name, f"{describe_value(buf)} lacks STORAGE usage; create it "
                                         "with wgpu.BufferUsage.STORAGE")
        most = device.limits["max-storage-buffer-binding-size"]
        size = buf.size if size is None else size
        if size % 4 or size > most:
            raise argument_error(p.name, f"{describe_value(buf)} cannot be bound: a storage "
                                         f"binding is a multiple of 4 bytes, at most {most}")
        return buf

    def check_view(self, device: wgpu.GPUDevice, p: Param, a: WgslArray) -> Binding:
        """The range of its buffer that a ``WgslArray`` holds, as a binding: from its
        offset, which WebGPU takes at multiples of the device's alignment only, to its
        end rounded up to the 4-byte multiple a binding is (within the buffer)."""
        align = device.limits["min-storage-buffer-offset-alignment"]
        if a.offset % align:
            raise argument_error(p.name, f"{describe_value(a)} starts {a.offset} bytes into "
                                         f"its buffer; this wgsl device binds buffers at "
                                         f"multiples of {align} bytes "
                                         "(min-storage-buffer-offset-alignment): lay views out "
                                         "at such offsets")
        offset, size = a.bound_range()
        return Binding(self.check_buffer(device, p, a.buffer, size), offset, size)

    def pack(self, words: np.ndarray, f: dict, p: Param, arg) -> None:
        """Write a scalar argument into the uniform words (ints as their u32 pattern; an
        int64 as two, low first)."""
        if isinstance(arg, np.ndarray) and arg.ndim == 0:
            arg = arg[()]
        is_float = isinstance(arg, float | np.floating)
        if not isinstance(arg, int | float | np.integer | np.floating | np.bool_) or (
                is_float and p.dtype in _INT_RANGE):
            raise argument_error(p.name, f"expected a scalar of type "
                                         f"{dtype_from_str(p.dtype)}, got {describe_value(arg)}")
        if f["type"] == "f32":
            words.view(np.float32)[f["offset"] // 4] = float(arg)
            return
        lo, hi = _INT_RANGE[p.dtype]
        if not lo <= int(arg) < hi:
            raise argument_error(p.name, f"{describe_value(arg)} does not fit "
                                         f"{dtype_from_str(p.dtype)} (from {lo} to {hi - 1})")
        words[f["offset"] // 4] = int(arg) & 0xFFFFFFFF
        if f["type"] == "i64":
            words[f["offset"] // 4 + 1] = (int(arg) >> 32) & 0xFFFFFFFF

    # ------------------------------------------------------------ running

    def first_launch(self, device: wgpu.GPUDevice, shape: Aliasing,
                     bound: list[Binding], words: np.ndarray, dispatch) -> tuple:
        """Build the pipeline, run the launch on it and wait until it is done: the
        driver compiles the shader in one of the two (most drivers when the pipeline is
        made, lavapipe at the first dispatch), for seconds to minutes on a big kernel. Both
        are rows of a ``TILEC_TIMING`` table and the wait shows on the progress line."""
        name, driver = self.info.name, driver_name(device)
        with compilation(f"{name}'s first launch on wgsl ({driver})"), \
                step(f"wgsl: driver compiling {name} ({driver})"):
            with phase("driver: create pipeline"):
                dispatcher = self.pipeline(device, shape)
            with phase("driver: first dispatch, to completion"):
                group = dispatcher.group(bound)
                dispatcher.run(group, words, dispatch, submit=True)
                drain(device)
        return dispatcher, group

    def pipeline(self, device: wgpu.GPUDevice, shape: Aliasing) -> Dispatcher:
        """The dispatcher of this kernel on ``device`` for arrays that alias as ``shape``
        says, built by the first thread to ask."""
        with _BUILDING:
            per_device = self.pipelines.setdefault(device, {})
            if shape not in per_device:
                source = shape.variant(with_subgroups(device, self.source, self.facts))
                pipe, layout = build_pipeline(device, source, self.facts, shape)
                per_device[shape] = Dispatcher(device, pipe, layout,
                                               self.facts["uniform"]["size"], shape.gone)
            return per_device[shape]


class PassTimestamps(threading.local):
    """Where the compute passes of a call timed by ``timing.TimestampClock`` write GPU
    timestamps: the first pass its start, every pass its end, so the pair spans the call's
    kernels and not the ~100 us the host takes to submit the first of them. Per thread:
    a launch from another thread is not part of the timed call."""

    current: dict | None = None  # the query set and indices of the call being timed
    started = False  # whether a pass of the current call wrote the start

    def timed(self, writes: dict, fn: Callable[[], Any]) -> bool:
        """Call ``fn`` with its passes writing ``writes``; whether one of them did."""
        self.current, self.started = writes, False
        try:
            fn()
            return self.started
        finally:
            self.current, self.started = None, False

    def next_pass(self) -> dict | None:
        writes = self.current
        if writes is None or not self.started:
            self.started = writes is not None
            return writes
        return {k: v for k, v in writes.items() if k != "beginning_of_pass_write_index"}


PASS_TIMESTAMPS = PassTimestamps()


class Dispatcher:
    """One pipeline of a kernel on one device: its launches' bind groups bind the
    device's uniform arena at a dynamic offset, and they are recorded (``recorder``)."""

    def __init__(self, device: wgpu.GPUDevice, pipe, layout, uniform_size: int,
                 merged: frozenset[int]):
        self.device, self.pipe, self.layout = device, pipe, layout
        self.recorder = recorder(device)
        self.uniform_size, self.merged = uniform_size, merged

    def group(self, bound: list[Binding]):
        """The bind group of ``bound`` (but the bindings merged into others) and the
        uniform arena."""
        entries = [{"binding": i, "resource": {"buffer": b.buffer, "offset": b.offset,
                                               "size": b.size}}
                   for i, b in enumerate(bound) if i not in self.merged]
        entries.append({"binding": len(bound), "resource": {
            "buffer": self.recorder.arena, "offset": 0, "size": self.uniform_size}})
        return self.device.create_bind_group(layout=self.layout, entries=entries)

    def run(self, group, words: np.ndarray, dispatch, submit: bool) -> None:
        """Record one launch; submit it, with those recorded before, where ``submit``."""
        self.recorder.record(self.pipe, group, words, dispatch, PASS_TIMESTAMPS.next_pass(),
                             submit)


def build_pipeline(device: wgpu.GPUDevice, source: str, facts: dict, shape: Aliasing):
    key = hashlib.sha256(source.encode()).hexdigest()
    cache = _PIPELINES.setdefault(device, {})
    if key in cache:
        return cache[key]
    check_device(device, facts)
    entries = [{"binding": f["binding"], "visibility": wgpu.ShaderStage.COMPUTE,
                "buffer": {"type": "storage" if shape.written(f["binding"], facts["params"])
                           else "read-only-storage"}}
               for f in facts["params"]
               if f["kind"] == "ptr" and f["binding"] not in shape.gone]
    entries.append({"binding": facts["uniform"]["binding"],
                    "visibility": wgpu.ShaderStage.COMPUTE,
                    "buffer": {"type": "uniform", "has_dynamic_offset": True}})
    group_layout = device.create_bind_group_layout(entries=entries)
    module = device.create_shader_module(label=facts["name"], code=source)
    pipe = device.create_compute_pipeline(
        label=facts["name"],
        layout=device.create_pipeline_layout(bind_group_layouts=[group_layout]),
        compute={"module": module, "entry_point": facts["entry"]})
    cache[key] = (pipe, group_layout)
    return cache[key]


def check_device(device: wgpu.GPUDevice, facts: dict) -> None:
    """Features and limits the kernel needs, as UnsupportedError rather than a wgpu one."""
    name = facts["name"]
    for feature in facts["features"]:
        if feature not in device.features:
            raise UnsupportedError(f"kernel {name} needs the WebGPU feature {feature!r}, "
                                   "which this wgsl device lacks")
    arrays = sum(f["kind"] == "ptr" for f in facts["params"])
    if arrays > device.limits["max-storage-buffers-per-shader-stage"]:
        raise UnsupportedError(f"kernel {name} takes {arrays} arrays; this wgsl device binds "
                               f"at most {device.limits['max-storage-buffers-per-shader-stage']}")
    storage = device.limits["max-compute-workgroup-storage-size"]
    if facts.get("shared", 0) > storage:
        raise OutOfResources(f"kernel {name} needs {facts['shared']:,} bytes of workgroup "
                             f"memory; this wgsl device gives a program at most {storage:,}: "
                             "smaller tiles, fewer stages or fewer warps")
    if facts["workgroup_size"] > device.limits["max-compute-invocations-per-workgroup"]:
        raise UnsupportedError(f"kernel {name} needs {facts['workgroup_size']} threads per "
                               "program, more than this wgsl device allows")


def drain(device: wgpu.GPUDevice) -> None:
    """Submit the launches recorded on ``device`` and wait for all its work: reading a
    buffer back copies it after that work and waits for the copy (wgpu-py 0.32's
    ``on_submitted_work_done_sync`` is broken)."""
    flush(device)
    fence = _FENCES.get(device)
    if fence is None:
        fence = _FENCES[device] = device.create_buffer(size=4,
                                                       usage=wgpu.BufferUsage.COPY_SRC)
    device.queue.read_buffer(fence)


def upload(device: wgpu.GPUDevice, p: Param, arr: np.ndarray) -> wgpu.GPUBuffer:
    """A storage buffer holding ``arr``, padded to the 4-byte multiple bindings need."""
    most = device.limits["max-storage-buffer-binding-size"]
    if _padded(arr.nbytes) > most:
        raise argument_error(p.name, f"{describe_value(arr)} has {arr.nbytes} bytes, more than "
                                     f"this wgsl device binds ({most})")
    buf = device.create_buffer(size=_padded(arr.nbytes), usage=_USAGE)
    write_padded(device, buf, arr)
    return buf


class Binding(NamedTuple):
    """What a launch binds for one array: ``size`` bytes of ``buffer`` from ``offset``."""

    buffer: wgpu.GPUBuffer
    offset: int
    size: int


def whole(buf: wgpu.GPUBuffer) -> Binding:
    return Binding(buf, 0, buf.size)


_USAGE = _STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
"""The buffers tilec makes: bound as storage, written from and read back to the host."""


def _padded(nbytes: int) -> int:
    return max(4, -(-nbytes // 4) * 4)  # bindings and copies are 4-byte multiples


def new_buffer(nbytes: int) -> wgpu.GPUBuffer:
    """A buffer of tilec's wgsl device for ``nbytes`` (``tc.empty``), zeroed as WebGPU
    makes every buffer."""
    device = wgsl_device()
    most = device.limits["max-buffer-size"]
    if _padded(nbytes) > most:
        raise LaunchError(f"an array of {nbytes:,} bytes is larger than this wgsl device's "
                          f"largest buffer ({most:,} bytes)")
    buf = device.create_buffer(size=_padded(nbytes), usage=_USAGE)
    _OWN.add(buf)
    return buf


def write_padded(device: wgpu.GPUDevice, buf: wgpu.GPUBuffer, arr: np.ndarray) -> None:
    """Write contiguous ``arr`` to the start of ``buf``, padded to a 4-byte multiple."""
    data = arr.reshape(-1).view(np.uint8)
    if data.size:
        size = _padded(data.size)
        device.queue.write_buffer(buf, 0, np.concatenate(
            [data, np.zeros(size - data.size, np.uint8)]) if size != data.size else data)


def download(device: wgpu.GPUDevice, buf: wgpu.GPUBuffer, arr: np.ndarray) -> None:
    """Copy ``buf`` back into the user's array, in place."""
    if arr.size:
        data = np.frombuffer(device.queue.read_buffer(buf), np.uint8)
        np.copyto(arr.reshape(-1).view(np.uint8), data[:arr.nbytes])
