"""tilec kernels as PyTorch operators: ``tilec::layer_norm`` runs ``examples/layernorm.py``'s
kernel forward and ``tilec::layer_norm_backward`` runs ``examples/layernorm_backward.py``'s
kernels; ``torch.library.register_autograd`` joins them, so ``layer_norm`` trains like
``torch.nn.functional.layer_norm`` over the last dimension. Each operator also has a fake
implementation (output shapes only), so ``torch.compile(fullgraph=True)`` traces a function
calling it, forward and backward, without a graph break: to the compiler the operator is
opaque, and its tilec launches run as they do eagerly.

The script checks eager forward and gradients, then a ``torch.compile(fullgraph=True)``
training step, against PyTorch's own layer norm; on ptx (CUDA tensors) it also captures a
step in a CUDA graph (``torch.cuda.graph``) and replays it on new inputs. numpy and wgsl
take CPU tensors (through DLPack). It needs PyTorch (any build; CUDA for ptx) and says so.

    python examples/torch_custom_op.py [--backend ptx|wgsl|numpy|auto] [--rows R] [--cols C]
"""

from __future__ import annotations  # the operators' annotations name torch, imported below

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository root, for ``examples.*``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import compiler as tc
from compiler.cli import reported_errors, script_parser
from examples.layernorm import block_for, layernorm
from examples.layernorm_backward import layernorm_dx, sum_partials

try:
    import torch
except ImportError as e:  # the script says so (and --help still works)
    torch, NO_TORCH = None, f"PyTorch is not installed ({e})"
else:
    NO_TORCH = None

GROUPS = 8  # dweight/dbias partial rows of the backward (layernorm_backward.py)


# ---------------------------------------------------------------- the operators' bodies

def backend_for(t: torch.Tensor) -> str | None:
    """ptx for a CUDA tensor; for a CPU tensor the default backend (``tc.set_backend``,
    ``TILEC_BACKEND``), which should then be numpy or wgsl."""
    return "ptx" if t.is_cuda else None


def _forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
             eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(y, mean, rstd)``: the layer norm of ``x`` over its last dimension, and each row's
    mean and 1/std for the backward."""
    cols = x.shape[-1]
    x2d = x.reshape(-1, cols).contiguous()  # the kernel reads row * n_cols + col
    y = torch.empty_like(x2d)
    mean = x2d.new_empty(x2d.shape[0], dtype=torch.float32)
    rstd = torch.empty_like(mean)
    layernorm[(x2d.shape[0],)](x2d, weight.contiguous(), bias.contiguous(), y, mean, rstd,
                               cols, eps, BLOCK=block_for(cols), backend=backend_for(x))
    return y.view(x.shape), mean.view(x.shape[:-1]), rstd.view(x.shape[:-1])


def _forward_fake(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                  eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What ``_forward`` returns, as shapes and dtypes only: what tracing sees."""
    stats = x.new_empty(x.shape[:-1], dtype=torch.float32)
    return torch.empty_like(x), stats, torch.empty_like(stats)


def _backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
              rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(dx, dweight, dbias)`` given the output gradient ``dy``."""
    cols = x.shape[-1]
    x2d = x.reshape(-1, cols).contiguous()
    dy2d = dy.reshape(-1, cols).contiguous()  # a sum's gradient arrives broadcast (stride 0)
    rows, backend = x2d.shape[0], backend_for(x)
    dx = torch.empty_like(x2d)
    locks = torch.zeros(2 * GROUPS, dtype=torch.int32, device=x.device)
    dw_part = x2d.new_zeros(GROUPS, cols, dtype=torch.float32)  # as layernorm_backward.launch
    db_part = torch.zeros_like(dw_part)
    layernorm_dx[(rows,)](dx, dy2d, x2d, weight.contiguous(), mean.contiguous(),
                          rstd.contiguous(), locks, dw_part, db_part, cols, GROUPS=GROUPS,
                          BLOCK=block_for(cols), backend=backend)
    dweight, dbias = torch.empty_like(weight), torch.empty_like(weight)
    block_n = 32
    sum_partials[(tc.cdiv(cols, block_n),)](dw_part, db_part, dweight, dbias, GROUPS, cols,
                                            BLOCK_G=GROUPS, BLOCK_N=block_n, backend=backend)
    return dx.view(x.shape), dweight, dbias


def _backward_fake(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                   mean: torch.Tensor, rstd: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.empty_like(x), torch.empty_like(weight), torch.empty_like(weight)


def _save_for_backward(ctx, inputs, output) -> None:
    x, weight, _bias, _eps = inputs
    _y, mean, rstd = output
    ctx.save_for_backward(x, weight, mean, rstd)
    ctx.mark_non_differentiable(mean, rstd)


def _gradients(ctx, dy, _dmean, _drstd):
    """The gradients of ``tilec::layer_norm``'s inputs (None for ``eps``), by the backward
    operator: ``torch.compile`` traces the backward too, with fake tensors, so it calls
    operators, never a kernel."""
    x, weight, mean, rstd = ctx.saved_tensors
    dx, dweight, dbias = torch.ops.tilec.layer_norm_backward(dy, x, weight, mean, rstd)
    return dx, dweight, dbias, None


def register() -> None:
    """Registers both operators with PyTorch. Code that imports torch unconditionally
    writes the same with decorators: ``@torch.library.custom_op("tilec::layer_norm",
    mutates_args=())`` over ``_forward``, then ``@_forward.register_fake`` over the fake."""
    forward = torch.library.custom_op("tilec::layer_norm", _forward, mutates_args=())
    forward.register_fake(_forward_fake)
    backward = torch.library.custom_op("tilec::layer_norm_backward", _backward,
                                       mutates_args=())
    backward.register_fake(_backward_fake)
    forward.register_autograd(_gradients, setup_context=_save_for_backward)


if torch is not None:  # on import, as a library registers its operators
    register()


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
               eps: float = 1e-5) -> torch.Tensor:
    """``torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, eps)`` by tilec,
    float32, differentiable in ``x``, ``weight`` and ``bias``."""
    return torch.ops.tilec.layer_norm(x, weight, bias, eps)[0]


# ---------------------------------------------------------------- the demonstration

def inputs(rows: int, cols: int, device: str, seed: int = 0):
    """``(x, weight, bias, dy)``: random float32 tensors on ``device``."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g) * 3 + 1
    weight, bias = torch.randn(cols, generator=g), torch.randn(cols, generator=g)
    dy = torch.randn(rows, cols, generator=g)
    return [t.to(device) for t in (x, weight, bias, dy)]


def gradients(norm, x, weight, bias, dy):
    """``(y, dx, dweight, dbias)`` of ``norm(x, weight, bias)`` under output gradient
    ``dy``."""
    leaves = [t.detach().requires_grad_() for t in (x, weight, bias)]
    y = norm(*leaves)
    return (y.detach(), *torch.autograd.grad(y, leaves, dy))


def torch_layer_norm(x, weight, bias):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias)


def check_close(got, want, what: str) -> None:
    # dweight/dbias sum `rows` float32 terms in an order the backward's locks decide
    for name, g, w in zip(("y", "dx", "dweight", "dbias"), got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-3, msg=lambda m, n=name:
                                   f"{what}, {n}: {m}")


def cuda_graph_step(x, weight, bias, dy, new_x, new_dy):
    """A forward and backward on ``x`` and ``dy`` captured in one CUDA graph, then replayed
    after ``new_x`` and ``new_dy`` are copied into the captured tensors: ``(y, dx, dweight,
    dbias)`` of the replay."""
    leaves = [t.clone().requires_grad_() for t in (x, weight, bias)]
    dy = dy.clone()
    side = torch.cuda.Stream()  # warm up (compile, load) off the capturing stream
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.autograd.grad(layer_norm(*leaves), leaves, dy)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = layer_norm(*leaves)
        grads = torch.autograd.grad(y, leaves, dy)
    with torch.no_grad():  # a replay reads whatever the captured tensors hold
        leaves[0].copy_(new_x)
        dy.copy_(new_dy)
    graph.replay()
    torch.cuda.synchronize()
    return y.detach(), *grads


def main(backend: str | None = None, rows: int = 64, cols: int = 100) -> None:
    name = tc.jit.resolve_backend(backend)
    if name != "ptx":
        tc.set_backend(name)  # CPU tensors launch on the default backend
    x, weight, bias, dy = inputs(rows, cols, "cuda" if name == "ptx" else "cpu")
    want = gradients(torch_layer_norm, x, weight, bias, dy)
    check_close(gradients(layer_norm, x, weight, bias, dy), want, "eager")
    compiled = torch.compile(layer_norm, fullgraph=True)  # a graph break would raise
    check_close(gradients(compiled, x, weight, bias, dy), want, "torch.compile")
    done = "eager, torch.compile(fullgraph=True)"
    if name == "ptx":
        new_x, _, _, new_dy = inputs(rows, cols, "cuda", seed=1)
        got = cuda_graph_step(x, weight, bias, dy, new_x, new_dy)
        check_close(got, gradients(torch_layer_norm, new_x, weight, bias, new_dy), "CUDA graph")
        done += ", CUDA graph"
    print(f"torch_custom_op: tilec::layer_norm {rows}x{cols} float32 forward and backward "
          f"on {name} ({done}): OK")


if __name__ == "__main__":
    p = script_parser(__doc__)
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--cols", type=int, default=100)
    a = p.parse_args()
    if NO_TORCH is not None:
        sys.exit(f"torch_custom_op.py needs PyTorch; {NO_TORCH}")
    with reported_errors():
        main(a.backend, a.rows, a.cols)
