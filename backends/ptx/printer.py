"""ptx-dialect module -> PTX text, one instruction a line.

Each SSA value gets one virtual register per lane, named by register class (``%f3``,
``%rd7``); ``ptx.lanes`` reuses registers instead of copying them. Lane-wise ops print
once per lane, and a comment ``// file:line`` marks where the kernel source line changes,
so nvJitLink's error log (which names a PTX line) leads back to the kernel.
"""

from __future__ import annotations

import re
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
    ModuleOp,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from backends.ptx import bf16_bits
from backends.ptx.print_atomics import emit_atom, emit_atom_loop
from backends.ptx.print_control import emit_assign, emit_bra, emit_label, emit_reg
from backends.ptx.print_cross_thread import EMITTERS as CROSS_THREAD
from compiler.errors import UnsupportedError
from dialects import ptx
from dialects.tile import PtrType, element_type

# Kernel parameter type -> the .param type the driver copies the argument into.
_PARAM_TYPES: dict[Attribute, str] = {
    IntegerType(1): "u8", IntegerType(8): "u8", IntegerType(16): "u16",
    IntegerType(32): "u32", IntegerType(64): "u64", Float16Type(): "b16",
    BFloat16Type(): "b16", Float32Type(): "f32", Float64Type(): "f64",
}
# Element type -> the type ld/st.global move (i8 registers are 16 bits wide).
_MEMORY_TYPES: dict[Attribute, str] = {
    IntegerType(8): "u8", IntegerType(16): "b16", IntegerType(32): "b32",
    IntegerType(64): "b64", Float16Type(): "b16", BFloat16Type(): "b16",
    Float32Type(): "f32", Float64Type(): "f64",
}


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _signed(v: int, bits: int) -> int:
    """``v`` read as a ``bits``-wide signed integer (attributes may hold either spelling)."""
    return (v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


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


def ptx_version(arch: str) -> str:
    """The PTX ISA version to declare for ``arch`` (sm_80 and newer)."""
    m = re.fullmatch(r"sm_(\d+)[af]?", arch)
    if m is None or int(m.group(1)) < 80:
        raise UnsupportedError(f"ptx backend: target {arch!r} is not supported (sm_80 or newer)")
    sm = int(m.group(1))
    return "8.7" if sm >= 120 else "8.6" if sm >= 100 else "8.0"


class KernelPrinter:
    """Prints one kernel; register numbering and the last source line are per kernel."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.name = kernel.sym_name.data
        self.regs: dict[SSAValue, list[str]] = {}
        self.counts: dict[str, int] = {}
        self.lines: list[str] = []
        self.last_loc: tuple[str, int] | None = None
        self.shared: list[str] = []  # .shared declarations (print_cross_thread)

    def print(self) -> str:
        if len(self.kernel.body.blocks) != 1:
            raise UnsupportedError("ptx printer: kernels with control flow are not supported yet")
        for op in self.kernel.body.block.ops:
            self._comment(op)
            _EMITTERS.get(type(op), KernelPrinter._unknown)(self, op)
        body = self._declarations() + self.shared + self.lines
        return "\n".join(self._header() + ["{"] + body + ["}"])

    def _header(self) -> list[str]:
        args = self.kernel.body.block.args
        params = [f"\t.param .{self._param_type(a)} {self.name}_param_{i}"
                  for i, a in enumerate(args)]
        threads = self.kernel.attributes["ptx.maxntid"]
        assert isinstance(threads, IntegerAttr)
        return [f".visible .entry {self.name}(", ",\n".join(params), ")",
                f".maxntid {threads.value.data}, 1, 1"]

    def _declarations(self) -> list[str]:
        classes = {prefix: cls for cls, prefix in ptx.REGISTER_CLASSES.values()}
        return [f"\t.reg .{classes[p]} {p}<{n + 1}>;" for p, n in self.counts.items()]

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

    def lane(self, v: SSAValue, i: int) -> str:
        regs = self.reg(v)
        return regs[i] if len(regs) > 1 else regs[0]

    # -- one method per op ---------------------------------------------------------------

    def _inst(self, op: ptx.InstOp) -> None:
        for i, d in enumerate(self.reg(op.result)):
            self.line(f"{op.opcode.data} {', '.join([d] + [self.lane(a, i) for a in op.args])}")

    def _mov_imm(self, op: ptx.MovImmOp) -> None:
        value = op.value
        values = (value.get_values() if isinstance(value, DenseIntOrFPElementsAttr)
                  else [value.value.data])
        opcode, fmt = _IMMEDIATES[element_type(op.result.type)]
        for d, v in zip(self.reg(op.result), values, strict=True):
            self.line(f"{opcode} {d}, {fmt(v)}")

    def _lanes(self, op: ptx.LanesOp) -> None:
        source = self.reg(op.source)
        self.regs[op.result] = [source[i] for i in op.indices.get_values()]

    def _ld_param(self, op: ptx.LdParamOp) -> None:
        arg = op.param
        assert isinstance(arg, BlockArgument)
        self.line(f"ld.param.{self._param_type(arg)} {self.reg(op.result)[0]}, "
                  f"[{self.name}_param_{arg.index}]")

    def _sreg(self, op: ptx.SRegOp) -> None:
        self.line(f"mov.u32 {self.reg(op.result)[0]}, {op.reg.data}")

    def _global(self, op: ptx.LdGlobalOp | ptx.StGlobalOp, kind: str, value: SSAValue) -> None:
        vec, mtype = op.width, _MEMORY_TYPES[element_type(value.type)]
        wide = f".v{vec}" if vec > 1 else ""
        regs = self.reg(value)
        for g, addr in enumerate(self.reg(op.addr)):
            guard = f"@{self.lane(op.pred, g)} " if op.pred is not None else ""
            group = regs[g * vec:(g + 1) * vec]
            data = group[0] if vec == 1 else "{" + ", ".join(group) + "}"
            access = f"{data}, [{addr}]" if kind == "ld" else f"[{addr}], {data}"
            self.line(f"{guard}{kind}.global{wide}.{mtype} {access}")

    def _ld_global(self, op: ptx.LdGlobalOp) -> None:
        if op.other is not None and op.pred is not None:
            cls = ptx.REGISTER_CLASSES[element_type(op.result.type)][0]
            for i, d in enumerate(self.reg(op.result)):
                self.line(f"mov.{cls} {d}, {self.lane(op.other, i)}")
        self._global(op, "ld", op.result)

    def _st_global(self, op: ptx.StGlobalOp) -> None:
        self._global(op, "st", op.value)

    def _return(self, _op: func.ReturnOp) -> None:
        self.line("ret")

    def _unknown(self, op: Operation) -> None:
        raise UnsupportedError(f"ptx printer: {op.name} is not a ptx-dialect op")


_EMITTERS: dict[type, Callable[[KernelPrinter, Operation], None]] = {
    ptx.InstOp: KernelPrinter._inst, ptx.MovImmOp: KernelPrinter._mov_imm,
    ptx.LanesOp: KernelPrinter._lanes, ptx.LdParamOp: KernelPrinter._ld_param,
    ptx.SRegOp: KernelPrinter._sreg, ptx.LdGlobalOp: KernelPrinter._ld_global,
    ptx.StGlobalOp: KernelPrinter._st_global, func.ReturnOp: KernelPrinter._return,
    ptx.AtomOp: emit_atom, ptx.AtomLoopOp: emit_atom_loop,
    ptx.LabelOp: emit_label, ptx.BraOp: emit_bra, ptx.RegOp: emit_reg, ptx.AssignOp: emit_assign,
} | CROSS_THREAD


def print_ptx(module: ModuleOp, arch: str = "sm_90") -> str:
    """PTX text for every kernel of a ptx-dialect module, for target ``arch``."""
    head = ["//", "// Generated by tilec", "//", f".version {ptx_version(arch)}",
            f".target {arch}", ".address_size 64", ""]
    kernels = [KernelPrinter(k).print() for k in module.ops if isinstance(k, func.FuncOp)]
    return "\n".join(head) + "\n" + "\n\n".join(kernels) + "\n"
