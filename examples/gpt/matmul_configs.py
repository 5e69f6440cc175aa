"""Tile shapes for ``examples.gpt.matmul``'s kernels, by problem shape and target.

On ptx with 16-bit operands the products run on Hopper's wgmma from TMA-filled stages,
64 deep, with tiles set by a sweep at GPT-2's shapes on an H200 (``benchmarks/
gpt_matmuls.py --sweep``, 2026-11-29; RESULTS.md):
- the forward takes 128 x 128 tiles and 3 stages (96 KiB: two programs share an SM), 4
  warps, or 8 where a GELU epilogue holds more (4 warps spill there); adding the residual
  (f32, read in the epilogue) it takes 8 warps and 4 stages (3 stages would need 4 warps,
  which spill). Against 128 x 256 tiles at 4 stages (one program an SM) that was 3-9%
  quicker at the layers with a bias or GELU and the output head, even at the others;
- ``dx`` takes 128 x 256 tiles, 8 warps (two warpgroups), 4 stages: with 3 the copies
  keep only one iteration ahead, which a 48 KiB stage outlasts, and wgmma cannot run on
  into the next iteration. A GELU derivative in the epilogue would hold two 128-register
  tiles at once (it spills): that product takes 128 x 128;
- ``dw``'s output is small and its sum long (768 x 768 from 8192 rows is 36 tiles), so
  each tile's rows are split over ``split`` programs that add their shares atomically, as
  many as pay for that epilogue (``EPILOGUE_STEPS``); 128 x 128 tiles (a 256-wide one
  spills in the epilogue), 8 warps and 4 stages (the output head's was 6% quicker at 4
  warps and 3 stages, but spills 624 bytes a thread).
A last wave of programs partly empty costs what a full one does (``_waves``).
Elsewhere (f32 operands, numpy, wgsl) the kernels take the small tiles they always had,
which every backend compiles quickly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from compiler.backend_choice import default_backend, resolve_backend

SMS = 132  # streaming multiprocessors of an H100 or H200
EPILOGUE_STEPS = 8  # a split's atomic epilogue, in 64-deep steps of its loop (an estimate)
MAX_SPLIT = 16
DECODE_ROWS = 16  # products of this many rows or fewer take ``decode_config``'s tiles


@dataclass(frozen=True)
class Tiles:
    """A product's tile: ``BM``, ``BN``, ``BK`` as the kernel names them, warps and
    stages, and ``split``: programs per output tile along the summed dimension."""

    BM: int
    BN: int
    BK: int
    num_warps: int = 4
    num_stages: int = 2
    split: int = 1


PORTABLE = Tiles(64, 64, 32)
DEEP = 64  # the k of a Hopper tile: one 128-byte swizzle atom of 16-bit elements


def wgmma_tiles(backend: str | None, operand, *widths: int) -> bool:
    """Whether the Hopper tiles apply: ptx (also asked for by name where it cannot run, to
    compile), 16-bit operands, rows of the arrays (``widths`` elements) that TMA can
    describe: multiples of 16 elements, as the kernel's specialization sees them (else the
    tiles would stage through registers, and spill)."""
    name = backend or default_backend()
    return (resolve_backend(name) if name == "auto" else name) == "ptx" \
        and operand.itemsize == 2 and all(w % 16 == 0 for w in widths)


def _waves(programs: int) -> int:
    return -(-programs // SMS)


def _split(tiles: int, blocks: int) -> int:
    """Programs per output tile summing ``blocks`` blocks of rows: the fewest of the
    quickest, counting whole waves and each split's epilogue."""
    def cost(s: int) -> int:
        return _waves(tiles * s) * (-(-blocks // s) + (EPILOGUE_STEPS if s > 1 else 0))
    return min(range(1, min(MAX_SPLIT, blocks) + 1), key=lambda s: (cost(s), s))


def forward_config(M: int, N: int, K: int, x, backend: str | None, ld: int | None = None,
                   epilogue: str = "", **tiles) -> Tiles:
    """``out = x @ w.T``'s tiles: BM rows by BN columns of ``out`` (its rows ``ld`` long,
    N unless padded), BK deep, for an ``epilogue`` of "gelu", "residual" or none but a
    bias. A few rows (decoding: a row a sequence) take tiles ``decode_config`` picks."""
    if M <= DECODE_ROWS and wgmma_tiles(backend, x, K):
        return replace(decode_config(N), **tiles)
    if not wgmma_tiles(backend, x, ld or N, K):
        return replace(PORTABLE, **tiles)
    if epilogue == "residual":
        return replace(Tiles(128, 128, DEEP, 8, 4), **tiles)
    return replace(Tiles(128, 128, DEEP, 8 if epilogue == "gelu" else 4, 3), **tiles)


def decode_config(N: int) -> Tiles:
    """Tiles for products of at most ``DECODE_ROWS`` rows on ptx, which read each weight
    once and are short of programs rather than of math: narrow ones (16 x 32, 128 deep)
    spread a layer's 768 to 3072 columns over more SMs; the output head's tens of
    thousands of columns fill the SMs anyway and go quicker 64 x 64 on wgmma. Each was the
    quickest of five at GPT-2's shapes on an H200 (1 and 16 rows; 2026-11-28): 10-25 us
    a layer's product where 128 x 128 tiles took 16-44, 34 us the head's for 71."""
    return Tiles(64, 64, 64, 4, 4) if N > 8192 else Tiles(16, 32, 128, 4, 3)


def backward_x_config(M: int, N: int, K: int, dy, backend: str | None, gelu: bool,
                      ld: int | None = None, **tiles) -> Tiles:
    """``dx = dy @ w``'s tiles: BM rows by BK columns of ``dx``, BN deep (``dy``'s rows
    ``ld`` long, N unless padded)."""
    if not wgmma_tiles(backend, dy, ld or N, K):
        return replace(PORTABLE, **tiles)
    return replace(Tiles(128, DEEP, 128 if gelu else 256, 8, 4), **tiles)


def backward_w_config(M: int, N: int, K: int, dy, backend: str | None,
                      ld: int | None = None, **tiles) -> Tiles:
    """``dw += dy.T @ x``'s tiles: BN rows by BK columns of ``dw``, BM deep, ``split``
    programs a tile (``dy``'s rows ``ld`` long, N unless padded)."""
    if not wgmma_tiles(backend, dy, ld or N, K):
        return replace(PORTABLE, **tiles)
    split = _split(-(-N // 128) * -(-K // 128), -(-M // DEEP))
    return replace(Tiles(DEEP, 128, 128, 8, 4, split), **tiles)


def bias_config(M: int, N: int, dy, backend: str | None, split: int | None = None) -> Tiles:
    """``db += dy.sum(0)``'s: BN columns a program, BM rows a step, split along M into
    about two programs a SM on ptx (``split`` if given; elsewhere one, since the NumPy
    backend runs programs that add atomically one at a time). On ptx 64 rows a step,
    with the kernel's next two steps' loads in flight: 23.5 / 24.0 / 24.5 us at GPT-2's
    N = 2304 / 768 / 3072 (8192 rows, bf16; an H200, 2026-11-29) against 26.3 / 23.9 /
    28.8 at 32 rows and one step in flight, and 30.4 / 24.2 / 34.9 for PyTorch's
    ``dy.sum(0)``."""
    if not wgmma_tiles(backend, dy, N):
        return Tiles(32, 64, 1, 4, 1, split or 1)
    BM, BN = 64, 256
    fill = max(1, min(2 * SMS // -(-N // BN), -(-M // BM)))
    return Tiles(BM, BN, 1, 4, 1, split or fill)
