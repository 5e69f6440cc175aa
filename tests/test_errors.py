"""Errors point at the user's line, with a caret, and carry no compiler-internal frames."""

import traceback
from pathlib import Path

import numpy as np
import pytest

import compiler as tc
from tests import bad_kernels as B

SOURCE = Path(B.__file__).read_text().splitlines()


def line_of(tag: str) -> int:
    return next(i for i, line in enumerate(SOURCE, 1) if f"# {tag}" in line)


CASES = [
    (B.load_int, "LOAD_INT", "tl.load expects a pointer, got tile<64, int32>", (1,)),
    (B.bad_arange, "BAD_ARANGE", "arange length must be a power of two, got 100", ()),
    (B.undefined_name, "UNDEFINED", "name 'nope' is not defined", ()),
    (B.float_shift, "FLOAT_SHIFT", "operator << is not defined for floating-point", ()),
    (B.runtime_if, "RUNTIME_IF", "if needs a scalar condition, got tile<", (1,)),
    (B.shape_mismatch, "SHAPE", "shape mismatch", ()),
    (B.static_fail, "STATIC", "static_assert failed: BLOCK too small", ()),
    (B.python_call, "PYCALL", "cannot call 'print' in a kernel", ()),
]


@pytest.mark.parametrize("kernel,tag,message,extra", CASES, ids=[c[1] for c in CASES])
def test_compile_error_points_at_source(kernel, tag, message, extra):
    x = np.zeros(64, dtype=np.float32)
    with pytest.raises(tc.CompileError) as info:
        kernel[(1,)](x, *extra, BLOCK=64, backend="numpy")
    text = str(info.value)
    assert f"tests/bad_kernels.py:{line_of(tag)}:" in text
    assert message in text
    source_line = SOURCE[line_of(tag) - 1].strip()
    assert source_line in text and "^" in text.splitlines()[-1]
    frames = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    internal = ("compiler/frontend/", "compiler/source.py", "pipeline.py", "passes", "xdsl")
    assert not [f for f in frames if any(k in f for k in internal)], frames


def test_caret_is_under_the_column():
    x = np.zeros(64, dtype=np.float32)
    with pytest.raises(tc.CompileError) as info:
        B.load_int[(1,)](x, 1, BLOCK=64, backend="numpy")
    lines = str(info.value).splitlines()
    col = int(lines[0].split(":")[2])
    src = SOURCE[line_of("LOAD_INT") - 1]
    stripped = src.strip()
    indent = len(src) - len(src.lstrip())
    assert lines[-1].index("^") - 4 == col - 1 - indent
    assert stripped[col - 1 - indent:].startswith("tl.load")


def test_error_classes_are_tilec_errors():
    for cls in (tc.CompileError, tc.UnsupportedError, tc.LaunchError,
                tc.BackendUnavailableError, tc.VerificationError, tc.OutOfBoundsError):
        assert issubclass(cls, tc.TilecError)
        assert cls.__module__ == "tilec"
