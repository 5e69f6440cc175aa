// tile-to-simt of tile.reduce and tile.scan (tests/test_reduce.py runs them): a thread
// combines its own elements (vector.shuffle picks halves), then its warp's lanes
// (simt.shuffle_xor), then the warps' partials: one shared-memory read per lane and a
// shuffle butterfly over them; a scan takes run
// totals across lanes with simt.shuffle_up and folds the prefix into its elements.
// RUN: %opt %s -p 'assign-layouts{num-warps=4},tile-to-simt,canonicalize,cse' | filecheck %s
// RUN: %opt %s -p 'assign-layouts{num-warps=1},tile-to-simt,canonicalize,cse' | filecheck %s --check-prefix=W1

func.func @sum(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32>) {
  %r = tile.range 0, 512 : tensor<512xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %v = tile.load %xp : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %s = tile.reduce %v axis 0 : tensor<512xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tile.yield %c : f32
  }
  tile.store %o, %s : !tile.ptr<f32>, f32
  func.return
}
// CHECK-LABEL: func.func @sum(
// CHECK:         %v = simt.load %x[%r] {vec = 4 : i32} : !tile.ptr<f32>, vector<4xi32> -> vector<4xf32>
// CHECK-NEXT:    %[[E:.*]] = vector.shuffle %v, %v [0, 2] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[O:.*]] = vector.shuffle %v, %v [1, 3] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[P:.*]] = arith.addf %[[E]], %[[O]] : vector<2xf32>
// CHECK:         %[[T:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK-NEXT:    %[[S:.*]] = vector.extract %[[T]][0] : f32 from vector<1xf32>
// CHECK-NEXT:    %[[X1:.*]] = simt.shuffle_xor %[[S]], 1 : f32
// CHECK-NEXT:    %[[A1:.*]] = arith.addf %[[S]], %[[X1]] : f32
// CHECK:         simt.shuffle_xor %{{.*}}, 16 : f32
// CHECK-NEXT:    %[[W:.*]] = arith.addf
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<4xf32, 3 : i32>
// CHECK-NEXT:    simt.shared_store %[[BUF]][%{{.*}}], %[[W]] mask %{{.*}} : i1 : memref<4xf32, 3 : i32>, i32, f32
// CHECK-NEXT:    simt.barrier
// CHECK:         %[[R0:.*]] = simt.shared_load %[[BUF]][%{{.*}}] : memref<4xf32, 3 : i32>, i32 -> f32
// CHECK-NOT:     simt.shared_load
// CHECK-NEXT:    %[[Y1:.*]] = simt.shuffle_xor %[[R0]], 1 : f32
// CHECK-NEXT:    %[[B1:.*]] = arith.addf %[[R0]], %[[Y1]] : f32
// CHECK-NEXT:    %[[Y2:.*]] = simt.shuffle_xor %[[B1]], 2 : f32
// CHECK-NEXT:    %s = arith.addf %[[B1]], %[[Y2]] : f32
// CHECK:         simt.store %o[%{{.*}}], %s mask %{{.*}} : i1
// W1-LABEL:    func.func @sum(
// W1-NOT:        simt.shared_alloc
// W1:            simt.shuffle_xor %{{.*}}, 16 : f32
// W1-NOT:        simt.barrier
// W1:            func.return

func.func @cumsum(%x: !tile.ptr<i32> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 64 : tensor<64xi32>
  %xs = tile.splat %x : !tile.ptr<i32> -> tensor<64x!tile.ptr<i32>>
  %xp = tile.addptr %xs, %r : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  %v = tile.load %xp : tensor<64x!tile.ptr<i32>> -> tensor<64xi32>
  %s = tile.scan %v axis 0 : tensor<64xi32> -> tensor<64xi32> {
  ^bb0(%a: i32, %b: i32):
    %c = arith.addi %a, %b : i32
    tile.yield %c : i32
  }
  tile.store %xp, %s : tensor<64x!tile.ptr<i32>>, tensor<64xi32>
  func.return
}
// W1-LABEL:    func.func @cumsum(
// W1:            %v = simt.load %x[%r] {vec = 2 : i32} : !tile.ptr<i32>, vector<2xi32> -> vector<2xi32>
// W1-NEXT:       %[[X0:.*]] = vector.shuffle %v, %v [0] : vector<2xi32>, vector<2xi32>
// W1-NEXT:       %[[X1:.*]] = vector.shuffle %v, %v [1] : vector<2xi32>, vector<2xi32>
// W1-NEXT:       %[[T:.*]] = arith.addi %[[X0]], %[[X1]] : vector<1xi32>
// W1:            simt.shuffle_up %[[T]], 1 : vector<1xi32>
// W1:            simt.shuffle_up %{{.*}}, 16 : vector<1xi32>
// W1:            %[[EX:.*]] = simt.shuffle_up %{{.*}}, 1 : vector<1xi32>
// W1-NEXT:       %[[F0:.*]] = arith.addi %[[EX]], %[[X0]] : vector<1xi32>
// W1-NEXT:       %[[S0:.*]] = tile.select %{{.*}}, %[[F0]], %[[X0]]
// W1-NEXT:       %[[F1:.*]] = arith.addi %[[EX]], %[[T]] : vector<1xi32>
// W1-NEXT:       %[[S1:.*]] = tile.select %{{.*}}, %[[F1]], %[[T]]
// W1-NEXT:       %s = vector.shuffle %[[S0]], %[[S1]] [0, 1] : vector<1xi32>, vector<1xi32>
// W1-NEXT:       simt.store %x[%r], %s {vec = 2 : i32}
// CHECK-LABEL: func.func @cumsum(
// CHECK:         simt.shuffle_up %{{.*}}, 16 : vector<1xi32>
// CHECK:         simt.shared_alloc : memref<4xi32, 3 : i32>
// CHECK:         simt.barrier
// CHECK-COUNT-2: simt.shared_load %{{.*}} : memref<4xi32, 3 : i32>, vector<1xi32>
// CHECK-NOT:     simt.shared_load
