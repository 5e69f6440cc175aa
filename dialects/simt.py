"""The simt dialect: what one thread of a program does, independent of the target.

After ``tile-to-simt`` a kernel is per-thread code: scalars, and the part of a tile a
thread owns as one ``vector<K x T>`` value (K elements, expanded by the emitters into K
registers or locals). Elementwise math stays ``arith``/``math`` (and ``tile.cmpi``,
``tile.cmpf``, ``tile.select``, which accept vectors), program ids stay
``tile.program_id``/``tile.num_programs``, splats are ``vector.broadcast``. This dialect
adds what those lack: the thread index and global memory access as (kernel argument,
element index), asynchronous copies from global to shared memory (``cp_async``), and the
warp-level matrix ops of tensor cores (``ldmatrix``, ``mma``; Hopper's warpgroup ``wgmma``).
Not xDSL's ``gpu.thread_id``: its result is ``index`` and both our targets
compute with 32-bit thread ids.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I32,
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    UnitAttr,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import NoMemoryEffect
from xdsl.utils.exceptions import VerifyException

from dialects.tile import (
    PtrType,
    check_atomic,
    check_order,
    element_type,
    i1_like,
    like,
    order_properties,
)

f16, bf16, f32 = Float16Type(), BFloat16Type(), Float32Type()


class _IdOp(IRDLOperation):
    result = result_def(IntegerType)
    assembly_format = "attr-dict `:` type($result)"
    traits = traits_def(NoMemoryEffect())

    def __init__(self):
        super().__init__(result_types=[i32])


@irdl_op_definition
class ThreadIdOp(_IdOp):
    """This thread's index within its program, 0 .. 32 * num_warps - 1."""

    name = "simt.thread_id"


@irdl_op_definition
class WarpIdOp(_IdOp):
    """This thread's warp, ``thread_id / 32``: the same in every lane, so a target may keep
    it and what is computed from it (a warpgroup's descriptors) in the warp's registers."""

    name = "simt.warp_id"


def _lanes(t: Attribute) -> int:
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


def _check_access(op: IRDLOperation, base: SSAValue, index: SSAValue,
                  value_type: Attribute, mask: SSAValue | None, vec: int) -> None:
    if like(index.type, base.type.pointee) != value_type:
        raise VerifyException(f"{op.name} value must be the pointee in the index's shape")
    if mask is not None and mask.type != i1_like(index.type):
        raise VerifyException(f"{op.name} mask must be i1 in the index's shape")
    if vec < 1 or _lanes(index.type) % vec:
        raise VerifyException(f"{op.name} vec must divide the number of lanes")


class _Access(IRDLOperation):
    """An access whose ``vec`` consecutive lanes have consecutive, ``vec``-aligned indices
    (and one mask value), so a target may move them as one wide access."""

    vec = opt_prop_def(IntegerAttr[I32])
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    @property
    def width(self) -> int:
        return 1 if self.vec is None else self.vec.value.data


@irdl_op_definition
class LoadOp(_Access):
    """Per lane, ``base[index]`` where ``mask`` holds, else ``other``.

    ``vec`` consecutive lanes have consecutive, ``vec``-aligned indices and one mask
    value, so a target may read them with one wide access.
    """

    name = "simt.load"
    T: ClassVar = VarConstraint("T", AnyAttr())
    base = operand_def(PtrType)
    index = operand_def()
    mask = opt_operand_def()
    other = opt_operand_def(T)
    result = result_def(T)
    assembly_format = (
        "$base `[` $index `]` (`mask` $mask^ `:` type($mask))? (`other` $other^)? attr-dict"
        " `:` type($base) `,` type($index) `->` type($result)"
    )

    def __init__(self, base: SSAValue, index: SSAValue, mask: SSAValue | None = None,
                 other: SSAValue | None = None, vec: int = 1):
        assert isinstance(base.type, PtrType)
        super().__init__(operands=[base, index, mask, other],
                         result_types=[like(index.type, base.type.pointee)],
                         properties={"vec": IntegerAttr(vec, i32)})

    def verify_(self) -> None:
        _check_access(self, self.base, self.index, self.result.type, self.mask, self.width)


@irdl_op_definition
class StoreOp(_Access):
    """Per lane, ``base[index] = value`` where ``mask`` holds (``vec`` as for load)."""

    name = "simt.store"
    base = operand_def(PtrType)
    index = operand_def()
    value = operand_def()
    mask = opt_operand_def()
    assembly_format = (
        "$base `[` $index `]` `,` $value (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($base) `,` type($index) `,` type($value)"
    )

    def __init__(self, base: SSAValue, index: SSAValue, value: SSAValue,
                 mask: SSAValue | None = None, vec: int = 1):
        super().__init__(operands=[base, index, value, mask],
                         properties={"vec": IntegerAttr(vec, i32)})

    def verify_(self) -> None:
        _check_access(self, self.base, self.index, self.value.type, self.mask, self.width)


SHARED = 3  # memref memory space of a program's shared (workgroup) memory, as in NVVM


def is_shared(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and t.memory_space == IntegerAttr(SHARED, i32)


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """A program-wide buffer in shared (workgroup) memory: ``memref<N x T, 3 : i32>``,
    aligned to ``align`` bytes (16 if absent; 1024 for a 128-byte-swizzled stage), at
    byte ``offset`` where a pass placed it (``place-shared``), else after the others."""

    name = "simt.shared_alloc"
    result = result_def(MemRefType)
    align = opt_prop_def(IntegerAttr[I32])
    offset = opt_prop_def(IntegerAttr[I32])
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, elem: Attribute, size: int, align: int = 0):
        super().__init__(result_types=[MemRefType(elem, [size],
                                                  memory_space=IntegerAttr(SHARED, i32))],
                         properties={"align": IntegerAttr(align, i32)} if align else {})

    def verify_(self) -> None:
        if not is_shared(self.result.type) or len(self.result.type.get_shape()) != 1:
            raise VerifyException("simt.shared_alloc gives a 1-D memref in memory space 3")


def _vec_prop(vec: int) -> dict[str, Attribute]:
    """``vec`` as a property where it says more than the default of one lane."""
    return {} if vec == 1 else {"vec": IntegerAttr(vec, i32)}


@irdl_op_definition
class SharedLoadOp(_Access):
    """Per lane, ``buffer[index]`` from shared memory (``vec`` as for ``simt.load``)."""

    name = "simt.shared_load"
    buffer = operand_def(MemRefType)
    index = operand_def()
    result = result_def()
    assembly_format = (
        "$buffer `[` $index `]` attr-dict `:` type($buffer) `,` type($index) `->` type($result)"
    )

    def __init__(self, buffer: SSAValue, index: SSAValue, vec: int = 1):
        super().__init__(operands=[buffer, index],
                         result_types=[like(index.type, buffer.type.element_type)],
                         properties=_vec_prop(vec))

    def verify_(self) -> None:
        _check_shared(self, self.buffer, self.index, self.result.type, None, self.width)


@irdl_op_definition
class SharedStoreOp(_Access):
    """Per lane, ``buffer[index] = value`` in shared memory where ``mask`` holds (``vec``
    as for ``simt.store``)."""

    name = "simt.shared_store"
    buffer = operand_def(MemRefType)
    index = operand_def()
    value = operand_def()
    mask = opt_operand_def()
    assembly_format = (
        "$buffer `[` $index `]` `,` $value (`mask` $mask^ `:` type($mask))? attr-dict"
        " `:` type($buffer) `,` type($index) `,` type($value)"
    )

    def __init__(self, buffer: SSAValue, index: SSAValue, value: SSAValue,
                 mask: SSAValue | None = None, vec: int = 1):
        super().__init__(operands=[buffer, index, value, mask], properties=_vec_prop(vec))

    def verify_(self) -> None:
        _check_shared(self, self.buffer, self.index, self.value.type, self.mask, self.width)


def _check_shared(op: IRDLOperation, buffer: SSAValue, index: SSAValue,
                  value_type: Attribute, mask: SSAValue | None, vec: int) -> None:
    if vec < 1 or _lanes(index.type) % vec:
        raise VerifyException(f"{op.name} vec must divide the number of lanes")
    if not is_shared(buffer.type):
        raise VerifyException(f"{op.name} needs a shared-memory buffer (memory space 3)")
    if like(index.type, buffer.type.element_type) != value_type:
        raise VerifyException(f"{op.name} value must be the element type in the index's shape")
    if mask is not None and mask.type != i1_like(index.type):
        raise VerifyException(f"{op.name} mask must be i1 in the index's shape")


@irdl_op_definition
class CpAsyncOp(_Access):
    """Per lane, start copying ``base[src]`` (global) to ``buffer[index]`` (shared), or a
    zero where ``mask`` is false; ``vec`` consecutive lanes are one copy of 4, 8 or 16
    bytes. Done once a ``simt.cp_async_wait`` says so (PTX ``cp.async``)."""

    name = "simt.cp_async"
    buffer = operand_def(MemRefType)
    index = operand_def()
    base = operand_def(PtrType)
    src = operand_def()
    mask = opt_operand_def()
    assembly_format = (
        "$base `[` $src `]` `to` $buffer `[` $index `]` (`mask` $mask^ `:` type($mask))?"
        " attr-dict `:` type($base) `,` type($src) `,` type($buffer) `,` type($index)"
    )

    def __init__(self, buffer: SSAValue, index: SSAValue, base: SSAValue, src: SSAValue,
                 mask: SSAValue | None = None, vec: int = 1):
        super().__init__(operands=[buffer, index, base, src, mask], properties=_vec_prop(vec))

    def verify_(self) -> None:
        value = like(self.index.type, self.buffer.type.element_type)  # pyright: ignore
        _check_shared(self, self.buffer, self.index, value, self.mask, self.width)
        _check_access(self, self.base, self.src, value, self.mask, self.width)
        bits = element_type(value).bitwidth  # pyright: ignore[reportAttributeAccessIssue]
        if self.width * bits not in (32, 64, 128):
            raise VerifyException("simt.cp_async copies 4, 8 or 16 bytes at a time")


class _BareOp(IRDLOperation):
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


class _PendingOp(IRDLOperation):
    pending = prop_def(IntegerAttr[I32])
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i32)})


@irdl_op_definition
class CpAsyncCommitOp(_BareOp):
    """Close this thread's group of ``simt.cp_async`` copies issued since the last one."""

    name = "simt.cp_async_commit"


@irdl_op_definition
class CpAsyncWaitOp(_PendingOp):
    """Wait until at most ``pending`` of this thread's groups of copies are unfinished (no
    barrier: a ``simt.barrier`` after it makes the copies visible to other threads)."""

    name = "simt.cp_async_wait"


GLOBAL_BARRIER_ATTR = "simt.global_memory"  # on a barrier: order global memory too


@irdl_op_definition
class BarrierOp(_BareOp):
    """Wait until every thread of the program gets here; shared-memory writes before it
    are visible to reads after it (PTX ``bar.sync 0``, WGSL ``workgroupBarrier``), and
    with ``{simt.global_memory}`` global ones too (PTX: the same; WGSL adds
    ``storageBarrier``)."""

    name = "simt.barrier"


@irdl_op_definition
class ShuffleXorOp(IRDLOperation):
    """Per lane, the value of the same lane in the thread whose lane id (within its
    warp of 32) is this thread's xor ``mask`` (PTX ``shfl.sync.bfly``; WGSL
    ``subgroupShuffleXor``, or shared memory where subgroups are missing)."""

    name = "simt.shuffle_xor"
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    mask = prop_def(IntegerAttr[I32])
    result = result_def(T)
    assembly_format = "$value `,` $mask attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, mask: int):
        super().__init__(operands=[value], result_types=[value.type],
                         properties={"mask": IntegerAttr(mask, i32)})

    def verify_(self) -> None:
        if not 0 < self.mask.value.data < 32:
            raise VerifyException("simt.shuffle_xor mask must be in 1..31")


class _ShuffleShiftOp(IRDLOperation):
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    delta = prop_def(IntegerAttr[I32])
    result = result_def(T)
    assembly_format = "$value `,` $delta attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, delta: int):
        super().__init__(operands=[value], result_types=[value.type],
                         properties={"delta": IntegerAttr(delta, i32)})

    def verify_(self) -> None:
        if not 0 < self.delta.value.data < 32:
            raise VerifyException(f"{self.name} delta must be in 1..31")


@irdl_op_definition
class ShuffleUpOp(_ShuffleShiftOp):
    """Per lane, the value of the same lane in the thread ``delta`` lanes lower in its
    warp; the first ``delta`` lanes keep their own (PTX ``shfl.sync.up``)."""

    name = "simt.shuffle_up"


@irdl_op_definition
class ShuffleDownOp(_ShuffleShiftOp):
    """Per lane, the value of the same lane in the thread ``delta`` lanes higher in its
    warp; the last ``delta`` lanes keep their own (PTX ``shfl.sync.down``)."""

    name = "simt.shuffle_down"


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """Per lane where ``mask`` holds, atomically ``base[index] = kind(base[index], val)``
    (kinds, ``sem`` and ``scope`` as ``tile.atomic_rmw``); the result is the old value, 0
    where masked off."""

    name = "simt.atomic_rmw"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(StringAttr)
    sem = opt_prop_def(StringAttr)
    scope = opt_prop_def(StringAttr)
    base = operand_def(PtrType)
    index = operand_def()
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$kind `,` $base `[` $index `]` `,` $val (`mask` $mask^ `:` type($mask))?"
        " (`sem` $sem^)? (`scope` $scope^)? attr-dict"
        " `:` type($base) `,` type($index) `,` type($val)"
    )

    def __init__(self, kind: str, base: SSAValue, index: SSAValue, val: SSAValue,
                 mask: SSAValue | None = None, sem: str | None = None,
                 scope: str | None = None):
        super().__init__(operands=[base, index, val, mask], result_types=[val.type],
                         properties={"kind": StringAttr(kind), **order_properties(sem, scope)})

    def verify_(self) -> None:
        _check_access(self, self.base, self.index, self.val.type, self.mask, 1)
        check_atomic(self, self.kind.data, self.val.type)
        check_order(self)


@irdl_op_definition
class AtomicCASOp(IRDLOperation):
    """Per lane where ``mask`` holds, atomically ``old = base[index]; if old == cmp (same
    bits): base[index] = val``; the result is ``old``, 0 where masked off."""

    name = "simt.atomic_cas"
    T: ClassVar = VarConstraint("T", AnyAttr())
    sem = opt_prop_def(StringAttr)
    scope = opt_prop_def(StringAttr)
    base = operand_def(PtrType)
    index = operand_def()
    cmp = operand_def(T)
    val = operand_def(T)
    mask = opt_operand_def()
    result = result_def(T)
    assembly_format = (
        "$base `[` $index `]` `,` $cmp `,` $val (`mask` $mask^ `:` type($mask))?"
        " (`sem` $sem^)? (`scope` $scope^)? attr-dict"
        " `:` type($base) `,` type($index) `,` type($val)"
    )

    def __init__(self, base: SSAValue, index: SSAValue, cmp: SSAValue, val: SSAValue,
                 mask: SSAValue | None = None, sem: str | None = None,
                 scope: str | None = None):
        super().__init__(operands=[base, index, cmp, val, mask], result_types=[val.type],
                         properties=order_properties(sem, scope))

    def verify_(self) -> None:
        _check_access(self, self.base, self.index, self.val.type, self.mask, 1)
        check_atomic(self, None, self.val.type)
        check_order(self)


# -- warp-level matrix ops (tensor cores): only the PTX target is given them -------------

MMA_SHAPES = {"m16n8k16": (16, 8, 16), "m16n8k8": (16, 8, 8), "m16n8k32": (16, 8, 32)}
# shape -> its operand element types (f32 operands are rounded to tf32)
MMA_OPERANDS: dict[str, tuple[Attribute, ...]] = {
    "m16n8k16": (f16, bf16), "m16n8k8": (f32, f16, bf16), "m16n8k32": (IntegerType(8),)}
# operand element type -> the accumulator types it may have
MMA_ACCUMULATORS: dict[Attribute, tuple[Attribute, ...]] = {
    f16: (f32, f16), bf16: (f32,), f32: (f32,), IntegerType(8): (i32,)}


def fragment_bits(t: Attribute) -> int:
    """Bits of a fragment vector (or of a scalar register)."""
    return _lanes(t) * element_type(t).bitwidth


@irdl_op_definition
class LdMatrixOp(IRDLOperation):
    """Per warp, 1, 2 or 4 8x8 matrices of 16-bit elements from shared memory (PTX
    ``ldmatrix``): thread 8 i + j gives the element offset of row j (16 bytes) of matrix
    i; thread t gets, from each matrix in turn, the 32 bits at row t / 4, column pair
    t % 4 (of the transpose, with ``trans``). The count is the result's bits / 32; 8- and
    32-bit elements move as 16-bit pairs (s8 and tf32 fragments, not transposable)."""

    name = "simt.ldmatrix"
    buffer = operand_def(MemRefType)
    offset = operand_def(I32)
    trans = opt_prop_def(UnitAttr)
    result = result_def(VectorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$buffer `[` $offset `]` (`trans` $trans^)? attr-dict `:` type($buffer) `->` type($result)"
    )

    def __init__(self, buffer: SSAValue, offset: SSAValue, count: int, trans: bool = False):
        elem = buffer.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
        super().__init__(operands=[buffer, offset],
                         result_types=[VectorType(elem, [count * 32 // elem.bitwidth])],
                         properties={"trans": UnitAttr()} if trans else {})

    @property
    def count(self) -> int:
        return fragment_bits(self.result.type) // 32

    def verify_(self) -> None:
        if not is_shared(self.buffer.type):
            raise VerifyException("simt.ldmatrix needs a shared-memory buffer (memory space 3)")
        elem = element_type(self.result.type)
        if elem != self.buffer.type.element_type:
            raise VerifyException("simt.ldmatrix result must have the buffer's element type")
        if elem.bitwidth not in (8, 16, 32) or fragment_bits(self.result.type) not in (32, 64, 128):
            raise VerifyException("simt.ldmatrix gives 1, 2 or 4 registers of 8-, 16- or "
                                  "32-bit elements")
        if self.trans is not None and elem.bitwidth != 16:
            raise VerifyException("simt.ldmatrix trans needs 16-bit elements")


@irdl_op_definition
class MmaOp(IRDLOperation):
    """Per warp, ``D = A @ B + C`` on an m x n x k tile (PTX ``mma.sync``, A row-major, B
    column-major): each thread holds its fragments of A (m k / 32 elements), B (k n / 32)
    and C, D (m n / 32) as vectors. f32 operands mean tf32; i8 means s8."""

    name = "simt.mma"
    C: ClassVar = VarConstraint("C", AnyAttr())
    shape = prop_def(StringAttr)
    a = operand_def(VectorType)
    b = operand_def(VectorType)
    c = operand_def(C)
    result = result_def(C)
    assembly_format = (
        "$shape $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c)"
    )

    def __init__(self, shape: str, a: SSAValue, b: SSAValue, c: SSAValue):
        super().__init__(operands=[a, b, c], result_types=[c.type],
                         properties={"shape": StringAttr(shape)})

    def verify_(self) -> None:
        shape = self.shape.data
        if shape not in MMA_SHAPES:
            raise VerifyException(f"simt.mma: unknown shape {shape!r}")
        m, n, k = MMA_SHAPES[shape]
        elem, acc = element_type(self.a.type), element_type(self.c.type)
        if elem != element_type(self.b.type) or elem not in MMA_OPERANDS[shape]:
            raise VerifyException(f"simt.mma {shape}: A and B must be one of "
                                  f"{', '.join(map(str, MMA_OPERANDS[shape]))}")
        if acc not in MMA_ACCUMULATORS[elem]:
            raise VerifyException(f"simt.mma: {elem} operands cannot accumulate into {acc}")
        for name, v, count in (("A", self.a, m * k), ("B", self.b, k * n), ("C", self.c, m * n)):
            if not isinstance(v.type, VectorType) or _lanes(v.type) * 32 != count:
                raise VerifyException(f"simt.mma {shape}: {name} needs {count // 32} elements "
                                      f"per thread")


WGMMA_K = 16  # of a wgmma's 16-bit operands
WGMMA_M = 64  # rows of one warpgroup's product


K_MAJOR_LBO = 16  # a wgmma descriptor's LBO, unused by a swizzled K-major operand


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """Per warpgroup (4 warps), ``D = A @ B + C`` on an m64 x n x k16 tile (PTX
    ``wgmma.mma_async``), B in shared memory, 128-byte swizzled (16 x n, N-major: ``tnspB``)
    from element ``b_index`` of ``b``, groups of 8 k rows ``b_sbo`` bytes apart and atoms of
    64 columns ``b_lbo``; A there too (64 x 16, K-major, rows of 8 ``a_sbo`` bytes apart,
    from ``a_index``) or in registers (``a`` a vector: each warp's 16 rows as ``mma.sync``'s
    m16k16 A fragment). Each thread holds ``n / 2`` elements of C and D: lane ``l`` of warp
    ``w`` has rows ``16 w + l / 4 + {0, 8}`` and columns ``8 j + 2 (l % 4) + {0, 1}``
    (``mma.sync``'s m16n8 fragments along n). Asynchronous: D may be read only after a
    ``simt.wgmma_wait`` covers the group a ``simt.wgmma_commit`` closed. ``in_place``: C's
    registers are dead after it (a loop-carried accumulator), so D may be them; C may be
    the accumulator scaled (``acc * x``, nothing else reading ``acc``), then the product
    may be written over ``acc``.
    ``b_k_major``: B is stored as A is (n x 16, K-major, rows of 8 ``b_sbo`` bytes apart)."""

    name = "simt.wgmma"
    C: ClassVar = VarConstraint("C", AnyAttr())
    a = operand_def(MemRefType | VectorType)
    a_index = opt_operand_def(I32)
    b = operand_def(MemRefType)
    b_index = operand_def(I32)
    c = operand_def(C)
    result = result_def(C)
    a_sbo = opt_prop_def(IntegerAttr[I32])
    b_lbo = prop_def(IntegerAttr[I32])
    b_sbo = prop_def(IntegerAttr[I32])
    in_place = opt_prop_def(UnitAttr)
    b_k_major = opt_prop_def(UnitAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$a (`[` $a_index^ `]`)? `,` $b `[` $b_index `]` `,` $c attr-dict `:` type($a) `,` "
        "type($b) `,` type($c)"
    )

    def __init__(self, a: SSAValue, a_index: SSAValue | None, b: SSAValue, b_index: SSAValue,
                 c: SSAValue, a_sbo: int, b_lbo: int, b_sbo: int, in_place: bool = False,
                 b_k_major: bool = False):
        props: dict[str, Attribute] = {k: IntegerAttr(v, i32) for k, v in
                                       (("a_sbo", a_sbo), ("b_lbo", b_lbo), ("b_sbo", b_sbo))
                                       if a_index is not None or k != "a_sbo"}
        props |= {k: UnitAttr() for k, on in (("in_place", in_place),
                                              ("b_k_major", b_k_major)) if on}
        super().__init__(operands=[a, a_index, b, b_index, c], result_types=[c.type],
                         properties=props)

    @property
    def n(self) -> int:
        return 2 * _lanes(self.c.type)

    def verify_(self) -> None:
        shared = is_shared(self.a.type)
        if not is_shared(self.b.type) or shared != (self.a_index is not None):
            raise VerifyException("simt.wgmma reads B, and A unless in registers, from shared "
                                  "memory at an index")
        elem = self.a.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
        if elem not in (f16, bf16) or self.b.type.element_type != elem:  # pyright: ignore
            raise VerifyException("simt.wgmma: A and B must both be f16 or bf16")
        if not shared and _lanes(self.a.type) != 8:
            raise VerifyException("simt.wgmma: A in registers is 8 elements per thread")
        if element_type(self.c.type) != f32 or self.n % 8 or not 8 <= self.n <= 256:
            raise VerifyException("simt.wgmma: C needs n / 2 f32 lanes, n a multiple of 8 "
                                  "up to 256")


@irdl_op_definition
class WgmmaCommitOp(_BareOp):
    """Close the warpgroup's group of ``simt.wgmma`` issued since the last one."""

    name = "simt.wgmma_commit"


@irdl_op_definition
class WgmmaWaitOp(_PendingOp):
    """Wait until at most ``pending`` of the warpgroup's wgmma groups are unfinished."""

    name = "simt.wgmma_wait"


@irdl_op_definition
class FenceProxyAsyncOp(_BareOp):
    """Make this thread's shared-memory writes (stores, landed ``cp_async`` copies) visible
    to the async proxy that ``wgmma`` reads through (a barrier after it: to every thread's)."""

    name = "simt.fence_proxy_async"


SIMT = Dialect("simt", [ThreadIdOp, WarpIdOp, LoadOp, StoreOp, SharedAllocOp, SharedLoadOp,
                        SharedStoreOp, BarrierOp, ShuffleXorOp, ShuffleUpOp, ShuffleDownOp,
                        AtomicRMWOp, AtomicCASOp, LdMatrixOp, MmaOp, CpAsyncOp,
                        CpAsyncCommitOp, CpAsyncWaitOp, WgmmaOp, WgmmaCommitOp, WgmmaWaitOp,
                        FenceProxyAsyncOp], [])
