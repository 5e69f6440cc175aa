"""How many programs of a kernel an SM holds at once (sm_80 and sm_90 limits), and the
register cap that would let it hold more.

A memory-bound kernel hides latency with warps: layernorm at 16 warps takes 43 registers a
thread, so two programs share an SM (32 warps); at 32 registers, four do (64 warps, twice
the loads in flight); a kernel of 8 warps a few registers over 128 holds one program,
and a cap of 128 fits two. ``generate`` asks ptxas for that occupancy (``.minnctapersm``)
when a kernel is a little above a cap, and keeps the result only if it spills next to
nothing.

Where the SM already holds four programs and 16 warps, no cap: one program's reductions
and barriers overlap the others' loads there, and a cap only takes the registers that
keep a thread's loads in flight. Measured on an H200 (8192x4096 f32 rows), softmax at 4
warps holds 6 programs with 77 registers, 9 capped to 56, and the cap cost 2% (71.6 us
against 70.0); its ``e * (1 / sum)`` form at 8 warps lost 10% (77.3 against 70.4).
Layernorm at 8 and 16 warps (3 and 2 programs) gains 5% and 20% from its cap; the
8192^2 f32 transposes of ``benchmarks/transpose.py`` (9, 4 and 18 programs) lost 6-14%
to theirs.
"""

from __future__ import annotations

REGISTERS_PER_SM = 65536
THREADS_PER_SM = 2048
PROGRAMS_PER_SM = 32
SHARED_PER_SM = 228 * 1024
SHARED_PER_PROGRAM = 1024  # reserved by the system for every resident program
REGISTER_GRANULE = 8  # a thread's registers are allocated 8 at a time (256 a warp)
MIN_CAP = 24  # below this a cap costs more in spills than occupancy gives
CLOSE = 0.7  # cap only kernels that need at most 30% fewer registers
SPILL_BUDGET = 64  # bytes of spill stores a capped kernel may have (they stay in L1)
# An SM holding this many programs and warps already hides one program's barriers and
# reductions behind the others' loads: there a cap only takes registers from its loads
OVERLAPPED_PROGRAMS, OVERLAPPED_WARPS = 4, 16


def programs_per_sm(registers: int, threads: int, shared: int) -> int:
    """Programs of ``threads`` threads using ``registers`` each and ``shared`` bytes that
    one SM holds."""
    granted = -(-max(registers, 1) // REGISTER_GRANULE) * REGISTER_GRANULE
    return min(REGISTERS_PER_SM // (granted * threads), _others(threads, shared))


def _others(threads: int, shared: int) -> int:
    """The programs an SM holds as far as threads and shared memory go."""
    return min(THREADS_PER_SM // threads, PROGRAMS_PER_SM,
               SHARED_PER_SM // (shared + SHARED_PER_PROGRAM))


def register_cap(registers: int, threads: int, shared: int) -> tuple[int, int] | None:
    """``(programs, registers)``: the most programs per SM that a cap on a thread's
    registers close to ``registers`` reaches (threads and shared memory allowing), and
    that cap; None where registers do not stand in the way or no close cap gains one."""
    now = programs_per_sm(registers, threads, shared)
    if now >= OVERLAPPED_PROGRAMS and now * threads >= OVERLAPPED_WARPS * 32:
        return None
    for programs in range(_others(threads, shared), now, -1):
        cap = REGISTERS_PER_SM // (programs * threads) // REGISTER_GRANULE * REGISTER_GRANULE
        if cap >= max(MIN_CAP, CLOSE * registers):
            return programs, cap
    return None
