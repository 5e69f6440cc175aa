"""The core of the PTX printer: ``KernelPrinter`` (one kernel's register naming and
lines), the printing of straight-line ops (arithmetic, immediates, parameters, global
memory), and the emitter table the feature modules (``print_*.py``) register into with
``@emits(OpClass)``.

Each SSA value gets one virtual register per lane, named by register class (``%f3``,
``%rd7``); ``ptx.lanes`` reuses registers instead of copying them. Lane-wise ops print
once per lane, and a comment ``// file:line`` marks where the kernel source line changes,
so nvJitLink's error log (which names a PTX line) leads back to the kernel. This module
imports no feature module.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    StringAttr,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from backends.ptx import bf16_bits
from compiler.errors import UnsupportedError
from dialects import ptx
from dialects.tile import (
    ASM_OPERAND,
    CACHE_MODIFIER_ATTR,
    EVICTION_POLICY_ATTR,
    PtrType,
    element_type,
)

# Kernel parameter type -> the .param type the driver copies the argument into.
_PARAM_TYPES: dict[Attribute, str] = {
    IntegerType(1): "u8", IntegerType(8): "u8", IntegerType(16): "u16",
    IntegerType(32): "u32", IntegerType(64): "u64", Float16Type(): "b16",
    BFloat16Type(): "b16", Float32Type(): "f32", Float64Type(): "f64",
}
# Element type -> the type ld/st.global/shared move (i8 registers are 16 bits wide).
MEMORY_TYPES: dict[Attribute, str] = {
    IntegerType(8): "u8", IntegerType(16): "b16", IntegerType(32): "b32",
    IntegerType(64): "b64", Float16Type(): "b16", BFloat16Type(): "b16",
    Float32Type(): "f32", Float64Type(): "f64",
}


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _signed(v: int, bits: int) -> int:
    """``v`` read as a ``bits``-wide signed integer (attributes may hold either spelling)."""
    return (v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


MIN_BLOCKS_ATTR = "ptx.minnctapersm"  # programs per SM that ptxas must fit (registers)
# Element type -> (mov opcode, immediate formatter).
_IMMEDIATES: dict[Attribute, tuple[str, Callable[[float | int], str]]] = {
    IntegerType(1): ("mov.pred", lambda v: str(int(v) & 1)),
    IntegerType(8): ("mov.u16", lambda v: str(int(v) & 0xFFFF)),
    IntegerType(16): ("mov.u16", lambda v: str(int(v) & 0xFFFF)),
    IntegerType(32): ("mov.s32", lambda v: str(_signed(int(v), 32))),
    IntegerType(64): ("mov.s64", lambda v: str(_signed(int(v), 64))),
    Float16Type(): ("mov.b16", lambda v: f"0x{int(np.float16(v).view(np.uint16)):04X}"),
    BFloat16Type(): ("mov.b16", lambda v: f"0x{bf16_bits(float(v)):04X}"),
    Float32Type(): ("mov.f32", lambda v: f"0f{_f32_bits(float(v)):08X}"),
    Float64Type(): ("mov.f64",
                    lambda v: f"0d{struct.unpack('<Q', struct.pack('<d', float(v)))[0]:016X}"),
}


def _cache_qualifier(op: Operation) -> str:
    """A global access's ``tl.load``/``tl.store`` cache option as PTX spells it: Triton's
    ``cache_modifier`` is PTX's own ``.cop``; PTX takes an L1 eviction priority only in
    place of one, so ``eviction_policy`` applies when no ``cache_modifier`` is given."""
    cop, evict = (op.attributes.get(a) for a in (CACHE_MODIFIER_ATTR, EVICTION_POLICY_ATTR))
    if isinstance(cop, StringAttr):
        return cop.data
    return f".L1::{evict.data}" if isinstance(evict, StringAttr) else ""


Emitter = Callable[["KernelPrinter", Operation], None]
EMITTERS: dict[type, Emitter] = {}


def emits(*classes: type) -> Callable[[Callable], Callable]:
    """Register the decorated function as the printer of ops of ``classes``."""
    def register(emitter: Callable) -> Callable:
        for cls in classes:
            EMITTERS[cls] = emitter
        return emitter
    return register


class KernelPrinter:
    """Prints one kernel; register numbering and the last source line are per kernel."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.regs: dict[SSAValue, list[str]] = {}
        self.counts: dict[str, int] = {}
        self.labels = 0  # labels of ptx.asm ops
        self.lines: list[str] = []
        self.last_loc: tuple[str, int] | None = None
        self.shared: list[str] = []  # .shared declarations (print_cross_thread)
        self.globals: list[str] = []  # module-scope declarations: dynamic .extern .shared

    def print(self) -> str:
        if len(self.kernel.body.blocks) != 1:
            raise UnsupportedError("ptx printer: kernels with control flow are not supported yet")
        for op in self.kernel.body.block.ops:
            self._comment(op)
            EMITTERS.get(type(op), KernelPrinter._unknown)(self, op)
        body = self._declarations() + self.shared + self.lines
        return "\n".join(self.globals + self._header() + ["{"] + body + ["}"])

    def _header(self) -> list[str]:
        args = self.kernel.body.block.args
        params = [f"\t.param .{self._param_type(a)} {self.name}_param_{i}"
                  for i, a in enumerate(args)]
        slots = {op.slot.value.data for op in self.kernel.walk()
                 if isinstance(op, ptx.TensorMapParamOp)}
        params += [f"\t.param .align {ptx.TENSOR_MAP_ALIGN} .b8 {self.tensor_map(s)}"
                   f"[{ptx.TENSOR_MAP_BYTES}]" for s in range(len(slots))]
        threads = self.kernel.attributes["ptx.maxntid"]
        assert isinstance(threads, IntegerAttr)
        blocks = self.kernel.attributes.get(MIN_BLOCKS_ATTR)  # an occupancy ptxas must keep
        return [f".visible .entry {self.name}(", ",\n".join(params), ")",
                f".maxntid {threads.value.data}, 1, 1",
                *([f".minnctapersm {blocks.value.data}"] if isinstance(blocks, IntegerAttr)
                  else [])]

    def _declarations(self) -> list[str]:
        classes = {prefix: cls for cls, prefix in ptx.REGISTER_CLASSES.values()}
        return [f"\t.reg .{classes[p]} {p}<{n + 1}>;" for p, n in self.counts.items()]

    def tensor_map(self, slot: int) -> str:
        """The parameter of tensor map ``slot``: after the kernel's own."""
        return f"{self.name}_param_{len(self.kernel.body.block.args) + slot}"

    @staticmethod
    def _param_type(arg: SSAValue) -> str:
        return "u64" if isinstance(arg.type, PtrType) else _PARAM_TYPES[arg.type]

    def _comment(self, op: Operation) -> None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            key = (loc.filename.data, loc.line.data)
            if key != self.last_loc:
                self.lines.append(f"\t// {key[0]}:{key[1]}")
                self.last_loc = key

    def line(self, text: str) -> None:
        self.lines.append(f"\t{text};")

    def reg(self, v: SSAValue) -> list[str]:
        """The registers of ``v``, allocating them on first sight."""
        if v not in self.regs:
            prefix = ptx.REGISTER_CLASSES[element_type(v.type)][1]
            first = self.counts.get(prefix, 0) + 1
            self.counts[prefix] = first + ptx.lanes(v.type) - 1
            self.regs[v] = [f"{prefix}{first + i}" for i in range(ptx.lanes(v.type))]
        return self.regs[v]

    def scratch(self, like: str) -> str:
        """A fresh register of the class whose names start like ``like`` (``%f3``: ``%f``)."""
        prefix = like.rstrip("0123456789")
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}{self.counts[prefix]}"

    def lane(self, v: SSAValue, i: int) -> str:
        regs = self.reg(v)
        return regs[i] if len(regs) > 1 else regs[0]

    # -- one method per op ---------------------------------------------------------------

    @emits(ptx.InstOp)
    def _inst(self, op: ptx.InstOp) -> None:
        if op.into is not None:
            self.regs[op.result] = self.reg(op.args[op.into.value.data])
        for i, d in enumerate(self.reg(op.result)):
            self.line(f"{op.opcode.data} {', '.join([d] + [self.lane(a, i) for a in op.args])}")

    @emits(ptx.UserAsmOp)
    def _user_asm(self, op: ptx.UserAsmOp) -> None:
        for i in range(ptx.lanes(op.outs[0].type)):
            regs = [self.lane(v, i) for v in (*op.outs, *op.args)]
            text = ASM_OPERAND.sub(lambda m, regs=regs: regs[int(m.group(1))], op.text.data)
            self.lines += ["\t{", "\t" + text.strip(), "\t}"]  # a `//` comment ends in it

    @emits(ptx.MovImmOp)
    def _mov_imm(self, op: ptx.MovImmOp) -> None:
        value = op.value
        values = (value.get_values() if isinstance(value, DenseIntOrFPElementsAttr)
                  else [value.value.data])
        opcode, fmt = _IMMEDIATES[element_type(op.result.type)]
        for d, v in zip(self.reg(op.result), values, strict=True):
            self.line(f"{opcode} {d}, {fmt(v)}")

    @emits(ptx.LanesOp)
    def _lanes(self, op: ptx.LanesOp) -> None:
        source = self.reg(op.source)
        self.regs[op.result] = [source[i] for i in op.indices.get_values()]

    @emits(ptx.LdParamOp)
    def _ld_param(self, op: ptx.LdParamOp) -> None:
        arg = op.param
        assert isinstance(arg, BlockArgument)
        self.line(f"ld.param.{self._param_type(arg)} {self.reg(op.result)[0]}, "
                  f"[{self.name}_param_{arg.index}]")

    @emits(ptx.SRegOp)
    def _sreg(self, op: ptx.SRegOp) -> None:
        self.line(f"mov.u32 {self.reg(op.result)[0]}, {op.reg.data}")

    def _global(self, op: ptx.LdGlobalOp | ptx.StGlobalOp, kind: str, value: SSAValue) -> None:
        vec, mtype = op.width, MEMORY_TYPES[element_type(value.type)]
        wide = f".v{vec}" if vec > 1 else ""
        regs = self.reg(value)
        for g, addr in enumerate(self.reg(op.addr)):
            guard = f"@{self.lane(op.pred, g)} " if op.pred is not None else ""
            group = regs[g * vec:(g + 1) * vec]
            data = group[0] if vec == 1 else "{" + ", ".join(group) + "}"
            access = f"{data}, [{addr}]" if kind == "ld" else f"[{addr}], {data}"
            self.line(f"{guard}{kind}.global{_cache_qualifier(op)}{wide}.{mtype} {access}")

    @emits(ptx.LdGlobalOp)
    def _ld_global(self, op: ptx.LdGlobalOp) -> None:
        if op.other is not None and op.pred is not None:
            cls = ptx.REGISTER_CLASSES[element_type(op.result.type)][0]
            for i, d in enumerate(self.reg(op.result)):
                self.line(f"mov.{cls} {d}, {self.lane(op.other, i)}")
        self._global(op, "ld", op.result)

    @emits(ptx.StGlobalOp)
    def _st_global(self, op: ptx.StGlobalOp) -> None:
        self._global(op, "st", op.value)

    @emits(func.ReturnOp)
    def _return(self, _op: func.ReturnOp) -> None:
        self.line("ret")

    def _unknown(self, op: Operation) -> None:
        raise UnsupportedError(f"ptx printer: {op.name} is not a ptx-dialect op")

