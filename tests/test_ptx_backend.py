"""The PTX backend: hand-written SIMT IR -> simt-to-ptx -> PTX text -> nvJitLink cubin for
sm_90 (runs anywhere, no GPU needed), and launches compared with NumPy (marked gpu; they
skip with the availability reason when no CUDA device is present)."""

import functools
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import backends.ptx as ptx_backend
import compiler as tc
import compiler.language as tl
from backends.ptx.assemble import assemble
from backends.ptx.lower_core import BYTES
from backends.ptx.printer import print_ptx
from backends.ptx.simt_to_ptx import SimtToPtx
from compiler.context import make_context
from compiler.errors import CompileError, LaunchError, UnsupportedError
from compiler.kinfo import KernelInfo, Param
from dialects import simt
from dialects.ptx import PTX
from dialects.tile import PtrType
from tests.conftest import launch

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

WARPS = 1
THREADS = 32 * WARPS
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
      "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "bf16": ml_dtypes.bfloat16 if ml_dtypes else None}
UNSIGNED = {"i8": np.uint8, "i16": np.uint16, "i32": np.uint32, "i64": np.uint64}
INTS, FLOATS = ("i8", "i16", "i32", "i64"), ("f16", "bf16", "f32", "f64")

# -- building kernels -----------------------------------------------------------------------


def context():
    ctx = make_context()
    if "ptx" not in {d.name for d in ctx.loaded_dialects}:
        ctx.load_dialect(PTX)
    return ctx


def kernel_ir(body: str, src: str, dst: str, k: int = 8, vec: int = 4) -> str:
    """A 1-D kernel: ``%a = x[offs]``, ``%b = y[offs]`` (dtype ``src``, masked by
    ``offs < n``), ``body`` computes ``%r`` (dtype ``dst``), stored to ``o[offs]``.
    ``body`` may use {T} (the loaded vector type), {R} (the result's) and {M} (the mask's)."""
    block = k * THREADS
    lanes = [c * THREADS * vec + j for c in range(k // vec) for j in range(vec)]
    one = {"i1": "true"}.get(src, "1.0" if src in FLOATS else "1")
    T, R, M = f"vector<{k}x{src}>", f"vector<{k}x{dst}>", f"vector<{k}xi1>"
    iv, access = f"vector<{k}xi32>", f"{{vec = {vec} : i32}}"
    return f"""func.func @k(%x: !tile.ptr<{src}>, %y: !tile.ptr<{src}>, %o: !tile.ptr<{dst}>, \
%n: i32) attributes {{simt.num_warps = {WARPS} : i32}} {{
  %pid = tile.program_id 0 : i32
  %blk = arith.constant {block} : i32
  %base = arith.muli %pid, %blk : i32
  %tid = simt.thread_id : i32
  %cv = arith.constant {vec} : i32
  %t = arith.muli %tid, %cv : i32
  %tb = vector.broadcast %t : i32 to {iv}
  %lanes = arith.constant dense<{lanes}> : {iv}
  %r0 = arith.addi %tb, %lanes : {iv}
  %bb = vector.broadcast %base : i32 to {iv}
  %offs = arith.addi %bb, %r0 : {iv}
  %nb = vector.broadcast %n : i32 to {iv}
  %m = tile.cmpi "slt", %offs, %nb : {iv} -> {M}
  %z = arith.constant dense<{one}> : {T}
  %a = simt.load %x[%offs] mask %m : {M} other %z {access} : !tile.ptr<{src}>, {iv} -> {T}
  %b = simt.load %y[%offs] mask %m : {M} other %z {access} : !tile.ptr<{src}>, {iv} -> {T}
  {body.format(T=T, R=R, M=M)}
  simt.store %o[%offs], %r mask %m : {M} {access} : !tile.ptr<{dst}>, {iv}, {R}
  func.return
}}"""


def kernel_info(module: ModuleOp) -> KernelInfo:
    kernel = next(iter(module.ops))
    written = {op.base for op in kernel.walk() if isinstance(op, simt.StoreOp)}
    params = []
    for arg in kernel.body.block.args:
        ptr = isinstance(arg.type, PtrType)
        t = arg.type.pointee if ptr else arg.type
        params.append(Param(arg.name_hint, str(t), ptr, arg in written))
    return KernelInfo(kernel.sym_name.data, params, "ptx", "sm_90", num_warps=WARPS)


def lower(ir: str, arch: str = "sm_90") -> tuple[ModuleOp, str, KernelInfo]:
    module = Parser(context(), ir).parse_module()
    module.verify()
    info = kernel_info(module)
    SimtToPtx().apply(context(), module)
    module.verify()
    return module, print_ptx(module, arch), info


def build(ir: str, arch: str = "sm_90") -> tuple[str, bytes, KernelInfo]:
    _, text, info = lower(ir, arch)
    cubin = assemble(text, arch)
    assert cubin[:4] == b"\x7fELF"
    return text, cubin, info


BINARY = "%r = arith.{op} %a, %b : {{T}}"
UNARY = "%r = {op} %a : {{T}}"
CAST = "%r = arith.{op} %a : {{T}} to {{R}}"
INT_OPS = ("addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori",
           "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui")
FLOAT_OPS = ("addf", "subf", "mulf", "divf", "maximumf", "minimumf")
MATH = ("math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt",
        "math.sin", "math.cos", "math.absf", "math.floor", "math.ceil", "math.trunc",
        "arith.negf")
F64_MATH = ("math.sqrt", "math.rsqrt", "math.absf", "math.floor", "math.ceil", "math.trunc",
            "arith.negf")
CASTS = [("sitofp", "i32", "f32"), ("uitofp", "i32", "f32"), ("sitofp", "i8", "f16"),
         ("sitofp", "i64", "f64"), ("sitofp", "i32", "bf16"), ("uitofp", "i16", "f32"),
         ("fptosi", "f32", "i32"), ("fptoui", "f32", "i32"), ("fptosi", "f16", "i8"),
         ("fptosi", "bf16", "i32"), ("fptosi", "f64", "i64"), ("extf", "f16", "f32"),
         ("extf", "f32", "f64"), ("extf", "bf16", "f64"), ("truncf", "f32", "f16"),
         ("truncf", "f64", "f32"), ("truncf", "f32", "bf16"), ("truncf", "f64", "bf16"),
         ("extsi", "i32", "i64"), ("extsi", "i8", "i32"), ("extui", "i8", "i32"),
         ("extsi", "i8", "i16"), ("trunci", "i64", "i32"), ("trunci", "i32", "i8"),
         ("trunci", "i16", "i8"), ("bitcast", "f32", "i32"), ("bitcast", "i16", "f16"),
         ("uitofp", "i1", "f32"), ("sitofp", "i1", "f16"), ("extui", "i1", "i32"),
         ("extsi", "i1", "i8"), ("trunci", "i32", "i1"), ("trunci", "i8", "i1"),
         ("fptoui", "f32", "i1"), ("fptosi", "f16", "i1"), ("fptoui", "bf16", "i1")]

# -- CI: lower, print and assemble for sm_90 ---------------------------------------------------


def test_vector_add_uses_v4_accesses_when_vec_is_4():
    text, _, _ = build(kernel_ir(BINARY.format(op="addf"), "f32", "f32", vec=4))
    assert text.count("ld.global.v4.f32") == 4  # two groups of 4 lanes, two inputs
    assert text.count("st.global.v4.f32") == 2
    assert re.search(r"@%p\d+ ld\.global\.v4\.f32 \{%f\d+, %f\d+, %f\d+, %f\d+\}", text)
    assert ".maxntid 32, 1, 1" in text and ".target sm_90" in text


@pytest.mark.parametrize("vec, wide", [(1, None), (2, ".v2")])
def test_access_width_follows_vec(vec, wide):
    text, _, _ = build(kernel_ir(BINARY.format(op="addf"), "f32", "f32", vec=vec))
    assert ".v4" not in text
    assert (wide is None and ".v2" not in text) or text.count(f"ld.global{wide}.f32") == 8
    assert text.count("st.global") == 8 // vec


def test_masked_load_moves_other_then_guards():
    text, _, _ = build(kernel_ir(BINARY.format(op="addf"), "f32", "f32", k=4, vec=4))
    lines = text.splitlines()
    load = next(i for i, ln in enumerate(lines) if "ld.global.v4" in ln)
    regs = re.findall(r"%f\d+", lines[load])[:4]
    for reg in regs:  # each destination register gets `other` before the guarded load
        assert any(re.match(rf"\s*mov\.f32 {reg}, %f\d+;", ln) for ln in lines[:load])


# 8 or 16 lanes of 8 or 16 bits: more than a PTX vector's 4 elements, so 32-bit words
WORD_ACCESSES = [("f16", 8, "v4"), ("bf16", 8, "v4"), ("i16", 8, "v4"), ("i8", 8, "v2"),
                 ("i8", 16, "v4"), ("i1", 16, "v4")]
ADD = {"i1": "xori", "i8": "addi", "i16": "addi", "f16": "addf", "bf16": "addf"}


@pytest.mark.parametrize("dt, vec, wide", WORD_ACCESSES)
def test_narrow_lanes_move_as_words(dt, vec, wide):
    text, _, _ = build(kernel_ir(BINARY.format(op=ADD[dt]), dt, dt, k=16, vec=vec))
    groups = 16 // vec
    assert text.count(f"ld.global.{wide}.b32") == 2 * groups
    assert text.count(f"st.global.{wide}.b32") == groups
    assert re.search(rf"@%p\d+ ld\.global\.{wide}\.b32 \{{%r\d+(, %r\d+)+\}}, \[%rd\d+\]", text)
    if BYTES[dt] == 2:  # halves: split and joined by mov.b32, one word per line
        assert re.search(r"\tmov\.b32 \{%(h|rs)\d+, %(h|rs)\d+\}, %r\d+;\n", text)
        assert re.search(r"\tmov\.b32 %r\d+, \{%(h|rs)\d+, %(h|rs)\d+\};\n", text)
    else:  # bytes: packed by prmt, split by shr
        assert "prmt.b32" in text and "shr.u16" in text


def test_word_bools_test_only_their_byte():
    """A bool split from a loaded word has the next lane's bool in its register's upper
    byte: only the zero-extended low byte decides it (one cvt per lane, before setp)."""
    text, _, _ = build(kernel_ir(BINARY.format(op="xori"), "i1", "i1", k=16, vec=16))
    tests = re.findall(r"setp\.ne\.u16 %p\d+, (%rs\d+), %rs\d+;", text)
    assert len(tests) == 32
    assert all(re.search(rf"cvt\.u16\.u8 {reg}, %rs\d+;", text) for reg in tests)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_shared_accesses_move_vec_lanes_at_once(arch):
    ir = (Path(__file__).parent / "filecheck" / "ptx" / "shared_vec.mlir").read_text()
    text, _, _ = build(ir, arch)
    words = r"\{%r\d+, %r\d+, %r\d+, %r\d+\}"
    assert len(re.findall(rf"\tst\.shared\.v4\.b32 \[%r\d+\], {words};", text)) == 1
    assert len(re.findall(rf"@%p\d+ st\.shared\.v4\.b32 \[%r\d+\], {words};", text)) == 1
    assert len(re.findall(rf"ld\.shared\.v4\.b32 {words}, \[%r\d+\];", text)) == 2
    assert text.count("st.shared.v4.f32") == 2
    assert not re.search(r"(ld|st)\.shared\.(b16|u8|f32|b32) ", text)


def test_matmul_stages_f16_operands_in_128_bit_stores():
    """examples/matmul.py in f16 on tensor cores (128 x 128 x 32, 8 warps), not pipelined:
    a thread's 16 elements of A and of B are two runs of 8 along a staged row, stored as
    4 x v4.b32. Pipelined, they go to shared memory by 16-byte cp.async instead."""
    from examples.matmul import matmul
    a, b, c = (np.zeros((256, 256), np.float16) for _ in range(3))
    args = (a, b, c, 256, 256, 256, 256, 256, 256, 128, 128, 32, 8, "", "ieee")
    text = tc.compile(matmul, args=args, backend="ptx", num_warps=8, num_stages=1).asm["ptx"]
    assert text.count("st.shared.v4.b32") == 4
    assert "st.shared.b16" not in text
    text = tc.compile(matmul, args=args, backend="ptx", num_warps=8).asm["ptx"]
    assert "st.shared" not in text.split("$L__for")[1]  # the k loop stores nothing itself
    assert text.count("cp.async.cg.shared.global") == 2 * 4  # prologue and loop, A and B


@tc.kernel
def copy_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m), mask=m)


@tc.kernel
def tile_kernel(a, out, stride, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    offs = rm[:, None] * stride + rk[None, :]
    tl.store(out + offs, tl.load(a + offs) * 2)


@pytest.mark.parametrize("dt, wide", [("f16", "v4"), ("bf16", "v4"), ("i8", "v4")])
def test_copy_kernel_uses_128_bit_accesses(dt, wide):
    ck = tc.compile(copy_kernel, signature=f"*{dt},*{dt},i32:16", constants={"BLOCK": 2048},
                    backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert re.search(rf"@%p\d+ ld\.global\.{wide}\.b32", ck.asm["ptx"])
    assert re.search(rf"@%p\d+ st\.global\.{wide}\.b32", ck.asm["ptx"])


@pytest.mark.parametrize("dt", ["f16", "i8"])
def test_2d_tile_uses_word_accesses(dt):
    ck = tc.compile(tile_kernel, signature=f"*{dt},*{dt},i32:16",
                    constants={"BM": 64, "BK": 32}, backend="ptx")
    assert ck.asm["cubin"][:4] == b"\x7fELF"
    assert "ld.global.v4.b32" in ck.asm["ptx"] and "st.global.v4.b32" in ck.asm["ptx"]


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("op", INT_OPS)
def test_integer_ops_assemble(op, dt):
    build(kernel_ir(BINARY.format(op=op), dt, dt))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_ops_assemble(op, dt):
    text, _, _ = build(kernel_ir(BINARY.format(op=op), dt, dt))
    if dt == "bf16":  # bf16 arithmetic needs sm_90: it runs in f32
        assert "cvt.f32.bf16" in text and "cvt.rn.bf16.f32" in text


@pytest.mark.parametrize("dt", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("op", MATH)
def test_math_ops_assemble(op, dt):
    build(kernel_ir(UNARY.format(op=op), dt, dt))


@pytest.mark.parametrize("op", F64_MATH)
def test_f64_math_assembles(op):
    build(kernel_ir(UNARY.format(op=op), "f64", "f64"))


def test_fast_math_follows_triton():
    text, _, _ = build(kernel_ir(UNARY.format(op="math.exp"), "f32", "f32"))
    assert "mul.f32" in text and "0f3FB8AA3B" in text and "ex2.approx.ftz.f32" in text
    text, _, _ = build(kernel_ir(UNARY.format(op="math.log"), "f32", "f32"))
    assert "lg2.approx.ftz.f32" in text and "0f3F317218" in text
    text, _, _ = build(kernel_ir(BINARY.format(op="divf"), "f32", "f32"))
    assert "div.rn.f32" in text


@pytest.mark.parametrize("dt", ["f16", "bf16", "f32", "f64"])
def test_fma_and_powf_assemble(dt):
    build(kernel_ir("%r = math.fma %a, %b, %a : {T}", dt, dt))
    if dt != "f64":
        build(kernel_ir("%r = math.powf %a, %b : {T}", dt, dt))


@pytest.mark.parametrize("op, src, dst", CASTS)
def test_casts_assemble(op, src, dst):
    text, _, _ = build(kernel_ir(CAST.format(op=op), src, dst))
    if op == "fptosi" and src == "f32":
        assert "cvt.rzi.s32.f32" in text
    if op == "sitofp" and src == "i32":
        assert "cvt.rn.f32.s32" in text


@pytest.mark.parametrize("dt", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("pred", ["oeq", "one", "olt", "ole", "ogt", "oge", "ord", "ueq",
                                  "une", "ult", "ule", "ugt", "uge", "uno"])
def test_cmpf_stores_bools(pred, dt):
    text, _, _ = build(kernel_ir(f'%r = tile.cmpf "{pred}", %a, %b : {{T}} -> {{R}}', dt, "i1"))
    assert "st.global.v4.u8" in text  # bools are bytes in memory


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("pred", ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule",
                                  "ugt", "uge"])
def test_cmpi_assembles(pred, dt):
    build(kernel_ir(f'%r = tile.cmpi "{pred}", %a, %b : {{T}} -> {{R}}', dt, "i1"))


@pytest.mark.parametrize("dt", ["i1", "i8", "f16", "f32", "f64", "i64"])
def test_select_assembles(dt):
    cmp = 'tile.cmpf "une"' if dt[0] == "f" else 'tile.cmpi "ne"'
    body = (f"%c = {cmp}, %a, %b : {{T}} -> {{M}}\n  %r = tile.select %c, %a, %b : {{M}}, {{T}}"
            if dt != "i1" else "%r = tile.select %a, %b, %a : {M}, {T}")
    build(kernel_ir(body, dt, dt))


@pytest.mark.parametrize("op", ["andi", "ori", "xori", "addi", "maxsi"])
def test_bool_logic_is_predicate_logic(op):
    text, _, _ = build(kernel_ir(BINARY.format(op=op), "i1", "i1"))
    assert re.search(r"(and|or|xor)\.pred", text)
    assert "ld.global.v4.u8" in text and "setp.ne.u16" in text


def test_scalar_params_and_scalar_access():
    ir = """func.func @s(%o: !tile.ptr<f16>, %h: f16, %d: f64, %q: i64, %f: i1, %u: i8) \
attributes {simt.num_warps = 2 : i32} {
  %px = tile.program_id 0 : i32
  %py = tile.program_id 1 : i32
  %nz = tile.num_programs 2 : i32
  %i = arith.addi %px, %py : i32
  %j = arith.addi %i, %nz : i32
  %w = arith.truncf %d : f64 to f16
  %v = arith.addf %h, %w : f16
  %z = arith.constant 0.0 : f16
  %s = tile.select %f, %v, %z : i1, f16
  simt.store %o[%j], %s : !tile.ptr<f16>, i32, f16
  func.return
}"""
    text, _, _ = build(ir)
    for decl in (".param .u64 s_param_0", ".param .b16 s_param_1", ".param .f64 s_param_2",
                 ".param .u64 s_param_3", ".param .u8 s_param_4", ".param .u8 s_param_5"):
        assert decl in text
    assert "%ctaid.y" in text and "%nctaid.z" in text and ".maxntid 64, 1, 1" in text
    assert re.search(r"st\.global\.b16 \[%rd\d+\], %h\d+;", text)


def test_ir_stays_proportional_to_simt():
    module, text, _ = lower(kernel_ir(BINARY.format(op="addf"), "f32", "f32", k=64, vec=4))
    ops = sum(1 for _ in module.walk())
    assert ops < 80  # one op per SIMT op (plus params and picks), not one per lane
    assert text.count("add.rn.f32") == 64


def test_source_locations_become_comments():
    ir = kernel_ir('%r = arith.addf %a, %b : {T} loc("kern.py":7:9)', "f32", "f32")
    ir = ir.replace(": !tile.ptr<f32>, vector<8xi32>, vector<8xf32>\n",
                    ': !tile.ptr<f32>, vector<8xi32>, vector<8xf32> loc("kern.py":8:5)\n')
    text, _, _ = build(ir)
    lines = text.splitlines()
    first, second = lines.index("\t// kern.py:7"), lines.index("\t// kern.py:8")
    assert all("add.rn.f32" in ln for ln in lines[first + 1:second])
    store = lines[second + 1:lines.index("\tret;")]  # the store and its address arithmetic
    assert sum("st.global" in ln for ln in store) == 2 and "add.s64" in store[0]


def test_immediates_are_exact():
    body = ("%c = arith.constant dense<[4294967295, -2147483648, 7, 0]> : vector<4xi32>\n"
            "  %r = arith.xori %a, %c : {T}")
    text, _, _ = build(kernel_ir(body, "i32", "i32", k=4))
    for imm in ("-1", "-2147483648", "7", "0"):
        assert re.search(rf"mov\.s32 %r\d+, {imm};", text)
    text, _, _ = build(kernel_ir("%c = arith.constant dense<-1.5> : {T}\n"
                                 "  %r = arith.mulf %a, %c : {T}", "f16", "f16"))
    assert re.search(r"mov\.b16 %h\d+, 0xBE00;", text)


def test_printer_keeps_no_state_between_kernels():
    module, text, _ = lower(kernel_ir(BINARY.format(op="addf"), "f32", "f32"))
    assert print_ptx(module) == text
    assert print_ptx(module, "sm_80").replace(".target sm_80", ".target sm_90") == text


def test_sm80_assembles_and_old_targets_are_refused():
    _, text, _ = lower(kernel_ir(BINARY.format(op="maximumf"), "bf16", "bf16"), "sm_80")
    assert assemble(text, "sm_80")[:4] == b"\x7fELF"
    module, _, _ = lower(kernel_ir(BINARY.format(op="addf"), "f32", "f32"))
    with pytest.raises(UnsupportedError, match="sm_75"):
        print_ptx(module, "sm_75")


@pytest.mark.parametrize("op", ["math.exp", "math.log", "math.sin", "math.exp2"])
def test_f64_transcendentals_are_unsupported(op):
    ir = kernel_ir(f'%r = {op} %a : {{T}} loc("kern.py":12:11)', "f64", "f64")
    with pytest.raises(UnsupportedError) as e:
        lower(ir)
    assert f"{op} on f64 is not supported by the ptx backend" in str(e.value)
    assert str(e.value).startswith("kern.py:12:11: ")


def test_unsupported_op_names_op_and_line():
    ir = kernel_ir('%r = math.tanh %a : {T} loc("kern.py":3:4)', "f32", "f32")
    with pytest.raises(UnsupportedError, match=r"^kern\.py:3:4: operation math\.tanh is not"):
        lower(ir)


def test_bad_ptx_error_carries_nvjitlink_log():
    _, text, _ = lower(kernel_ir(BINARY.format(op="addf"), "f32", "f32"))
    lines = text.splitlines()
    bad = next(i for i, ln in enumerate(lines) if "add.rn.f32" in ln)
    lines[bad] = lines[bad].replace("add.rn.f32", "add.rn.bogus")
    with pytest.raises(CompileError) as e:
        assemble("\n".join(lines))
    assert "ptxas" in str(e.value) and f"line {bad + 1}" in str(e.value)


# -- CI: the launcher's argument handling (no device needed) ---------------------------------


@pytest.mark.parametrize("grid", [(0, 1, 1), (1, -1, 1), (1, 1, 65536), (2**31, 1, 1),
                                  (4, 1), ("a", 1, 1)])
def test_bad_grids_are_launch_errors(grid):
    with pytest.raises(LaunchError, match="grid"):
        ptx_backend._check_grid(grid)


@pytest.mark.parametrize("dtype, value, ok", [
    ("i32", 2**31 - 1, True), ("i32", 2**31, False), ("i32", np.int64(-5), True),
    ("u32", -1, False), ("u32", 2**32 - 1, True), ("i8", 128, False), ("i1", True, True),
    ("i64", 2**63, False), ("i32", 1.5, False), ("f32", "x", False)])
def test_scalar_arguments_are_range_checked(dtype, value, ok):
    if ok:
        assert store_scalar(dtype, value) == int(value)
    else:
        with pytest.raises(LaunchError, match="'n'"):
            store_scalar(dtype, value)


def store_scalar(dtype: str, value) -> int | float:
    """What a launch stores in the parameter slot of a ``dtype`` scalar for ``value``."""
    slot = ptx_backend._SLOT_TYPES[dtype]()
    make = functools.partial(ptx_backend._scalar_put, Param("n", dtype, False), slot, 0)
    ptx_backend._Puts(make)[type(value)](value)
    return slot.value


def test_half_scalars_are_passed_as_bits(rng):
    for x in rng.standard_normal(20).astype(np.float32):
        assert store_scalar("f16", float(x)) == int(np.float16(x).view(np.uint16))
        assert store_scalar("f32", x) == float(x)
        if ml_dtypes is not None:
            assert ptx_backend.bf16_bits(float(x)) == int(
                np.asarray(x, ml_dtypes.bfloat16).view(np.uint16))


def test_a_strided_numpy_argument_is_staged_whole():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    p = Param("x", "f32", True)
    assert ptx_backend._span(p, a) is a
    span = ptx_backend._span(p, a[1:, ::2])  # from its first element to its last
    assert span.ctypes.data == a[1:, ::2].ctypes.data
    np.testing.assert_array_equal(span, np.arange(6, 23, dtype=np.float32))
    with pytest.raises(LaunchError, match="'x'.*negative strides"):
        ptx_backend._span(p, a[::-1])


def test_availability_is_a_one_line_reason():
    ok, why = ptx_backend.availability()
    assert isinstance(ok, bool) and why and "\n" not in why


# -- GPU: launch and compare with NumPy --------------------------------------------------------

gpu = pytest.mark.gpu


@pytest.fixture
def device():
    ok, why = ptx_backend.availability()
    if not ok:
        pytest.skip(f"ptx: {why}")


def run(ir: str, n: int, *arrays: np.ndarray) -> None:
    _, cubin, info = build(ir)
    block = 8 * THREADS
    ptx_backend.Launcher(cubin, info)(((n + block - 1) // block, 1, 1), [*arrays, n])


def inputs(rng, dt: str, n: int, nonzero: bool = False) -> np.ndarray:
    if dt in FLOATS:
        return rng.standard_normal(n).astype(NP[dt]) * 4
    info = np.iinfo(NP[dt])
    x = rng.integers(info.min, info.max, n, endpoint=True).astype(NP[dt])
    return np.where(x == 0, 1, x).astype(NP[dt]) if nonzero else x


def c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = a // b
    return np.where((a % b != 0) & ((a < 0) != (b < 0)), q + 1, q).astype(a.dtype)


def as_unsigned(f):
    return lambda a, b: f(a.view(UNSIGNED[a.dtype.name.replace("int", "i")]),
                          b.view(UNSIGNED[a.dtype.name.replace("int", "i")])).view(a.dtype)


def shift_amounts(b: np.ndarray) -> np.ndarray:
    return (b.astype(np.int64) % (8 * b.itemsize)).astype(b.dtype)


INT_REF = {
    "addi": np.add, "subi": np.subtract, "muli": np.multiply, "andi": np.bitwise_and,
    "ori": np.bitwise_or, "xori": np.bitwise_xor, "divsi": c_div,
    "remsi": lambda a, b: (a - c_div(a, b) * b).astype(a.dtype),
    "divui": as_unsigned(np.floor_divide), "remui": as_unsigned(np.remainder),
    "maxsi": np.maximum, "minsi": np.minimum, "maxui": as_unsigned(np.maximum),
    "minui": as_unsigned(np.minimum), "shli": as_unsigned(np.left_shift),
    "shrsi": np.right_shift, "shrui": as_unsigned(np.right_shift),
}


@gpu
@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("op", INT_OPS)
def test_gpu_integer_ops_match_c(device, rng, op, dt):
    n = 1000
    a, b = inputs(rng, dt, n), inputs(rng, dt, n, nonzero=True)
    if op.startswith("sh"):
        b = shift_amounts(b)
    if op in ("divsi", "remsi"):  # INT_MIN / -1 overflows
        b = np.where(b == -1, 3, b).astype(b.dtype)
    out = np.zeros(n, NP[dt])
    run(kernel_ir(BINARY.format(op=op), dt, dt), n, a, b, out)
    np.testing.assert_array_equal(out, INT_REF[op](a, b))


FLOAT_REF = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
             "maximumf": np.maximum, "minimumf": np.minimum}


@gpu
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_gpu_float_ops_round_like_numpy(device, rng, op, dt):
    if NP[dt] is None:
        pytest.skip("bfloat16 needs ml_dtypes")
    n = 777
    a, b = inputs(rng, dt, n), inputs(rng, dt, n)
    a[::50] = np.nan
    out = np.zeros(n, NP[dt])
    run(kernel_ir(BINARY.format(op=op), dt, dt), n, a, b, out)
    want = FLOAT_REF[op](a, b)  # exact, NaNs where NumPy has them (compared as f64: bf16 NaNs)
    np.testing.assert_array_equal(out.astype(np.float64), want.astype(np.float64))


MATH_REF = {"math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log2": np.log2,
            "math.sqrt": np.sqrt, "math.rsqrt": lambda x: 1 / np.sqrt(x),
            "math.sin": np.sin, "math.cos": np.cos, "math.absf": np.abs,
            "math.floor": np.floor, "math.ceil": np.ceil, "math.trunc": np.trunc,
            "arith.negf": np.negative}
EXACT = ("math.sqrt", "math.absf", "math.floor", "math.ceil", "math.trunc", "arith.negf")


@gpu
@pytest.mark.parametrize("op,dt", [(op, dt) for op in MATH for dt in ("f16", "f32", "f64")
                                   if dt != "f64" or op in F64_MATH])  # others: UnsupportedError
def test_gpu_math(device, rng, op, dt):
    n = 1000
    a = inputs(rng, dt, n)
    if op in ("math.log", "math.log2", "math.sqrt", "math.rsqrt"):
        a = np.abs(a) + NP[dt](0.01)
    out = np.zeros(n, NP[dt])
    run(kernel_ir(UNARY.format(op=op), dt, dt), n, a, a, out)
    want = MATH_REF[op](a.astype(np.float64)).astype(NP[dt])
    if op in EXACT:
        np.testing.assert_array_equal(out, want)
    else:  # the approximate instructions (Triton's choice): tolerances say so
        tol = 2e-3 if dt == "f16" else 2e-5
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


@gpu
def test_gpu_fma_and_powf(device, rng):
    n = 1000
    a, b = inputs(rng, "f32", n), inputs(rng, "f32", n)
    out = np.zeros(n, np.float32)
    run(kernel_ir("%r = math.fma %a, %b, %a : {T}", "f32", "f32"), n, a, b, out)
    np.testing.assert_array_equal(out, np.float32(a.astype(np.float64) * b + a))
    b = np.round(b).astype(np.float32)
    b[::7] += 0.5  # non-integer exponents: NaN for negative bases
    run(kernel_ir("%r = math.powf %a, %b : {T}", "f32", "f32"), n, a, b, out)
    np.testing.assert_allclose(out, np.power(a, b), rtol=1e-4, atol=1e-30)


CAST_REF = {"sitofp": lambda a, d: a.astype(d), "extf": lambda a, d: a.astype(d),
            "truncf": lambda a, d: a.astype(d), "extsi": lambda a, d: a.astype(d),
            "fptosi": lambda a, d: np.trunc(a).astype(d) if d != np.bool_ else a <= -1,
            "trunci": lambda a, d: a.astype(d) if d != np.bool_ else (a & 1).astype(d),
            "uitofp": lambda a, d: (a.view(UNSIGNED[a.dtype.name.replace("int", "i")])
                                    if a.dtype != np.bool_ else a).astype(d),
            "extui": lambda a, d: (a.view(UNSIGNED[a.dtype.name.replace("int", "i")])
                                   if a.dtype != np.bool_ else a).astype(d),
            "fptoui": lambda a, d: a >= 1 if d == np.bool_ else np.trunc(a).astype(d),
            "bitcast": lambda a, d: a.view(d)}


@gpu
@pytest.mark.parametrize("op, src, dst", CASTS)
def test_gpu_casts(device, rng, op, src, dst):
    if None in (NP[src], NP[dst]):
        pytest.skip("bfloat16 needs ml_dtypes")
    n = 1000
    a = inputs(rng, src, n) if src != "i1" else rng.random(n) < 0.5
    if op.startswith("fpto"):  # out-of-range conversions are unspecified
        lo, hi = (0, 100) if op == "fptoui" else (-100, 100)
        a = np.clip(a, lo, hi).astype(NP[src])
    out = np.zeros(n, NP[dst])
    run(kernel_ir(CAST.format(op=op), src, dst), n, a, a, out)
    want = CAST_REF[op](a, NP[dst])
    if op == "sitofp" and src == "i1":
        want = -a.astype(NP[dst])
    if op == "extsi" and src == "i1":
        want = -a.astype(NP[dst])
    np.testing.assert_array_equal(out, want)


@gpu
@pytest.mark.parametrize("vec", [1, 2, 4])
def test_gpu_compare_select_and_bool_memory(device, rng, vec):
    n = 501
    a, b = inputs(rng, "f32", n), inputs(rng, "f32", n)
    a[::9] = b[::9]
    cmp = np.zeros(n, np.bool_)
    run(kernel_ir('%r = tile.cmpf "ole", %a, %b : {T} -> {R}', "f32", "i1", vec=vec),
        n, a, b, cmp)
    np.testing.assert_array_equal(cmp, a <= b)
    out = np.zeros(n, np.bool_)
    run(kernel_ir("%r = tile.select %a, %b, %a : {M}, {T}", "i1", "i1", vec=vec),
        n, cmp, ~cmp, out)
    np.testing.assert_array_equal(out, np.zeros(n, bool))  # select(c, !c, c) is false
    sel = np.zeros(n, np.float32)
    body = '%c = tile.cmpf "olt", %a, %b : {T} -> {M}\n  %r = tile.select %c, %a, %b : {M}, {T}'
    run(kernel_ir(body, "f32", "f32", vec=vec), n, a, b, sel)
    np.testing.assert_array_equal(sel, np.minimum(a, b))


@gpu
def test_gpu_masked_tail_is_untouched(device, rng):
    n = 300  # 256-element programs: the second one is mostly masked off
    a, b = inputs(rng, "f32", 512), inputs(rng, "f32", 512)
    out = np.full(512, -7.0, np.float32)
    run(kernel_ir(BINARY.format(op="addf"), "f32", "f32"), n, a, b, out)
    np.testing.assert_array_equal(out[:n], a[:n] + b[:n])
    assert (out[n:] == -7.0).all()


@gpu
@pytest.mark.parametrize("dt, vec, wide", WORD_ACCESSES)
def test_gpu_narrow_lanes_as_words(device, rng, dt, vec, wide):
    n = 1008  # a multiple of 16: each access is wholly in or out; the rest stays untouched
    if dt == "i1":
        a, b = rng.random(n + 16) < 0.5, rng.random(n + 16) < 0.5
    else:
        a, b = inputs(rng, dt, n + 16), inputs(rng, dt, n + 16)
    out = np.ones(n + 16, NP[dt])
    run(kernel_ir(BINARY.format(op=ADD[dt]), dt, dt, k=16, vec=vec), n, a, b, out)
    np.testing.assert_array_equal(out[:n], a[:n] ^ b[:n] if dt == "i1" else a[:n] + b[:n])
    assert (out[n:] == 1).all()


@gpu
@pytest.mark.parametrize("dt", ["f16", "bf16", "i8"])
def test_gpu_copy_kernel_128_bit(rng, dt):
    n = 4096 + 16 * 7  # divisible by 16: masked accesses stay 128 bits wide
    x, y = inputs(rng, dt, n), np.zeros(n + 64, NP[dt])
    if launch(copy_kernel, (tc.cdiv(n, 2048),), x, y, n, backend="ptx", BLOCK=2048):
        np.testing.assert_array_equal(y[:n], x)
        assert (y[n:] == 0).all()


@gpu
@pytest.mark.parametrize("dt", ["f16", "bf16", "i8"])
def test_gpu_2d_tile_word_accesses(rng, dt):
    a, out = inputs(rng, dt, 64 * 48).reshape(64, 48), np.zeros((64, 48), NP[dt])
    if launch(tile_kernel, (1,), a, out, 48, backend="ptx", BM=64, BK=32):
        np.testing.assert_array_equal(out[:, :32], (a[:, :32] * 2).astype(NP[dt]))
        assert (out[:, 32:] == 0).all()


@gpu
def test_gpu_scalar_params_and_program_ids(device):
    ir = """func.func @s(%o: !tile.ptr<f32>, %h: f16, %d: f64, %f: i1, %q: i64) \
attributes {simt.num_warps = 1 : i32} {
  %px = tile.program_id 0 : i32
  %py = tile.program_id 1 : i32
  %pz = tile.program_id 2 : i32
  %nx = tile.num_programs 0 : i32
  %ny = tile.num_programs 1 : i32
  %t0 = arith.muli %pz, %ny : i32
  %t1 = arith.addi %t0, %py : i32
  %t2 = arith.muli %t1, %nx : i32
  %i = arith.addi %t2, %px : i32
  %hf = arith.extf %h : f16 to f32
  %df = arith.truncf %d : f64 to f32
  %qf = arith.sitofp %q : i64 to f32
  %s0 = arith.addf %hf, %df : f32
  %s1 = arith.addf %s0, %qf : f32
  %if = arith.sitofp %i : i32 to f32
  %s2 = arith.addf %s1, %if : f32
  %neg = arith.negf %s2 : f32
  %v = tile.select %f, %s2, %neg : i1, f32
  simt.store %o[%i], %v : !tile.ptr<f32>, i32, f32
  func.return
}"""
    _, cubin, info = build(ir)
    out = np.zeros(3 * 4 * 5, np.float32)
    ptx_backend.Launcher(cubin, info)((3, 4, 5), [out, 1.5, 0.25, True, -(2**33)])
    np.testing.assert_array_equal(out, np.float32(1.75 - 2**33) + np.arange(60, dtype=np.float32))


@gpu
def test_gpu_device_arrays_run_in_place(device, rng):
    torch = pytest.importorskip("torch")
    n = 1000
    _, cubin, info = build(kernel_ir(BINARY.format(op="mulf"), "f32", "f32"))
    launcher = ptx_backend.Launcher(cubin, info)
    a, b = (torch.from_numpy(inputs(rng, "f32", n)).cuda() for _ in range(2))
    out = torch.zeros(n, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        launcher((4, 1, 1), [a, b, out, n])
    stream.synchronize()
    torch.testing.assert_close(out, a * b, rtol=0, atol=0)
    with pytest.raises(LaunchError, match="'x'.*float64"):
        launcher((4, 1, 1), [a.double(), b, out, n])
    strided = torch.zeros(2 * n, device="cuda")
    launcher((4, 1, 1), [a, b, strided[::2], n])  # the kernel's own indexing: contiguous
    torch.testing.assert_close(strided[:n], a * b, rtol=0, atol=0)
    with pytest.raises(LaunchError, match="on cpu is not on cuda:0"):
        launcher((4, 1, 1), [a.cpu(), b, out, n])
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        launcher((4, 1, 1), [a, b, out])


@gpu
def test_gpu_cupy_arrays(device, rng):
    cupy = pytest.importorskip("cupy")
    n = 1000
    _, cubin, info = build(kernel_ir(BINARY.format(op="subf"), "f32", "f32"))
    a, b = inputs(rng, "f32", n), inputs(rng, "f32", n)
    out = cupy.zeros(n, cupy.float32)
    ptx_backend.Launcher(cubin, info)((4, 1, 1), [cupy.asarray(a), cupy.asarray(b), out, n])
    np.testing.assert_array_equal(out.get(), a - b)


@gpu
def test_gpu_numpy_argument_errors(device, rng):
    _, cubin, info = build(kernel_ir(BINARY.format(op="addf"), "f32", "f32"))
    launcher = ptx_backend.Launcher(cubin, info)
    a = inputs(rng, "f32", 100)
    with pytest.raises(LaunchError, match="negative strides"):
        launcher((1, 1, 1), [a, a, np.zeros(200, np.float32)[::-2], 100])
    with pytest.raises(LaunchError, match="float64"):
        launcher((1, 1, 1), [a, a.astype(np.float64), a, 100])
    with pytest.raises(LaunchError, match="read-only"):
        ro = np.zeros(100, np.float32)
        ro.flags.writeable = False
        launcher((1, 1, 1), [a, a, ro, 100])
