// tile-to-simt of join (lanes renamed: one vector.shuffle of both operands), flip (through
// shared memory, read back by reversed numbers) and gather (read back at the indices). One
// warp.
// RUN: %opt %s -p tile-to-simt,canonicalize,cse | filecheck %s

func.func @join(%p: !tile.ptr<f32>, %y: !tile.ptr<f32>) attributes {simt.num_warps = 1 : i32} {
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<32x!tile.ptr<f32>, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>>
  %a = tile.load %ps : tensor<32x!tile.ptr<f32>, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>> -> tensor<32xf32, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>>
  %b = math.exp %a : tensor<32xf32, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>>
  %j = tile.join %a, %b : tensor<32xf32, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>> -> tensor<32x2xf32, #tile.blocked<spt = [1, 2], tpw = [32, 1], wpc = [1, 1]>>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<32x2x!tile.ptr<f32>, #tile.blocked<spt = [1, 2], tpw = [32, 1], wpc = [1, 1]>>
  tile.store %ys, %j : tensor<32x2x!tile.ptr<f32>, #tile.blocked<spt = [1, 2], tpw = [32, 1], wpc = [1, 1]>>, tensor<32x2xf32, #tile.blocked<spt = [1, 2], tpw = [32, 1], wpc = [1, 1]>>
  func.return
}
// CHECK-LABEL: func.func @join(
// CHECK-NOT:     simt.barrier
// CHECK:         %[[A:.*]] = simt.load %p
// CHECK-NEXT:    %[[B:.*]] = math.exp %[[A]]
// CHECK-NEXT:    %[[J:.*]] = vector.shuffle %[[A]], %[[B]] [0, 1] : vector<1xf32>, vector<1xf32>
// CHECK:         simt.store %y[%{{.*}}], %[[J]]

func.func @flip(%y: !tile.ptr<i32>) attributes {simt.num_warps = 1 : i32} {
  %x = tile.range 0, 64 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  %i = arith.muli %x, %x : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  %f = tile.flip %x, 0 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>> -> tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  %g = tile.gather %f[%i], 0 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>, tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>> -> tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  %ys = tile.splat %y : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  tile.store %ys, %g : tensor<64x!tile.ptr<i32>, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>, tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  func.return
}
// CHECK-LABEL: func.func @flip(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<64xi32, 3 : i32>
// CHECK:         arith.constant dense<[0, -1]> : vector<2xi32>
// CHECK:         %[[LAST:.*]] = arith.constant dense<63> : vector<2xi32>
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %{{.*}}, %[[LAST]] : vector<2xi32>
// CHECK:         %[[X:.*]] = arith.addi %{{.*}} : vector<2xi32>
// CHECK-NEXT:    %[[I:.*]] = arith.muli %[[X]], %[[X]]
// CHECK-NEXT:    simt.shared_store %[[BUF]][%{{.*}}], %[[X]]
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %[[F:.*]] = simt.shared_load %[[BUF]][%[[AT]]]
// CHECK-NEXT:    simt.barrier
// CHECK:         simt.shared_store %[[BUF]][%{{.*}}], %[[F]]
// CHECK-NEXT:    simt.barrier
// CHECK:         arith.maxsi %[[I]]
// CHECK:         %[[G:.*]] = simt.shared_load %[[BUF]]
// CHECK-NEXT:    simt.barrier
// CHECK:         simt.store %y[%{{.*}}], %[[G]]
