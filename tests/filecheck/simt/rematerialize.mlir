// rematerialize: a register vector of pure arithmetic over scalars, computed before a
// loop and used after it, is computed again just before the op that uses it after the
// loop (here inside the scf.if), so it is not live through the loop; its use before the
// loop keeps the original. A vector that a load made is left alone.
// RUN: %opt %s -p rematerialize | filecheck %s

func.func @index(%t: i32, %n: i32, %p: !tile.ptr<f32>, %v: vector<4xf32>, %c: i1) attributes {simt.num_warps = 1 : i32} {
  %lanes = arith.constant dense<[0, 1, 2, 3]> : vector<4xi32>
  %b = vector.broadcast %t : i32 to vector<4xi32>
  %at = arith.addi %lanes, %b : vector<4xi32>
  simt.store %p[%at], %v {vec = 1 : i32} : !tile.ptr<f32>, vector<4xi32>, vector<4xf32>
  %loaded = simt.load %p[%at] {vec = 1 : i32} : !tile.ptr<f32>, vector<4xi32> -> vector<4xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    simt.store %p[%b], %v {vec = 1 : i32} : !tile.ptr<f32>, vector<4xi32>, vector<4xf32>
  }
  scf.if %c {
    simt.store %p[%at], %loaded {vec = 1 : i32} : !tile.ptr<f32>, vector<4xi32>, vector<4xf32>
  }
  func.return
}

// CHECK:      %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xi32>
// CHECK-NEXT: %[[B:.*]] = vector.broadcast %t : i32 to vector<4xi32>
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[LANES]], %[[B]] : vector<4xi32>
// CHECK-NEXT: simt.store %p[%[[AT]]], %v
// CHECK-NEXT: %[[LOADED:.*]] = simt.load %p[%[[AT]]]
// CHECK:      scf.for
// CHECK-NEXT:   simt.store %p[%[[B]]], %v
// CHECK-NEXT: }
// CHECK-NEXT: %[[LANES2:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xi32>
// CHECK-NEXT: %[[B2:.*]] = vector.broadcast %t : i32 to vector<4xi32>
// CHECK-NEXT: %[[AT2:.*]] = arith.addi %[[LANES2]], %[[B2]] : vector<4xi32>
// CHECK-NEXT: scf.if %c {
// CHECK-NEXT:   simt.store %p[%[[AT2]]], %[[LOADED]]
