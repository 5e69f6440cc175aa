// simt.atomic_rmw and simt.atomic_cas printed, re-parsed and printed again, in custom and
// generic form, with and without sem and scope.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @atomics(%x: !tile.ptr<f32>, %c: !tile.ptr<i32>, %n: i32) attributes {simt.num_warps = 4 : i32} {
  %tid = simt.thread_id : i32
  %tb = vector.broadcast %tid : i32 to vector<2xi32>
  %lanes = arith.constant dense<[0, 128]> : vector<2xi32>
  %i = arith.addi %tb, %lanes : vector<2xi32>
  %nb = vector.broadcast %n : i32 to vector<2xi32>
  %m = tile.cmpi "slt", %i, %nb : vector<2xi32> -> vector<2xi1>
  %v = arith.constant dense<1.0> : vector<2xf32>
  %a = simt.atomic_rmw "add", %x[%i], %v mask %m : vector<2xi1> : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  %b = simt.atomic_cas %x[%i], %v, %a : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
  %d = simt.atomic_rmw "umax", %c[%n], %tid : !tile.ptr<i32>, i32, i32
  %t = arith.constant true
  %e = simt.atomic_cas %c[%n], %d, %tid mask %t : i1 : !tile.ptr<i32>, i32, i32
  %f = simt.atomic_rmw "or", %c[%n], %e sem "release" scope "sys" : !tile.ptr<i32>, i32, i32
  %g = simt.atomic_cas %c[%n], %f, %tid mask %t : i1 scope "cta" : !tile.ptr<i32>, i32, i32
  func.return
}
// CHECK-LABEL: func.func @atomics(
// CHECK:         %a = simt.atomic_rmw "add", %x[%i], %v mask %m : vector<2xi1> : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
// CHECK-NEXT:    %b = simt.atomic_cas %x[%i], %v, %a : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
// CHECK-NEXT:    %d = simt.atomic_rmw "umax", %c[%n], %tid : !tile.ptr<i32>, i32, i32
// CHECK-NEXT:    %t = arith.constant true
// CHECK-NEXT:    %e = simt.atomic_cas %c[%n], %d, %tid mask %t : i1 : !tile.ptr<i32>, i32, i32
// CHECK-NEXT:    %f = simt.atomic_rmw "or", %c[%n], %e sem "release" scope "sys" : !tile.ptr<i32>, i32, i32
// CHECK-NEXT:    %g = simt.atomic_cas %c[%n], %f, %tid mask %t : i1 scope "cta" : !tile.ptr<i32>, i32, i32
// GENERIC:       "simt.atomic_rmw"(%x, %i, %v, %m) <{kind = "add"}> : (!tile.ptr<f32>, vector<2xi32>, vector<2xf32>, vector<2xi1>) -> vector<2xf32>
// GENERIC:       "simt.atomic_cas"(%c, %n, %d, %tid, %t) : (!tile.ptr<i32>, i32, i32, i32, i1) -> i32
// GENERIC:       "simt.atomic_rmw"(%c, %n, %e) <{kind = "or", sem = "release", scope = "sys"}>
