"""The tile dialect: whole tiles as SSA values, the way a kernel author thinks.

Tiles are builtin ranked tensors (``tensor<128xf32>``); elementwise math on them is
``arith``/``math``. This dialect adds what those lack: program ids, ``range``, ``splat``,
pointers and pointer arithmetic, masked memory access, shaped comparisons, atomics,
reductions and scans, shape ops and debugging ops. After ``assign-layouts`` the tensor
types carry a ``#tile.blocked``/``#tile.slice``/``#tile.mma`` encoding that says how a
tile is spread over the threads of a program.

One module per op family (``array`` (array views), ``memory``, ``elementwise``, ``atomic``, ``combine``, ``shape``,
``dot``, ``async_copy`` (shared-memory stages), ``tma`` (stages filled by TMA), ``debug``, ``hints``) and the types and layout attributes (``types``); this module assembles the
dialect and re-exports every name, so users write ``from dialects import tile`` and
``tile.LoadOp``.
"""

from xdsl.ir import Dialect

from dialects.tile.array import (
    PADDING_MODES,
    ArrayType,
    CheckTileIndexOp,
    MakeViewOp,
    ViewLoadOp,
    ViewStoreOp,
)
from dialects.tile.async_copy import (
    AsyncCommitOp,
    AsyncCopyOp,
    AsyncWaitOp,
    SharedAllocOp,
    SharedReadOp,
)
from dialects.tile.atomic import (
    ATOMIC_KINDS,
    ATOMIC_SCOPES,
    ATOMIC_SEMS,
    AtomicCASOp,
    AtomicRMWOp,
    check_atomic,
    check_order,
    memory_order,
    order_properties,
)
from dialects.tile.combine import ReduceOp, ScanOp, YieldOp, reduced_type
from dialects.tile.debug import AssertOp, CheckBoundsOp, PrintOp
from dialects.tile.dot import PRECISIONS, DotOp, accumulator_types
from dialects.tile.elementwise import (
    CMPF_PREDICATES,
    CMPI_PREDICATES,
    LIBM_FUNCTIONS,
    ArithFenceOp,
    BrevOp,
    CmpFOp,
    CmpIOp,
    LibmOp,
    SelectOp,
    UMulHiOp,
)
from dialects.tile.hints import (
    CACHE_HINT_ATTRS,
    CACHE_MODIFIER_ATTR,
    EVICTION_POLICY_ATTR,
    FACTS,
    NUM_STAGES_ATTR,
    AssumeFactsOp,
    BarrierOp,
)
from dialects.tile.memory import (
    AddPtrOp,
    LoadOp,
    NumProgramsOp,
    ProgramIdOp,
    RangeOp,
    SplatOp,
    StoreOp,
    check_mask,
    is_zero,
    static_shape,
)
from dialects.tile.shape import (
    BroadcastOp,
    ConvertLayoutOp,
    ExpandDimsOp,
    FlipOp,
    GatherOp,
    JoinOp,
    ReshapeOp,
    SplitOp,
    TransOp,
)
from dialects.tile.tma import (
    BarrierAllocOp,
    BarrierReleaseOp,
    BarrierWaitOp,
    TmaCopyOp,
    TmaStoreOp,
)
from dialects.tile.types import (
    BlockedLayoutAttr,
    MmaLayoutAttr,
    PtrType,
    SliceLayoutAttr,
    element_type,
    i1_like,
    is_layout,
    layout_of,
    like,
)

Tile = Dialect(
    "tile",
    [PrintOp, AssertOp, CheckBoundsOp, ProgramIdOp, NumProgramsOp, RangeOp, SplatOp, AddPtrOp,
     LoadOp, StoreOp,
     CmpIOp, CmpFOp, SelectOp, UMulHiOp, BrevOp, LibmOp, ArithFenceOp, AtomicRMWOp, AtomicCASOp, ReduceOp, ScanOp, YieldOp,
     ExpandDimsOp, BroadcastOp, ReshapeOp, TransOp, ConvertLayoutOp, JoinOp, SplitOp, FlipOp,
     GatherOp, DotOp, MakeViewOp, CheckTileIndexOp,
     ViewLoadOp, ViewStoreOp, SharedAllocOp, AsyncCopyOp, AsyncCommitOp, AsyncWaitOp,
     SharedReadOp, AssumeFactsOp, BarrierOp, BarrierAllocOp, BarrierReleaseOp, BarrierWaitOp,
     TmaCopyOp, TmaStoreOp],
    [PtrType, ArrayType, BlockedLayoutAttr, SliceLayoutAttr, MmaLayoutAttr],
)

__all__ = [
    "ATOMIC_KINDS",
    "ATOMIC_SCOPES",
    "ATOMIC_SEMS",
    "CACHE_HINT_ATTRS",
    "CACHE_MODIFIER_ATTR",
    "CMPF_PREDICATES",
    "CMPI_PREDICATES",
    "EVICTION_POLICY_ATTR",
    "FACTS",
    "LIBM_FUNCTIONS",
    "NUM_STAGES_ATTR",
    "PADDING_MODES",
    "PRECISIONS",
    "AddPtrOp",
    "ArithFenceOp",
    "ArrayType",
    "AssertOp",
    "AssumeFactsOp",
    "AsyncCommitOp",
    "AsyncCopyOp",
    "AsyncWaitOp",
    "AtomicCASOp",
    "AtomicRMWOp",
    "BarrierAllocOp",
    "BarrierOp",
    "BarrierReleaseOp",
    "BarrierWaitOp",
    "BlockedLayoutAttr",
    "BrevOp",
    "BroadcastOp",
    "CheckBoundsOp",
    "CheckTileIndexOp",
    "CmpFOp",
    "CmpIOp",
    "ConvertLayoutOp",
    "DotOp",
    "ExpandDimsOp",
    "FlipOp",
    "GatherOp",
    "JoinOp",
    "LibmOp",
    "LoadOp",
    "MakeViewOp",
    "MmaLayoutAttr",
    "NumProgramsOp",
    "PrintOp",
    "ProgramIdOp",
    "PtrType",
    "RangeOp",
    "ReduceOp",
    "ReshapeOp",
    "ScanOp",
    "SelectOp",
    "SharedAllocOp",
    "SharedReadOp",
    "SliceLayoutAttr",
    "SplatOp",
    "SplitOp",
    "StoreOp",
    "Tile",
    "TmaCopyOp",
    "TmaStoreOp",
    "TransOp",
    "UMulHiOp",
    "ViewLoadOp",
    "ViewStoreOp",
    "YieldOp",
    "accumulator_types",
    "check_atomic",
    "check_mask",
    "check_order",
    "element_type",
    "i1_like",
    "is_layout",
    "is_zero",
    "layout_of",
    "like",
    "memory_order",
    "order_properties",
    "reduced_type",
    "static_shape",
]
