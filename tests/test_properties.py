"""Property tests: random elementwise expressions, compiled from the same generated source
for every backend, must agree with NumPy evaluating the same expression (integers
exactly, floats within rounding)."""

import importlib.util
import itertools
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as tc
from tests.conftest import launch

_counter = itertools.count()

# (kernel text, NumPy text) templates; the NumPy side spells C's truncating // and %.
INT_BINARY = [("({} + {})",) * 2, ("({} - {})",) * 2, ("({} * {})",) * 2,
              ("({} & {})",) * 2, ("({} | {})",) * 2, ("({} ^ {})",) * 2,
              ("({} // ({} | 1))", "cdiv_({}, ({} | 1))"),
              ("({} % ({} | 1))", "cmod_({}, ({} | 1))"),
              ("tl.maximum({}, {})",) * 2, ("tl.minimum({}, {})",) * 2,
              ("tl.where({} > {}, a, b)",) * 2]
FLOAT_BINARY = [(t, t) for t in ["({} + {})", "({} - {})", "({} * {})", "tl.maximum({}, {})",
                                 "tl.minimum({}, {})", "tl.where({} < {}, a, c)",
                                 "(({}) * 0.5 + ({}))"]]
FLOAT_UNARY = [(t, t) for t in ["tl.abs({})", "(-{})", "tl.sigmoid({})", "tl.floor({})",
                                "tl.exp({} * 0.25)"]]


def expressions(binary, unary, leaves):
    """Pairs (kernel expression, NumPy expression) built from the same random tree."""
    leaf = st.sampled_from([(v, v) for v in leaves])

    def grow(inner):
        two = st.tuples(st.sampled_from(binary), inner, inner).map(
            lambda t: (t[0][0].format(t[1][0], t[2][0]), t[0][1].format(t[1][1], t[2][1])))
        if not unary:
            return two
        one = st.tuples(st.sampled_from(unary), inner).map(
            lambda t: (t[0][0].format(t[1][0]), t[0][1].format(t[1][1])))
        return st.one_of(two, one)

    return st.recursive(leaf, grow, max_leaves=6)


def make_kernel(expr: str):
    """Write the expression into a kernel in a fresh module (kernels are compiled from
    their source file) and import it."""
    name = f"prop_kernel_{next(_counter)}"
    src = f'''import compiler as tc
import compiler.language as tl


@tc.kernel
def k(x, y, z, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    c = tl.load(z + offs, mask=m)
    tl.store(out + offs, {expr}, mask=m)
'''
    path = PROP_DIR / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.k


class _NumpyTL:
    """``tl`` for evaluating the same expression text with NumPy."""

    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    abs = staticmethod(np.abs)
    floor = staticmethod(np.floor)
    exp = staticmethod(np.exp)
    where = staticmethod(np.where)

    @staticmethod
    def sigmoid(v):
        return 1 / (1 + np.exp(-v))


def _c_div(p, q):
    return (np.trunc(p.astype(np.float64) / q)).astype(np.int64).astype(p.dtype)


def numpy_eval(expr: str, **values):
    env = {"tl": _NumpyTL, "cdiv_": _c_div,
           "cmod_": lambda p, q: (p - q * _c_div(p, q)).astype(p.dtype), **values}
    with np.errstate(all="ignore"):
        return eval(expr, env)  # our own generated expression


PROP_DIR = None


def _setup(tmp_path_factory):
    global PROP_DIR
    if PROP_DIR is None:
        PROP_DIR = tmp_path_factory.mktemp("prop_kernels")


SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@SETTINGS
@given(expr=expressions(FLOAT_BINARY, FLOAT_UNARY, ["a", "b", "c"]),
       n=st.integers(1, 700), block=st.sampled_from([32, 128, 512]))
def test_float_expressions(backend, tmp_path_factory, expr, n, block):
    _setup(tmp_path_factory)
    expr, np_expr = expr
    rng = np.random.default_rng(n)
    a, b, c = (rng.uniform(-2, 2, n).astype(np.float32) for _ in range(3))
    out = np.zeros(n, np.float32)
    kernel = make_kernel(expr)
    if launch(kernel, (tc.cdiv(n, block),), a, b, c, out, n, backend=backend, BLOCK=block):
        want = numpy_eval(np_expr, a=a.astype(np.float64), b=b.astype(np.float64),
                          c=c.astype(np.float64))
        scale = max(1.0, float(np.max(np.abs(want))))
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * scale, err_msg=expr)


@SETTINGS
@given(expr=expressions(INT_BINARY, [], ["a", "b", "c"]), n=st.integers(1, 700),
       block=st.sampled_from([32, 256]))
def test_int_expressions(backend, tmp_path_factory, expr, n, block):
    _setup(tmp_path_factory)
    expr, np_expr = expr
    rng = np.random.default_rng(n)
    a, b, c = (rng.integers(-50, 50, n).astype(np.int32) for _ in range(3))
    want = numpy_eval(np_expr, a=a, b=b, c=c)
    out = np.zeros(n, np.int32)
    kernel = make_kernel(expr)
    if launch(kernel, (tc.cdiv(n, block),), a, b, c, out, n, backend=backend, BLOCK=block):
        np.testing.assert_array_equal(out, np.asarray(want).astype(np.int32), err_msg=expr)


REDUCTIONS = {"sum": np.sum, "max": np.max, "min": np.min}


def make_reduce_kernel(expr: str, op: str, axis: int):
    """A 2-D kernel: load a masked (BM, BN) block of three matrices, apply ``expr``,
    reduce along ``axis`` with ``op``, store the vector."""
    name = f"prop_reduce_{next(_counter)}"
    out_offs = "offs_m" if axis == 1 else "offs_n"
    out_mask = "offs_m < M" if axis == 1 else "offs_n < N"
    src = f'''import compiler as tc
import compiler.language as tl


@tc.kernel
def k(x, y, z, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    idx = offs_m[:, None] * N + offs_n[None, :]
    m = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    a = tl.load(x + idx, mask=m, other=0.0)
    b = tl.load(y + idx, mask=m, other=0.0)
    c = tl.load(z + idx, mask=m, other=0.0)
    v = tl.where(m, {expr}, {"0.0" if op == "sum" else ("-1e30" if op == "max" else "1e30")})
    tl.store(out + {out_offs}, tl.{op}(v, axis={axis}), mask={out_mask})
'''
    path = PROP_DIR / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.k


@SETTINGS
@given(expr=expressions(FLOAT_BINARY, FLOAT_UNARY, ["a", "b", "c"]),
       op=st.sampled_from(sorted(REDUCTIONS)), axis=st.sampled_from([0, 1]),
       bm=st.sampled_from([1, 4, 16, 64]), bn=st.sampled_from([1, 8, 32, 128]),
       data=st.data())
def test_reduced_expressions_over_random_shapes(backend, tmp_path_factory, expr, op, axis,
                                                bm, bn, data):
    _setup(tmp_path_factory)
    expr, np_expr = expr
    m_rows = data.draw(st.integers(1, bm))
    n_cols = data.draw(st.integers(1, bn))
    rng = np.random.default_rng(m_rows * 1000 + n_cols)
    a, b, c = (rng.uniform(-2, 2, (m_rows, n_cols)).astype(np.float32) for _ in range(3))
    out = np.zeros(m_rows if axis == 1 else n_cols, np.float32)
    kernel = make_reduce_kernel(expr, op, axis)
    if launch(kernel, (1,), a, b, c, out, m_rows, n_cols, backend=backend, BM=bm, BN=bn):
        full = numpy_eval(np_expr, a=a.astype(np.float64), b=b.astype(np.float64),
                          c=c.astype(np.float64))
        want = REDUCTIONS[op](np.broadcast_to(full, a.shape), axis=axis)
        scale = max(1.0, float(np.max(np.abs(full))))
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * scale * a.shape[axis],
                                   err_msg=f"{op}(axis={axis}) of {expr}")
