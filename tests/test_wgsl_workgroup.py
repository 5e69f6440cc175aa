"""backends.wgsl.workgroup: which shared buffers of a SIMT kernel share one workgroup
array, on hand-written kernels: two buffers used in turn, with and without the barriers
that make that safe."""

import pytest
from xdsl.dialects import func

from backends.wgsl.emit import emit_wgsl
from backends.wgsl.workgroup import sharing
from compiler.context import parse_module
from dialects import simt

BAR = "simt.barrier"


def kernel(body: str, second: str = "f32") -> str:
    """A kernel with buffers %a (f32) and %b (``second``) used by ``body``, in a loop
    (``{loop}`` ... ``{end}``) or not."""
    loop = "%r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %v) -> (f32) : i32 {"
    body = body.format(loop=loop, end="scf.yield %s : f32\n}", second=second)
    return f"""
func.func @k(%x: !tile.ptr<f32>, %y: !tile.ptr<{second}>, %n: i32) attributes {{simt.num_warps = 1 : i32}} {{
  %tid = simt.thread_id : i32
  %a = simt.shared_alloc : memref<64xf32, 3 : i32>
  %b = simt.shared_alloc : memref<128x{second}, 3 : i32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = simt.load %x[%tid] : !tile.ptr<f32>, i32 -> f32
  %w = simt.load %y[%tid] : !tile.ptr<{second}>, i32 -> {second}
  {body}
  func.return
}}"""


USE_A = ("simt.shared_store %a[%tid], %v : memref<64xf32, 3 : i32>, i32, f32\n"
         "simt.barrier\n%la = simt.shared_load %a[%tid] : memref<64xf32, 3 : i32>, i32 -> f32\n"
         "simt.store %x[%tid], %la : !tile.ptr<f32>, i32, f32\n")
USE_B = ("simt.shared_store %b[%tid], %w : memref<128x{second}, 3 : i32>, i32, {second}\n"
         "simt.barrier\n%lb = simt.shared_load %b[%tid] : memref<128x{second}, 3 : i32>, "
         "i32 -> {second}\nsimt.store %y[%tid], %lb : !tile.ptr<{second}>, i32, {second}\n")


def shares(text: str) -> bool:
    module = parse_module(text)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    allocs = [op for op in fn.walk() if isinstance(op, simt.SharedAllocOp)]
    return sharing(fn)[allocs[1]] is allocs[0]


@pytest.mark.parametrize("body, shared", [
    # in a loop, each exchange behind a barrier: done with %a before %b, and with %b
    # before the next trip's %a
    ("{loop}\n" + BAR + "\n" + USE_A + BAR + "\n" + USE_B + "{end}", True),
    # nothing between %a's last read and %b's first write
    ("{loop}\n" + BAR + "\n" + USE_A + USE_B + "{end}", False),
    # the next trip writes %a while a slower thread may still read %b
    ("{loop}\n" + USE_A + BAR + "\n" + USE_B + "{end}", False),
    # once, in the kernel's body: the barrier between suffices
    (USE_A + BAR + "\n" + USE_B, True),
    (USE_A + USE_B, False),
    # %a used inside the loop, %b after it: the blocks differ
    ("{loop}\n" + BAR + "\n" + USE_A + "{end}\n" + BAR + "\n" + USE_B, False),
])
def test_buffers_share_where_a_barrier_separates_them(body, shared):
    assert shares(kernel(body)) == shared


def test_buffers_of_other_element_types_keep_their_arrays():
    body = "{loop}\n" + BAR + "\n" + USE_A + BAR + "\n" + USE_B + "{end}"
    assert not shares(kernel(body, second="i32"))


def test_a_shared_array_is_as_long_as_its_longest_buffer():
    body = "{loop}\n" + BAR + "\n" + USE_A + BAR + "\n" + USE_B + "{end}"
    source, facts = emit_wgsl(parse_module(kernel(body)))
    arrays = [ln for ln in source.splitlines() if ln.startswith("var<workgroup>")]
    assert len(arrays) == 1 and arrays[0].endswith("array<f32, 128>;")
    assert facts["shared"] == 128 * 4
