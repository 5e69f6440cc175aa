"""Types and attributes of the tile dialect: the pointer type, the layout encodings that
``assign-layouts`` puts on tile types (blocked, slice, mma), and helpers that read tile
types.

The op modules beside this one build on these; ``dialects.tile`` re-exports all of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerType, TensorType, VectorType
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def _parse_fields(parser: AttrParser, fields: dict[str, Callable[[], Attribute]]
                  ) -> list[Attribute]:
    """``<key = value, ...>`` with the keys in ``fields``' order, each value parsed by its
    function: the syntax of every layout attribute."""
    values: list[Attribute] = []
    with parser.in_angle_brackets():
        for i, (key, parse) in enumerate(fields.items()):
            if i:
                parser.parse_punctuation(",")
            parser.parse_keyword(key)
            parser.parse_punctuation("=")
            values.append(parse())
    return values


def _int_list(parser: AttrParser) -> Callable[[], ArrayAttr[IntAttr]]:
    def parse() -> ArrayAttr[IntAttr]:
        items = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        return ArrayAttr(IntAttr(i) for i in items)
    return parse


def _int(parser: AttrParser) -> Callable[[], IntAttr]:
    return lambda: IntAttr(parser.parse_integer())


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """A pointer into global memory to elements of ``pointee``."""

    name = "tile.ptr"
    pointee: Attribute

    def __init__(self, pointee: Attribute):
        super().__init__(pointee)


@irdl_attr_definition
class BlockedLayoutAttr(ParametrizedAttribute):
    """How a tile is spread over a program's threads (Triton's blocked layout).

    Along each dimension a thread holds ``size_per_thread`` contiguous elements, a warp
    ``threads_per_warp`` threads and the program ``warps_per_cta`` warps; a tile larger
    than that footprint wraps around, so a thread holds several such chunks.
    """

    name = "tile.blocked"
    size_per_thread: ArrayAttr[IntAttr]
    threads_per_warp: ArrayAttr[IntAttr]
    warps_per_cta: ArrayAttr[IntAttr]

    def __init__(self, spt: Sequence[int], tpw: Sequence[int], wpc: Sequence[int]):
        def arr(v: Sequence[int]) -> ArrayAttr[IntAttr]:
            return ArrayAttr(IntAttr(x) for x in v)

        super().__init__(arr(spt), arr(tpw), arr(wpc))

    @property
    def spt(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.size_per_thread.data)

    @property
    def tpw(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.threads_per_warp.data)

    @property
    def wpc(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.warps_per_cta.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        return _parse_fields(parser, dict.fromkeys(("spt", "tpw", "wpc"), _int_list(parser)))

    def print_parameters(self, printer: Printer) -> None:
        fields = zip(("spt", "tpw", "wpc"), (self.spt, self.tpw, self.wpc), strict=True)
        body = ", ".join(f"{k} = [{', '.join(map(str, v))}]" for k, v in fields)
        printer.print_string(f"<{body}>")

    def verify(self) -> None:
        if not len(self.spt) == len(self.tpw) == len(self.wpc):
            raise VerifyException("blocked layout parameters must have the same rank")
        for n in self.spt + self.tpw + self.wpc:
            if n <= 0 or n & (n - 1):
                raise VerifyException("blocked layout sizes must be powers of two")


@irdl_attr_definition
class SliceLayoutAttr(ParametrizedAttribute):
    """The layout of ``parent`` with dimension ``dim`` removed: a thread holds the
    elements whose other coordinates it holds in ``parent`` (so threads that differ only
    along ``dim`` hold the same elements). Results of reductions along ``dim`` and
    operands of ``expand_dims`` at ``dim`` have it (Triton's SliceEncoding)."""

    name = "tile.slice"
    dim: IntAttr
    parent: Attribute

    def __init__(self, dim: int, parent: Attribute):
        super().__init__(IntAttr(dim), parent)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        return _parse_fields(parser, {"dim": _int(parser), "parent": parser.parse_attribute})

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<dim = {self.dim.data}, parent = ")
        printer.print_attribute(self.parent)
        printer.print_string(">")

    def verify(self) -> None:
        if not is_layout(self.parent):
            raise VerifyException("tile.slice parent must be a tile layout")


@irdl_attr_definition
class MmaLayoutAttr(ParametrizedAttribute):
    """The accumulator of tensor-core instructions (Triton's NvidiaMmaEncoding; ``version
    = 2`` is ``mma.sync``, ``version = 3`` Hopper's warpgroup ``wgmma``) on an (M, N) tile,
    ``warps`` = warps along (M, N).

    It places elements exactly as ``#tile.blocked<spt = [1, 2], tpw = [8, 4], wpc =
    warps>`` (``blocked()``): the m16n8 fragment of lane t holds rows t/4 and t/4 + 8 and
    columns 2 (t % 4) + {0, 1}, where a warp's m16 tile r is the rows t/4 + 8 w_m +
    16 wm r + {0, 8 wm} (an mma's rows need not be contiguous). Layout math reads it as
    that blocked layout; the attribute says the tensor-core path was chosen. Version 3
    places elements the same way (warps ``[W, 1]``, W a multiple of the 4 warps of a
    warpgroup): a wgmma gives warp ``w`` of its warpgroup rows ``16 w .. 16 w + 15`` of its
    64, so the operand A it reads has its rows permuted in shared memory to match
    (``tile.shared_alloc`` ``warps``).
    """

    name = "tile.mma"
    version: IntAttr
    warps_per_cta: ArrayAttr[IntAttr]

    def __init__(self, version: int, warps: Sequence[int]):
        super().__init__(IntAttr(version), ArrayAttr(IntAttr(w) for w in warps))

    @property
    def warps(self) -> tuple[int, ...]:
        return tuple(a.data for a in self.warps_per_cta.data)

    def blocked(self) -> BlockedLayoutAttr:
        """The blocked layout with the same thread -> element map."""
        return BlockedLayoutAttr([1, 2], [8, 4], self.warps)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        return _parse_fields(parser, {"version": _int(parser), "warps": _int_list(parser)})

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<version = {self.version.data}, "
                             f"warps = [{', '.join(map(str, self.warps))}]>")

    def verify(self) -> None:
        if self.version.data not in (2, 3):
            raise VerifyException("tile.mma: version 2 (mma.sync) or 3 (wgmma)")
        if len(self.warps) != 2 or any(w <= 0 or w & (w - 1) for w in self.warps):
            raise VerifyException("tile.mma warps must be two powers of two (along M, N)")
        if self.version.data == 3 and (self.warps[1] != 1 or self.warps[0] % 4):
            raise VerifyException("tile.mma version 3 needs warps [4 k, 1] (whole warpgroups "
                                  "along M)")


LAYOUTS = (BlockedLayoutAttr, SliceLayoutAttr, MmaLayoutAttr)


def is_layout(attr: Attribute | None) -> bool:
    """Whether ``attr`` is a tile layout encoding (blocked, slice or mma)."""
    return isinstance(attr, LAYOUTS)


def element_type(t: Attribute) -> Attribute:
    """The scalar type of a tile or scalar type."""
    return t.element_type if isinstance(t, TensorType | VectorType) else t


def like(t: Attribute, elem: Attribute) -> Attribute:
    """``t`` with its element type replaced by ``elem`` (shape and layout kept)."""
    if isinstance(t, TensorType):
        return TensorType(elem, t.get_shape(), t.encoding)
    if isinstance(t, VectorType):
        return VectorType(elem, t.get_shape())
    return elem


def i1_like(t: Attribute) -> Attribute:
    """i1 in the shape of ``t``: scalar, tile (tensor) or per-thread vector."""
    if isinstance(t, TensorType | VectorType):
        return like(t, IntegerType(1))
    return IntegerType(1)


def layout_of(t: Attribute) -> Attribute | None:
    """The layout encoding of a tile type, or None (before ``assign-layouts``)."""
    enc = t.encoding if isinstance(t, TensorType) else None
    return enc if is_layout(enc) else None
