"""Launches recorded into one command encoder per device and submitted together, not one
by one: a submit with its encoder costs a dozen wgpu calls (111-140 us a launch on an
H200's Vulkan driver), recording a dispatch into an open compute pass three.

What is recorded: launches whose arrays are all tilec's own (``tc.empty``, ``tc.zeros``,
``tc.asarray``: buffers of ``runtime.new_buffer``), which tilec sees every host access to.
A launch that binds any other buffer (a ``wgpu.GPUBuffer`` argument, ``tc.wgsl_array`` of
one, a NumPy array copied in) is recorded and submitted at once, with what was recorded
before it: its caller may read that buffer through wgpu itself.

What submits the recording (``flush``): reading an array back (``tc.to_numpy``), copying
into one (``a[...] = value``: ``queue.write_buffer`` runs before the commands submitted
after it, so it would overtake the recorded launches), ``tc.synchronize``, the timings of
``do_bench``, a launch with NumPy arrays, ``verify=`` or ``debug=``, ``LAUNCHES``
launches or a full uniform arena, and the interpreter's exit. A program that touches
tilec's arrays' buffers through wgpu itself calls ``tc.synchronize()`` first.

Threads share their device's recording, so launches are submitted in the order they were
recorded whichever thread flushes, and a read on one thread sees the launches another
thread made before it.

Each recorded launch has its own slot of scalar arguments in the recording's uniform
arena, written with one ``queue.write_buffer`` at the submit and bound at a dynamic
offset, so every launch reads its own arguments.

One compute pass holds the recording's launches: WebGPU makes each dispatch see what the
dispatches before it wrote, in a pass as across passes.

Errors: argument and grid errors are raised on the host, by the launch, before it is
recorded. wgpu validates a pass's commands when its encoder is finished; an error there
(none that tilec's checks let through) is raised by the call that submits, and the
launches recorded with it are dropped. A buffer destroyed while a launch on it is
recorded fails the submit (wgpu-native aborts the process there): synchronize first. A
fault inside a kernel (an access out of bounds) is no error on WebGPU, whose accesses are
clamped, recorded or not: ``debug=True`` checks them.
"""

from __future__ import annotations

import atexit
import threading
import weakref

import numpy as np
import wgpu

LAUNCHES = 128
"""Launches one recording holds at most before it is submitted: the commands and bind
groups it keeps alive stay bounded, and the device starts on long chains."""

ARENA = 64 * 1024
"""Bytes of each device's uniform arena: the scalar arguments of one recording's
launches, one slot each (``min-uniform-buffer-offset-alignment``, 256 bytes on most
devices, or more for a kernel of many scalars)."""

_RECORDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per device: its ``Recorder``."""
_MADE = threading.Lock()


class Recorder:
    """The launches on one device recorded since its last submit, in one compute pass
    (a launch whose pass writes timestamps, ``runtime.PASS_TIMESTAMPS``, gets a pass of
    its own), and the uniform arena that holds their scalar arguments."""

    def __init__(self, device: wgpu.GPUDevice):
        self.device = device
        self.align = device.limits["min-uniform-buffer-offset-alignment"]
        self.arena = device.create_buffer(
            size=ARENA, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self.words = np.zeros(ARENA // 4, np.uint32)  # the arena's host copy
        self.used = 0  # bytes of the arena taken by recorded launches
        self.launches = 0
        self.encoder = None
        self.compute = None  # the open compute pass
        self.pipe = None  # the pipeline set in the open compute pass
        self.lock = threading.Lock()

    def record(self, pipe, group, words: np.ndarray, dispatch: tuple[int, int, int],
               writes: dict | None, submit: bool) -> None:
        """Record one dispatch of ``pipe`` with ``group`` bound and ``words`` as its
        uniform; submit the recording after it where ``submit``."""
        slot = -(-words.nbytes // self.align) * self.align
        with self.lock:
            if self.used + slot > ARENA:
                self._submit()
            offset = self.used
            self.words[offset // 4:offset // 4 + words.size] = words
            self.used += slot
            self.launches += 1
            compute = self._pass(writes)
            if pipe is not self.pipe:
                compute.set_pipeline(pipe)
                self.pipe = pipe
            compute.set_bind_group(0, group, [offset])
            compute.dispatch_workgroups(*dispatch)
            if writes:
                self._end_pass()
            if submit or self.launches >= LAUNCHES:
                self._submit()

    def submit(self) -> None:
        """Submit what is recorded (nothing when nothing is)."""
        if self.encoder is not None:
            with self.lock:
                self._submit()

    def _pass(self, writes: dict | None):
        """The compute pass to record into: the open one, or for ``writes`` a new one."""
        if self.encoder is None:
            self.encoder = self.device.create_command_encoder()
        if writes:
            self._end_pass()
            self.compute = self.encoder.begin_compute_pass(timestamp_writes=writes)
        elif self.compute is None:
            self.compute = self.encoder.begin_compute_pass()
        return self.compute

    def _end_pass(self) -> None:
        compute, self.compute, self.pipe = self.compute, None, None
        if compute is not None:
            compute.end()

    def _submit(self) -> None:
        """Submit under ``lock``; the recorder is empty afterwards whatever wgpu raises."""
        encoder, used = self.encoder, self.used
        if encoder is None:
            return
        self.encoder, self.used, self.launches = None, 0, 0
        self._end_pass()
        self.device.queue.write_buffer(self.arena, 0, self.words[:used // 4])
        self.device.queue.submit([encoder.finish()])


def recorder(device: wgpu.GPUDevice) -> Recorder:
    """``device``'s recorder, made by the first thread to ask."""
    found = _RECORDERS.get(device)
    if found is None:
        with _MADE:
            found = _RECORDERS.get(device)
            if found is None:
                found = _RECORDERS[device] = Recorder(device)
    return found


def flush(device: wgpu.GPUDevice) -> None:
    """Submit the launches recorded on ``device``: before anything of the host that must
    come after them on its queue."""
    found = _RECORDERS.get(device)
    if found is not None:
        found.submit()


@atexit.register
def _flush_all() -> None:
    """Submit every device's recording at exit, as the launches were before recording."""
    for found in list(_RECORDERS.values()):
        found.submit()
