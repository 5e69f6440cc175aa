"""compiler.tile: errors a user can cause, each a TilecError at the user's line."""

import inspect

import numpy as np
import pytest

import compiler as tc
import compiler.tile as ct


@ct.kernel
def wrong_rank(x):
    ct.load(x, (0,), (16, 16))  # a 2-D array: 1 index


@ct.kernel
def runtime_shape(x, n):
    ct.load(x, (0, 0), (n, 16))


@ct.kernel
def not_pow2(x):
    ct.load(x, (0, 0), (16, 12))


@ct.kernel
def store_mismatch(x):
    t = ct.load(x, (0, 0), (16, 16))
    ct.store(x, (0,), t)  # index of 1 entry for a 2-D array


@ct.kernel
def tile_rank_mismatch(x):
    t = ct.load(x, (0, 0), (16, 16))
    ct.store(x, (0, 0), ct.sum(t, axis=0))


@ct.kernel
def int_nan(x):
    ct.load(x, (0, 0), (16, 16), padding_mode=ct.PaddingMode.NAN)


@ct.kernel
def not_an_array(x, n):
    ct.load(n, (0,), (16,))


def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("kernel, args, line, message", [
    (wrong_rank, (), "ct.load(x, (0,)", "an array of rank 2 needs an index of 2 entries, got 1"),
    (runtime_shape, (5,), "(n, 16)", "the tile shape must be constant"),
    (not_pow2, (), "(16, 12)", "tile dimensions must be powers of two, got [16, 12]"),
    (store_mismatch, (), "ct.store(x, (0,)", "needs an index of 2 entries, got 1"),
    (tile_rank_mismatch, (), "ct.store", "a tile of shape [16] does not match the index"),
    (int_nan, (), "NAN", "padding mode NAN needs a float array, got int32"),
    (not_an_array, (3,), "ct.load(n", "ct.load expects an array parameter, got int32"),
])
def test_errors_point_at_the_line(kernel, args, line, message):
    x = np.zeros((32, 32), np.int32 if kernel is int_nan else np.float32)
    with pytest.raises(tc.CompileError) as e:
        kernel[(1,)](x, *args, backend="numpy")
    assert message in e.value.message
    assert e.value.loc.line == _line_of(kernel, line)
    assert e.value.loc.file.endswith("test_cutile_errors.py")


def test_host_misuse():
    with pytest.raises(RuntimeError, match="inside a @ct.kernel"):
        ct.load(np.zeros(4), (0,), (4,))
    with pytest.raises(tc.TilecError, match="ct.launch"):
        wrong_rank(np.zeros((4, 4)))
    with pytest.raises(tc.LaunchError, match="strides"):
        not_pow2[(1,)](np.zeros((32, 32), np.float32)[::-1], backend="numpy")
    with pytest.raises(tc.LaunchError, match="1 to 5 dimensions"):
        not_pow2[(1,)](np.zeros((2,) * 6, np.float32), backend="numpy")


# -- what a store converts: cuTile's rule (the array's dtype is the promotion of both) ------

@pytest.fixture(params=["numpy", "wgsl"])
def host_backend(request):
    if not tc.jit.availability(request.param)[0]:
        pytest.skip(f"{request.param}: {tc.jit.availability(request.param)[1]}")
    return request.param


@ct.kernel
def store_as(a, b):
    ct.store(b, index=(0,), tile=ct.load(a, index=(0,), shape=(16,)))


@ct.kernel
def scatter_as(a, b):
    ct.scatter(b, ct.arange(16, dtype=ct.int32), ct.load(a, index=(0,), shape=(16,)))


@ct.kernel
def scatter_constant(b):
    ct.scatter(b, ct.arange(16, dtype=ct.int32), 1.5)


@ct.kernel
def store_tf32(a, b):
    ct.store(b, index=(0,), tile=ct.load(a, index=(0,), shape=(16,)).astype(ct.tfloat32))


REFUSED = [(np.float32, np.int32), (np.float32, np.float16), (np.int32, np.uint32),
           (np.int32, np.int8), (np.int32, np.bool_), (np.uint8, np.int32)]


@pytest.mark.parametrize("src, dst", REFUSED, ids=[f"{np.dtype(s)}-{np.dtype(d)}"
                                                   for s, d in REFUSED])
def test_a_store_that_would_convert_lossily_needs_a_cast(host_backend, src, dst):
    a, b = np.full(16, 1.7).astype(src), np.zeros(16, dst)
    name = "bool_" if dst is np.bool_ else np.dtype(dst).name
    for kernel, what in ((store_as, "ct.store"), (scatter_as, "ct.scatter")):
        with pytest.raises(tc.CompileError) as e:
            ct.launch(None, (1,), kernel, (a, b), backend=host_backend)
        assert e.value.message.startswith(f"{what}: a tile of {np.dtype(src).name} does not "
                                          "store into array<1-D")
        assert e.value.message.endswith(f"cast it with .astype(ct.{name})")
    assert not b.any()


def test_a_float_constant_or_a_tf32_tile_needs_a_cast(host_backend):
    b = np.zeros(16, np.int32)
    with pytest.raises(tc.CompileError, match="ct.scatter: 1.5 does not store into "
                                              "array<1-D, int32> without a cast"):
        ct.launch(None, (1,), scatter_constant, (b,), backend=host_backend)
    with pytest.raises(tc.CompileError, match="a tile of tfloat32 does not store"):
        ct.launch(None, (1,), store_tf32, (np.ones(16, np.float32), np.zeros(16, np.float32)),
                  backend=host_backend)


ALLOWED = [(np.int32, np.float32), (np.float16, np.float32), (np.bool_, np.int32),
           (np.uint8, np.uint32), (np.int8, np.int32), (np.int32, np.float16)]


@pytest.mark.parametrize("src, dst", ALLOWED, ids=[f"{np.dtype(s)}-{np.dtype(d)}"
                                                   for s, d in ALLOWED])
def test_a_store_to_the_promoted_dtype_converts(host_backend, src, dst):
    """The other side of the rule: these convert implicitly, as in cuTile."""
    a = np.arange(16).astype(src)
    for kernel in (store_as, scatter_as):
        b = np.zeros(16, dst)
        ct.launch(None, (1,), kernel, (a, b), backend=host_backend)
        np.testing.assert_array_equal(b, a.astype(dst))
