// pipeline-loads: the loads feeding a dot move one iteration ahead (num-stages=2) or two
// (num-stages=3), carried as iter_args; loops it does not recognize are left alone.
// RUN: %opt %s -p pipeline-loads | filecheck %s
// RUN: %opt %s -p 'pipeline-loads{num-stages=3}' | filecheck %s --check-prefix=THREE
// RUN: %opt %s -p 'pipeline-loads{num-stages=1}' | filecheck %s --check-prefix=OFF

// A K loop: addresses from the induction variable and loop-invariant values, one load
// through a transpose.
func.func @matmul(%a: !tile.ptr<f16>, %b: !tile.ptr<f16>, %c: !tile.ptr<f32>, %K: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %r = tile.range 0, 16 : tensor<16xi32>
  %r1 = tile.expand_dims %r, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %rows = tile.broadcast %r1 : tensor<16x1xi32> -> tensor<16x16xi32>
  %r0 = tile.expand_dims %r, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cols = tile.broadcast %r0 : tensor<1x16xi32> -> tensor<16x16xi32>
  %Ks = tile.splat %K : i32 -> tensor<16x16xi32>
  %arow = arith.muli %rows, %Ks : tensor<16x16xi32>
  %pa = tile.splat %a : !tile.ptr<f16> -> tensor<16x16x!tile.ptr<f16>>
  %pb = tile.splat %b : !tile.ptr<f16> -> tensor<16x16x!tile.ptr<f16>>
  %acc = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0) -> (tensor<16x16xf32>) : i32 {
    %ks = tile.splat %k : i32 -> tensor<16x16xi32>
    %acol = arith.addi %cols, %ks : tensor<16x16xi32>
    %aoff = arith.addi %arow, %acol : tensor<16x16xi32>
    %ap = tile.addptr %pa, %aoff : tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi32>
    %x = tile.load %ap : tensor<16x16x!tile.ptr<f16>> -> tensor<16x16xf16>
    %bk = arith.addi %cols, %ks : tensor<16x16xi32>
    %boff = arith.addi %arow, %bk : tensor<16x16xi32>
    %bp = tile.addptr %pb, %boff : tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi32>
    %inside = tile.cmpi "slt", %bk, %Ks : tensor<16x16xi32> -> tensor<16x16xi1>
    %y = tile.load %bp mask %inside : tensor<16x16xi1> : tensor<16x16x!tile.ptr<f16>> -> tensor<16x16xf16>
    %yt = tile.trans %y, [1, 0] : tensor<16x16xf16> -> tensor<16x16xf16>
    %d = tile.dot %x, %yt, %acc_i precision "ieee" : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %cp = tile.splat %c : !tile.ptr<f32> -> tensor<16x16x!tile.ptr<f32>>
  %cq = tile.addptr %cp, %arow : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xi32>
  tile.store %cq, %acc : tensor<16x16x!tile.ptr<f32>>, tensor<16x16xf32>
  func.return
}
// The prologue loads iteration lb where lb < ub:
// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[FIRST:.*]] = tile.cmpi "slt", %c0, %K : i32 -> i1
// CHECK:         %[[AP0:.*]] = tile.addptr %pa, %{{.*}}
// CHECK:         %[[BP0:.*]] = tile.addptr %pb, %{{.*}}
// CHECK:         %[[IN0:.*]] = tile.cmpi "slt", %{{.*}}, %Ks
// CHECK:         %[[ON0:.*]] = tile.splat %[[FIRST]] : i1 -> tensor<16x16xi1>
// CHECK-NEXT:    %[[X0:.*]] = tile.load %[[AP0]] mask %[[ON0]]
// CHECK:         %[[ON1:.*]] = tile.splat %[[FIRST]] : i1 -> tensor<16x16xi1>
// CHECK-NEXT:    %[[M1:.*]] = arith.andi %[[IN0]], %[[ON1]]
// CHECK-NEXT:    %[[Y0:.*]] = tile.load %[[BP0]] mask %[[M1]]
// The body starts with the loads of iv + step, live where step < ub - iv:
// CHECK-NEXT:    %acc, %{{.*}}, %{{.*}} = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0, %x = %[[X0]], %y = %[[Y0]]) -> (tensor<16x16xf32>, tensor<16x16xf16>, tensor<16x16xf16>) : i32 {
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %k, %c16 : i32
// CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %K, %k : i32
// CHECK-NEXT:      %[[LIVE:.*]] = tile.cmpi "ult", %c16, %[[LEFT]] : i32 -> i1
// CHECK-NEXT:      %{{.*}} = tile.splat %[[NEXT]] : i32 -> tensor<16x16xi32>
// CHECK:           %[[XN:.*]] = tile.load
// CHECK:           %[[YN:.*]] = tile.load
// CHECK-NEXT:      %yt = tile.trans %y, [1, 0]
// CHECK-NEXT:      %d = tile.dot %x, %yt, %acc_i
// CHECK-NEXT:      scf.yield %d, %[[XN]], %[[YN]] : tensor<16x16xf32>, tensor<16x16xf16>, tensor<16x16xf16>
// CHECK-NEXT:    }
// CHECK:         tile.store %cq, %acc
// OFF-LABEL: func.func @matmul(
// OFF:         scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0) -> (tensor<16x16xf32>) : i32 {
// OFF-NEXT:      %ks = tile.splat %k

// A pointer advanced by a constant each iteration is advanced ahead of it too; a loop with
// a runtime step, or one that stores, is left alone.
func.func @advance(%a: !tile.ptr<f16>, %K: i32, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16x16xf32>
  %r = tile.range 0, 16 : tensor<16xi32>
  %r0 = tile.expand_dims %r, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %cols = tile.broadcast %r0 : tensor<1x16xi32> -> tensor<16x16xi32>
  %pa = tile.splat %a : !tile.ptr<f16> -> tensor<16x16x!tile.ptr<f16>>
  %p0 = tile.addptr %pa, %cols : tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi32>
  %s16 = tile.splat %c16 : i32 -> tensor<16x16xi32>
  %acc, %pend = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0, %p = %p0) -> (tensor<16x16xf32>, tensor<16x16x!tile.ptr<f16>>) : i32 {
    %x = tile.load %p : tensor<16x16x!tile.ptr<f16>> -> tensor<16x16xf16>
    %d = tile.dot %x, %x, %acc_i precision "ieee" : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %pn = tile.addptr %p, %s16 : tensor<16x16x!tile.ptr<f16>>, tensor<16x16xi32>
    scf.yield %d, %pn : tensor<16x16xf32>, tensor<16x16x!tile.ptr<f16>>
  }
  %acc2 = scf.for %k = %c0 to %K step %n iter_args(%acc_i = %acc) -> (tensor<16x16xf32>) : i32 {
    %x = tile.load %p0 : tensor<16x16x!tile.ptr<f16>> -> tensor<16x16xf16>
    %d = tile.dot %x, %x, %acc_i precision "ieee" : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %pc = tile.splat %a : !tile.ptr<f16> -> tensor<16x16x!tile.ptr<f16>>
  %acc3 = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc2) -> (tensor<16x16xf32>) : i32 {
    %x = tile.load %p0 : tensor<16x16x!tile.ptr<f16>> -> tensor<16x16xf16>
    %d = tile.dot %x, %x, %acc_i precision "ieee" : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    %h = arith.truncf %d : tensor<16x16xf32> to tensor<16x16xf16>
    tile.store %pc, %h : tensor<16x16x!tile.ptr<f16>>, tensor<16x16xf16>
    scf.yield %d : tensor<16x16xf32>
  }
  func.return
}
// CHECK-LABEL: func.func @advance(
// CHECK:         %[[X0:.*]] = tile.load %p0 mask
// CHECK-NEXT:    %acc, %pend, %{{.*}} = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0, %p = %p0, %x = %[[X0]])
// CHECK-NEXT:      %[[PN:.*]] = tile.addptr %p, %s16
// CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %K, %k : i32
// CHECK-NEXT:      %[[LIVE:.*]] = tile.cmpi "ult", %c16, %[[LEFT]] : i32 -> i1
// CHECK-NEXT:      %[[ON:.*]] = tile.splat %[[LIVE]] : i1 -> tensor<16x16xi1>
// CHECK-NEXT:      %[[XN:.*]] = tile.load %[[PN]] mask %[[ON]]
// CHECK-NEXT:      %d = tile.dot %x, %x, %acc_i
// CHECK:           scf.yield %d, %{{.*}}, %[[XN]] :
// CHECK:         scf.for %{{.*}} = %c0 to %K step %n iter_args(%{{.*}} = %acc) -> (tensor<16x16xf32>) : i32 {
// CHECK-NEXT:      tile.load %p0 : tensor<16x16x!tile.ptr<f16>>
// CHECK:         scf.for %{{.*}} = %c0 to %K step %c16 iter_args(%{{.*}} = %acc2) -> (tensor<16x16xf32>) : i32 {
// CHECK-NEXT:      tile.load %p0 : tensor<16x16x!tile.ptr<f16>>
// Three stages: two iterations in flight, the second live where lb < ub and step < ub - lb;
// the body loads iteration iv + 2*step, live where 2*step < ub - iv.
// THREE-LABEL: func.func @advance(
// THREE:         %[[FIRST:.*]] = tile.cmpi "slt", %c0, %K : i32 -> i1
// THREE:         %[[X0:.*]] = tile.load %p0 mask
// THREE-NEXT:    %[[P1:.*]] = tile.addptr %p0, %s16
// THREE-NEXT:    %[[L1:.*]] = arith.subi %K, %c0 : i32
// THREE-NEXT:    %[[C1:.*]] = tile.cmpi "ult", %c16, %[[L1]] : i32 -> i1
// THREE-NEXT:    %[[LIVE1:.*]] = arith.andi %[[FIRST]], %[[C1]] : i1
// THREE-NEXT:    %[[ON1:.*]] = tile.splat %[[LIVE1]]
// THREE-NEXT:    %[[X1:.*]] = tile.load %[[P1]] mask %[[ON1]]
// THREE-NEXT:    scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0, %p = %p0, %x = %[[X0]], %[[Q:.*]] = %[[X1]])
// THREE-NEXT:      %[[PN1:.*]] = tile.addptr %p, %s16
// THREE-NEXT:      %[[PN2:.*]] = tile.addptr %[[PN1]], %s16
// THREE-NEXT:      %[[L:.*]] = arith.subi %K, %k : i32
// THREE-NEXT:      %[[TWO:.*]] = arith.constant 32 : i32
// THREE-NEXT:      %[[C:.*]] = tile.cmpi "ult", %[[TWO]], %[[L]] : i32 -> i1
// THREE-NEXT:      %[[ON:.*]] = tile.splat %[[C]]
// THREE-NEXT:      %[[XN:.*]] = tile.load %[[PN2]] mask %[[ON]]
// THREE-NEXT:      %d = tile.dot %x, %x, %acc_i
// THREE:           scf.yield %d, %{{.*}}, %[[Q]], %[[XN]] :
