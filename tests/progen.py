"""Random valid tilec programs for differential testing (scripts/difftest.py).

A ``Program`` is a kernel template (elementwise 1-D and 2-D, reductions, scans, loops,
``tl.dot``), a dtype, sizes and an expression tree over the loaded tiles. It renders to
kernel source, makes its inputs from a seed, and runs on any backend; ``check`` says
whether the backends agree with numpy within the dtype's tolerance, ``check_threads``
the same for launches from several threads at once, and ``minimize`` shrinks a
disagreeing program's expression while it still disagrees. Everything is JSON, so a
mismatch becomes a regression test of a few lines (``regression_test``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import random
import sys
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

import compiler as tc

INTS = ["int8", "int16", "int32", "uint8", "uint32", "int64"]
FLOATS = ["float32", "float16", "float64"]
WIDE = {"int64", "float64"}  # generated only with --wide
NOT_ON_WGSL = {"float64"}  # WGSL has no 64-bit floats (its int64 is two 32-bit words)
TL = {"int8": "tl.int8", "int16": "tl.int16", "int32": "tl.int32", "uint8": "tl.uint8",
      "uint32": "tl.uint32", "int64": "tl.int64", "float32": "tl.float32",
      "float16": "tl.float16", "float64": "tl.float64"}
RTOL = {"float16": 1e-2, "float32": 2e-5, "float64": 1e-9}

# ---------------------------------------------------------------- expressions

# A node is [format, child, ...]; a leaf is [text]. Every child has the program's dtype.
INT_OPS = ["({} + {})", "({} - {})", "({} * {})", "({} & {})", "({} | {})", "({} ^ {})",
           "tl.minimum({}, {})", "tl.maximum({}, {})", "tl.where({0} < {1}, {0}, {1})",
           "({0} // tl.where({1} == 0, 1, {1}))", "({0} % tl.where({1} == 0, 1, {1}))",
           "({} << ({} & 3))", "({} >> ({} & 3))"]
INT_UNARY = ["(-{})", "(~{})", "({} + 3)", "({} * 7)", "({} // 2)", "({} % 5)",
             "({} >> 1)", "({} == 2).to({D})", "tl.where({0} > 1, {0}, 5)"]
FLOAT_OPS = ["({} + {})", "({} - {})", "({} * {})", "({} / (tl.abs({}) + 0.5))",
             "tl.minimum({}, {})", "tl.maximum({}, {})", "tl.where({0} < {1}, {0}, {1})",
             "tl.fma({0}, {1}, {0})", "({} % (tl.abs({}) + 1.0))"]
FLOAT_UNARY = ["(-{})", "tl.abs({})", "tl.exp(tl.minimum({}, 4.0))", "tl.log(tl.abs({}) + 1.0)",
               "tl.sqrt(tl.abs({}))", "tl.sin({})", "tl.cos({})", "tl.floor({})",
               "tl.ceil({})", "tl.sigmoid({})", "({} * 0.5)", "({} + 1.25)",
               "tl.exp2(tl.minimum({}, 4.0))", "tl.rsqrt(tl.abs({}) + 1.0)",
               "tl.where({0} > 0.5, {0}, 2.0)"]


# Rounded differently by different backends (hardware approximations, division, fused
# multiply-add): what a step function (floor, a comparison, %, argmax) reads must be free
# of them, or a last-bit difference moves the step and the backends rightly disagree.
APPROX = {"tl.exp(tl.minimum({}, 4.0))", "tl.log(tl.abs({}) + 1.0)", "tl.sqrt(tl.abs({}))",
          "tl.sin({})", "tl.cos({})", "tl.sigmoid({})", "tl.exp2(tl.minimum({}, 4.0))",
          "tl.rsqrt(tl.abs({}) + 1.0)", "({} / (tl.abs({}) + 0.5))", "tl.fma({0}, {1}, {0})"}
STEPS = {"tl.floor({})", "tl.ceil({})", "tl.where({0} > 0.5, {0}, 2.0)",
         "tl.where({0} < {1}, {0}, {1})", "({} % (tl.abs({}) + 1.0))"}


def dtypes_for(backends: list[str], wide: bool) -> list[str]:
    """The dtypes worth generating: those every backend checked can represent."""
    skip = WIDE if not wide else NOT_ON_WGSL if "wgsl" in backends else set()
    return [d for d in INTS + FLOATS if d not in skip]


def random_expr(rng: random.Random, dtype: str, leaves: list[str], depth: int,
                dtypes: list[str], exact: bool = False) -> list:
    """A random expression tree; ``exact``: free of ``APPROX`` (a step reads it)."""
    if depth == 0 or rng.random() < 0.25:
        return [rng.choice(leaves)]
    is_int = dtype in INTS

    def pick(formats: list[str]) -> str:
        return rng.choice([f for f in formats if not (exact and f in APPROX)])

    def below(fmt: str) -> list:
        return random_expr(rng, dtype, leaves, depth - 1, dtypes, exact or fmt in STEPS)

    if rng.random() < 0.45:
        fmt = pick(INT_UNARY if is_int else FLOAT_UNARY)
        if is_int and dtype.startswith("uint") and fmt in ("(-{})",):
            fmt = "(~{})"
        return [fmt.replace("{D}", TL[dtype]), below(fmt)]
    if is_int and rng.random() < 0.15:  # a round trip through another integer width
        other = rng.choice([d for d in dtypes if d in INTS])
        return [f"{{}}.to({TL[other]}).to({TL[dtype]})", below("")]
    fmt = pick(INT_OPS if is_int else FLOAT_OPS)
    return [fmt, below(fmt), below(fmt)]


def render(node: list) -> str:
    if len(node) == 1:
        return node[0]
    return node[0].format(*(render(c) for c in node[1:]))


def size(node: list) -> int:
    return 1 + sum(size(c) for c in node[1:])


def shrinks(node: list) -> list[list]:
    """Smaller trees: each child in the node's place, or a child shrunk in place."""
    if len(node) == 1:
        return []
    out = [c for c in node[1:]]
    for i, c in enumerate(node[1:], 1):
        out += [node[:i] + [s] + node[i + 1:] for s in shrinks(c)]
    return out


# ---------------------------------------------------------------- templates

HEADER = "import compiler as tc\nimport compiler.language as tl\n\n\n@tc.kernel\n"
TEMPLATES = {
    "elementwise": """\
def kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=1)
    b = tl.load(y + offs, mask=mask, other=1)
    tl.store(out + offs, (tl.zeros_like(a) + {expr}).to({D}), mask=mask)
""",
    "rows2d": """\
def kernel(x, y, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(x + rm[:, None] * N + rn[None, :], mask=mask, other=1)
    b = tl.load(y + {bidx}, mask={bmask}, other=1){bexp}
    tl.store(out + rm[:, None] * N + rn[None, :], (tl.zeros_like(a) + {expr}).to({D}),
             mask=mask)
""",
    "reduce": """\
def kernel(x, y, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(x + rm[:, None] * N + rn[None, :], mask=mask, other=1)
    b = tl.load(y + rm[:, None] * N + rn[None, :], mask=mask, other=1)
    v = tl.where(mask, (tl.zeros_like(a) + {expr}).to({D}), {neutral})
    r = tl.{reduce}(v, axis=1)
    tl.store(out + rm, r.to({OUT}), mask=rm < M)
""",
    "scan": """\
def kernel(x, y, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(x + rm[:, None] * N + rn[None, :], mask=mask, other=1)
    b = tl.load(y + rm[:, None] * N + rn[None, :], mask=mask, other=1)
    v = (tl.zeros_like(a) + {expr}).to({D})
    tl.store(out + rm[:, None] * N + rn[None, :], tl.{scan}(v, axis={axis}), mask=mask)
""",
    "loop": """\
def kernel(x, y, out, n, K, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros((BLOCK,), {D})
    {loop}
        a = tl.load(x + i * n + offs, mask=mask, other=1)
        b = tl.load(y + i * n + offs, mask=mask, other=1)
        acc = {combine}
        {step}
    tl.store(out + offs, acc, mask=mask)
""",
    "dot": """\
def kernel(x, y, out, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(x + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K),
                other=0)
    b = tl.load(y + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N),
                other=0)
    c = {dot}
    tl.store(out + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))
""",
}
LOOPS = {"for": ("for i in range(0, K):", ""),
         "while": ("i = 0\n    while i < K:", "i += 1"),
         "static": ("for i in tl.static_range(3):", "")}


@dataclass
class Program:
    """One random program: what to render, and the sizes and seed of its launch."""

    kind: str
    dtype: str
    expr: list
    params: dict = field(default_factory=dict)
    seed: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> Program:
        return Program(**json.loads(text))

    @property
    def out_dtype(self) -> str:
        return self.params.get("out", self.dtype)

    def source(self) -> str:
        p = self.params
        fields = {"expr": render(self.expr), "D": TL[self.dtype], "OUT": TL[self.out_dtype],
                  **{k: v for k, v in p.items() if isinstance(v, str)}}
        if self.kind == "loop":
            head, step = LOOPS[p["loop_kind"]]
            fields.update(loop=head, step=step, combine=p["combine"].format(**fields))
        return HEADER + TEMPLATES[self.kind].format(**fields)


def generate(rng: random.Random, kinds: list[str], dtypes: list[str]) -> Program:
    """A random program of one of ``kinds`` over one of ``dtypes``."""
    kind = rng.choice(kinds)
    dtype = rng.choice(dtypes)
    leaves = ["a", "b"]  # literals come in through the formats ("+ 3", "* 0.5")
    seed = rng.randrange(2**31)
    params = _PARAMS[kind](rng, dtype, dtypes)
    steps = str(params.get("reduce", "")).startswith("arg")  # argmax/argmin: a step
    expr = random_expr(rng, dtype, leaves, rng.randint(1, 4), dtypes, steps)
    if params.get("scan") == "cumprod" and dtype in FLOATS:
        # each backend multiplies in its own order: 64 factors in [0.9, 1.1] stay far from
        # overflow and underflow, where the orders would rightly disagree (inf vs 5.5e4)
        expr = ["tl.minimum(tl.maximum({}, 0.9), 1.1)", expr]
    if kind == "dot":
        dtype, expr = params.pop("in"), ["a"]
    return Program(kind, dtype, expr, params, seed)


def _p_elementwise(rng, dtype, dtypes):
    return {"BLOCK": rng.choice([16, 32, 64, 128]), "n": rng.randint(1, 300)}


def _p_rows2d(rng, dtype, dtypes):
    col = rng.random() < 0.5
    return {"BM": rng.choice([4, 8, 16]), "BN": rng.choice([8, 16, 32]),
            "M": rng.randint(1, 40), "N": rng.randint(1, 40),
            "bidx": "rm" if col else "rn", "bmask": "rm < M" if col else "rn < N",
            "bexp": "[:, None]" if col else "[None, :]"}


def _p_reduce(rng, dtype, dtypes):
    reduce = rng.choice(["sum", "max", "min", "argmax", "argmin"])
    info = np.iinfo(dtype) if dtype in INTS else None
    neutral = {"sum": "0", "max": str(info.min) if info else "float('-inf')",
               "min": str(info.max) if info else "float('inf')"}
    neutral["argmax"], neutral["argmin"] = neutral["max"], neutral["min"]
    n = rng.randint(1, 64)
    return {"BM": rng.choice([2, 4, 8]), "BN": 1 << max(n - 1, 0).bit_length(),
            "M": rng.randint(1, 20), "N": n, "reduce": reduce, "neutral": neutral[reduce],
            "out": "int32" if reduce.startswith("arg") else dtype}


def _p_scan(rng, dtype, dtypes):
    n = rng.randint(1, 64)
    return {"BM": rng.choice([1, 2, 4, 8]), "BN": 1 << max(n - 1, 0).bit_length(),
            "M": rng.randint(1, 20), "N": n, "scan": rng.choice(["cumsum", "cumprod"]),
            "axis": "1"}


def _p_loop(rng, dtype, dtypes):
    combine = rng.choice(["acc + {expr}", "tl.maximum(acc, {expr})", "acc * 2 + {expr}"])
    p = _p_elementwise(rng, dtype, dtypes)
    p.update(K=rng.randint(0, 5), loop_kind=rng.choice(list(LOOPS)))
    if p["loop_kind"] == "static":
        p["K"] = 3
    p["combine"] = combine.replace("{expr}", "({expr}).to({D})")
    return p


def _p_dot(rng, dtype, dtypes):
    a = rng.choice([d for d in ("float16", "float32", "int8") if d in dtypes])
    out = {"float16": "float32", "float32": "float32", "int8": "int32"}[a]
    prec = ", input_precision='ieee'" if a == "float32" else ""
    acc = f"acc=tl.full((BM, BN), 1, {TL[out]})"
    dot = rng.choice([f"tl.dot(a, b{prec})", f"tl.dot(a, b, {acc}{prec})"])
    bm, bn, bk = (rng.choice([16, 32]) for _ in range(3))
    return {"in": a, "out": out, "dot": dot, "BM": bm, "BN": bn, "BK": bk,
            "M": rng.randint(1, bm), "N": rng.randint(1, bn), "K": rng.randint(1, bk)}


_PARAMS = {"elementwise": _p_elementwise, "rows2d": _p_rows2d, "reduce": _p_reduce,
           "scan": _p_scan, "loop": _p_loop, "dot": _p_dot}
KINDS = list(_PARAMS)


# ---------------------------------------------------------------- running

VALUES = {"int8": (-20, 20), "uint8": (0, 40), "int16": (-200, 200), "int32": (-1000, 1000),
          "uint32": (0, 2000), "int64": (-1000, 1000)}


def _data(rng: np.random.Generator, dtype: str, shape: tuple, prog: Program) -> np.ndarray:
    if dtype in INTS:
        lo, hi = VALUES[dtype]
        return rng.integers(lo, hi, size=shape).astype(dtype)
    lo, hi = (0.5, 1.5) if prog.params.get("scan") == "cumprod" else (-3.0, 3.0)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def launch_plan(prog: Program, perturb: float = 0.0) -> tuple[list, dict, tuple]:
    """(arrays and scalars, constexprs, grid) of ``prog``, from its seed; ``perturb``
    scales each float input by a random factor in [1 - perturb, 1 + perturb]."""
    args, consts, grid = _plan(prog)
    noise = np.random.default_rng(prog.seed + 1)
    for i in (0, 1):
        if perturb and args[i].dtype.kind == "f":
            factor = 1 + perturb * noise.uniform(-1, 1, args[i].shape)
            args[i] = (args[i] * factor).astype(args[i].dtype)
    return args, consts, grid


def _plan(prog: Program) -> tuple[list, dict, tuple]:
    p, rng, d = prog.params, np.random.default_rng(prog.seed), prog.dtype
    out = np.zeros
    if prog.kind == "elementwise":
        n = p["n"]
        args = [_data(rng, d, (n,), prog), _data(rng, d, (n,), prog), out(n, prog.out_dtype), n]
        return args, {"BLOCK": p["BLOCK"]}, (tc.cdiv(n, p["BLOCK"]),)
    if prog.kind == "loop":
        n, k = p["n"], p["K"]
        rows = max(k, 3)
        args = [_data(rng, d, (rows * n,), prog), _data(rng, d, (rows * n,), prog),
                out(n, d), n, k]
        return args, {"BLOCK": p["BLOCK"]}, (tc.cdiv(n, p["BLOCK"]),)
    if prog.kind == "dot":
        m, n, k = p["M"], p["N"], p["K"]
        args = [_data(rng, d, (m, k), prog), _data(rng, d, (k, n), prog),
                out((m, n), prog.out_dtype), m, n, k]
        return args, {"BM": p["BM"], "BN": p["BN"], "BK": p["BK"]}, (1,)
    m, n = p["M"], p["N"]
    ylen = {"rm": (m,), "rn": (n,)}.get(p.get("bidx"), (m, n))
    shape = (m,) if prog.kind == "reduce" else (m, n)
    args = [_data(rng, d, (m, n), prog), _data(rng, d, ylen, prog),
            out(shape, prog.out_dtype), m, n]
    grid = (tc.cdiv(m, p["BM"]),) + ((tc.cdiv(n, p["BN"]),) if prog.kind == "rows2d" else ())
    return args, {"BM": p["BM"], "BN": p["BN"]}, grid


_LOADED: dict[str, object] = {}  # kernels by file; forget() drops them


def forget() -> None:
    """Drop the kernels loaded so far (a long run makes thousands)."""
    _LOADED.clear()


def load(prog: Program, directory: Path):
    """The kernel of ``prog`` (one module per distinct source, written to a file)."""
    src = prog.source()
    path = directory / f"prog_{hashlib.sha256(src.encode()).hexdigest()[:16]}.py"
    if str(path) not in _LOADED:  # the file must outlive the kernel: tilec reads it lazily
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED[str(path)] = module.kernel
    return _LOADED[str(path)]


def run(prog: Program, backend: str, directory: Path, perturb: float = 0.0
        ) -> np.ndarray | None:
    """The output array after one launch on ``backend``; None if the backend refuses
    the program (UnsupportedError: a dtype it cannot represent)."""
    args, consts, grid = launch_plan(prog, perturb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            load(prog, directory)[grid](*args, backend=backend, **consts)
        except tc.UnsupportedError:
            return None
    return args[2]


def tolerance(prog: Program, ref: np.ndarray) -> tuple[float, float]:
    """(rtol, atol): exact for integers; for floats the dtype's rounding, grown with
    the number of terms a reduction, scan or dot sums in a backend-specific order."""
    if ref.dtype.kind in "iub":
        return 0.0, 0.0
    rtol = RTOL[str(ref.dtype) if prog.kind != "dot" else prog.dtype]
    terms = {"reduce": prog.params.get("N", 1), "scan": prog.params.get("N", 1),
             "dot": prog.params.get("K", 1), "loop": 3}.get(prog.kind, 1)
    finite = np.abs(ref[np.isfinite(ref)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return rtol * 4, rtol * math.sqrt(terms) * scale


def disagreement(prog: Program, ref: np.ndarray, got: np.ndarray,
                 slack: np.ndarray | float = 0.0) -> str | None:
    """None if ``got`` agrees with ``ref`` (give or take ``slack`` more, elementwise);
    else the first differing index and both values."""
    rtol, atol = tolerance(prog, ref)
    a, b = ref.astype(np.float64), got.astype(np.float64)
    same = np.isclose(b, a, rtol=rtol, atol=atol + slack, equal_nan=True) if rtol else (a == b)
    if same.all():
        return None
    i = tuple(int(j) for j in np.argwhere(~same)[0])
    return f"{int((~same).sum())} of {same.size} differ; first at {i}: {ref[i]!r} vs {got[i]!r}"


def sensitivity(prog: Program, ref: np.ndarray, directory: Path) -> np.ndarray:
    """How far the reference moves when the float inputs move by a few units in the last
    place: a backend's transcendentals may differ from NumPy's by as much (WGSL allows
    f16 ``exp`` several ulps), and a difference after cancellation, such as ``exp(x) % y``
    close to a multiple of y, is the program's ill-conditioning, not a compiler bug."""
    moved = run(prog, "numpy", directory, perturb=4 * float(np.finfo(prog.dtype).eps))
    with np.errstate(invalid="ignore"):
        slack = 2 * np.abs(moved.astype(np.float64) - ref.astype(np.float64))
    return np.nan_to_num(slack, nan=0.0)


def check(prog: Program, backends: list[str], directory: Path,
          refused: list[str] | None = None) -> dict[str, str]:
    """What each backend got wrong against numpy (empty: all agree); the backends that
    refused the program (UnsupportedError) are appended to ``refused``."""
    ref = run(prog, "numpy", directory)
    problems = {}
    for backend in backends:
        if why := judge(prog, ref, backend, directory, refused):
            problems[backend] = why
    return problems


def judge(prog: Program, ref: np.ndarray | None, backend: str, directory: Path,
          refused: list[str] | None = None) -> str | None:
    """Run ``prog`` on ``backend`` once: how it disagrees with numpy's ``ref``, or None."""
    try:
        got = run(prog, backend, directory)
    except Exception as e:  # noqa: BLE001 - a backend failing where numpy ran is a finding
        return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
    if got is None and refused is not None:
        refused.append(backend)
    why = None if got is None or ref is None else disagreement(prog, ref, got)
    if why and ref.dtype.kind == "f":
        why = disagreement(prog, ref, got, sensitivity(prog, ref, directory))
    return why


# ---------------------------------------------------------------- threads

LAUNCHES = 4  # per thread and backend in ``check_threads``: launches that overlap
RACE_ROUNDS = 5  # of ``check_threads`` in a regression test: a race shows now and then


def variants(prog: Program, count: int) -> list[Program]:
    """``count`` other launches of ``prog``'s kernel: the same source and constexprs, other
    sizes and data (from ``prog``'s seed), so their scalar arguments differ from its."""
    rng = random.Random(prog.seed)
    return [Program(prog.kind, prog.dtype, prog.expr,
                    {**prog.params, **_sizes(prog, rng)}, rng.randrange(2**31))
            for _ in range(count)]


def _sizes(prog: Program, rng: random.Random) -> dict:
    p = prog.params
    if prog.kind in ("elementwise", "loop"):
        k = {"K": rng.randint(0, 5)} if p.get("loop_kind") in ("for", "while") else {}
        return {"n": rng.randint(1, 300), **k}
    if prog.kind == "rows2d":
        return {"M": rng.randint(1, 40), "N": rng.randint(1, 40)}
    if prog.kind == "dot":
        return {d: rng.randint(1, p["B" + d]) for d in "MNK"}
    return {"M": rng.randint(1, 20), "N": rng.randint(1, p["BN"])}  # reduce, scan: N <= BN


def check_threads(prog: Program, backends: list[str], directory: Path, threads: int,
                  refused: list[str] | None = None) -> dict[str, str]:
    """``check`` with launches from ``threads`` threads at once: thread i launches the i-th
    of ``prog`` and its ``variants`` ``LAUNCHES`` times on numpy, then on each backend, and
    each result is judged against numpy's, computed alone first. One kernel launched with
    different arguments shares what a backend keeps per kernel (a uniform buffer, bind
    groups, the compilation a first launch races to), where arguments get mixed up."""
    progs = [prog, *variants(prog, threads - 1)]
    refs = [run(p, "numpy", directory) for p in progs]  # loads the kernel, once, here
    problems: dict[str, str] = {}
    refusals: list[str] = []  # one per launch: counted once per backend below
    with warnings.catch_warnings():  # what each thread's run() restores also ignores them
        warnings.simplefilter("ignore", RuntimeWarning)
        for backend in ["numpy", *backends]:
            found = _together(len(progs), lambda i, b=backend: judge(
                progs[i], refs[i], b, directory, refusals))
            if found:
                problems[backend] = f"{threads} threads at once: {found}"
    if refused is not None:
        refused += sorted(set(refusals))
    return problems


def _together(count: int, attempt) -> str | None:
    """Call ``attempt(i)`` ``LAUNCHES`` times in each of ``count`` threads started
    together; the first thing one of them returned, prefixed with its thread."""
    found: list[str] = []
    start = threading.Barrier(count)

    def work(i: int) -> None:
        start.wait()
        for _ in range(LAUNCHES):
            try:
                why = attempt(i)
            except Exception as e:  # noqa: BLE001 - a finding, not a thread's lost traceback
                why = f"{type(e).__name__}: {e}"
            if why:
                found.append(f"thread {i}: {why}")
                return

    pool = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return found[0] if found else None


def checked(prog: Program, backends: list[str], directory: Path, threads: int = 1,
            refused: list[str] | None = None) -> dict[str, str]:
    """``check``, or ``check_threads`` where ``threads`` is more than one."""
    if threads > 1:
        return check_threads(prog, backends, directory, threads, refused)
    return check(prog, backends, directory, refused)


def minimize(prog: Program, backends: list[str], directory: Path, tries: int = 150,
             threads: int = 1) -> Program:
    """Shrink the expression while some backend still disagrees with numpy (launched
    from ``threads`` threads at once, where more than one)."""
    for _ in range(tries):
        for smaller in sorted(shrinks(prog.expr), key=size):
            cand = Program(prog.kind, prog.dtype, smaller, prog.params, prog.seed)
            try:
                if checked(cand, backends, directory, threads):
                    prog = cand
                    break
            except tc.TilecError:
                continue
        else:
            return prog
    return prog


REGRESSION = """\
\"\"\"Found by scripts/difftest.py (minimized): {backends} disagreed with numpy:
{why}\"\"\"

from tests.progen import Program, assert_backends_agree

PROGRAM = Program.from_json({json!r})


def test_backends_agree():
    assert_backends_agree(PROGRAM, {backends!r}{threads})
"""


def regression_test(prog: Program, problems: dict[str, str], out_dir: Path,
                    threads: int = 1) -> Path:
    """Write ``prog`` as a pytest file under ``out_dir`` (launched from ``threads``
    threads at once, where more than one); returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(prog.to_json().encode()).hexdigest()[:10]
    path = out_dir / f"test_diff_{prog.kind}_{prog.dtype}_{name}.py"
    why = "\n".join(f"{b}: {w}" for b, w in problems.items())
    path.write_text(REGRESSION.format(backends=sorted(problems), why=why, json=prog.to_json(),
                                      threads=f", threads={threads}" if threads > 1 else ""))
    return path


def assert_backends_agree(prog: Program, backends: list[str], threads: int = 1) -> None:
    """For regression tests: every available backend of ``backends`` agrees with numpy
    (launched from ``threads`` threads at once, where more than one)."""
    from compiler.jit import availability
    usable = [b for b in backends if b != "numpy" and availability(b)[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(RACE_ROUNDS if threads > 1 else 1):
            if problems := checked(prog, usable, Path(tmp), threads):
                break
    assert not problems, f"{problems}\n{prog.source()}"


def available_backends() -> list[str]:
    from compiler.jit import availability
    return [b for b in ("wgsl", "ptx") if availability(b)[0]]


if __name__ == "__main__":  # print one program per seed given: a look at what is made
    for s in sys.argv[1:]:
        print(generate(random.Random(int(s)), KINDS, dtypes_for([], False)).source())
