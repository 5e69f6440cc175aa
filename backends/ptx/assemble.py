"""PTX text -> cubin with nvJitLink (a pip package: works with no GPU or driver present)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.errors import CompileError


def _log(nvjitlink, handle: int) -> str:
    size = nvjitlink.get_error_log_size(handle)
    buf = bytearray(size)
    if size:
        nvjitlink.get_error_log(handle, buf)
    return buf.rstrip(b"\0").decode(errors="replace").strip()


def assemble(ptx: str, arch: str = "sm_90") -> bytes:
    """Assemble ``ptx`` into a cubin for ``arch``; a rejected kernel raises ``CompileError``
    carrying nvJitLink's log, which names the offending PTX line."""
    return assemble_counting(ptx, arch).cubin


@dataclass(frozen=True)
class Assembled:
    cubin: bytes
    registers: int  # per thread, the most of any kernel in the PTX
    spilled: int  # bytes of spill stores (or of local memory, where that is reported)


def assemble_counting(ptx: str, arch: str = "sm_90") -> Assembled:
    """``assemble``, also reading from ptxas's report the registers and spills."""
    from cuda.bindings import nvjitlink

    data = ptx.encode()
    handle = nvjitlink.create(2, [f"-arch={arch}", "-verbose"])
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "tilec.ptx")
        nvjitlink.complete(handle)
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        size = nvjitlink.get_info_log_size(handle)
        info = bytearray(size)
        if size:
            nvjitlink.get_info_log(handle, info)
        report = info.decode(errors="replace")
        # ptxas' own lines ("Used N registers ... N bytes spill stores") are not in every
        # nvJitLink's report; its summary ("used N registers ... N bytes lmem") is
        registers = [int(n) for n in re.findall(r"[Uu]sed (\d+) registers", report)]
        spills = [int(n) for n in re.findall(r"(\d+) bytes (?:spill stores|lmem)", report)]
        return Assembled(bytes(cubin), max(registers, default=0), max(spills, default=0))
    except nvjitlink.nvJitLinkError as e:
        raise CompileError(f"nvJitLink rejected the PTX for {arch} ({e}):\n"
                           f"{_log(nvjitlink, handle)}") from None
    finally:
        nvjitlink.destroy(handle)
