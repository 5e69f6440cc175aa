"""WGSL of the kernel itself: bindings, the uniform struct, the entry point, program ids.

Bindings: pointer parameter i (in order among pointers) is ``@binding(i)``, an
``array<T>`` that is ``read_write`` only when the kernel stores through it (8- and 16-bit
elements, bools and bfloat16, and float16 that an atomic adds to: ``array<u32>``,
``array<atomic<u32>>`` when some store or atomic writes part of a word; int64:
``array<i64x1>``, pairs of words); the scalars (int64: two words; bfloat16: an f32,
rounded to bfloat16 in the kernel) and the grid go in one uniform struct at the next
binding. The runtime may fold a grid of more than 65,535 programs along axis 0 into
dispatch x and y (``fold_x`` programs per row, ``fold_n`` rows per program row of axis
1); the entry point rebuilds the program ids and returns at once in the padding programs.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import SSAValue

from backends.wgsl.core import WGSLEmitter, handles, is_bf16, ty
from dialects import simt, tile
from dialects.tile import PtrType

GRID_FIELDS = ("grid_x", "grid_y", "grid_z", "fold_x", "fold_n")
"""The first u32 words of the uniform struct, written by the runtime on every launch."""

_PACKED_BITS = {"i1": 8, "i8": 8, "i16": 16, "bf16": 16}  # bools are bytes, as elsewhere
_UNIFORM_TYPE = {"i32": "i32", "f32": "f32", "f16": "f32", "bool": "u32", "i64": "i64"}
_FROM_UNIFORM = {"i32": "{}", "f32": "{}", "f16": "f16({})", "bool": "{} != 0u"}

_ENTRY = """@compute @workgroup_size({size})
fn main(@builtin(workgroup_id) wg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  // axis 0 may be folded into dispatch x and y (over 65,535 programs)
  let pid_x = wg.x + args.fold_x * (wg.y % args.fold_n);
  if (pid_x >= args.grid_x) {{
    return;  // a padding program of the folded dispatch
  }}"""


@handles(tile.ProgramIdOp)
def program_id(em: WGSLEmitter, op: tile.ProgramIdOp) -> None:
    axis = op.axis.value.data
    em.define(op.result, [("i32(pid_x)", "i32(wg.y / args.fold_n)", "i32(wg.z)")[axis]])


@handles(tile.NumProgramsOp)
def num_programs(em: WGSLEmitter, op: tile.NumProgramsOp) -> None:
    em.define(op.result, [f"i32(args.{GRID_FIELDS[op.axis.value.data]})"])


@handles(simt.ThreadIdOp)
def thread_id(em: WGSLEmitter, op: simt.ThreadIdOp) -> None:
    em.define(op.result, ["i32(lid)"])


@handles(func.ReturnOp)
def return_(_em: WGSLEmitter, _op: func.ReturnOp) -> None:
    """Nothing: the entry point's closing brace returns."""


def _signature(em: WGSLEmitter) -> tuple[list[str], list[str], list[dict], int]:
    """Binding declarations, uniform fields, per-parameter facts, pointer count."""
    stored = {op.base for op in em.fn.walk() if isinstance(op, simt.StoreOp)}
    stored |= em.atomic.keys()
    em.written = stored
    decls, fields, facts = [], [f"{f}: u32," for f in GRID_FIELDS], []
    nptr = 0
    for arg in em.fn.body.block.args:
        if isinstance(arg.type, PtrType):
            facts.append(_pointer(em, arg, nptr, arg in stored, decls))
            nptr += 1
            continue
        elem, name = em.elem(arg.type), em.fresh(arg)
        offset = 4 * len(fields)
        if elem == "i64":  # two words, low first
            fields += [f"{name}_lo: u32,", f"{name}_hi: u32,"]
            em.line(f"let {name} = {ty(elem, 1)}(args.{name}_lo, args.{name}_hi);")
        else:
            fields.append(f"{name}: {_UNIFORM_TYPE[elem]},")
            value = _FROM_UNIFORM[elem].format(f"args.{name}")
            if is_bf16(arg.type):  # the runtime writes the argument as an f32
                value = f"{em.helper('roundbf16', 'f32', 1)}({value})"
            em.line(f"let {name} = {value};")
        em.define(arg, [name])
        facts.append({"kind": "scalar", "offset": offset, "type": _UNIFORM_TYPE[elem]})
    return decls, fields, facts, nptr


def _pointer(em: WGSLEmitter, arg: SSAValue, binding: int, written: bool,
             decls: list[str]) -> dict:
    pointee = arg.type.pointee
    elem, name = em.elem(pointee), em.fresh(arg)
    em.buffers[arg] = name
    access = "read_write" if written else "read"
    if arg in em.atomic and str(pointee) not in ("i32", "f32", "f16", "bf16"):
        raise em.error(f"atomics on {pointee} arrays are not supported by the wgsl backend "
                       "(WGSL atomics are 32-bit)")
    item = f"atomic<{em.atomic[arg]}>" if arg in em.atomic else ty(elem, 1)
    bits = _PACKED_BITS.get(str(pointee))
    if bits is None and arg in em.atomic and str(pointee) == "f16":
        bits = 16  # a 16-bit atomic add is a compare-exchange of its word (atomics.py)
    if bits is not None:  # packed into u32 words (memory.py)
        em.packed[arg] = bits
        stores = [op for op in em.fn.walk() if isinstance(op, simt.StoreOp) and op.base == arg]
        if arg not in em.atomic and all(op.width % (32 // bits) == 0 for op in stores):
            em.whole_words.add(arg)  # aligned whole words
        item = "atomic<u32>" if written and arg not in em.whole_words else "u32"
    decls.append(f"@group(0) @binding({binding}) var<storage, {access}> {name}: "
                 f"array<{item}>;")
    return {"kind": "ptr", "binding": binding, "dtype": elem, "access": access}


def emit_kernel(em: WGSLEmitter) -> tuple[str, dict]:
    """The whole WGSL module of ``em``'s kernel and its facts (see ``emit.emit_wgsl``)."""
    decls, fields, params, nptr = _signature(em)
    em.block(em.fn.body.block)
    size = em.threads()
    out = [f"// tilec kernel {em.fn.sym_name.data} (SIMT IR -> WGSL)"]
    out += ["enable f16;"] if "shader-f16" in em.features else []
    out += ["", "struct Args {"] + [f"  {f}" for f in fields] + ["}", ""] + decls
    out += [f"@group(0) @binding({nptr}) var<uniform> args: Args;", ""]
    out += [h + "\n" for h in em.helpers.values()]
    out += _ENTRY.format(size=size).splitlines() + em.lines + ["}", ""]
    facts = {"name": em.fn.sym_name.data, "entry": "main", "workgroup_size": size,
             "params": params, "features": sorted(em.features),
             "uniform": {"binding": nptr, "size": -(-len(fields) // 4) * 16},
             "subgroup": em.subgroup, "subgroup_xor": em.subgroup_xor, "shared": em.shared}
    return "\n".join(out), facts
