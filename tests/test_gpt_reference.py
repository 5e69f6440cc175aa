"""The GPT example's shape and its NumPy oracle (``examples.gpt.config``,
``examples.gpt.reference``): the parameters' names, shapes and aligned places in one flat
buffer; the written-out backward against finite differences of the forward in float64;
AdamW and gradient clipping as PyTorch defines them."""

import numpy as np
import pytest

from examples.gpt import reference as ref
from examples.gpt.config import (
    ALIGN,
    PARAM_NAMES,
    ConfigError,
    GPTConfig,
    flatten,
    init_params,
    param_offsets,
    param_shapes,
    views,
)

TINY = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8)


def test_parameter_shapes_are_the_specs_layer_stacked_layout():
    V, maxT, L, C = 50257, 1024, 12, 768
    shapes = param_shapes(GPTConfig(V, maxT, L, 12, C))
    assert tuple(shapes) == PARAM_NAMES
    assert shapes == {"wte": (V, C), "wpe": (maxT, C), "ln1w": (L, C), "ln1b": (L, C),
                      "qkvw": (L, 3 * C, C), "qkvb": (L, 3 * C), "attprojw": (L, C, C),
                      "attprojb": (L, C), "ln2w": (L, C), "ln2b": (L, C),
                      "fcw": (L, 4 * C, C), "fcb": (L, 4 * C), "fcprojw": (L, C, 4 * C),
                      "fcprojb": (L, C), "lnfw": (C,), "lnfb": (C,)}
    # GPT-2 small: 124,439,808 parameters (wte counted once, as Hugging Face counts them)
    assert sum(int(np.prod(s)) for s in shapes.values()) == 124_439_808


@pytest.mark.parametrize("cfg", [TINY, GPTConfig(64, 16, 2, 2, 32), GPTConfig(61, 37, 3, 5, 40)])
def test_offsets_are_aligned_disjoint_and_in_order(cfg):
    offsets, total = param_offsets(cfg)
    ends = 0
    for name, shape in param_shapes(cfg).items():
        assert offsets[name] % ALIGN == 0 and offsets[name] >= ends
        assert offsets[name] - ends < ALIGN  # no gap wider than the alignment needs
        ends = offsets[name] + int(np.prod(shape))
    assert total % ALIGN == 0 and 0 <= total - ends < ALIGN


def test_flatten_and_views_round_trip_with_zeros_between():
    params = init_params(TINY, seed=3)
    flat = flatten(params, TINY)
    back = views(flat, TINY)
    for name in PARAM_NAMES:
        np.testing.assert_array_equal(back[name], params[name])
        assert np.shares_memory(back[name], flat)
    used = np.zeros(flat.shape, bool)
    offsets, _ = param_offsets(TINY)
    for name, shape in param_shapes(TINY).items():
        used[offsets[name]:offsets[name] + int(np.prod(shape))] = True
    assert not flat[~used].any()


@pytest.mark.parametrize("kwargs,message", [
    ({"n_embd": 10, "n_head": 4}, "n_embd (10) must be a multiple of n_head (4)"),
    ({"n_layer": 0}, "GPTConfig.n_layer must be a positive int, got 0"),
    ({"vocab_size": 2.5}, "GPTConfig.vocab_size must be a positive int, got 2.5"),
])
def test_config_errors_say_what_is_accepted(kwargs, message):
    args = {"vocab_size": 11, "block_size": 8, "n_layer": 2, "n_head": 2, "n_embd": 8, **kwargs}
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        GPTConfig(**args)


def test_flatten_names_a_missing_or_misshapen_parameter():
    params = init_params(TINY)
    params["qkvw"] = params["qkvw"][:1]
    with pytest.raises(ConfigError, match=r"qkvw must have shape \(2, 24, 8\), got \(1, 24, 8\)"):
        flatten(params, TINY)
    del params["wpe"]
    with pytest.raises(ConfigError, match="wpe must have shape"):
        flatten(params, TINY)


def _random_problem(seed: int):
    rng = np.random.default_rng(seed)
    params = {k: v.astype(np.float64) + rng.standard_normal(v.shape) * 0.3
              for k, v in init_params(TINY, seed).items()}
    idx = rng.integers(0, TINY.vocab_size, (2, 5))
    idx[1, 3] = idx[0, 1]  # a repeated token: its rows of d wte add up
    return rng, params, idx, rng.integers(0, TINY.vocab_size, (2, 5))


def test_backward_matches_finite_differences_of_every_parameter():
    rng, params, idx, targets = _random_problem(0)
    _, cache = ref.forward(params, idx, targets, TINY)
    grads = ref.backward(params, cache, TINY)
    h = 1e-6
    for name in PARAM_NAMES:
        assert grads[name].shape == params[name].shape
        for _ in range(6):
            at = tuple(int(rng.integers(0, n)) for n in params[name].shape)
            if name == "wte" and _ == 0:
                at = (int(idx[0, 1]), at[1])
            old = params[name][at]
            params[name][at] = old + h
            up = ref.forward(params, idx, targets, TINY)[0]
            params[name][at] = old - h
            down = ref.forward(params, idx, targets, TINY)[0]
            params[name][at] = old
            np.testing.assert_allclose(grads[name][at], (up - down) / (2 * h), rtol=1e-6,
                                       atol=1e-9, err_msg=f"{name}{at}")


def test_positions_past_the_sequence_get_no_gradient():
    _, params, idx, targets = _random_problem(1)
    grads = ref.backward(params, ref.forward(params, idx, targets, TINY)[1], TINY)
    assert not grads["wpe"][idx.shape[1]:].any() and grads["wpe"][:idx.shape[1]].all()


def test_attention_is_causal_and_lse_normalizes():
    rng = np.random.default_rng(2)
    qkv = rng.standard_normal((2, 6, 3 * 8))
    out, probs, lse = ref.attention_forward(qkv, 2)
    assert not np.triu(probs, 1).any()
    np.testing.assert_allclose(probs.sum(-1), 1)
    q, k, _ = ref.split_heads(qkv, 2)
    s = q @ k.swapaxes(-1, -2) / 2.0  # 1/sqrt(C/H) with C/H = 4
    np.testing.assert_allclose(np.exp(s - lse[..., None]) * np.tril(np.ones((6, 6))), probs)
    changed = qkv.copy()
    changed[:, 4:] += 1  # later positions do not change earlier outputs
    np.testing.assert_allclose(ref.attention_forward(changed, 2)[0][:, :4], out[:, :4])


def test_adamw_first_step_moves_each_weight_by_lr_against_its_gradient():
    # after one step the bias-corrected moments are g and g*g: the update is lr * sign(g)
    rng = np.random.default_rng(4)
    p, g = rng.standard_normal(50), rng.standard_normal(50)
    m, v = np.zeros(50), np.zeros(50)
    want = p * (1 - 0.1 * 0.01) - 0.1 * g / (np.abs(g) + 1e-8)
    ref.adamw(p, g, m, v, 1, lr=0.1, weight_decay=0.01)
    np.testing.assert_allclose(p, want, rtol=1e-12)
    np.testing.assert_allclose(m, 0.1 * g)
    np.testing.assert_allclose(v, 0.05 * g * g)


def test_adamw_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    p, m, v = rng.standard_normal(40), np.zeros(40), np.zeros(40)
    tp = torch.tensor(p.copy(), requires_grad=True)
    opt = torch.optim.AdamW([tp], lr=0.05, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    for t in range(1, 4):
        g = rng.standard_normal(40)
        tp.grad = torch.tensor(g)
        opt.step()
        ref.adamw(p, g, m, v, t, lr=0.05)
    np.testing.assert_allclose(p, tp.detach().numpy(), rtol=1e-12)


def test_clip_grad_norm_scales_only_above_the_limit():
    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}
    assert ref.clip_grad_norm(grads, 10.0) == 5.0 and grads["a"][0] == 3.0
    assert ref.clip_grad_norm(grads, 1.0) == 5.0
    np.testing.assert_allclose(grads["a"], [3 / (5 + 1e-6), 0])
    np.testing.assert_allclose(grads["b"], [[4 / (5 + 1e-6)]])
