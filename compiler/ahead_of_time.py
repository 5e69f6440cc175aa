"""``tc.compile``: a kernel compiled ahead of any launch, for an explicit signature
(``{"x": "*f32", "n": "i32"}``, or ``tilec compile -s``) or for example arguments, and how
its errors name those inputs (the keywords, or the command line's flags)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import compiler.language as tl
from compiler import cache, descriptors
from compiler.errors import ArgumentError, LaunchError
from compiler.jit import (
    BACKEND_NAMES,
    BACKENDS,
    CompiledKernel,
    KernelFunction,
    _check_stages,
    _compile,
    _public,
    default_backend,
    resolve_backend,
)
from compiler.kinfo import ArgSpec


@dataclass(frozen=True)
class InputNames:
    """How compile's errors name its inputs: ``tc.compile``'s keywords, or the flags of
    ``tilec compile`` (``CLI_NAMES``), so each message names what the user typed."""

    signature: str = "signature"
    constant: str = "constants={{{name!r}: ...}}"  # how to give constexpr ``name`` a value


CLI_NAMES = InputNames("-s", "-c {name}=...")


def _parse_signature(kf: KernelFunction, signature,
                     names: InputNames = InputNames()) -> dict[str, str]:
    runtime = [n for n in kf.arg_names if n not in kf.constexprs]
    if isinstance(signature, str):
        signature = [s.strip() for s in signature.split(",") if s.strip()]
    if isinstance(signature, (list, tuple)):
        if len(signature) != len(runtime):
            raise LaunchError(f"{names.signature} lists {len(signature)} types for "
                              f"{len(runtime)} runtime parameters ({', '.join(runtime)})")
        signature = dict(zip(runtime, signature))
    missing = [n for n in runtime if n not in signature]
    if missing:
        raise LaunchError(f"{names.signature} has no type for {', '.join(missing)}")
    return dict(signature)


PTX_TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90")


@_public
def compile(fn, signature=None, constants=None, backend: str | None = None,
            num_warps: int | None = None, dump_ir: Any = None, debug: bool = False,
            target: str | None = None, args: Sequence[Any] | None = None,
            num_stages: int | None = None) -> CompiledKernel:
    """Compile a kernel for an explicit signature (``{"x": "*f32", "n": "i32"}``), or for
    example arguments (``args=``, specialized the way a launch would; nothing runs).
    ``num_warps``/``num_stages`` default as a launch's: 4 and 2, or the compiler's
    choice for a ``compiler.tile`` kernel."""
    kf = fn if isinstance(fn, KernelFunction) else KernelFunction(fn)
    num_warps = kf.default_warps if num_warps is None else num_warps
    num_stages = kf.default_stages if num_stages is None else num_stages
    # Compiling needs no device: only "auto" asks which backends work here.
    backend = backend or default_backend()
    backend = resolve_backend(backend) if backend == "auto" else backend
    if backend not in BACKENDS:
        raise LaunchError(f"unknown backend {backend!r}; choose from {BACKEND_NAMES}")
    if num_stages is not None:
        _check_stages(num_stages)
    if target is not None and (backend != "ptx" or target not in PTX_TARGETS):
        raise LaunchError(f"target {target!r}: the ptx backend takes one of {PTX_TARGETS}")
    if args is not None:
        if signature is not None:
            raise LaunchError("give tc.compile a signature= or example args=, not both")
        specs = _example_specs(kf, args, dict(constants or {}))
    elif kf.language == "cutile":
        raise LaunchError("a compiler.tile kernel compiles from example arguments: "
                          "tc.compile(kernel, args=(...))")
    else:
        specs = _signature_specs(kf, signature, constants)
    key = cache.make_key(kf.source, backend, num_warps, debug, specs, target, num_stages)
    ck = _compile(kf.tile_function, specs, backend, num_warps, debug, dump_ir, key, target,
                  num_stages, kf.language)
    if kf.language == "cutile":
        ck.expand_args = kf.expand_args  # pyright: ignore[reportAttributeAccessIssue]
    elif any(s.kind == "descriptor" for s in specs):
        ck.expand_args = descriptors.expand
    return ck


def _example_specs(kf: KernelFunction, args: Sequence[Any], constants: dict) -> list[ArgSpec]:
    """The specialization for example arguments, a bad one named as a launch names it.
    No constant 1 here: a compiled kernel launches with any value of its arguments (a
    descriptor's last stride is 1 whatever it describes)."""
    try:
        specs = kf.specialize(kf.bind(args, constants))
    except ArgumentError as e:
        raise kf._named(e, args, constants) from None
    return [replace(s, one=False) for s in specs]


def _signature_specs(kf: KernelFunction, signature, constants,
                     names: InputNames = InputNames()) -> list[ArgSpec]:
    sig = _parse_signature(kf, signature or {}, names)
    constants = dict(constants or {})
    _check_constants(kf, constants)
    specs = []
    for name in kf.arg_names:
        if name in kf.constexprs:
            if name not in constants and name not in kf.defaults:
                raise LaunchError(f"constexpr {name!r} needs a value: pass "
                                  f"{names.constant.format(name=name)}")
            specs.append(ArgSpec(name, "constexpr", value=constants.get(
                name, kf.defaults.get(name))))
            continue
        # "i32:16" declares an integer divisible by 16 (pointers are taken as 16-byte
        # aligned), which lets masked accesses vectorize, as Triton's specialization does.
        t, _, div = sig[name].strip().partition(":")
        try:
            d = tl.dtype_from_str(t.lstrip("*"))
        except ValueError as e:
            raise LaunchError(f"{names.signature} type of {name!r}: {e}") from None
        if div not in ("", "16"):
            raise LaunchError(f"{names.signature} type of {name!r}: only ':16' divisibility "
                              "is supported")
        if d.is_fp8() and not t.startswith("*"):
            raise LaunchError(f"{names.signature} type of {name!r}: fp8 scalars are not "
                              f"supported (a launch passes a Python float as f32); use f32 "
                              f"or *{d.short}")
        specs.append(ArgSpec(name, "ptr" if t.startswith("*") else "scalar", d,
                             t.startswith("*") or div == "16"))
    return specs


def _check_constants(kf: KernelFunction, constants: dict) -> None:
    """Every constant names a constexpr of ``kf``: a misspelt one must not be ignored."""
    valid = [n for n in kf.arg_names if n in kf.constexprs]
    known = f"its constexprs are {', '.join(valid)}" if valid else "it has no constexprs"
    for name in constants:
        if name in kf.constexprs:
            continue
        runtime = f" ({name!r} is a runtime parameter)" if name in kf.arg_names else ""
        raise LaunchError(f"{kf.__name__} has no constexpr {name!r}{runtime}; {known}")
