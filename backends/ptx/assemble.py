"""PTX text -> cubin with nvJitLink (a pip package: works with no GPU or driver present)."""

from __future__ import annotations

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
    from cuda.bindings import nvjitlink

    data = ptx.encode()
    handle = nvjitlink.create(1, [f"-arch={arch}"])
    try:
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "tilec.ptx")
        nvjitlink.complete(handle)
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        return bytes(cubin)
    except nvjitlink.nvJitLinkError as e:
        raise CompileError(f"nvJitLink rejected the PTX for {arch} ({e}):\n"
                           f"{_log(nvjitlink, handle)}") from None
    finally:
        nvjitlink.destroy(handle)
