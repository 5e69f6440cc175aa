"""Kernels that move through an array by 64-bit offsets (Triton's idiom for arrays past
2**31 elements: ``pid.to(tl.int64) * stride``). The GPU backends index with 32 bits, so
such a kernel records which arrays it moves through that way, and a launch refuses an
array a 32-bit index cannot cross instead of letting the offset wrap."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler import device_arrays

from .conftest import launch


@tc.kernel
def row_copy(x, y, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + cols, mask=cols < n)
    tl.store(y + tl.program_id(0) * n + cols, v, mask=cols < n)


@pytest.mark.parametrize("backend", ["ptx", "wgsl"])
def test_the_arrays_moved_by_64_bit_offsets_are_recorded(backend):
    ck = tc.compile(row_copy, signature="*f32,*f32,i64,i32", constants={"BLOCK": 64},
                    backend=backend)
    assert ck.metadata.extra["wide_offsets"] == [0]  # x; y's offsets are 32-bit


def test_such_a_kernel_runs_on_arrays_a_32_bit_index_crosses(backend):
    x = np.arange(4 * 80, dtype=np.float32).reshape(4, 80)
    y = np.zeros((4, 50), np.float32)
    if launch(row_copy, (4,), x, y, 80, 50, backend=backend, BLOCK=64):
        np.testing.assert_array_equal(y, x[:, :50])


class Huge:
    """An array's facts without its memory: 2**31 + 1 float32 elements."""

    size = 2**31 + 1
    shape = (2**31 + 1,)
    dtype = np.dtype(np.float32)


def test_an_array_past_2_31_elements_is_refused_by_name():
    with pytest.raises(tc.LaunchError, match=r"argument 'x': .*spans 2,147,483,649 elements"
                                             r".*index with 32 bits"):
        device_arrays.check_reach("x", Huge())
    device_arrays.check_reach("x", np.zeros(10, np.float32))  # small: taken


def test_the_wgsl_runtime_checks_before_anything_runs():
    from compiler.jit import availability
    if not availability("wgsl")[0]:
        pytest.skip(availability("wgsl")[1])
    ck = tc.compile(row_copy, signature="*f32,*f32,i64,i32", constants={"BLOCK": 64},
                    backend="wgsl")
    with pytest.raises(tc.LaunchError, match="argument 'x'"):
        ck.launcher((1, 1, 1), [Huge(), np.zeros(64, np.float32), 80, 50])
