"""cuTile's enumerations: ``ct.PaddingMode``, ``ct.RoundingMode``, ``ct.MemoryOrder`` and
``ct.MemoryScope``, with cuTile's members and values (a kernel compares and passes them;
the frontend reads ``.value``)."""

from __future__ import annotations

import enum


class PaddingMode(enum.Enum):
    """What ``ct.load`` reads outside the array (``UNDETERMINED``: any value; tilec
    reads zero). ``NEG_ZERO`` is cuTile's too; tilec does not pad with it yet."""

    UNDETERMINED = "undetermined"
    ZERO = "zero"
    NEG_ZERO = "neg_zero"
    NAN = "nan"
    POS_INF = "pos_inf"
    NEG_INF = "neg_inf"


class RoundingMode(enum.Enum):
    """How a float operation rounds: ``RN`` to nearest even (the default), ``RZ`` toward
    zero, ``RM`` down, ``RP`` up, ``RA`` to nearest with ties away from zero; ``FULL`` and
    ``APPROX`` are the precisions of f32 division, ``exp``, ``tanh`` and ``sqrt``; ``RZI``
    rounds to an integer toward zero."""

    RN = "nearest_even"
    RZ = "zero"
    RM = "negative_inf"
    RP = "positive_inf"
    RA = "nearest_away"
    FULL = "full"
    APPROX = "approx"
    RZI = "nearest_int_to_zero"


class MemoryOrder(enum.Enum):
    """The ordering an atomic gives the memory operations around it (``WEAK``: plain
    loads and stores, no atomic takes it)."""

    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(enum.Enum):
    """Which threads an atomic's ordering holds for: those of the block, of the GPU, of the
    whole system (``NONE`` goes with ``WEAK``; ``CLUSTER`` is cuda.lang's)."""

    NONE = "none"
    BLOCK = "block"
    CLUSTER = "cluster"
    DEVICE = "device"
    SYS = "sys"
