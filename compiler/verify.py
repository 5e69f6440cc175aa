"""``verify=True``: run a launch on its backend and on NumPy, compare what was written."""

from __future__ import annotations

import numpy as np

from compiler.device_views import DeviceView
from compiler.errors import LaunchError, VerificationError
from compiler.language import dtype_from_str

# (rtol, atol) by dtype: the GPU backends use fast transcendental instructions; an fp8
# result may be one step away (an f32 sum in another order, rounded): its relative step
# and its smallest subnormal.
_TOLERANCE = {"f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2), "f32": (1e-4, 1e-5),
              "f64": (1e-9, 1e-12), "fp8e4nv": (2.0**-3, 2.0**-9),
              "fp8e5": (2.0**-2, 2.0**-16)}


def to_numpy(a, dtype: str) -> np.ndarray:
    """A host copy of a NumPy, CuPy, PyTorch, wgpu or tilec array argument of ``dtype``."""
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, DeviceView):  # tc.empty's, tc.wgsl_array's
        return a.numpy()
    if hasattr(a, "get") and hasattr(a, "__cuda_array_interface__"):
        return a.get()
    if hasattr(a, "detach"):
        return a.detach().cpu().numpy()
    if type(a).__name__ == "GPUBuffer":
        from backends.wgsl import read_buffer
        return read_buffer(a, dtype_from_str(dtype).numpy)
    raise VerificationError(f"cannot read back an argument of type {type(a).__name__}")


def verified_launch(ck, grid, args) -> None:
    from backends import numpy as np_backend
    info = ck.metadata
    if info.extra.get("addresses"):
        raise LaunchError("verify=True cannot check a kernel that casts addresses to "
                          "pointers (tl.pointer_type): the NumPy reference runs on copies "
                          "of the arrays, which those addresses do not point into")
    ref_args = [to_numpy(a, p.dtype) if p.is_ptr else a
                for p, a in zip(info.params, args, strict=True)]
    ck.launcher(grid, args)
    ref_info = type(info)(**{**info.__dict__, "backend": "numpy"})
    np_backend.run(_reference_module(ck.asm["tile"]), ref_info, grid, ref_args)
    dot_tol = info.extra.get("dot_tolerance", 0.0)
    for p, got_arg, want in zip(info.params, args, ref_args, strict=True):
        if p.is_ptr and p.written:
            _compare(p.name, to_numpy(got_arg, p.dtype).reshape(-1), want.reshape(-1), p.dtype,
                     dot_tol)


def _reference_module(tile_ir: str):
    """The frontend's tile IR as the NumPy backend takes it: array views lowered."""
    from compiler.context import make_context, parse_module
    from compiler.passes.lower_array_views import LowerArrayViews
    module = parse_module(tile_ir)
    LowerArrayViews().apply(make_context(), module)
    return module


def _compare(name: str, got: np.ndarray, want: np.ndarray, dtype: str,
             dot_tol: float = 0.0) -> None:
    """Floats within the dtype's tolerance, and for kernels with dots within ``dot_tol``
    of the largest value written (a dot's error scales with its sums, not each element);
    other types exactly."""
    if dtype in _TOLERANCE:
        rtol, atol = _TOLERANCE[dtype]
        g, w = got.astype(np.float64), want.astype(np.float64)
        finite = np.isfinite(w)
        if dot_tol and finite.any():
            atol = max(atol, dot_tol * float(np.abs(w[finite]).max()))
        bad = ~(np.isclose(g, w, rtol=rtol, atol=atol) | (np.isnan(g) & np.isnan(w)))
    else:
        bad = got != want
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise VerificationError(
            f"{name}[{i}] = {got[i].item()!r} on the backend but {want[i].item()!r} on numpy "
            f"({int(bad.sum())} of {bad.size} elements differ)")
