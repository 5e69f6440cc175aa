"""The nvgpu dialect: Hopper's tensor memory accelerator (TMA) and ``mbarrier`` objects in
SIMT IR (as MLIR's ``nvgpu``), between the tile dialect's TMA stages and PTX.

- ``nvgpu.tensor_map``: the TMA descriptor of a strided 2-D array (``base``, ``sizes``
  and ``strides`` in elements, row-major: kernel parameters or constants), read in boxes
  of ``box`` elements with a 128-byte swizzle (or none). The host makes it at launch
  (``cuTensorMapEncodeTiled``) and passes it as a parameter; the result is its address.
- ``nvgpu.mbarrier_init``: thread 0 makes ``count`` barriers of ``arrivals`` arrivals each
  in the 8-byte words of ``bars``; ``nvgpu.mbarrier_inval`` undoes that (before the words
  are reused, or made barriers again).
- ``nvgpu.mbarrier_expect``: where ``pred``, arrive on barrier ``stage`` expecting
  ``bytes`` more bytes to land before its phase completes.
- ``nvgpu.tma_load``: where ``pred``, start copying the box at element coordinates
  ``coords`` (row-major) of ``map`` to ``buffer[index...]`` (elements); its bytes count
  towards barrier ``stage``. Outside the array the box reads zeros.
- ``nvgpu.mbarrier_wait``: every thread waits until barrier ``stage`` has completed the
  phase of parity ``phase``; what the copies wrote is then visible to it.
- ``nvgpu.tma_store``: where ``pred``, start copying ``buffer[index...]`` to the box at
  ``coords`` of ``map`` (the parts outside the array are dropped), in the thread's bulk
  group; ``nvgpu.tma_store_wait``: where ``pred``, close the group and wait until its
  copies have read the buffer (it may then be written again, or the program end).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    i32,
    i64,
)
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dialects.tile import PtrType
from dialects.tile.tma import OnBarriers, check_barriers

SWIZZLES = (0, 128)  # bytes: none, or the 128-byte swizzle wgmma reads
BARRIER_BYTES = 8


@irdl_op_definition
class TensorMapOp(IRDLOperation):
    """The address of the tensor map of the array at ``base`` (see the module)."""

    name = "nvgpu.tensor_map"
    base = operand_def(PtrType)
    sizes = var_operand_def(I32)
    strides = var_operand_def(I32)
    box = prop_def(DenseArrayBase.constr(I64))
    swizzle = prop_def(IntegerAttr[I32])
    result = result_def(I64)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$base `sizes` `[` $sizes `]` `strides` `[` $strides `]` `box` $box"
                       " `swizzle` $swizzle attr-dict `:` type($base)")
    traits = traits_def(Pure())

    def __init__(self, base: SSAValue, sizes: Sequence[SSAValue],
                 strides: Sequence[SSAValue], box: Sequence[int], swizzle: int):
        super().__init__(operands=[base, list(sizes), list(strides)], result_types=[i64],
                         properties={"box": DenseArrayBase.from_list(i64, list(box)),
                                     "swizzle": IntegerAttr(swizzle, i32)})

    def verify_(self) -> None:
        rank = len(self.box.get_values())
        if not 1 <= rank <= 5 or len(self.sizes) != rank or len(self.strides) != rank:
            raise VerifyException("nvgpu.tensor_map: 1 to 5 dimensions, one size, stride "
                                  "and box extent each")
        if any(not 0 < n <= 256 for n in self.box.get_values()):
            raise VerifyException("nvgpu.tensor_map: box extents are 1 to 256")
        if self.swizzle.value.data not in SWIZZLES:
            raise VerifyException(f"nvgpu.tensor_map: swizzle is one of {SWIZZLES}")


@irdl_op_definition
class MbarrierInitOp(IRDLOperation):
    """Thread 0 makes every barrier of ``bars`` one of ``arrivals`` arrivals."""

    name = "nvgpu.mbarrier_init"
    bars = operand_def(MemRefType)
    arrivals = prop_def(IntegerAttr[I32])
    assembly_format = "$bars `arrivals` $arrivals attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, arrivals: int):
        super().__init__(operands=[bars], properties={"arrivals": IntegerAttr(arrivals, i32)})

    def verify_(self) -> None:
        check_barriers(self, self.bars.type)


@irdl_op_definition
class MbarrierInvalOp(OnBarriers):
    """Thread 0 invalidates every barrier of ``bars``."""

    name = "nvgpu.mbarrier_inval"


@irdl_op_definition
class MbarrierExpectOp(IRDLOperation):
    """Where ``pred``: arrive on barrier ``stage``, expecting ``bytes`` more bytes."""

    name = "nvgpu.mbarrier_expect"
    bars = operand_def(MemRefType)
    stage = operand_def(I32)
    pred = operand_def(I1)
    bytes = prop_def(IntegerAttr[I32])
    assembly_format = "$bars `[` $stage `]` `,` $bytes `if` $pred attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, stage: SSAValue, pred: SSAValue, nbytes: int):
        super().__init__(operands=[bars, stage, pred],
                         properties={"bytes": IntegerAttr(nbytes, i32)})

    def verify_(self) -> None:
        check_barriers(self, self.bars.type)


@irdl_op_definition
class TmaLoadOp(IRDLOperation):
    """Where ``pred``: copy the box of ``map`` at ``coords`` to ``buffer`` from element
    ``index``, counted by barrier ``stage`` of ``bars``."""

    name = "nvgpu.tma_load"
    map = operand_def(I64)
    coords = var_operand_def(I32)
    buffer = operand_def(MemRefType)
    index = operand_def(I32)
    bars = operand_def(MemRefType)
    stage = operand_def(I32)
    pred = operand_def(I1)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$map `[` $coords `]` `to` $buffer `[` $index `]` `,` $bars `[` $stage"
                       " `]` `if` $pred attr-dict `:` type($buffer) `,` type($bars)")

    def __init__(self, tensor_map: SSAValue, coords: Sequence[SSAValue], buffer: SSAValue,
                 index: SSAValue, bars: SSAValue, stage: SSAValue, pred: SSAValue):
        super().__init__(operands=[tensor_map, list(coords), buffer, index, bars, stage,
                                   pred])

    def verify_(self) -> None:
        check_barriers(self, self.bars.type)
        if not 1 <= len(self.coords) <= 5:
            raise VerifyException("nvgpu.tma_load: 1 to 5 coordinates")


@irdl_op_definition
class TmaStoreOp(IRDLOperation):
    """Where ``pred``: copy ``buffer`` from element ``index`` to the box of ``map`` at
    ``coords``."""

    name = "nvgpu.tma_store"
    map = operand_def(I64)
    coords = var_operand_def(I32)
    buffer = operand_def(MemRefType)
    index = operand_def(I32)
    pred = operand_def(I1)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = ("$buffer `[` $index `]` `to` $map `[` $coords `]` `if` $pred attr-dict"
                       " `:` type($buffer)")

    def __init__(self, tensor_map: SSAValue, coords: Sequence[SSAValue], buffer: SSAValue,
                 index: SSAValue, pred: SSAValue):
        super().__init__(operands=[tensor_map, list(coords), buffer, index, pred])

    def verify_(self) -> None:
        if not 1 <= len(self.coords) <= 5:
            raise VerifyException("nvgpu.tma_store: 1 to 5 coordinates")


@irdl_op_definition
class TmaStoreWaitOp(IRDLOperation):
    """Where ``pred``: wait until the thread's ``nvgpu.tma_store`` copies have read their
    buffers."""

    name = "nvgpu.tma_store_wait"
    pred = operand_def(I1)
    assembly_format = "`if` $pred attr-dict"

    def __init__(self, pred: SSAValue):
        super().__init__(operands=[pred])


@irdl_op_definition
class MbarrierWaitOp(IRDLOperation):
    """Wait until barrier ``stage`` has completed the phase of parity ``phase``."""

    name = "nvgpu.mbarrier_wait"
    bars = operand_def(MemRefType)
    stage = operand_def(I32)
    phase = operand_def(I32)
    assembly_format = "$bars `[` $stage `]` `,` $phase attr-dict `:` type($bars)"

    def __init__(self, bars: SSAValue, stage: SSAValue, phase: SSAValue):
        super().__init__(operands=[bars, stage, phase])

    def verify_(self) -> None:
        check_barriers(self, self.bars.type)


NVGPU = Dialect("nvgpu", [TensorMapOp, MbarrierInitOp, MbarrierInvalOp, MbarrierExpectOp,
                          TmaLoadOp, MbarrierWaitOp, TmaStoreOp, TmaStoreWaitOp], [])
