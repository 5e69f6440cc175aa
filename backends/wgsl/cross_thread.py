"""WGSL of the SIMT ops that move data between lanes and threads.

- ``vector.shuffle``/``vector.extract``: lane picks, spelled as vector constructors;
- ``simt.shared_alloc``: a module-scope ``var<workgroup>`` array, which buffers used one
  after the other share (``workgroup.py``); ``shared_load``/``shared_store`` index it
  lane by lane (``vec`` says lanes are contiguous, which a workgroup array access gains
  nothing from); ``simt.barrier`` is ``workgroupBarrier()``;
- ``simt.shuffle_xor``/``shuffle_up``/``shuffle_down``: WGSL's subgroups need not be 32
  invocations wide (lavapipe's are not), so a shuffle goes through workgroup memory: each
  thread writes its value, and after a barrier reads the source lane's (a second barrier
  lets the next shuffle reuse the buffer). One helper function per value type does it;
  a thread's value of many 4-lane chunks goes in groups (a buffer of ``GROUP_BUFFER``
  bytes at most: all 64 lanes of one warp's threads at once), one helper call (two
  barriers) a group: lavapipe makes every barrier a coroutine suspension, and a 64-lane
  scan's 384 of them took it 30 s to compile.
  For i32/f32 the facts carry ``subgroup``: each such helper's text and a
  ``subgroupShuffle`` replacement, which the runtime swaps in where every subgroup is a
  warp of 32 invocations (``subgroups.subgroup_size``). An xor shuffle of i32/f32 calls the
  helper through a wrapper of its own mask ``n`` (``shfl_f32_x4``), listed in the facts'
  ``subgroup_xor`` with ``n`` and a ``subgroupShuffleXor`` replacement: where subgroups
  are ``S`` consecutive invocations, ``S`` a power of two (lavapipe's 8), the lanes ``n <
  S`` apart are in one subgroup, so those wrappers are swapped in and a reduction's last
  butterfly steps need no barrier.
"""

from __future__ import annotations

from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Attribute, Operation

from backends.wgsl.core import WGSLEmitter, handles, pack, ty
from dialects import simt

# The thread whose value a shuffle reads, from this thread's ``lid`` (u32) and operand.
_SOURCE = {
    simt.ShuffleXorOp: "lid ^ {n}u",
    simt.ShuffleUpOp: "select(lid, lid - {n}u, (lid & 31u) >= {n}u)",
    simt.ShuffleDownOp: "select(lid, lid + {n}u, (lid & 31u) + {n}u < 32u)",
}

_EMULATED = """var<workgroup> {name}_buf: array<{T}, {threads}>;

fn {name}(v: {T}, src: u32, lid: u32) -> {T} {{
  {name}_buf[lid] = v;
  workgroupBarrier();
  let r = {name}_buf[src];
  workgroupBarrier();
  return r;
}}"""

_SUBGROUP = """fn {name}(v: {T}, src: u32, lid: u32) -> {T} {{
  return subgroupShuffle(v, src & 31u);
}}"""

_EMULATED_GROUP = """var<workgroup> {name}_buf: array<{T}, {size}>;

fn {name}(v: array<{T}, {k}>, src: u32, lid: u32) -> array<{T}, {k}> {{
  for (var i = 0u; i < {k}u; i++) {{
    {name}_buf[i * {threads}u + lid] = v[i];
  }}
  workgroupBarrier();
  var r: array<{T}, {k}>;
  for (var i = 0u; i < {k}u; i++) {{
    r[i] = {name}_buf[i * {threads}u + src];
  }}
  workgroupBarrier();
  return r;
}}"""

_SUBGROUP_GROUP = """fn {name}(v: array<{T}, {k}>, src: u32, lid: u32) -> array<{T}, {k}> {{
  var r: array<{T}, {k}>;
  for (var i = 0u; i < {k}u; i++) {{
    r[i] = subgroupShuffle(v[i], src & 31u);
  }}
  return r;
}}"""

_XOR_WRAPPER = """fn {name}_x{n}(v: {T}, src: u32, lid: u32) -> {T} {{
  return {name}(v, src, lid);
}}"""

_XOR_SUBGROUP = """fn {name}_x{n}(v: {T}, src: u32, lid: u32) -> {T} {{
  return subgroupShuffleXor(v, {n}u);
}}"""

_XOR_SUBGROUP_GROUP = """fn {name}_x{n}(v: {T}, src: u32, lid: u32) -> {T} {{
  var r: {T};
  for (var i = 0u; i < {k}u; i++) {{
    r[i] = subgroupShuffleXor(v[i], {n}u);
  }}
  return r;
}}"""

GROUP_BUFFER = 8192  # bytes of workgroup memory a grouped shuffle's buffer may take
_SUBGROUP_TYPES = ("i32", "f32")
# bool has no subgroup ops; f16 would need subgroups_f16; i64 is a struct of words
_BYTES = {"bool": 4, "i32": 4, "f32": 4, "f16": 2, "i64": 8}


def _lane_count(t: Attribute) -> int:
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


@handles(simt.ShuffleXorOp, simt.ShuffleUpOp, simt.ShuffleDownOp)
def shuffle(em: WGSLEmitter, op: Operation) -> None:
    n = next(iter(op.properties.values())).value.data  # the mask or the delta
    src = em.fresh(op.results[0])
    em.line(f"let {src} = {_SOURCE[type(op)].format(n=n)};")
    value = em.vals[op.operands[0]]
    out = em.define(op.results[0])
    k = max(1, min(16, GROUP_BUFFER // (em.threads() * 4 * _BYTES[out.elem])))  # chunks a group
    whole = [c for c, w in enumerate(out.widths) if w == 4] if len(value.names) > 1 else []
    grouped = whole if k > 1 and len(whole) > 1 else []
    for g in range(0, len(grouped), k):
        chunks = grouped[g:g + k]
        group = em.fresh(op.results[0])
        helper = _xor(em, op, _group_helper(em, out.elem, len(chunks)), out.elem,
                      f"array<{ty(out.elem, 4)}, {len(chunks)}>", len(chunks))
        em.line(f"let {group} = {helper}("
                f"array<{ty(out.elem, 4)}, {len(chunks)}>("
                f"{', '.join(value.chunk(c) for c in chunks)}), {src}, lid);")
        for i, c in enumerate(chunks):
            em.line(f"let {out.names[c]} = {group}[{i}];")
    for c, w in enumerate(out.widths):
        if c not in grouped:
            helper = _xor(em, op, _helper(em, out.elem, w), out.elem, ty(out.elem, w))
            em.line(f"let {out.names[c]} = {helper}({value.chunk(c)}, {src}, lid);")


def _helper(em: WGSLEmitter, elem: str, width: int) -> str:
    t = ty(elem, width)
    name = "shfl_" + t.replace("<", "").replace(">", "")
    if name not in em.helpers:
        em.helpers[name] = _EMULATED.format(name=name, T=t, threads=em.threads())
        em.shared += em.threads() * width * _BYTES[elem]
        if elem in _SUBGROUP_TYPES:
            em.subgroup[em.helpers[name]] = _SUBGROUP.format(name=name, T=t)
    return name


def _xor(em: WGSLEmitter, op: Operation, name: str, elem: str, t: str, k: int = 0) -> str:
    """The helper ``name`` (of type ``t``: ``k`` chunks of 4 lanes, or one value) as this
    shuffle calls it: through a wrapper of its mask for an xor shuffle of i32/f32, which
    the runtime may swap for a subgroup shuffle (``subgroup_xor``); else itself."""
    if not isinstance(op, simt.ShuffleXorOp) or elem not in _SUBGROUP_TYPES:
        return name
    n = op.mask.value.data
    wrapper = f"{name}_x{n}"
    if wrapper not in em.helpers:
        em.helpers[wrapper] = _XOR_WRAPPER.format(name=name, n=n, T=t)
        native = _XOR_SUBGROUP_GROUP.format(name=name, n=n, T=t, k=k) if k else \
            _XOR_SUBGROUP.format(name=name, n=n, T=t)
        em.subgroup_xor[em.helpers[wrapper]] = [n, native]
    return wrapper


def _group_helper(em: WGSLEmitter, elem: str, k: int) -> str:
    """The helper shuffling ``k`` 4-lane chunks of ``elem`` at once."""
    t = ty(elem, 4)
    name = f"shfl_{k}x{t.replace('<', '').replace('>', '')}"
    if name not in em.helpers:
        threads = em.threads()
        em.helpers[name] = _EMULATED_GROUP.format(name=name, T=t, k=k, threads=threads,
                                                  size=k * threads)
        em.shared += k * threads * 4 * _BYTES[elem]
        if elem in _SUBGROUP_TYPES:
            em.subgroup[em.helpers[name]] = _SUBGROUP_GROUP.format(name=name, T=t, k=k)
    return name


@handles(simt.SharedAllocOp)
def shared_alloc(em: WGSLEmitter, op: simt.SharedAllocOp) -> None:
    """The buffer's array: declared for the first buffer of those sharing it
    (``workgroup.sharing``), as long as the longest of them."""
    head = em.sharing[op]
    if head not in em.arrays:
        elem = em.elem(op.result.type.element_type)
        length = max(a.result.type.get_shape()[0] for a, h in em.sharing.items() if h is head)
        name = em.arrays[head] = em.fresh(op.result)
        em.helpers[name] = f"var<workgroup> {name}: array<{ty(elem, 1)}, {length}>;"
        em.shared += length * _BYTES[elem]
    em.buffers[op.result] = em.arrays[head]


@handles(simt.SharedLoadOp)
def shared_load(em: WGSLEmitter, op: simt.SharedLoadOp) -> None:
    buf, index = em.buffers[op.buffer], em.vals[op.index]
    out = em.define(op.result)
    for c, w in enumerate(out.widths):
        lanes = [f"{buf}[{index.lane(j)}]" for j in range(4 * c, 4 * c + w)]
        em.line(f"let {out.names[c]} = {pack(out.elem, lanes)};")


@handles(simt.SharedStoreOp)
def shared_store(em: WGSLEmitter, op: simt.SharedStoreOp) -> None:
    buf, index, value = em.buffers[op.buffer], em.vals[op.index], em.vals[op.value]
    mask = em.vals[op.mask] if op.mask is not None else None
    for j in range(sum(value.widths)):
        em.guarded(mask, j, [f"{buf}[{index.lane(j)}] = {value.lane(j)};"])


@handles(simt.BarrierOp)
def barrier(em: WGSLEmitter, op: simt.BarrierOp) -> None:
    if simt.GLOBAL_BARRIER_ATTR in op.attributes:  # tl.debug_barrier: storage buffers too
        em.line("storageBarrier();")
    em.line("workgroupBarrier();")


@handles(vector.ExtractOp)
def extract(em: WGSLEmitter, op: vector.ExtractOp) -> None:
    (pos,) = op.static_position.get_values()
    em.define(op.result, [em.vals[op.vector].lane(pos)])


@handles(vector.ShuffleOp)
def shuffle_lanes(em: WGSLEmitter, op: vector.ShuffleOp) -> None:
    first, second = em.vals[op.v1], em.vals[op.v2]
    n = _lane_count(op.v1.type)
    picks = [first.lane(i) if i < n else second.lane(i - n) for i in op.mask.get_values()]
    out = em.define(op.result)
    for c, w in enumerate(out.widths):
        em.line(f"let {out.names[c]} = {pack(out.elem, picks[4 * c:4 * c + w])};")

