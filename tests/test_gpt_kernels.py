"""The GPT example's kernels (``examples.gpt``) against its NumPy oracle
(``examples.gpt.reference``), through the host functions the model calls: on numpy (a
regular and an odd shape: masks at every edge), on wgsl (the odd shape), compiled and
assembled for sm_90 without a GPU ("ptx-asm": every launch is compiled, none runs), and
launched on a GPU where there is one. Then the whole forward and backward of a 2-layer
GPT chained from the kernels, against the reference's loss and every gradient."""

import time
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest

import compiler as tc
from compiler.context import parse_module
from compiler.jit import DEFAULT_STAGES, KernelFunction, availability
from examples.gpt import attention, embedding, kvcache, layernorm, loss, matmul, optimizer
from examples.gpt import reference as ref
from examples.gpt.config import GPTConfig, init_params
from examples.gpt.shapes import padded_width
from examples.gpt.step import forward_backward
from tests.test_tma_views import TmaProgram

# B, T, C, H, V: a regular shape, and one where no size is a multiple of a tile
SHAPES = {"small": (2, 16, 32, 2, 64), "odd": (2, 37, 40, 2, 61)}
TOL = {"rtol": 2e-4, "atol": 2e-5}


@dataclass
class Target:
    backend: str
    shape: tuple[int, int, int, int, int]
    runs: bool = True  # False on ptx-asm
    compiled: list = field(default_factory=list)  # ptx-asm: the kernels compiled

    def close(self, *pairs, **tol) -> None:
        """Each (got, want) pair agrees; on ptx-asm, every launch compiled to a cubin."""
        if not self.runs:
            assert self.compiled and all(ck.asm["cubin"][:4] == b"\x7fELF"
                                         for _, ck in self.compiled)
            return
        for got, want in pairs:
            np.testing.assert_allclose(got, want, **{**TOL, **tol})


def _compile_only(compiled: list):
    """A ``KernelFunction.__getitem__`` whose launches compile for ptx (sm_90 without a
    GPU) and assemble, and run nothing."""
    def getitem(kernel, grid):
        def launch(*args, backend=None, num_warps=4, num_stages=DEFAULT_STAGES, **kwargs):
            ck = kernel.compile_for(kernel.bind(args, kwargs), "ptx", num_warps,
                                    num_stages=num_stages)
            compiled.append((kernel.__name__, ck))
        return launch
    return getitem


@pytest.fixture(params=[("numpy", "small"), ("numpy", "odd"), ("wgsl", "odd"),
                        ("ptx-asm", "odd"),
                        pytest.param(("ptx", "small"), marks=pytest.mark.gpu),
                        pytest.param(("ptx", "odd"), marks=pytest.mark.gpu)],
                ids=lambda p: "-".join(p))
def target(request, monkeypatch):
    backend, shape = request.param
    if backend in ("wgsl", "ptx") and not availability(backend)[0]:
        pytest.skip(f"{backend}: {availability(backend)[1]}")
    if backend != "ptx-asm":
        return Target(backend, SHAPES[shape])
    t = Target("ptx", SHAPES[shape], runs=False)
    monkeypatch.setattr(KernelFunction, "__getitem__", _compile_only(t.compiled))
    return t


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def test_embedding_forward_and_backward(target, rng):
    B, T, C, _, V = target.shape
    idx = rng.integers(0, 5, (B, T)).astype(np.int32)  # few tokens: rows of dwte collide
    wte, wpe = f32(rng, V, C), f32(rng, T + 3, C)
    out = np.full((B, T, C), np.nan, np.float32)
    embedding.embedding_forward(idx, wte, wpe, out, backend=target.backend)
    dout = f32(rng, B, T, C)
    dwte, dwpe = f32(rng, V, C), f32(rng, T + 3, C)  # gradients add to what is there
    want_dwte, want_dwpe = dwte.astype(np.float64), dwpe.astype(np.float64)
    np.add.at(want_dwte, idx, dout)
    want_dwpe[:T] += dout.sum(axis=0)
    embedding.embedding_backward(idx, dout, dwte, dwpe, backend=target.backend)
    target.close((out, wte[idx] + wpe[:T]), (dwte, want_dwte), (dwpe, want_dwpe))


def test_generation_reads_the_position_on_the_device(target, rng):
    """The embedding of tokens at positions pos[0] on, and their keys and values into the
    cache there, rows past its end dropped."""
    B, T, C, _, V = target.shape
    idx = rng.integers(0, V, (B, 3)).astype(np.int32)
    wte, wpe = f32(rng, V, C), f32(rng, T + 3, C)
    out = np.full((B, 3, C), np.nan, np.float32)
    embedding.embedding_forward(idx, wte, wpe, out, backend=target.backend,
                                pos=np.array([T], np.int32))
    qkv, cache = f32(rng, B, 3, 3 * C), np.zeros((B, 8, 2 * C), np.float32)
    kvcache.cache_keys_values(qkv, cache, np.array([6], np.int32), backend=target.backend)
    want = np.zeros_like(cache)
    want[:, 6:] = qkv[:, :2, C:]
    target.close((out, wte[idx] + wpe[T:T + 3]), (cache, want))


def test_next_token_is_the_first_likeliest_and_advance_moves_the_position(target, rng):
    B, T, _, _, V = target.shape
    logits = f32(rng, B, V)
    logits[0, [3, V - 1]] = 9.0  # equals in two blocks (BLOCK 16) and lanes: the first
    logits[1, [20, 36]] = 9.0  # in one lane of two blocks
    tok, hist = np.full(B, -1, np.int32), np.full((B, T), -1, np.int32)
    pos = np.array([2], np.int32)
    kvcache.next_token(logits, tok, hist, pos, 3, backend=target.backend, BLOCK=16)
    kvcache.advance(pos, 3, backend=target.backend)
    want = np.full((B, T), -1)
    want[:, 5] = logits.argmax(axis=1)
    assert list(want[:2, 5]) == [3, 20]
    target.close((tok, want[:, 5]), (hist, want), (pos, [5]))


@pytest.mark.parametrize("accumulate", [False, True])
def test_layernorm_forward_and_backward(target, rng, accumulate):
    B, T, C, _, _ = target.shape
    x = f32(rng, B * T, C, scale=2.0) + 0.5
    w, b = f32(rng, C), f32(rng, C)
    out, mean, rstd = (np.full(s, np.nan, np.float32) for s in ((B * T, C), B * T, B * T))
    layernorm.layernorm_forward(x, w, b, out, mean, rstd, backend=target.backend)
    want = ref.layernorm_forward(x.astype(np.float64), w, b)
    dy = f32(rng, B * T, C)
    dx, dw, db = f32(rng, B * T, C), f32(rng, C), f32(rng, C)
    want_dx, want_dw, want_db = ref.layernorm_backward(dy.astype(np.float64),
                                                       x.astype(np.float64), w, *want[1:])
    want_dx, want_dw, want_db = want_dx + dx * accumulate, want_dw + dw, want_db + db
    scratch = np.zeros(layernorm.backward_scratch(B * T, C, 8), np.float32)
    # the forward's own mean and rstd, as the model passes them
    layernorm.layernorm_backward(dy, x, w, want[1].astype(np.float32),
                                 want[2].astype(np.float32), dx, dw, db, scratch,
                                 accumulate=accumulate, backend=target.backend,
                                 rows_per_program=8)
    target.close((out, want[0]), (mean, want[1]), (rstd, want[2]), (dx, want_dx),
                 (dw, want_dw), (db, want_db))


@pytest.mark.parametrize("kind", ["bias+gelu", "residual"])
def test_linear_forward_and_backward(target, rng, kind):
    B, T, C, _, _ = target.shape
    M, K, N = B * T, C, 3 * C
    x, w, b, res = f32(rng, M, K), f32(rng, N, K, scale=0.3), f32(rng, N), f32(rng, M, N)
    gelu = kind == "bias+gelu"
    out, pre = np.full((M, N), np.nan, np.float32), np.full((M, N), np.nan, np.float32)
    tiles = {"BM": 16, "BN": 32, "BK": 16}  # several tiles and K steps, edges masked
    matmul.linear_forward(x, w, b if gelu else None, out, pre=pre if gelu else None,
                          residual=None if gelu else res, backend=target.backend, **tiles)
    z = x.astype(np.float64) @ w.T.astype(np.float64) + (b if gelu else 0)
    dy, prex = f32(rng, M, N), f32(rng, M, K)  # prex: the pre-activation whose GELU x is
    dx, dw, db = np.full((M, K), np.nan, np.float32), f32(rng, N, K), f32(rng, N)
    want_dx, want_dw, want_db = ref.linear_backward(dy.astype(np.float64),
                                                    x.astype(np.float64), w)
    want_dw, want_db = want_dw + dw, want_db + db  # parameter gradients accumulate
    # dw's rows summed in 3 splits, added atomically
    matmul.linear_backward(dy, x, w, dx, dw, db if gelu else None,
                           pre=prex if gelu else None, backend=target.backend, split=3, **tiles)
    if gelu:
        target.close((pre, z), (out, ref.gelu(z)), (db, want_db),
                     (dx, want_dx * ref.gelu_grad(prex.astype(np.float64))), (dw, want_dw))
    else:
        target.close((out, z + res), (dx, want_dx), (dw, want_dw))


def test_gelu_backward(target, rng):
    B, T, C, _, _ = target.shape
    pre, dout = f32(rng, B * T, 4 * C, scale=3.0), f32(rng, B * T, 4 * C)
    dpre = np.full_like(pre, np.nan)
    matmul.gelu_backward(dout, pre, dpre, backend=target.backend, BLOCK=256)
    target.close((dpre, dout * ref.gelu_grad(pre.astype(np.float64))))


@pytest.mark.parametrize("blocks", [(16, 16), (32, 16), (16, 32)])
def test_attention_forward_and_backward(target, rng, blocks):
    B, T, C, H, _ = target.shape
    BM, BN = blocks
    if BM != BN and target.backend == "wgsl":
        pytest.skip("one tiling is enough on lavapipe (the other compiles for seconds)")
    qkv = f32(rng, B, T, 3 * C)
    out, lse = np.full((B, T, C), np.nan, np.float32), np.full((B, H, T), np.nan, np.float32)
    attention.attention_forward(qkv, out, lse, backend=target.backend, BM=BM, BN=BN)
    want_out, probs, want_lse = ref.attention_forward(qkv.astype(np.float64), H)
    dout = f32(rng, B, T, C)
    delta, dqkv = np.zeros_like(lse), np.full_like(qkv, np.nan)
    # the backward reads the forward's output and lse: the exact ones, so that it is
    # tested on its own
    attention.attention_backward(dout, qkv, want_out.astype(np.float32),
                                 want_lse.astype(np.float32), delta, dqkv,
                                 backend=target.backend, BM=BM, BN=BN)
    want_d = ref.attention_backward(dout.astype(np.float64), qkv.astype(np.float64), probs, H)
    want_delta = (dout * want_out).reshape(B, T, H, -1).sum(-1).transpose(0, 2, 1)
    target.close((out, want_out), (lse, want_lse), (dqkv, want_d), (delta, want_delta))


def test_crossentropy_in_place(target, rng):
    B, T, _, _, V = target.shape
    logits = f32(rng, B, T, V, scale=3.0)
    targets = rng.integers(0, V, (B, T)).astype(np.int32)
    want_loss, want_d = ref.crossentropy(logits.astype(np.float64), targets)
    rows = np.arange(B * T)
    flat = logits.reshape(-1, V).astype(np.float64)
    want_losses = np.log(np.exp(flat).sum(-1)) - flat[rows, targets.ravel()]
    losses, mean = np.full((B, T), np.nan, np.float32), np.full(1, np.nan, np.float32)
    loss.crossentropy(logits, targets, losses, logits, backend=target.backend, BLOCK=16)
    optimizer.mean(losses, mean, np.zeros(optimizer.sum_scratch(B * T), np.float32),
                   backend=target.backend)
    target.close((losses.ravel(), want_losses), (mean, [want_loss]), (logits, want_d),
                 atol=1e-6)


def test_crossentropy_of_large_logits_in_padded_rows(target, rng):
    """Logits near 100 (whose exponentials overflow float32 unless the row's maximum is
    taken out first) in rows padded to 128: the columns past V are neither read nor
    written, and V is no multiple of the block."""
    V, n = 100, 6
    logits = np.full((n, 128), 7.0, np.float32)
    logits[:, :V] = 100.0 + 4.0 * rng.standard_normal((n, V))
    targets = rng.integers(0, V, n).astype(np.int32)
    flat = logits[:, :V].astype(np.float64)
    top = flat.max(-1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(flat - top).sum(-1))
    want_d = np.exp(flat - lse[:, None])
    want_d[np.arange(n), targets] -= 1
    losses = np.full(n, np.nan, np.float32)
    loss.crossentropy(logits, targets, losses, logits, dscale=1.0, backend=target.backend,
                      V=V, BLOCK=32)
    target.close((losses, lse - flat[np.arange(n), targets]), atol=1e-4)
    target.close((logits[:, :V], want_d), (logits[:, V:], np.full((n, 28), 7.0)), atol=1e-6)


@pytest.mark.parametrize("square", [False, True])
def test_sums_are_two_stage(target, rng, square):
    n = 3 * 1000 + 7
    x = f32(rng, n)
    out = np.full(1, np.nan, np.float32)
    scratch = np.zeros(optimizer.sum_scratch(n, 64, 8), np.float32)
    optimizer.total(x, out, scratch, 0.5, square=square, root=square,
                    backend=target.backend, BLOCK=64, max_groups=8)
    x64 = x.astype(np.float64)
    target.close((out, [np.sqrt(0.5 * (x64 * x64).sum()) if square else 0.5 * x64.sum()]),
                 atol=1e-4)


@pytest.mark.parametrize("max_norm", [None, 30.0, 1e3])
def test_adamw_with_and_without_clipping(target, rng, max_norm):
    n = 2500
    p, g = f32(rng, n), f32(rng, n)
    m, v = f32(rng, n, scale=0.1), np.abs(f32(rng, n, scale=0.1))
    want = {k: a.astype(np.float64) for k, a in {"p": p, "m": m, "v": v, "g": g}.items()}
    norm = None
    if max_norm is not None:
        norm = np.full(1, np.nan, np.float32)
        optimizer.grad_norm(g, norm, np.zeros(optimizer.sum_scratch(n), np.float32),
                            backend=target.backend)
        ref.clip_grad_norm({"g": want["g"]}, max_norm)  # about 50: 30 clips, 1e3 does not
    optimizer.adamw(p, g, m, v, 3, 1e-2, norm=norm, max_norm=max_norm or 1.0,
                    backend=target.backend)
    ref.adamw(want["p"], want["g"], want["m"], want["v"], 3, 1e-2)
    target.close((p, want["p"]), (m, want["m"]), (v, want["v"]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["bf16", "tf32"])
def test_tensor_core_inputs_accumulate_in_float32(target, rng, kind):
    """What tensor cores take, bf16 inputs or f32 ones rounded to tf32, through the matmul
    and attention kernels forward and backward: products of the rounded inputs summed in
    f32, so within bf16's or tf32's rounding of the float64 result; on ptx, every kernel
    uses tensor-core instructions."""
    if kind == "bf16" and target.backend == "wgsl":
        pytest.skip("WGSL has no bfloat16")
    dt, precision = (ml_dtypes.bfloat16, "ieee") if kind == "bf16" else (np.float32, "tf32")
    opts = {"precision": precision, "backend": target.backend}
    B, T, C, H, _ = target.shape
    x, w = f32(rng, B * T, C).astype(dt), f32(rng, 3 * C, C, scale=0.3).astype(dt)
    b = f32(rng, 3 * C)
    qkv = np.full((B * T, 3 * C), np.nan, dt)
    tiles = {"BM": 32, "BN": 32, "BK": 32}  # each warp a whole m16n8 tile of every product
    matmul.linear_forward(x, w, b, qkv, **tiles, **opts)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    want_qkv = x64 @ w64.T + b
    dy = f32(rng, B * T, 3 * C).astype(dt)
    dx, dw, db = (np.full((B * T, C), np.nan, dt), np.zeros_like(w, np.float32),
                  np.zeros(3 * C, np.float32))  # f32 gradients of bf16 weights
    matmul.linear_backward(dy, x, w, dx, dw, db, **tiles, **opts)
    want_dx, want_dw, want_db = ref.linear_backward(dy.astype(np.float64), x64, w64)
    exact = want_qkv.astype(dt).reshape(B, T, 3 * C)  # the qkv the attention is tested on
    out, lse = np.full((B, T, C), np.nan, dt), np.full((B, H, T), np.nan, np.float32)
    attention.attention_forward(exact, out, lse, BM=16, BN=16, **opts)
    want_out, probs, want_lse = ref.attention_forward(exact.astype(np.float64), H)
    dout, dqkv = f32(rng, B, T, C).astype(dt), np.full((B, T, 3 * C), np.nan, dt)
    attention.attention_backward(dout, exact, want_out.astype(dt), want_lse.astype(np.float32),
                                 np.zeros_like(lse), dqkv, BM=16, BN=16, **opts)
    want_dqkv = ref.attention_backward(dout.astype(np.float64), exact.astype(np.float64),
                                       probs, H)
    if not target.runs:  # every product; db is a column sum
        products = [ck for name, ck in target.compiled if name != "bias_backward_kernel"]
        assert len(products) == 6 and all("mma" in ck.asm["ptx"] for ck in products), \
            "no tensor cores"
    # errors of a few units of the inputs' rounding, relative to each result's scale:
    # bf16 keeps 8 bits, tf32 11 (flash attention's backward rounds P and dS as well)
    unit = 2.0 ** -8 if kind == "bf16" else 2.0 ** -11
    for got, want in ((qkv, want_qkv), (dx, want_dx), (dw, want_dw), (db, want_db),
                      (out, want_out), (lse, want_lse), (dqkv, want_dqkv)):
        target.close((got.astype(np.float64), want), rtol=0, atol=8 * unit * np.abs(want).max())


def test_gpt2_products_run_on_tensor_cores_by_tma(monkeypatch):
    """At GPT-2 124M's shapes (B*T = 8192, bf16 as the model runs them) every product of
    the linear layers, forward, dx and dw, compiles for sm_90 to wgmma reading stages that
    TMA fills, with no register spilled (zero-strided arrays: nothing is allocated)."""
    compiled: list = []
    monkeypatch.setattr(KernelFunction, "__getitem__", _compile_only(compiled))
    bf16, M = ml_dtypes.bfloat16, 8192

    def zeros(*shape, dtype=bf16):
        return np.broadcast_to(np.zeros(1, dtype), shape)

    for N, K, epilogue in ((2304, 768, "bias"), (768, 768, "residual"), (3072, 768, "gelu"),
                           (768, 3072, "residual"), (50257, 768, "")):
        f32_out = epilogue in ("residual", "")  # the residual stream, the logits
        width = padded_width(N)  # GPT-2's vocabulary: the logits' rows padded to 50304
        matmul.linear_forward(
            zeros(M, K), zeros(N, K), zeros(N) if epilogue else None,
            zeros(M, width, dtype=np.float32 if f32_out else bf16),
            pre=zeros(M, N, dtype=np.float32) if epilogue == "gelu" else None,
            residual=zeros(M, N, dtype=np.float32) if epilogue == "residual" else None,
            backend="ptx")
        matmul.linear_backward(zeros(M, width), zeros(M, K), zeros(N, K), zeros(M, K),
                               zeros(N, K, dtype=np.float32),
                               zeros(N, dtype=np.float32) if epilogue else None,
                               pre=zeros(M, K, dtype=np.float32) if K > N else None,
                               backend="ptx")
    products = [(name, ck) for name, ck in compiled if name != "bias_backward_kernel"]
    assert len(products) == 15
    for name, ck in products:
        ptx = ck.asm["ptx"]
        assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" in ptx, name
        assert ck.n_spills == 0, (name, ck.n_spills)


@pytest.mark.parametrize("M", [1, 16])
def test_decoding_products_compile_to_tensor_cores(monkeypatch, M):
    """A decoding step's products (a row or a few a sequence) at GPT-2 124M's shapes and
    epilogues, bf16, compile for sm_90 with ``decode_config``'s tiles, on tensor cores,
    none spilling."""
    compiled: list = []
    monkeypatch.setattr(KernelFunction, "__getitem__", _compile_only(compiled))
    bf16 = ml_dtypes.bfloat16

    def zeros(*shape, dtype=bf16):
        return np.broadcast_to(np.zeros(1, dtype), shape)

    shapes = ((2304, 768, "bias"), (768, 768, "residual"), (3072, 768, "gelu"),
              (768, 3072, "residual"), (50257, 768, ""))
    for N, K, epilogue in shapes:
        f32 = np.float32
        matmul.linear_forward(
            zeros(M, K), zeros(N, K), zeros(N) if epilogue else None,
            zeros(M, N, dtype=bf16 if epilogue in ("bias", "gelu") else f32),
            pre=zeros(M, N, dtype=f32) if epilogue == "gelu" else None,
            residual=zeros(M, N, dtype=f32) if epilogue == "residual" else None,
            backend="ptx")
    for (_, ck), (N, _, _) in zip(compiled, shapes, strict=True):
        assert ck.n_spills == 0, N
        assert ("wgmma.mma_async" if N > 8192 else "mma.sync") in ck.asm["ptx"], N


def _simulated(kernel, arrays: dict, sizes: dict, constants: dict, grid: tuple) -> str:
    """``kernel`` compiled for sm_90 (8 warps, 4 stages) and run in the TMA and wgmma
    simulator on ``arrays`` over ``grid``: its SIMT text."""
    ck = tc.compile(kernel, backend="ptx", target="sm_90",
                    args=(*arrays.values(), *sizes.values()),
                    constants={"GROUP": 8, "PRECISION": "ieee", **constants}, num_warps=8,
                    num_stages=4)
    text = [ir for name, ir in ck.stages if name == "cse"][-1]
    module = parse_module(text)
    for pid in np.ndindex(*grid):
        TmaProgram(module, {k: v.reshape(-1) for k, v in arrays.items()}, sizes, pid,
                   grid).run()
    return text


def test_products_by_tma_and_wgmma_simulated(rng):
    """The three products as Hopper runs them (f16 here: the simulator's 16-bit type),
    edges in M and N: the forward with bias and GELU (the pre-activation stored by TMA),
    dx times GELU's derivative, and dw in one and in three splits (sequential in the
    simulator, so the plain read-add-write adds up as the atomics do). ``out`` and ``dy``
    store their rows padded (256 long for 192 columns), as the logits are: the padding is
    neither written nor read (NaN there would show)."""
    M, N, K, P = 200, 192, 128, 256
    sizes = {"M": M, "N": N, "K": K}
    x, w, b = (rng.standard_normal(s).astype(np.float16) for s in ((M, K), (N, K), (N,)))
    pre, out = np.full((M, N), np.nan, np.float32), np.full((M, P), np.nan, np.float16)
    text = _simulated(matmul.linear_forward_kernel,
                      {"x": x, "w": w, "b": b, "res": x, "pre": pre, "out": out}, sizes | {"LDO": P},
                      {"BM": 128, "BN": 128, "BK": 64, "BIAS": True, "GELU": True,
                       "RESIDUAL": False}, (2 * 2,))
    assert "nvgpu.tma_load" in text and "nvgpu.tma_store" in text
    z = x.astype(np.float64) @ w.T.astype(np.float64) + b
    dy = np.full((M, P), np.nan, np.float16)
    dy[:, :N] = rng.standard_normal((M, N))
    prex, dx = f32(rng, M, K), np.full((M, K), np.nan, np.float16)
    _simulated(matmul.linear_backward_x_kernel, {"dy": dy, "w": w, "pre": prex, "dx": dx},
               sizes | {"LDY": P}, {"BM": 128, "BK": 128, "BN": 64, "GELU": True}, (2,))
    want_dx, want_dw, _ = ref.linear_backward(dy[:, :N].astype(np.float64),
                                              x.astype(np.float64), w)
    for split in (1, 3):
        dw = f32(rng, N, K)
        want = dw + want_dw
        text = _simulated(matmul.linear_backward_w_kernel, {"dy": dy, "x": x, "dw": dw},
                          sizes | {"LDY": P},
                          {"BN": 128, "BK": 128, "BM": 64, "ATOMIC": False}, (2, split))
        assert "nvgpu.tma_load" in text and "simt.ldmatrix" in text
        np.testing.assert_allclose(dw, want, rtol=0, atol=1e-6 * np.abs(want).max())
    np.testing.assert_allclose(pre, z, rtol=0, atol=1e-6 * np.abs(z).max())
    np.testing.assert_allclose(out[:, :N].astype(np.float64), ref.gelu(z), rtol=0,
                               atol=2.0**-10 * np.abs(z).max())
    assert np.isnan(out[:, N:]).all()
    want_dx = want_dx * ref.gelu_grad(prex.astype(np.float64))
    np.testing.assert_allclose(dx.astype(np.float64), want_dx, rtol=0,
                               atol=2.0**-10 * np.abs(want_dx).max())


def test_host_functions_name_a_misshapen_array():
    x, w = np.zeros((6, 8), np.float32), np.zeros((12, 8), np.float32)
    with pytest.raises(tc.LaunchError, match=r"out must have shape \(6, 12\)"):
        matmul.linear_forward(x, w, None, np.zeros((6, 10), np.float32), backend="numpy")
    with pytest.raises(tc.LaunchError, match="scratch must hold at least 32 elements, got 3"):
        layernorm.layernorm_backward(x, x, x[0], x[:, 0], x[:, 0], x, x[0], x[0],
                                     np.zeros(3, np.float32), backend="numpy",
                                     rows_per_program=4)
    with pytest.raises(tc.LaunchError, match="AdamW step count t starts at 1"):
        optimizer.adamw(x[0], x[0], x[0], x[0], 0, 1e-3, backend="numpy")


# ---------------------------------------------------------------- the whole step

TINY = GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=2, n_embd=32)


def _problem(cfg: GPTConfig, B: int, T: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    params = {k: (v + rng.standard_normal(v.shape) * 0.05).astype(np.float32)
              for k, v in init_params(cfg, seed).items()}
    idx, targets = (rng.integers(0, cfg.vocab_size, (B, T)).astype(np.int32) for _ in "ab")
    return params, idx, targets


def _check_step(cfg: GPTConfig, B: int, T: int, backend: str) -> float:
    """One chained forward + backward against the reference; returns its seconds."""
    params, idx, targets = _problem(cfg, B, T)
    start = time.perf_counter()
    got_loss, grads = forward_backward(params, idx, targets, cfg, backend)
    seconds = time.perf_counter() - start
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    want_loss, cache = ref.forward(p64, idx, targets, cfg)
    want = ref.backward(p64, cache, cfg)
    assert abs(got_loss - want_loss) < 1e-5 * want_loss
    for name, g in want.items():
        # float32 sums of a few hundred terms: errors a few units of 1e-7 of the largest
        np.testing.assert_allclose(grads[name], g, rtol=0, atol=2e-5 * np.abs(g).max(),
                                   err_msg=name)
    return seconds


@pytest.mark.parametrize("cfg,B,T", [(TINY, 2, 16),
                                     (GPTConfig(61, 40, 3, 5, 40), 3, 37),  # heads of 8
                                     (GPTConfig(61, 40, 1, 2, 40), 1, 1)],
                         ids=["tiny", "odd", "one-token"])
def test_forward_backward_matches_reference_on_numpy(cfg, B, T):
    _check_step(cfg, B, T, "numpy")


@pytest.mark.gpu
def test_forward_backward_matches_reference_on_ptx():
    if not availability("ptx")[0]:
        pytest.skip(f"ptx: {availability('ptx')[1]}")
    _check_step(TINY, 2, 16, "ptx")


def test_every_kernel_of_the_step_assembles_for_sm90(monkeypatch):
    compiled: list = []
    monkeypatch.setattr(KernelFunction, "__getitem__", _compile_only(compiled))
    params, idx, targets = _problem(TINY, 2, 16)
    forward_backward(params, idx, targets, TINY, "ptx")
    names = {name for name, _ in compiled}
    assert len(names) == 16, sorted(names)
    for name, ck in compiled:
        assert ck.asm["cubin"][:4] == b"\x7fELF", name
        assert ck.metadata.target == "sm_90" or availability("ptx")[0]
