"""Arrays as users have them: transposed and sliced views, storage offsets, Fortran order
and PyTorch tensors that require grad. The kernel gets a pointer to the view's first
element and the strides it is passed, as in Triton (``x.stride(0)``); the backends take
the memory those strides span, so writes land in the user's array."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl

from .conftest import launch


@tc.kernel
def scaled_copy(x_ptr, y_ptr, M, N, stride_xm, stride_xn, stride_ym, stride_yn,
                alpha, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, x * alpha, mask=mask)


def _strides(a) -> tuple[int, int]:
    return tuple(s // a.itemsize for s in a.strides)  # type: ignore[return-value]


def _run(x, y, backend) -> bool:
    m, n = x.shape
    return launch(scaled_copy, (tc.cdiv(m, 16), tc.cdiv(n, 16)), x, y, m, n, *_strides(x),
                  *_strides(y), 3.0, backend=backend, BLOCK_M=16, BLOCK_N=16)


VIEWS = {
    "transposed": lambda a: a.T,
    "sliced with an offset": lambda a: a[3:40, 5:30],
    "every other column": lambda a: a[:, ::2],
    "fortran order": lambda a: np.asfortranarray(a),
}


@pytest.mark.parametrize("view", VIEWS)
def test_strided_views_are_read_and_written_in_place(backend, view):
    x = VIEWS[view](np.random.default_rng(1).standard_normal((48, 64)).astype(np.float32))
    y_base = np.full((48, 64), np.nan, np.float32)
    y = VIEWS[view](y_base)
    if view == "fortran order":  # a copy: the kernel writes the copy, which is y
        y_base = y
    if not _run(x, y, backend):
        return
    np.testing.assert_array_equal(y, np.float32(3.0) * x)
    assert np.isnan(y_base).sum() == y_base.size - y.size  # the rest is untouched


def test_gaps_between_a_views_elements_are_left_alone(backend):
    base = np.full((32, 64), -1.0, np.float32)
    y = base[:, ::2]  # every other column: the kernel must not touch the others
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    if _run(x, y, backend):
        np.testing.assert_array_equal(base[:, ::2], 3 * x)
        np.testing.assert_array_equal(base[:, 1::2], -1.0)


def test_negative_strides_are_a_launch_error():
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(tc.LaunchError, match=r"argument 'x_ptr': .*negative strides"):
        _run(x[::-1], np.zeros((16, 16), np.float32), "numpy")


def test_torch_views_and_tensors_that_require_grad(backend):
    torch = pytest.importorskip("torch")
    device = "cuda" if backend == "ptx" else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    x = torch.randn(40, 24, requires_grad=True, device=device)  # launching reads its data
    y = torch.zeros(24, 40, device=device).t()  # transposed: written through its strides
    m, n = x.shape
    if launch(scaled_copy, (tc.cdiv(m, 16), tc.cdiv(n, 16)), x, y, m, n, *x.stride(),
              *y.stride(), 3.0, backend=backend, BLOCK_M=16, BLOCK_N=16):
        torch.testing.assert_close(y, 3.0 * x.detach())
    assert x.grad is None and x.requires_grad
