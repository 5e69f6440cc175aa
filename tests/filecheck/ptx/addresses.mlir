// simt-to-ptx: an address cast to a pointer is converted to the global space, as a pointer
// argument is, and a pointer cast back to the generic space.
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @cast(%t: !tile.ptr<i64>) attributes {simt.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %addr = simt.load %t[%c0] : !tile.ptr<i64>, i32 -> i64
  %p = tile.int_to_ptr %addr : i64 -> !tile.ptr<f32>
  %v = simt.load %p[%c0] : !tile.ptr<f32>, i32 -> f32
  simt.store %p[%c0], %v : !tile.ptr<f32>, i32, f32
  %back = tile.ptr_to_int %p : !tile.ptr<f32> -> i64
  simt.store %t[%c0], %back : !tile.ptr<i64>, i32, i64
  func.return
}
// CHECK-LABEL: func.func @cast(
// CHECK:         %[[ADDR:.*]] = ptx.ld_global %{{.*}}
// CHECK-NEXT:    %[[P:.*]] = ptx.inst "cvta.to.global.u64" %[[ADDR]] : (i64) -> i64
// CHECK:         ptx.ld_global %{{.*}}
// CHECK:         %[[BACK:.*]] = ptx.inst "cvta.global.u64" %[[P]] : (i64) -> i64
// CHECK:         ptx.st_global %{{.*}}, %[[BACK]]
