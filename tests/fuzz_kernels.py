"""Hypothesis strategies for random kernel sources, valid and invalid, and random launch
arguments (tests/test_fuzz.py). A source starts like a real elementwise kernel, so most
draws reach deep into the compiler, then mixes well-typed tile code with constructs a
user might get wrong: Python containers, odd literals, wrong arities, bad shapes."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

PROLOGUE = """\
import compiler as tc
import compiler.language as tl


@tc.kernel
def fuzzed(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x + offs, mask=mask, other=0)
    b = tl.load(y + offs, mask=mask, other=1)
"""

NAMES = ["a", "b", "offs", "pid", "n", "BLOCK", "mask", "x", "tl", "out"]
# Literals a user might write, including ones with no meaning in a kernel.
LITERALS = ["1", "2", "0", "-3", "2.5", "True", "None", "'s'", "2**40", "1e300", "[1, 2]",
            "{1: 2}", "{1}", "(1, 2)", "1j", "b''", "...", "(lambda: 1)", "(16,)", "(4, 4)",
            "tl.float32", "tl.int8", "tl.float16", "tl.uint32", "tl.int1", "tl.float64"]
UNARY = ["-{}", "~{}", "not {}", "+{}"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "<", "<=", "==",
          "!=", ">", "and", "or", "@"]
CALLS = [
    "tl.exp({})", "tl.log({})", "tl.sqrt({})", "tl.abs({})", "tl.sigmoid({})",
    "tl.floor({})", "tl.sin({})", "tl.erf({})", "tl.sum({}, axis=0)", "tl.max({}, 0)",
    "tl.min({})", "tl.argmax({}, 0)", "tl.cumsum({}, 0)", "tl.cumprod({}, 1)",
    "tl.reshape({}, (4, BLOCK // 4))", "tl.reshape({}, (3,))", "tl.trans({})",
    "{}[:, None]", "{}[None, :]", "{}[0]", "{}[1:2]", "{}.T", "{}.to(tl.float16)",
    "{}.to(tl.int32)", "{}.to('fp32')", "tl.cast({}, tl.uint8)", "{}.sum(0)", "{}.shape",
    "{}.dtype", "{}.nope", "tl.expand_dims({}, 1)", "tl.broadcast_to({}, (BLOCK, 2))",
    "tl.load(x + {})", "tl.load({})", "tl.zeros_like({})", "tl.multiple_of({}, 16)",
    "tl.full((BLOCK,), {}, tl.float32)", "tl.zeros({}, tl.float32)", "tl.arange(0, {})",
    "tl.program_id({})", "tl.static_range({})", "tl.flip({}, 0)", "tl.sort({})",
    "len({})", "min({}, 2)", "int({})", "range({})", "tl.nope({})", "print({})",
    "{}(1)", "tl.where({}, a, b)", "tl.maximum({}, a)", "tl.fma({}, a, b)",
]
BINARY_CALLS = ["tl.dot({}, {})", "tl.where(mask, {}, {})", "tl.minimum({}, {})",
                "tl.join({}, {})", "tl.cat({}, {})", "tl.atomic_add(out + offs, {}, mask={})",
                "tl.load(x + offs, mask={}, other={})", "tl.clamp({}, {}, 1.0)",
                "tl.reduce({}, 0, {})", "tl.gather({}, {}, 0)", "tl.pow({}, {})"]


@st.composite
def expressions(draw, scope: list[str], depth: int = 0) -> str:
    kind = draw(st.sampled_from(["name", "name", "literal", "unary", "binary", "binary",
                                 "call", "call", "call2", "ifexp"]))
    if depth >= 3 or kind == "name":
        return draw(st.sampled_from(scope))
    if kind == "literal":
        return draw(st.sampled_from(LITERALS))
    sub = expressions(scope, depth + 1)
    if kind == "unary":
        return draw(st.sampled_from(UNARY)).format(f"({draw(sub)})")
    if kind == "binary":
        return f"({draw(sub)} {draw(st.sampled_from(BINARY))} {draw(sub)})"
    if kind == "call":
        return draw(st.sampled_from(CALLS)).format(draw(sub))
    if kind == "ifexp":
        return f"({draw(sub)} if {draw(sub)} else {draw(sub)})"
    return draw(st.sampled_from(BINARY_CALLS)).format(draw(sub), draw(sub))


@st.composite
def statements(draw, scope: list[str], indent: str, depth: int = 0) -> list[str]:
    """A few statements; assigned names join ``scope``."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["assign", "assign", "assign", "aug", "store", "if",
                                     "for", "static_for", "while", "odd", "assert"]))
        expr = draw(expressions(scope))
        if kind == "assign" or depth >= 2 and kind in ("if", "for", "static_for", "while"):
            name = f"v{len(scope)}"
            lines.append(f"{indent}{name} = {expr}")
            scope.append(name)
        elif kind == "aug":
            lines.append(f"{indent}{draw(st.sampled_from(scope))} += {expr}")
        elif kind == "store":
            lines.append(f"{indent}tl.store(out + offs, {expr}, mask=mask)")
        elif kind == "assert":
            lines.append(f"{indent}{draw(st.sampled_from(['tl.static_assert', 'assert ']))}"
                         f"({expr})")
        elif kind == "odd":
            lines.append(indent + draw(st.sampled_from([
                f"del {expr}", "global a", f"with {expr}: pass", "try:\n" + indent
                + "    pass\n" + indent + "except Exception: pass", f"x[0] = {expr}",
                f"({expr}).attr = 1", "return", f"return {expr}", "import os", f"yield {expr}",
                f"[q for q in {expr}]", f"a, b = {expr}", f"tl.device_assert({expr})"])))
        else:  # loops are bounded: a fuzzed kernel must not run forever
            if kind == "while":
                lines.append(f"{indent}w{depth} = 0")
            lines.append(indent + {
                "if": f"if {expr}:",
                "for": f"for i{depth} in range({draw(st.sampled_from(['3', 'n', 'pid']))}):",
                "static_for": f"for i{depth} in tl.static_range(2):",
                "while": f"while w{depth} < 3 and {expr}:",
            }[kind])
            lines += draw(statements(scope, indent + "    ", depth + 1))
            if kind == "while":
                lines.append(f"{indent}    w{depth} += 1")
            if kind == "if" and draw(st.booleans()):
                lines.append(f"{indent}else:")
                lines += draw(statements(scope, indent + "    ", depth + 1))
    return lines


@st.composite
def kernel_sources(draw) -> str:
    """The source of a module defining one kernel, ``fuzzed(x, y, out, n, BLOCK)``."""
    scope = list(NAMES)
    body = draw(statements(scope, "    "))
    last = draw(expressions(scope))
    return PROLOGUE + "\n".join(body) + f"\n    tl.store(out + offs, {last}, mask=mask)\n"


DTYPES = [np.float32, np.float16, np.int32, np.int8, np.uint8, np.uint32, np.int16,
          np.float64, np.int64, np.bool_, np.complex64]


@st.composite
def arrays(draw) -> object:
    dtype = draw(st.sampled_from(DTYPES))
    size = draw(st.sampled_from([0, 1, 16, 64, 100]))
    arr = (np.arange(size) % 7).astype(dtype)
    shape = draw(st.sampled_from(["flat", "2d", "strided"]))
    if shape == "2d" and size % 4 == 0 and size:
        return arr.reshape(4, -1)
    return arr[::2] if shape == "strided" else arr


ODD_VALUES = [None, "s", [1, 2], {"k": 1}, 1.5, -1, 2**70, object(), (16,), np.int64(64),
              np.float16(2), True]


@st.composite
def launch_args(draw) -> tuple[tuple, dict, object]:
    """(positional args, keyword args, grid) for ``fuzzed``: mostly fitting, sometimes not."""
    values = st.one_of(arrays(), st.sampled_from(ODD_VALUES))
    x, y, out = (draw(st.one_of(arrays(), arrays(), values)) for _ in range(3))
    n = draw(st.one_of(st.sampled_from([0, 16, 64, 100]), values))
    block = draw(st.sampled_from([16, 16, 64, 64, 3, 0, -16, "a", None, 1.5, [16], (16,),
                                  np.int32(16), 2**40, True]))
    grid = draw(st.sampled_from([(1,), (2,), (1, 1, 1), (), (0,), (-1,), (1, 2, 3, 4), "g",
                                 None, 2, (1.5,), lambda meta: (1,)]))
    args: tuple = (x, y, out, n)
    if draw(st.integers(0, 9)) == 0:
        args = args[:draw(st.integers(0, 3))]
    kwargs = {"BLOCK": block}
    if draw(st.integers(0, 9)) == 0:
        kwargs[draw(st.sampled_from(["num_warps", "bogus", "x", "num_stages"]))] = \
            draw(st.sampled_from([3, 0, "s", None, 4]))
    return args, kwargs, grid
