"""Arrays of one launch that share a wgpu buffer: which bindings merge into one and which
are declared read_write, and the shader variant that says so (``Aliasing``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compiler.errors import LaunchError
from compiler.kinfo import KernelInfo


@dataclass(frozen=True)
class Aliasing:
    """How a launch binds arrays that share a buffer, which WebGPU allows only where
    nothing writes it (Chrome's Dawn checks; the web runtime does the same, keep the two
    in step): in a buffer the kernel writes, ``merged`` pairs a binding with the first one
    bound to the same range (the shader variant declares that one alone, read_write, and
    both parameters name it), and ``promoted`` holds the read-only bindings declared
    read_write as the buffer is written through another range (WebGPU forbids one buffer
    in both roles in a dispatch)."""

    merged: frozenset[tuple[int, int]] = frozenset()
    promoted: frozenset[int] = frozenset()

    @property
    def gone(self) -> frozenset[int]:
        """The bindings merged into others: not declared, not bound."""
        return frozenset(b for b, _ in self.merged)

    def written(self, binding: int, params: list[dict]) -> bool:
        """Whether ``binding`` is declared read_write in the variant."""
        access = {f["binding"]: f["access"] for f in params if f["kind"] == "ptr"}
        return access[binding] == "read_write" or binding in self.promoted or any(
            into == binding for _, into in self.merged)

    def variant(self, source: str) -> str:
        """``source`` with the promoted bindings read_write and each merged one
        undeclared, its parameter's name the one it merges into."""
        for b in self.promoted:
            source = source.replace(f"@binding({b}) var<storage, read> ",
                                    f"@binding({b}) var<storage, read_write> ")
        for b, into in sorted(self.merged):
            gone, target = _declared(source, b), _declared(source, into)
            source = _declared_re(b).sub("", source)
            source = re.sub(rf"\b{gone.group(2)}\b", target.group(2), source)
            source = source.replace(target.group(0), _one_declaration(target.group(0),
                                                                      gone.group(0)))
            source = _atomic_accesses(source, target.group(2), target.group(0),
                                      gone.group(0))
        return source


_ITEM = re.compile(r"array<(atomic<(\w+)>|\w+)>")


def _item(declaration: str) -> tuple[str, str | None]:
    """A declaration's array item (``f32``, ``atomic<u32>``) and its atomic type, if any."""
    found = _ITEM.search(declaration)
    assert found is not None, declaration
    return found.group(1), found.group(2)


def _one_declaration(target: str, gone: str) -> str:
    """The declaration of a merged binding: read_write, and atomic if either was (its
    other accesses are made atomic by ``_atomic_accesses``)."""
    merged = target.replace("var<storage, read> ", "var<storage, read_write> ")
    if _item(gone)[1] is not None and _item(target)[1] is None:
        merged = merged.replace(f"array<{_item(target)[0]}>", f"array<{_item(gone)[0]}>")
    return merged


def _atomic_accesses(source: str, name: str, target: str, gone: str) -> str:
    """``source`` with the plain accesses of ``name`` atomic, if one of the two merged
    declarations was atomic and the other not: a read ``name[i]`` becomes ``atomicLoad``,
    a store ``name[i] = v;`` an ``atomicStore``, bit-cast where the element types differ
    (an f32 array is atomic as u32)."""
    (plain, plain_atomic), (other, atomic) = _item(target), _item(gone)
    if (plain_atomic is None) == (atomic is None):
        return source
    if plain_atomic is not None:
        plain, atomic = other, plain_atomic

    def conv(expr: str, frm: str, to: str) -> str:
        return expr if frm == to else f"bitcast<{to}>({expr})"
    out, at = [], 0
    for found in re.finditer(rf"(?<![\w&]){name}\[", source):
        if found.start() < at:
            continue
        end, depth = found.end(), 1
        while depth:
            depth += {"[": 1, "]": -1}.get(source[end], 0)
            end += 1
        access = source[found.start():end]
        store = re.match(r"\s*=(?!=)\s*", source[end:])
        out.append(source[at:found.start()])
        if store:
            stop = source.index(";", end)
            value = source[end + store.end():stop]
            out.append(f"atomicStore(&{access}, {conv(value, plain, atomic)})")
            at = stop
        else:
            out.append(conv(f"atomicLoad(&{access})", atomic, plain))
            at = end
    return "".join(out) + source[at:]


def _declared_re(binding: int) -> re.Pattern:
    return re.compile(rf"^@group\(0\) @binding\({binding}\) var<storage, "
                      r"(read|read_write)> (\w+): .*$", re.MULTILINE)


def _declared(source: str, binding: int) -> re.Match:
    found = _declared_re(binding).search(source)
    assert found is not None, f"no declaration of binding {binding}"
    return found


def aliasing(bound: list, params: list[dict], info: KernelInfo) -> Aliasing:
    """How ``bound`` (the launch's ``runtime.Binding``s) alias (``Aliasing``); a
    ``LaunchError`` where two other ranges of a buffer the kernel writes overlap."""
    pointers = [f for f in params if f["kind"] == "ptr"]
    names = [p.name for p, f in zip(info.params, params) if f["kind"] == "ptr"]
    written = {id(b.buffer) for b, f in zip(bound, pointers) if f["access"] == "read_write"}
    merged: dict[int, int] = {}  # binding -> the one it merges into
    for i, b in enumerate(bound):
        if id(b.buffer) not in written:
            continue  # read-only bindings may alias
        for j in range(i):
            a = bound[j]
            if a.buffer is not b.buffer or pointers[j]["binding"] in merged:
                continue
            if (a.offset, a.size) == (b.offset, b.size) and \
                    pointers[i]["dtype"] == pointers[j]["dtype"]:
                merged[pointers[i]["binding"]] = pointers[j]["binding"]
                break
            if a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                raise LaunchError(f"arguments {names[j]} and {names[i]} overlap in one buffer "
                                  "that the kernel writes: WebGPU binds that only as the same "
                                  "range of the same dtype; pass that, or separate arrays")
    promoted = frozenset(f["binding"] for b, f in zip(bound, pointers)
                         if f["access"] == "read" and id(b.buffer) in written
                         and f["binding"] not in merged)
    return Aliasing(frozenset(merged.items()), promoted)
