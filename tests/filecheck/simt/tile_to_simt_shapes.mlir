// tile-to-simt of the shape ops: expand_dims and broadcast rename lanes (vector.shuffle,
// or nothing), trans goes through shared memory between barriers. One warp; the (8, 16)
// layout gives each thread 2 x 2 elements, the slice along dim 1 the thread's 2 rows.
// RUN: %opt %s -p tile-to-simt,canonicalize,cse | filecheck %s

func.func @rows(%y: !tile.ptr<i32>) attributes {simt.num_warps = 1 : i32} {
  %r = tile.range 0, 8 : tensor<8xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>>
  %e = tile.expand_dims %r, 1 : tensor<8xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>> -> tensor<8x1xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>
  %b = tile.broadcast %e : tensor<8x1xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>> -> tensor<8x16xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>>
  %t = tile.trans %b, [1, 0] : tensor<8x16xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [1, 1]>> -> tensor<16x8xi32, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>
  %ys = tile.splat %y : !tile.ptr<i32> -> tensor<16x8x!tile.ptr<i32>, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>
  tile.store %ys, %t : tensor<16x8x!tile.ptr<i32>, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>, tensor<16x8xi32, #tile.blocked<spt = [1, 2], tpw = [8, 4], wpc = [1, 1]>>
  func.return
}
// CHECK-LABEL: func.func @rows(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<128xi32, 3 : i32>
// CHECK:         %[[R:.*]] = arith.addi {{.*}} : vector<2xi32>
// CHECK-NOT:     tile.expand_dims
// CHECK:         %[[B:.*]] = vector.shuffle %[[R]], %[[R]] [0, 0, 1, 1] : vector<2xi32>, vector<2xi32>
// CHECK-NEXT:    simt.shared_store %[[BUF]][%{{.*}}], %[[B]] : memref<128xi32, 3 : i32>, vector<4xi32>, vector<4xi32>
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %[[T:.*]] = simt.shared_load %[[BUF]][%{{.*}}] : memref<128xi32, 3 : i32>, vector<4xi32> -> vector<4xi32>
// CHECK-NEXT:    simt.barrier
// CHECK:         simt.store %y[%{{.*}}], %[[T]]

// A mask through shared memory travels as i32; two conversions share one buffer, grown
// to the larger tile.
func.func @masks(%m: i1, %y: !tile.ptr<i1>) attributes {simt.num_warps = 1 : i32} {
  %s = tile.splat %m : i1 -> tensor<32xi1, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>>
  %c = tile.convert_layout %s : tensor<32xi1, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>> -> tensor<32xi1, #tile.blocked<spt = [2], tpw = [16], wpc = [1]>>
  %s2 = tile.splat %m : i1 -> tensor<64xi1, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>>
  %c2 = tile.convert_layout %s2 : tensor<64xi1, #tile.blocked<spt = [1], tpw = [32], wpc = [1]>> -> tensor<64xi1, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  %ys = tile.splat %y : !tile.ptr<i1> -> tensor<32x!tile.ptr<i1>, #tile.blocked<spt = [2], tpw = [16], wpc = [1]>>
  tile.store %ys, %c : tensor<32x!tile.ptr<i1>, #tile.blocked<spt = [2], tpw = [16], wpc = [1]>>, tensor<32xi1, #tile.blocked<spt = [2], tpw = [16], wpc = [1]>>
  %ys2 = tile.splat %y : !tile.ptr<i1> -> tensor<64x!tile.ptr<i1>, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  tile.store %ys2, %c2 : tensor<64x!tile.ptr<i1>, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>, tensor<64xi1, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  func.return
}
// CHECK-LABEL: func.func @masks(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<64xi32, 3 : i32>
// CHECK:         %[[W:.*]] = arith.extui %{{.*}} : vector<1xi1> to vector<1xi32>
// CHECK-NEXT:    simt.shared_store %[[BUF]][%{{.*}}], %[[W]]
// CHECK:         %[[L:.*]] = simt.shared_load %[[BUF]]
// CHECK:         tile.cmpi "ne", %[[L]], %{{.*}} : vector<2xi32> -> vector<2xi1>
// CHECK:         simt.shared_store %[[BUF]]
