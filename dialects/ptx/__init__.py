"""The ptx dialect: PTX instructions on typed virtual registers.

A register is an SSA value of a builtin scalar type (``i1`` is a predicate, ``i8`` lives
in a 16-bit register whose upper bits are unspecified). A ``vector<K x T>`` value is K
registers used lane-wise, so the IR stays as long as the SIMT IR it came from: the
printer expands a lane-wise op into K instructions, and a scalar operand of a lane-wise
op is broadcast to every lane. The kernel is a ``func.func`` whose arguments keep their
tilec types; only ``ptx.ld_param`` reads them.

One module per family: ``core`` (registers, arithmetic, memory, control), ``mma``
(tensor cores) and ``tma`` (Hopper's tensor maps, bulk copies and mbarriers); this module
assembles the dialect and re-exports every name (``ptx.InstOp``).
"""

from xdsl.ir import Dialect

from dialects.ptx.core import (
    REGISTER_CLASSES,
    SPECIAL_REGISTERS,
    AssignOp,
    AtomLoopOp,
    AtomOp,
    BarOp,
    BraOp,
    ConcatOp,
    CpAsyncOp,
    InstOp,
    LabelOp,
    LanesOp,
    LdGlobalOp,
    LdParamOp,
    LdSharedOp,
    MovImmOp,
    PlainOp,
    RegOp,
    SharedOp,
    SRegOp,
    StGlobalOp,
    StSharedOp,
    UserAsmOp,
    check_register,
    lanes,
    param_register_type,
    register_source,
)
from dialects.ptx.mma import LdMatrixOp, MmaOp, RepackOp, has_wgmma, is_wgmma
from dialects.ptx.tma import TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES, AsmOp, TensorMapParamOp

PTX = Dialect("ptx", [LabelOp, BraOp, RegOp, AssignOp,
                     InstOp, MovImmOp, LanesOp, LdParamOp, SRegOp, LdGlobalOp, StGlobalOp,
                     AtomOp, AtomLoopOp, SharedOp, LdSharedOp, StSharedOp, BarOp, ConcatOp,
                     LdMatrixOp, MmaOp, RepackOp, CpAsyncOp, PlainOp, AsmOp, TensorMapParamOp, UserAsmOp],
              [])

__all__ = ["PTX", "REGISTER_CLASSES", "SPECIAL_REGISTERS", "TENSOR_MAP_ALIGN",
           "TENSOR_MAP_BYTES", "AsmOp", "AssignOp", "AtomLoopOp", "AtomOp", "BarOp", "BraOp",
           "ConcatOp", "CpAsyncOp", "InstOp", "LabelOp", "LanesOp", "LdGlobalOp", "LdMatrixOp",
           "LdParamOp", "LdSharedOp", "MmaOp", "MovImmOp", "PlainOp", "RegOp", "RepackOp",
           "SRegOp", "SharedOp", "StGlobalOp", "StSharedOp", "TensorMapParamOp", "UserAsmOp",
           "check_register", "has_wgmma", "is_wgmma", "lanes", "param_register_type", "register_source"]
