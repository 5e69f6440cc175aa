"""``tl.inline_asm_elementwise``: a user's PTX once per element (or per ``pack``
elements), its registers ``$0``... the results' and then the operands', in Triton's
idioms (a rounding-mode add, an f32's bits masked, the global timer, a fast ``tanh``, two
results, bytes and halves packed into words). On ptx the text lands in the kernel in a
scope of its own and assembles; with a GPU it runs; numpy and wgsl refuse it clearly, and
so does the frontend where the constraints do not fit (a register of another size, too
few or too many, ``$`` past them)."""

import numpy as np
import pytest

import compiler as tc
import compiler.language as tl
from compiler.errors import CompileError, UnsupportedError
from tests.conftest import launch

N, BLOCK = 1000, 256
GPU = pytest.param("ptx", marks=pytest.mark.gpu)


@tc.kernel
def add_rn(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0.0)
    b = tl.load(y + offs, mask=m, other=0.0)
    s = tl.inline_asm_elementwise("add.rn.f32 $0, $1, $2;", "=r,r,r", [a, b],
                                  dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out + offs, s, mask=m)


@tc.kernel
def bits(x, out, n, scale, BLOCK: tl.constexpr):
    """|x| by masking the sign bit, times a scalar operand broadcast to every element."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.inline_asm_elementwise("and.b32 $0, $1, 0x7fffffff;", "=r,r",
                                  [tl.load(x + offs, mask=m, other=0.0)], dtype=tl.float32,
                                  is_pure=True, pack=1)
    tl.store(out + offs, tl.inline_asm_elementwise("mul.rn.f32 $0, $1, $2;", "=f,f,f",
                                                   [a, scale], dtype=tl.float32,
                                                   is_pure=True, pack=1), mask=m)


@tc.kernel
def timer(out):
    t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                   is_pure=False, pack=1)
    t1 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64,
                                   is_pure=False, pack=1)
    tl.store(out, t0)
    tl.store(out + 1, t1)


@tc.kernel
def fast_tanh(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    t = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f",
                                  [tl.load(x + offs, mask=m, other=0.0)], dtype=tl.float32,
                                  is_pure=True, pack=1)
    tl.store(out + offs, t, mask=m)


@tc.kernel
def sum_and_difference(x, y, s, d, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m, other=0.0)
    b = tl.load(y + offs, mask=m, other=0.0)
    plus, minus = tl.inline_asm_elementwise(
        "add.rn.f32 $0, $2, $3; sub.rn.f32 $1, $2, $3;", "=f,=f,f,f", [a, b],
        dtype=(tl.float32, tl.float32), is_pure=True, pack=1)
    tl.store(s + offs, plus, mask=m)
    tl.store(d + offs, minus, mask=m)


@tc.kernel
def packed(x, h, wide, low, n, BLOCK: tl.constexpr):
    """Four bytes a word: each byte's low nibble (``and`` on the word), each byte widened
    to 16 bits (two words out of one, by ``prmt``; int16: NumPy has no uint16 here); two f16 a word: |h| (sign bits off)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    b = tl.load(x + offs, mask=m, other=0)
    nib = tl.inline_asm_elementwise("and.b32 $0, $1, 0x0f0f0f0f;", "=r,r", [b],
                                    dtype=tl.uint8, is_pure=True, pack=4)
    w = tl.inline_asm_elementwise("prmt.b32 $0, $2, 0, 0x4140; prmt.b32 $1, $2, 0, 0x4342;",
                                  "=r,=r,r", [b], dtype=tl.int16, is_pure=True, pack=4)
    a = tl.inline_asm_elementwise("and.b32 $0, $1, 0x7fff7fff;", "=r,r",
                                  [tl.load(h + offs, mask=m, other=0.0)], dtype=tl.float16,
                                  is_pure=True, pack=2)
    tl.store(low + offs, nib, mask=m)
    tl.store(wide + offs, w, mask=m)
    tl.store(h + offs, a, mask=m)


def _ptx(kernel, *args, num_warps=4, **constants) -> str:
    return tc.compile(kernel, backend="ptx", target="sm_90", args=args, constants=constants,
                      num_warps=num_warps).asm["ptx"]


def test_each_element_gets_the_text_with_its_registers_in_a_scope():
    x = np.ones(N, np.float32)
    ptx = _ptx(add_rn, x, x, x, N, BLOCK=BLOCK)
    lines = ptx.splitlines()
    at = [i for i, ln in enumerate(lines) if "add.rn.f32" in ln]
    assert len(at) == BLOCK // 128  # 4 warps: two elements a thread
    assert all(lines[i - 1].strip() == "{" and lines[i + 1].strip() == "}" for i in at)
    assert all(lines[i].strip().startswith("add.rn.f32 %f") for i in at)
    assert len({lines[i].split()[1] for i in at}) == len(at)  # a result register each


@tc.kernel
def commented(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    r = tl.inline_asm_elementwise("mov.b32 $0, $1; // a comment to the end of the text",
                                  "=r,r", [tl.load(x + offs)], dtype=tl.float32,
                                  is_pure=True, pack=1)
    tl.store(out + offs, r)


def test_a_comment_at_the_end_of_the_text_leaves_the_scope_closed():
    x = np.ones(BLOCK, np.float32)
    ck = tc.compile(commented, backend="ptx", target="sm_90", args=(x, x),
                    constants={"BLOCK": BLOCK})
    assert ck.asm["cubin"][:4] == b"\x7fELF"


def test_pack_must_divide_a_threads_elements():
    x = np.zeros(N, np.uint8)
    with pytest.raises(UnsupportedError, match="pack=4 where a thread holds 2 elements"):
        _ptx(packed, x, np.zeros(N, np.float16), np.zeros(N, np.int16), x, N, BLOCK=BLOCK)


def test_text_without_effects_declared_stays_as_often_as_written():
    ptx = _ptx(timer, np.zeros(2, np.int64))
    assert ptx.count("%globaltimer") == 2


@pytest.mark.parametrize("backend", [GPU])
def test_add_with_round_to_nearest_on_registers_of_32_bits(backend, rng):
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    out = np.full(N, np.nan, np.float32)
    if launch(add_rn, (tc.cdiv(N, BLOCK),), x, y, out, N, backend=backend, BLOCK=BLOCK):
        np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize("backend", [GPU])
def test_bits_of_a_float_and_a_scalar_operand(backend, rng):
    x = rng.standard_normal(N).astype(np.float32)
    out = np.full(N, np.nan, np.float32)
    if launch(bits, (tc.cdiv(N, BLOCK),), x, out, N, 3.0, backend=backend, BLOCK=BLOCK):
        np.testing.assert_array_equal(out, np.abs(x) * np.float32(3.0))


@pytest.mark.parametrize("backend", [GPU])
def test_two_results(backend, rng):
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    s, d = np.full(N, np.nan, np.float32), np.full(N, np.nan, np.float32)
    if launch(sum_and_difference, (tc.cdiv(N, BLOCK),), x, y, s, d, N, backend=backend,
              BLOCK=BLOCK):
        np.testing.assert_array_equal(s, x + y)
        np.testing.assert_array_equal(d, x - y)


@pytest.mark.parametrize("backend", [GPU])
def test_bytes_and_halves_packed_in_words(backend, rng):
    x = rng.integers(0, 256, N).astype(np.uint8)
    h = rng.standard_normal(N).astype(np.float16)
    want_h = np.abs(h)
    wide, low = np.zeros(N, np.int16), np.zeros(N, np.uint8)
    if launch(packed, (tc.cdiv(N, BLOCK),), x, h, wide, low, N, backend=backend, BLOCK=BLOCK,
              num_warps=1):
        np.testing.assert_array_equal(low, x & 0x0F)
        np.testing.assert_array_equal(wide, x.astype(np.int16))
        np.testing.assert_array_equal(h, want_h)


def test_packed_words_in_the_ptx():
    x = np.zeros(N, np.uint8)
    ptx = _ptx(packed, x, np.zeros(N, np.float16), np.zeros(N, np.int16), x, N, BLOCK=BLOCK,
               num_warps=1)
    per_thread = BLOCK // 32
    assert ptx.count("and.b32 %r") == per_thread // 4 + per_thread // 2
    assert ptx.count("prmt.b32") == 2 * per_thread // 4 and "bfi.b32" in ptx


@pytest.mark.parametrize("backend", [GPU])
def test_the_global_timer_read_twice(backend):
    out = np.zeros(2, np.int64)
    if launch(timer, (1,), out, backend=backend):
        assert 0 < out[0] <= out[1]


@pytest.mark.parametrize("backend", [GPU])
def test_a_fast_tanh(backend):
    x = np.linspace(-6, 6, N).astype(np.float32)
    out = np.full(N, np.nan, np.float32)
    if launch(fast_tanh, (tc.cdiv(N, BLOCK),), x, out, N, backend=backend, BLOCK=BLOCK):
        np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)), rtol=0, atol=2e-3)


@pytest.mark.parametrize("backend", ["numpy", "wgsl"])
def test_other_backends_refuse_inline_ptx(backend):
    if backend == "wgsl" and not tc.backends()["wgsl"][0]:
        pytest.skip("wgsl: no adapter")
    x = np.ones(N, np.float32)
    with pytest.raises(UnsupportedError, match="inline PTX: only ptx runs it"):
        add_rn[(4,)](x, x, x.copy(), N, BLOCK=BLOCK, backend=backend)


@tc.kernel
def misuse(x, out, CASE: tl.constexpr):
    a = tl.load(x + tl.arange(0, 16))
    if CASE == "count":
        r = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r", [a], dtype=tl.float32,
                                      is_pure=True, pack=1)
    elif CASE == "size":
        r = tl.inline_asm_elementwise("mov.b64 $0, $1;", "=l,l", [a], dtype=tl.int64,
                                      is_pure=True, pack=1).to(tl.float32)
    elif CASE == "pack":  # two f32 a value: two registers of each
        r = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,=r,r", [a], dtype=tl.float32,
                                      is_pure=True, pack=2)
    elif CASE == "outputs":
        r = tl.inline_asm_elementwise("mov.b32 $0, $1;", "r,=r", [a], dtype=tl.float32,
                                      is_pure=True, pack=1)
    else:
        r = tl.inline_asm_elementwise("mov.b32 $0, $2;", "=r,r", [a], dtype=tl.float32,
                                      is_pure=True, pack=1)
    tl.store(out + tl.arange(0, 16), r)


@pytest.mark.parametrize("case, message", [
    ("count", "name more registers than the results and 1 operands have"),
    ("outputs", "must name the results' 1 registers first"),
    ("size", "operand 0 is float32, which does not fit constraint 'l'"),
    ("pack", "the constraints end before operand 0's registers"),
    ("dollar", r"names \$2, but there are only \$0 to \$1"),
])
def test_what_the_frontend_refuses(case, message):
    x = np.ones(16, np.float32)
    with pytest.raises(CompileError, match=message):
        misuse[(1,)](x, x.copy(), CASE=case, backend="numpy")
