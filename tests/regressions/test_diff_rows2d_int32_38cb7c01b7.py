"""Found by scripts/difftest.py (minimized): ['ptx'] disagreed with numpy:
ptx: 55 of 105 differ; first at (0, 0): np.int32(-848) vs np.int32(848)"""

from tests.progen import Program, assert_backends_agree

PROGRAM = Program.from_json('{"dtype": "int32", "expr": ["tl.minimum({}, {})", ["a"], ["tl.minimum({}, {})", ["a"], ["(-{})", ["a"]]]], "kind": "rows2d", "params": {"BM": 4, "BN": 32, "M": 5, "N": 21, "bexp": "[None, :]", "bidx": "rn", "bmask": "rn < N"}, "seed": 954104385}')


def test_backends_agree():
    assert_backends_agree(PROGRAM, ['ptx'])
