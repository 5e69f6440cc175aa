// simt-to-ptx steers clear of two ptxas 13.0 (sm_90) miscompiles that difftest found on
// an H200: m(a, m(a, b)) of a min or max m is emitted as the inner op alone (ptxas fused
// min(a, min(a, -a)) into a VIMNMX3 of a, a, a), and 32 -> 16-bit truncation splits the
// word (after cvt.u16.u32 a later rem.s16 read the value zero-extended).
// RUN: %opt %s -p simt-to-ptx | filecheck %s

// CHECK-LABEL: func.func @minmax
// CHECK:       %[[NEG:.*]] = ptx.inst "sub.s32"
// CHECK-NEXT:  %[[MIN:.*]] = ptx.inst "min.s32" %[[A:.*]], %[[NEG]] : (i32, i32) -> i32
// CHECK-NEXT:  %[[MAX:.*]] = ptx.inst "max.NaN.f32" %{{.*}}, %{{.*}} : (f32, f32) -> f32
// CHECK-NOT:   "min.s32"
// CHECK-NOT:   "max.NaN.f32"
// CHECK:       ptx.st_global %{{.*}}, %[[MIN]]
// CHECK:       ptx.st_global %{{.*}}, %[[MAX]]
func.func @minmax(%p: !tile.ptr<i32>, %q: !tile.ptr<f32>, %a: i32, %x: f32, %y: f32) attributes {simt.num_warps = 1 : i32} {
  %zero = arith.constant 0 : i32
  %neg = arith.subi %zero, %a : i32
  %inner = arith.minsi %a, %neg : i32
  %outer = arith.minsi %a, %inner : i32
  %fin = arith.maximumf %x, %y : f32
  %fout = arith.maximumf %fin, %y : f32
  simt.store %p[%zero], %outer : !tile.ptr<i32>, i32, i32
  simt.store %q[%zero], %fout : !tile.ptr<f32>, i32, f32
  func.return
}

// CHECK-LABEL: func.func @narrow
// CHECK:       %[[W:.*]] = ptx.repack %{{.*}} : i32 -> vector<2xi16>
// CHECK-NEXT:  %[[H:.*]] = ptx.lanes %[[W]] [0] : vector<2xi16> -> i16
// CHECK-NOT:   cvt.u16.u32
func.func @narrow(%p: !tile.ptr<i16>, %a: i32) attributes {simt.num_warps = 1 : i32} {
  %zero = arith.constant 0 : i32
  %h = arith.trunci %a : i32 to i16
  simt.store %p[%zero], %h : !tile.ptr<i16>, i32, i16
  func.return
}
