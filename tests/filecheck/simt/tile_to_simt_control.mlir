// tile-to-simt keeps scf ops and makes their tile-typed results, block arguments and
// yields per-thread vectors (here 256 elements over 128 threads: vector<2xf32>).
// RUN: %opt %s -p assign-layouts,tile-to-simt | filecheck %s

func.func @branches(%x: !tile.ptr<f32>, %n: i32) {
  %r = tile.range 0, 256 : tensor<256xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  %p = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  %v = tile.load %p : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
  %c0 = arith.constant 0 : i32
  %pos = tile.cmpi "sgt", %n, %c0 : i32 -> i1
  %w = scf.if %pos -> (tensor<256xf32>) {
    %d = arith.addf %v, %v : tensor<256xf32>
    scf.yield %d : tensor<256xf32>
  } else {
    scf.yield %v : tensor<256xf32>
  }
  %c1 = arith.constant 1 : i32
  %t, %k = scf.while (%a = %w, %i = %c0) : (tensor<256xf32>, i32) -> (tensor<256xf32>, i32) {
    %more = tile.cmpi "slt", %i, %n : i32 -> i1
    scf.condition(%more) %a, %i : tensor<256xf32>, i32
  } do {
  ^bb0(%a2: tensor<256xf32>, %i2: i32):
    %h = arith.mulf %a2, %a2 : tensor<256xf32>
    %j = arith.addi %i2, %c1 : i32
    scf.yield %h, %j : tensor<256xf32>, i32
  }
  tile.store %p, %t : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  func.return
}
// CHECK-LABEL: func.func @branches(
// CHECK:         %[[V:.*]] = simt.load %x[%r] {vec = 1 : i32} : !tile.ptr<f32>, vector<2xi32> -> vector<2xf32>
// CHECK:         %w = scf.if %pos -> (vector<2xf32>) {
// CHECK-NEXT:      %d = arith.addf %[[V]], %[[V]] : vector<2xf32>
// CHECK-NEXT:      scf.yield %d : vector<2xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[V]] : vector<2xf32>
// CHECK-NEXT:    }
// CHECK:         %t, %k = scf.while (%a = %w, %i = %c0) : (vector<2xf32>, i32) -> (vector<2xf32>, i32) {
// CHECK:           scf.condition(%more) %a, %i : vector<2xf32>, i32
// CHECK:         ^bb0(%a2: vector<2xf32>, %i2: i32):
// CHECK-NEXT:      %h = arith.mulf %a2, %a2 : vector<2xf32>
// CHECK:           scf.yield %h, %j : vector<2xf32>, i32
// CHECK:         simt.store %x[%r], %t {vec = 1 : i32} : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
