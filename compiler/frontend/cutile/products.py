"""cuTile's matrix products: ``ct.mma(x, y, acc)``, ``ct.matmul(x, y)`` and ``x @ y``,
``ct.mma_scaled``; built on the Triton-style language's 2-D ``tile.dot``.

As in cuTile, operands may be batched (3-D, batch dimensions broadcast) and
``matmul``'s may be vectors (1-D). Batches become 2-D products: a batch of ``x`` times
one ``y`` is one product of ``x``'s rows stacked (``[B * M, K] @ [K, N]``); one ``x``
times a batch of ``y`` is one product with ``y``'s matrices side by side (``[M, K] @
[K, B * N]``); a batch of both is a product per batch, restacked with ``ct.cat``.

``x.astype(ct.tfloat32)`` on both operands makes a product run in TF32. A product with M,
N or K below 16, which no tensor-core instruction covers, is products summed along K.

``ct.mma_scaled`` has no block-scaled instruction before Blackwell; tilec scales in
registers on every target: ``(x * x_scale) @ (y * y_scale) + acc`` in float32, each scale
repeated over its ``B = K // K_s`` elements of K (cuTile's layout: ``x_scale`` is
``[M, K_s]``, ``y_scale`` ``[K_s, N]``). A scale is a float tile, or a uint8 tile of e8m0
bits (value ``2 ** (bits - 127)``, 255 NaN): tilec has no e8m0 dtype, so an e8m0 array
is passed as its bytes. With fp8 operands and e8m0 or fp8 scales every scaled element
is exact in TF32, so the product runs on tensor cores in TF32 with no rounding; other
operands multiply in float32.
"""

from __future__ import annotations

from typing import Any

import compiler.language as tl
from compiler.frontend import operators as ops
from compiler.frontend.codegen import CodeGenerator
from compiler.frontend.cutile.subtiles import cat, extract
from compiler.frontend.cutile.table import builtin
from compiler.frontend.triton import TABLE as TRITON
from compiler.frontend.triton import linalg, reduce, shape
from compiler.frontend.values import Value, cast, expand


def _precision(cg: CodeGenerator, x: Any, y: Any) -> str | None:
    marked = [isinstance(v, Value) and v.ssa in cg.tf32 for v in (x, y)]
    return "tf32" if all(marked) else None


def _operand(cg: CodeGenerator, v: Any, what: str, ranks: tuple[int, ...]) -> Value:
    if not isinstance(v, Value) or v.is_ptr or len(v.shape) not in ranks:
        got = v.describe() if isinstance(v, Value) else type(v).__name__
        cg.fail(f"{what} takes tiles of {' or '.join(map(str, ranks))} dimensions, got {got}")
    return v


def product(cg: CodeGenerator, x: Value, y: Value, acc: Value | None, what: str) -> Value:
    """``x @ y (+ acc)`` of 2-D or 3-D tiles, batch dimensions broadcast."""
    precision = _precision(cg, x, y)
    xb = x.shape[0] if len(x.shape) == 3 else 1
    yb = y.shape[0] if len(y.shape) == 3 else 1
    if 1 not in (xb, yb) and xb != yb:
        cg.fail(f"{what}: batch dimensions {xb} and {yb} do not broadcast")
    (m, k), n = x.shape[-2:], y.shape[-1]
    batch = max(xb, yb)
    if min(m, n, k) < linalg.MIN_DIM:
        return _small_product(cg, x, y, acc, what)
    if len(x.shape) == 2 and len(y.shape) == 2:
        return linalg.dot(cg, x, y, acc, input_precision=precision)
    if acc is not None and acc.shape != (batch, m, n):
        cg.fail(f"{what}: acc must be a tile of shape {[batch, m, n]}, got {acc.describe()}")

    def flat(v: Value, dims: tuple[int, ...]) -> Value:
        return shape.reshape(cg, v, dims)
    if yb == 1:  # x's matrices stacked: one product
        r = linalg.dot(cg, flat(x, (xb * m, k)), flat(y, (k, n)),
                       None if acc is None else flat(acc, (batch * m, n)),
                       input_precision=precision)
        return flat(r, (batch, m, n))
    if xb == 1:  # y's matrices side by side: one product
        ys = flat(shape.trans(cg, y, (1, 0, 2)), (k, batch * n))
        a = None if acc is None else flat(shape.trans(cg, acc, (1, 0, 2)), (m, batch * n))
        r = linalg.dot(cg, flat(x, (m, k)), ys, a, input_precision=precision)
        return shape.trans(cg, flat(r, (m, batch, n)), (1, 0, 2))
    parts = []
    for i in range(batch):
        def one(v: Value, i: int = i) -> Value:
            return flat(extract(cg, v, (i, 0, 0), (1, *v.shape[1:])), v.shape[1:])
        r = linalg.dot(cg, one(x), one(y), None if acc is None else one(acc),
                       input_precision=precision)
        parts.append(flat(r, (1, m, n)))
    while len(parts) > 1:  # batch is a power of two, as every tile dimension
        parts = [cat(cg, (parts[j], parts[j + 1]), 0) for j in range(0, len(parts), 2)]
    return parts[0]


def _small_product(cg: CodeGenerator, x: Value, y: Value, acc: Value | None,
                   what: str) -> Value:
    """``x @ y (+ acc)`` where M, N or K is below what a tensor-core instruction covers (the
    2x2 matrices of an FFT): products summed along K, in float32 for narrower floats and
    int32 for narrower integers, as the tensor-core path accumulates."""
    if x.dtype != y.dtype:
        cg.fail(f"{what}: operands of one dtype, got {x.dtype} and {y.dtype}")
    wide = _accumulator(x.dtype)
    xw = expand(cg.b, cast(cg.b, x, wide), len(x.shape))   # [..., M, K, 1]
    yw = expand(cg.b, cast(cg.b, y, wide), len(y.shape) - 2)  # [..., 1, K, N]
    products = ops.binary(cg.b, "mul", xw, yw)
    r = reduce.sum_(cg, products, len(products.shape) - 2)
    if acc is None:
        return r
    if acc.shape != r.shape:
        cg.fail(f"{what}: acc must be a tile of shape {list(r.shape)}, got {acc.describe()}")
    return ops.binary(cg.b, "add", cast(cg.b, r, acc.dtype), acc)


def _accumulator(d: tl.dtype) -> tl.dtype:
    if d.is_float:
        return tl.float32 if d.bits < 32 else d
    return tl.int32 if d.bits < 32 else d


@builtin("mma")
def mma(cg: CodeGenerator, x: Any, y: Any, acc: Any, use_fast_acc: Any = False) -> Value:
    """``acc + x @ y``, in ``acc``'s dtype (``use_fast_acc``, a Hopper fp8 speed hint, is
    taken: tilec's fp8 products accumulate in float32 either way)."""
    x, y = (_operand(cg, v, "ct.mma", (2, 3)) for v in (x, y))
    acc = _operand(cg, acc, "ct.mma acc", (2, 3))
    return product(cg, x, y, acc, "ct.mma")


@builtin("matmul")
@builtin("dot")  # a @ b
def matmul(cg: CodeGenerator, x: Any, y: Any) -> Value:
    """``x @ y`` in the operands' dtype (accumulated in f32 for 16-bit floats); a 1-D
    operand is a vector, as in NumPy (with a 1-D or 2-D other operand)."""
    x, y = (_operand(cg, v, "ct.matmul", (1, 2, 3)) for v in (x, y))
    if len(x.shape) == 1 or len(y.shape) == 1:
        return _vector_product(cg, x, y)
    r = product(cg, x, y, None, "ct.matmul")
    return r if r.dtype == x.dtype else cast(cg.b, r, x.dtype)


def _vector_product(cg: CodeGenerator, x: Value, y: Value) -> Value:
    """``x @ y`` with a vector: products summed along K (in float32 for narrower floats,
    int32 for narrower integers), in ``x``'s dtype."""
    if max(len(x.shape), len(y.shape)) > 2 or x.shape[-1] != y.shape[0]:
        cg.fail(f"ct.matmul: cannot multiply {x.describe()} by {y.describe()} (a vector "
                f"goes with a vector or a matrix of matching K)")
    wide = _accumulator(x.dtype)
    xw, yw = cast(cg.b, x, wide), cast(cg.b, y, wide)
    if len(x.shape) == 1 and len(y.shape) == 2:  # K @ (K, N)
        xw, axis = shape.reshape(cg, xw, (x.shape[0], 1)), 0
    elif len(y.shape) == 1 and len(x.shape) == 2:  # (M, K) @ K
        yw, axis = shape.reshape(cg, yw, (1, y.shape[0])), 1
    else:
        axis = 0
    r = reduce.sum_(cg, ops.binary(cg.b, "mul", xw, yw), axis)
    return cast(cg.b, r, x.dtype)


@builtin("mma_scaled")
def mma_scaled(cg: CodeGenerator, x: Any, x_scale: Any, y: Any, y_scale: Any,
               acc: Any) -> Value:
    """``(x * x_scale) @ (y * y_scale) + acc``, scaled in registers (module docstring)."""
    tiles = [_matrix(cg, v, what) for v, what in
             ((x, "x"), (x_scale, "x_scale"), (y, "y"), (y_scale, "y_scale"), (acc, "acc"))]
    x, x_scale, y, y_scale, acc = tiles
    (m, k), (n, ks) = x.shape, (y.shape[1], x_scale.shape[1])
    if y.shape[0] != k or x_scale.shape != (m, ks) or y_scale.shape != (ks, n) or \
            k % ks or acc.shape != (m, n):
        cg.fail(f"ct.mma_scaled: shapes x {list(x.shape)}, x_scale {list(x_scale.shape)}, "
                f"y {list(y.shape)}, y_scale {list(y_scale.shape)}, acc {list(acc.shape)} "
                f"do not fit [M, K], [M, K_s], [K, N], [K_s, N], [M, N] with K_s dividing K")
    if acc.dtype != tl.float32:
        cg.fail(f"ct.mma_scaled accumulates in float32, got acc of {acc.dtype}")
    block = k // ks
    xs = _scales(cg, x_scale, (m, ks, 1), (m, ks, block), (m, k))
    ys = _scales(cg, y_scale, (ks, 1, n), (ks, block, n), (k, n))
    exact = x.dtype.is_fp8() and y.dtype.is_fp8() and all(
        s.dtype is tl.uint8 or s.dtype.is_fp8() for s in (x_scale, y_scale))
    xf = ops.binary(cg.b, "mul", cast(cg.b, x, tl.float32), xs)
    yf = ops.binary(cg.b, "mul", cast(cg.b, y, tl.float32), ys)
    return linalg.dot(cg, xf, yf, acc, input_precision="tf32" if exact else None)


def _matrix(cg: CodeGenerator, v: Any, what: str) -> Value:
    if not isinstance(v, Value) or v.is_ptr or len(v.shape) != 2:
        got = v.describe() if isinstance(v, Value) else type(v).__name__
        cg.fail(f"ct.mma_scaled: {what} must be a 2-D tile (tilec has no batched form), "
                f"got {got}")
    return v


def _scales(cg: CodeGenerator, s: Value, expanded: tuple[int, ...],
            repeated: tuple[int, ...], full: tuple[int, ...]) -> Value:
    """Scale tile ``s`` as float32 values, each repeated over its block of K."""
    if s.dtype is tl.uint8:  # e8m0 bits: 2 ** (bits - 127); 0 is 2 ** -127, 255 NaN
        bits = cast(cg.b, s, tl.int32)
        f = TRITON.functions["cast"](cg, ops.binary(cg.b, "lshift", bits, 23), tl.float32,
                                     bitcast=True)
        f = ops.select(cg.b, ops.compare(cg.b, "eq", bits, 0), 2.0 ** -127, f)
        s = ops.select(cg.b, ops.compare(cg.b, "eq", bits, 255), float("nan"), f)
    elif not s.dtype.is_float:
        cg.fail(f"ct.mma_scaled: scales are float tiles or uint8 tiles of e8m0 bits, got "
                f"{s.describe()}")
    s = shape.reshape(cg, cast(cg.b, s, tl.float32), expanded)
    return shape.reshape(cg, shape.broadcast_to(cg, s, repeated), full)
