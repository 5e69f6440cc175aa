"""Found by scripts/difftest.py on an H200 through NVIDIA's Vulkan driver (580.159):
wgsl disagreed with numpy and ptx on ``b.to(tl.int8).to(tl.uint32) % tl.where(b == 0, 1, b)``
(scan: 123 of 198 elements; reduce: 3 of 20). lavapipe agreed.

The driver's fault, found by storing each intermediate: the sign-extended byte and the
divisor were right, their unsigned remainder was not, wherever the byte's top bit was set
(203 -> 1036, where the remainder must be below 203). With the byte sign-extended by two
shifts instead of ``extractBits``, every element was right. The WGSL emitter now
sign-extends by shifts everywhere (``backends.wgsl.core.sign_extend``); the last test
keeps it so. ``SHIFTS`` is what difftest found while the shifts' operand lacked
parentheses (``v & 3i << 16u`` shifts the 3)."""

import re

import compiler as tc
import compiler.language as tl
from tests.progen import Program, assert_backends_agree

SCAN = Program.from_json('{"dtype": "uint32", "expr": ["({0} % tl.where({1} == 0, 1, {1}))", ["{}.to(tl.int8).to(tl.uint32)", ["b"]], ["b"]], "kind": "scan", "params": {"BM": 2, "BN": 16, "M": 18, "N": 11, "axis": "1", "scan": "cumsum"}, "seed": 1085947905}')
REDUCE = Program.from_json('{"dtype": "uint32", "expr": ["({0} % tl.where({1} == 0, 1, {1}))", ["{}.to(tl.int8).to(tl.uint32)", ["a"]], ["b"]], "kind": "reduce", "params": {"BM": 8, "BN": 16, "M": 20, "N": 14, "neutral": "4294967295", "out": "uint32", "reduce": "min"}, "seed": 128602346}')

SHIFTS = Program.from_json('{"dtype": "int16", "expr": ["({} >> ({} & 3))", ["b"], ["b"]], "kind": "scan", "params": {"BM": 1, "BN": 64, "M": 2, "N": 47, "axis": "1", "scan": "cumprod"}, "seed": 406905816}')


def test_scan_agrees():
    assert_backends_agree(SCAN, ["wgsl", "ptx"])


def test_reduce_agrees():
    assert_backends_agree(REDUCE, ["wgsl", "ptx"])


def test_narrow_operands_of_shifts_agree():
    assert_backends_agree(SHIFTS, ["wgsl", "ptx"])


@tc.kernel
def narrow(x, y, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs).to(tl.int8).to(tl.uint32) % tl.load(y + offs)
    h = tl.load(x + offs).to(tl.int16)
    tl.store(out + offs, v + h.to(tl.uint32))


def test_wgsl_sign_extends_without_extract_bits():
    ck = tc.compile(narrow, signature="*u32,*u32,*u32", constants={"BLOCK": 128},
                    backend="wgsl")
    text = ck.asm["wgsl"]
    assert not re.search(r"extractBits\(", text), text
    assert ") << 24u) >> 24u)" in text and ") << 16u) >> 16u)" in text
