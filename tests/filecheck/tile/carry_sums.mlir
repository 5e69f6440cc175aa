// carry-sums: a loop that advances an offsets tile by one value for all its elements
// (``ptrs += BLOCK * stride``) carries the scalar sum of the steps instead, from 0, and
// reads ``init + splat(sum)``; after the loop the result is that again. A tile advanced
// by another tile, and a loop with none, are left alone.
// RUN: %opt %s -p carry-sums | filecheck %s

func.func @advance(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>, %n: i32, %s: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.range 0, 16 : tensor<16xi32>
  %pp = tile.splat %p : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<16xf32>
  %acc, %off = scf.for %i = %c0 to %n step %c1 iter_args(%acc_i = %acc0, %off_i = %r) -> (tensor<16xf32>, tensor<16xi32>) : i32 {
    %ptr = tile.addptr %pp, %off_i : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    %x = tile.load %ptr : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
    %sum = arith.addf %acc_i, %x : tensor<16xf32>
    %step = tile.splat %s : i32 -> tensor<16xi32>
    %next = arith.addi %off_i, %step : tensor<16xi32>
    scf.yield %sum, %next : tensor<16xf32>, tensor<16xi32>
  }
  %qp = tile.splat %q : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %out = tile.addptr %qp, %off : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  tile.store %out, %acc : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  func.return
}

// CHECK-LABEL: func.func @advance
// CHECK:      %[[R:.*]] = tile.range 0, 16 : tensor<16xi32>
// CHECK:      %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %{{.*}}, %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[T:.*]] = %[[Z]]) -> (tensor<16xf32>, i32) : i32 {
// CHECK-NEXT:   %[[SPLAT:.*]] = tile.splat %[[T]] : i32 -> tensor<16xi32>
// CHECK-NEXT:   %[[NOW:.*]] = arith.addi %[[R]], %[[SPLAT]] : tensor<16xi32>
// CHECK-NEXT:   tile.addptr %{{.*}}, %[[NOW]]
// CHECK-NOT:    arith.addi %[[NOW]]
// CHECK:        %[[MORE:.*]] = arith.addi %[[T]], %s : i32
// CHECK-NEXT:   scf.yield %{{.*}}, %[[MORE]] : tensor<16xf32>, i32
// CHECK-NEXT: }
// CHECK-NEXT: %[[SPLAT2:.*]] = tile.splat %[[SUM]] : i32 -> tensor<16xi32>
// CHECK-NEXT: %[[AFTER:.*]] = arith.addi %[[R]], %[[SPLAT2]] : tensor<16xi32>
// CHECK:      tile.addptr %{{.*}}, %[[AFTER]]

func.func @by_a_tile(%p: !tile.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tile.range 0, 16 : tensor<16xi32>
  %pp = tile.splat %p : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %off = scf.for %i = %c0 to %n step %c1 iter_args(%off_i = %r) -> (tensor<16xi32>) : i32 {
    %ptr = tile.addptr %pp, %off_i : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
    %x = tile.load %ptr : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
    tile.store %ptr, %x : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
    %next = arith.addi %off_i, %r : tensor<16xi32>
    scf.yield %next : tensor<16xi32>
  }
  func.return
}

// CHECK-LABEL: func.func @by_a_tile
// CHECK:       scf.for {{.*}} -> (tensor<16xi32>) : i32 {
// CHECK:         arith.addi %{{.*}}, %{{.*}} : tensor<16xi32>
