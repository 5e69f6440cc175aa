"""Occupancy on PTX: how many programs an SM holds, and the register cap ``generate`` asks
ptxas for (``.minnctapersm``) when a kernel is a few registers above full occupancy."""

import pytest

import compiler as tc
from backends.ptx.assemble import assemble_counting
from backends.ptx.occupancy import programs_per_sm, register_cap
from examples import attention
from examples.layernorm import layernorm
from examples.matmul import matmul
from examples.softmax import softmax

LAYERNORM = "*f32,*f32,*f32,*f32,*f32,*f32,i32:16,fp32"


@pytest.mark.parametrize("registers, threads, shared, programs", [
    (43, 512, 0, 2),  # 48 a thread granted: 24,576 a program
    (32, 512, 0, 4),  # every thread the SM has
    (32, 128, 0, 16),
    (16, 64, 0, 32),  # at most 32 programs
    (32, 128, 100 * 1024, 2),  # shared memory: 2 of 101 KB fit 228 KB
])
def test_programs_per_sm(registers, threads, shared, programs):
    assert programs_per_sm(registers, threads, shared) == programs


@pytest.mark.parametrize("registers, threads, shared, cap", [
    (43, 512, 0, (4, 32)),  # 16-warp layernorm: a third fewer registers for 4 programs
    (32, 512, 0, None),  # already 4
    (60, 512, 0, None),  # 32 is too far below 60
    (40, 256, 100 * 1024, None),  # shared memory, not registers, allows 2
    (70, 256, 0, (4, 64)),  # not 8 programs (32 registers: too far), but 4
    (36, 256, 0, None),  # 6 programs, 48 warps: enough overlap, a cap would take loads
    (36, 512, 0, (4, 32)),  # 3 programs
    (77, 128, 0, None),  # 4-warp softmax: 6 programs, 24 warps
    (255, 32, 0, (11, 184)),  # 8 programs, but of one warp each: 8 warps
    (108, 32, 0, None),  # one-warp 64x64 transpose: 18 programs, 18 warps
    (133, 256, 66 * 1024, (2, 128)),  # causal attention: shared memory allows 3, 85 is far
])
def test_register_cap(registers, threads, shared, cap):
    assert register_cap(registers, threads, shared) == cap


def test_layernorm_at_16_warps_asks_for_four_programs_per_sm():
    ck = tc.compile(layernorm, backend="ptx", target="sm_90", signature=LAYERNORM,
                    constants={"BLOCK": 4096}, num_warps=16)
    assert ".minnctapersm 4" in ck.asm["ptx"]


def test_softmax_at_4_warps_already_holding_six_programs_is_not_capped():
    """With its 77 registers a thread, 6 programs (24 warps) fit an SM; a cap for 9 cost 2% on
    an H200 (``occupancy``'s text), so it is not asked for."""
    ck = tc.compile(softmax, backend="ptx", target="sm_90", signature="*f32,*f32" + ",i32:16" * 3,
                    constants={"BLOCK": 4096}, num_warps=4)
    built = assemble_counting(ck.asm["ptx"], "sm_90")
    assert register_cap(built.registers, 128, 0) is None
    assert ".minnctapersm" not in ck.asm["ptx"]


def test_kernels_far_from_more_programs_are_not_capped():
    """The 128x256 wgmma matmul needs over 200 registers: one program per SM it stays."""
    ck = tc.compile(matmul, backend="ptx", target="sm_90", num_warps=8, num_stages=3,
                    signature="*f16,*f16,*f16" + ",i32:16" * 6,
                    constants={"BM": 128, "BN": 256, "BK": 64, "GROUP": 8, "ACTIVATION": ""})
    assert ".minnctapersm" not in ck.asm["ptx"]


@pytest.mark.parametrize("causal", [False, True])
def test_attention_at_8_warps_fits_two_programs_per_sm(causal):
    """The swizzled index Q is stored with before the loops is the output's after them
    (cse makes them one); ``rematerialize`` computes it again after the loops, so its 32
    registers are not live through them and 8 warps fit 128 registers a thread (146 and
    164 before): two programs an SM with no register cap, nothing spilled."""
    ck = tc.compile(attention.attention_descriptor, backend="ptx", target="sm_90",
                    num_warps=8, signature="*f16,*f16,*f16,*f16,fp32,i32,i32",
                    constants={"CAUSAL": causal, "BM": 128, "BN": 64, "D": 64})
    built = assemble_counting(ck.asm["ptx"], "sm_90a")
    assert ".minnctapersm" not in ck.asm["ptx"]
    assert built.registers <= 128 and built.spilled == 0
