"""Triton's libdevice functions (``tl.extra.libdevice``, ``tl.math``) on every backend.

Float functions are checked in ulps against ``benchmarks.math_accuracy``'s references
(float64, long double for f64): NumPy rounds its reference, so within half an ulp (exact
for the exact functions); WGSL (lavapipe) and PTX run ``expand-math``'s sequences, whose
bounds below are the errors measured over 2^20 inputs (README), rounded up. Without a GPU,
PTX kernels are compiled and assembled, and the sequences themselves are measured on the
NumPy backend (``TILEC_EXPAND_MATH=1``, in a subprocess), which computes what PTX does.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from benchmarks.math_accuracy import FUNCTIONS, _apply, inputs, reference, ulp_error
from compiler import libdevice as names
from tests.conftest import ROOT, launch, repo_pythonpath

libdevice = tl.extra.libdevice

# function -> max ulps of expand-math's f32 sequence (WGSL and PTX); 0: exact
GPU_ULPS = {
    "asin": 1.3, "acos": 0.9, "atan": 1.9, "atan2": 2.1, "sinh": 2.0, "cosh": 1.9,
    "asinh": 1.6, "acosh": 1.8, "atanh": 1.9, "exp10": 2.0, "expm1": 1.5, "log10": 0.9,
    "log1p": 0.8, "cbrt": 0.6, "rcbrt": 1.1, "tan": 1.5, "sinpi": 1.3, "cospi": 1.2,
    "hypot": 1.3, "rhypot": 1.4, "norm3d": 1.5, "rnorm3d": 1.7, "norm4d": 1.6,
    "rnorm4d": 1.9, "erfc": 4.2, "erfcx": 2.8, "erfinv": 2.7, "erfcinv": 2.8,
    "normcdf": 5.2, "normcdfinv": 3.5, "lgamma": 2.6, "tgamma": 5.0, "round": 0,
    "copysign": 0, "fmod": 0, "remainder": 0, "nextafter": 0, "logb": 0, "ldexp": 0,
}
# expand-math's f64 sequences (PTX), measured on NumPy
F64_ULPS = {
    "asin": 1.3, "acos": 0.9, "atan": 2.1, "atan2": 2.0, "sinh": 1.6, "cosh": 1.5,
    "asinh": 1.6, "acosh": 1.7, "atanh": 1.9, "exp10": 1.2, "expm1": 1.8, "log10": 0.9,
    "log1p": 0.9, "cbrt": 0.6, "rcbrt": 0.6, "tan": 1.9, "sinpi": 1.1, "cospi": 1.1,
    "hypot": 1.2, "rhypot": 1.5, "norm3d": 1.4, "rnorm3d": 1.5, "norm4d": 1.7,
    "rnorm4d": 1.8, "round": 0, "copysign": 0, "fmod": 0, "remainder": 0, "nextafter": 0,
    "logb": 0, "ldexp": 0, "exp": 1.1, "log": 0.8, "tanh": 2.2,
}
F32_ONLY = ("erfc", "erfcx", "normcdf", "erfinv", "erfcinv", "normcdfinv", "lgamma", "tgamma")
# lgamma of x < 0 (the reflection, which cancels near the zeros of lgamma, as libdevice's):
# absolute error in units of 2^-24 max(1, |lgamma(x)|)
LGAMMA_NEGATIVE_UNITS = 11
BLOCK = 1024


def _args(name: str, n: int, rng: np.random.Generator, dtype=np.float32) -> list[np.ndarray]:
    case = FUNCTIONS[name]
    args = [rng.integers(lo, hi, n).astype(np.int32) if isinstance(lo, int) else
            inputs(lo, hi, n, rng, dtype) for lo, hi in case.ranges]
    return args


def _run(name: str, args: list[np.ndarray], backend: str) -> np.ndarray | None:
    """``name`` of ``args`` on ``backend`` (None: PTX compiled and assembled, not run)."""
    out = np.zeros_like(args[0])
    pad = [args[i] if i < len(args) else args[0] for i in range(4)]
    ran = launch(_apply, (-(-len(out) // BLOCK),), *pad, out, len(out), backend=backend,
                 FN=FUNCTIONS[name].fn, ARITY=len(args), BLOCK=BLOCK)
    return out if ran else None


def _bound(name: str, backend: str) -> float:
    return (0.0 if GPU_ULPS[name] == 0 else 0.5001) if backend == "numpy" else GPU_ULPS[name]


@pytest.mark.parametrize("name", list(GPU_ULPS))
def test_accuracy(backend, name):
    args = _args(name, 2048, np.random.default_rng(7))
    got = _run(name, args, backend)
    if got is not None:
        assert ulp_error(got, reference(name, args)).max() <= _bound(name, backend)


def _special(name: str, dtype=np.float32) -> list[np.ndarray]:
    """Zeros, infinities, NaN, subnormals, the largest values and a few ordinary ones, in
    every pair for two operands (a sample of combinations for three and four)."""
    tiny = np.finfo(dtype).smallest_subnormal
    big = np.finfo(dtype).max
    edge = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, 1.0, -1.0, 0.5, -0.5, 2.0, -7.0,
            big, -big]
    ranges = FUNCTIONS[name].ranges
    if isinstance(ranges[-1][0], int):
        pairs = [(v, k) for v in edge for k in (0, 1, -1, 200, -200, 2000, -2000)]
        return [np.array([p[0] for p in pairs], dtype), np.array([p[1] for p in pairs], np.int32)]
    if len(ranges) == 1:
        return [np.array(edge, dtype)]
    if len(ranges) == 2:
        return [np.array([a for a in edge for _ in edge], dtype), np.array(edge * len(edge), dtype)]
    picks = np.random.default_rng(0).integers(0, len(edge), (len(ranges), 256))
    return [np.array(edge, dtype)[p] for p in picks]


def _same_specials(got: np.ndarray, ref: np.ndarray, ulps: float) -> None:
    """NaN where NaN, equal infinities and signed zeros, finite values within ``ulps``."""
    with np.errstate(over="ignore"):
        want = ref.astype(got.dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))
    finite = np.isfinite(want)
    assert ulp_error(got[finite], ref[finite]).max() <= max(ulps, 0.5001)


@pytest.mark.parametrize("name", [n for n in GPU_ULPS if n != "tan"])
def test_special_values(backend, name):
    args = _special(name)
    got = _run(name, args, backend)
    if got is not None:
        _same_specials(got, reference(name, args), _bound(name, backend))


def test_lgamma_of_negatives(backend):
    x = np.random.default_rng(4).uniform(-40, 0, 2048).astype(np.float32)
    got = _run("lgamma", [x], backend)
    if got is not None:
        ref = reference("lgamma", [x])
        finite = np.isfinite(ref)
        units = np.abs(got[finite] - ref[finite]) / (2.0**-24 * np.maximum(1, np.abs(ref[finite])))
        assert units.max() <= (1 if backend == "numpy" else LGAMMA_NEGATIVE_UNITS)


def test_tan_beyond_its_reduction_is_nan(backend):
    x = np.array([0.0, -0.0, 1.0, 1e4, -16000000.0, 16777216.0, -3e38, np.inf], np.float32)
    got = _run("tan", [x], backend)
    if got is None:
        return
    if backend == "numpy":
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(got, np.tan(x.astype(np.float64)), rtol=1e-6)
    else:  # no Payne-Hanek reduction: NaN from 2^24 on
        _same_specials(got[:5], reference("tan", [x[:5]]), GPU_ULPS["tan"])
        assert np.isnan(got[5:]).all()


def measure_sequences() -> dict[str, float]:
    """Max ulps of each sequence over random inputs, and ``-1`` where a special value
    (NaN, an infinity, a signed zero) differs from the reference (run with
    ``TILEC_EXPAND_MATH=1``)."""
    out = {}
    for dtype, table in ((np.float32, GPU_ULPS), (np.float64, F64_ULPS)):
        for name in table:
            args = _args(name, 4096, np.random.default_rng(3), dtype)
            got = _run(name, args, "numpy")
            err = float(ulp_error(got, reference(name, args)).max())
            special = _special(name, dtype)
            try:
                if name == "tan":  # NaN past its reduction (test_tan_beyond_its_...)
                    special = [v[np.abs(v) < 1e6] for v in special]
                _same_specials(_run(name, special, "numpy"), reference(name, special), 8.0)
            except AssertionError:
                err = -1.0
            out[f"{name}/{np.dtype(dtype)}"] = err
    return out


def sequence_bits() -> dict[str, str]:
    """The bits of every sequence over random and special inputs, hashed (run with
    ``TILEC_EXPAND_MATH`` set)."""
    import hashlib
    out = {}
    for dtype, table in ((np.float32, GPU_ULPS), (np.float64, F64_ULPS)):
        for name in table:
            got = [_run(name, a, "numpy") for a in (_args(name, 1024, np.random.default_rng(4),
                                                          dtype), _special(name, dtype))]
            out[f"{name}/{np.dtype(dtype)}"] = hashlib.sha256(np.concatenate(got)).hexdigest()
    return out


def test_fused_sequences_give_the_same_bits():
    """PTX's sequences take exact products from a fused ``fma`` where WGSL's split them
    (Dekker): the same numbers, so every function gives the same bits either way."""
    code = ("import json\nfrom tests.test_libdevice import sequence_bits\n"
            "print(json.dumps(sequence_bits()))\n")
    runs = []
    for setting in ("1", "fused"):
        env = dict(os.environ, TILEC_EXPAND_MATH=setting, TILEC_CACHE="0",
                   PYTHONPATH=repo_pythonpath())
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=900, check=True)
        runs.append(json.loads(proc.stdout.splitlines()[-1]))
    assert runs[0] == runs[1] and len(runs[0]) == len(GPU_ULPS) + len(F64_ULPS)


def test_ptx_takes_exact_products_from_fma():
    """asin's square-root correction is one ``fma`` on PTX, no splitting into halves
    (``and.b32`` with the 12-bit mask), and its polynomial is evaluated once."""
    ptx = tc.compile(_asin_kernel, signature={"x": "*f32", "out": "*f32"},
                     constants={"N": 128}, backend="ptx", num_warps=4).asm["ptx"]
    wgsl = tc.compile(_asin_kernel, signature={"x": "*f32", "out": "*f32"},
                      constants={"N": 128}, backend="wgsl", num_warps=4).asm["wgsl"]
    from compiler.passes.math_trig import ASIN
    # Horner's fmas, the residual t - s^2 and the correction's
    assert "-4096" not in ptx and ptx.count("fma.rn.f32") == len(ASIN[False]) - 1 + 2
    assert "& (-4096i)" in wgsl  # Dekker's halves


def test_sequences_measured_on_numpy():
    """The f32 and f64 sequences, run by the NumPy backend as PTX runs them."""
    code = ("import json\nfrom tests.test_libdevice import measure_sequences\n"
            "print(json.dumps(measure_sequences()))\n")
    env = dict(os.environ, TILEC_EXPAND_MATH="1", TILEC_CACHE="0",
               PYTHONPATH=repo_pythonpath())
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900, check=True)
    errors = json.loads(proc.stdout.splitlines()[-1])
    for key, err in errors.items():
        name, dtype = key.split("/")
        bound = (GPU_ULPS if dtype == "float32" else F64_ULPS)[name]
        assert 0 <= err <= bound, key


@pytest.mark.parametrize("name", [n for n in F64_ULPS if n in GPU_ULPS] + ["exp", "log"])
def test_float64(backend, name):
    args = _args(name, 1024, np.random.default_rng(5), np.float64)
    if backend == "wgsl":
        with pytest.raises(tc.TilecError, match="64-bit floats"):
            _run(name, args, backend)
        return
    got = _run(name, args, backend)
    if got is not None:
        # NumPy: long double rounded, but exp and log are NumPy's float64 ones
        bound = (1.0 if F64_ULPS[name] else 0.0) if backend == "numpy" else F64_ULPS[name]
        assert ulp_error(got, reference(name, args)).max() <= bound


@pytest.mark.parametrize("name", F32_ONLY)
def test_float64_special_functions_are_refused_on_ptx(name):
    case = FUNCTIONS[name]
    with pytest.raises(tc.UnsupportedError, match=f"{name} .* of float64 is not supported"):
        tc.compile(_apply, signature={"x": "*f64", "y": "*f64", "z": "*f64", "w": "*f64",
                                      "out": "*f64", "n": "i32"},
                   constants={"FN": case.fn, "ARITY": 1, "BLOCK": BLOCK}, backend="ptx")


@pytest.mark.parametrize("name", ["asin", "lgamma", "hypot", "round"])
def test_half_precision(backend, name):
    """f16 operands are computed in f32 and rounded once."""
    with np.errstate(over="ignore"):
        args = [a.astype(np.float16) for a in _args(name, 256, np.random.default_rng(9))]
        args = [np.where(np.isfinite(a), a, 1.0).astype(np.float16) for a in args]
        got = _run(name, args, backend)
        if got is not None:
            want = reference(name, [a.astype(np.float32) for a in args]).astype(np.float16)
            assert ulp_error(got, want.astype(np.float64)).max() <= 1.0


def test_spellings_are_the_same_builtins():
    import compiler.triton.language as ttl
    from compiler.language.extra import libdevice as imported
    assert imported is libdevice and ttl.extra.cuda.libdevice is libdevice
    assert tl.libdevice is libdevice  # Triton 2.0's spelling, kept by older projects' kernels
    assert tl.math.asin is libdevice.asin and tl.math.lgamma is libdevice.lgamma
    assert tl.math.erf is libdevice.erf is tl.erf and tl.math.popc is libdevice.popc
    for name in names.NAMES:
        assert getattr(libdevice, name) is getattr(tl.math, name)


@pytest.mark.parametrize("name", ["j0", "cyl_bessel_i1", "fma_rz", "int2float_rd"])
def test_unsupported_names_are_compile_errors(name):
    x = np.ones(BLOCK, np.float32)
    with pytest.raises(tc.CompileError, match=f"libdevice.{name} is not supported by tilec"):
        _apply[(1,)](x, x, x, x, x, BLOCK, FN=getattr(libdevice, name), ARITY=1, BLOCK=BLOCK,
                     backend="numpy")


def test_pipelines_expand_for_gpu_targets_only():
    sig = {"x": "*f32", "y": "*f32", "z": "*f32", "w": "*f32", "out": "*f32", "n": "i32"}
    consts = {"FN": libdevice.asin, "ARITY": 1, "BLOCK": BLOCK}
    stages = {b: [s for s, _ in tc.compile(_apply, signature=sig, constants=consts,
                                           backend=b).stages] for b in ("numpy", "ptx")}
    assert "expand-math" in stages["ptx"] and "expand-math" not in stages["numpy"]
    ptx = tc.compile(_apply, signature=sig, constants=consts, backend="ptx").asm["ptx"]
    assert "rsqrt.approx" in ptx and "ex2.approx" not in ptx  # asin's root: rsqrt and a Newton step


@tc.kernel
def _fma_kernel(a, b, c, out, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, libdevice.fma_rn(tl.load(a + o), tl.load(b + o), tl.load(c + o)))


def test_float64_fma_is_rounded_once_on_numpy():
    """The f64 sequences' error-free products need a fused fma; NumPy's is exact too."""
    from fractions import Fraction
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal(64) * 1e3, rng.standard_normal(64)
    c = -(a * b) * (1 + rng.standard_normal(64) * 1e-12)  # cancels most digits
    out = np.zeros(64)
    _fma_kernel[(1,)](a, b, c, out, N=64, backend="numpy")
    want = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c, strict=True)]
    np.testing.assert_array_equal(out, want)


@tc.kernel
def _asin_kernel(x, out, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out + o, libdevice.asin(tl.load(x + o)))


def test_expand_math_setting_is_part_of_the_cache_key(tmp_path):
    """A NumPy compilation with ``TILEC_EXPAND_MATH=1`` is not served to a process
    without it from the disk cache (nor the other way round)."""
    code = ("import compiler as tc\n"
            "from tests.test_libdevice import _asin_kernel\n"
            "ck = tc.compile(_asin_kernel, signature={'x': '*f32', 'out': '*f32'},\n"
            "                constants={'N': 64}, backend='numpy')\n"
            "print('reference' if 'math.asin' in ck._artifact else 'expanded',\n"
            "      'compiled' if ck.live is not None else 'cached')\n")
    outs = []
    for setting in ("1", "", "1", ""):
        env = dict(os.environ, TILEC_EXPAND_MATH=setting, TILEC_CACHE="1",
                   TILEC_CACHE_DIR=str(tmp_path), PYTHONPATH=repo_pythonpath())
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        outs.append(proc.stdout.strip())
    assert outs == ["expanded compiled", "reference compiled", "expanded cached",
                    "reference cached"]
