// Shared-memory stages and asynchronous copies round trip; pipeline-loads writes them for
// a target with cp.async (cp-async=80): a buffer of num-stages tiles per dot operand, the
// first num-stages - 1 iterations copied before the loop, one group each, and per
// iteration a wait, the reads of this iteration's stage and the copies of iteration
// i + num-stages - 1 into the stage read last iteration. (Rows must be read in runs of at
// least 4 bytes: here K, A's row stride, and so the mask along k, is a multiple of 16, and
// B's row stride is 32.)
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s -p 'pipeline-loads{num-stages=3 cp-async=80 num-warps=1}' | filecheck %s

// ROUND-LABEL: func.func @ops
func.func @ops(%p: tensor<16x32x!tile.ptr<f16>>, %m: tensor<16x32xi1>, %s: i32) {
  // ROUND: %[[B:.*]] = tile.shared_alloc : memref<2x16x40xf16, 3 : i32>
  %b = tile.shared_alloc : memref<2x16x40xf16, 3 : i32>
  // ROUND-NEXT: tile.async_copy %p, %[[B]][%s] mask %m : tensor<16x32xi1> : tensor<16x32x!tile.ptr<f16>>, memref<2x16x40xf16, 3 : i32>
  tile.async_copy %p, %b[%s] mask %m : tensor<16x32xi1> : tensor<16x32x!tile.ptr<f16>>, memref<2x16x40xf16, 3 : i32>
  // ROUND-NEXT: tile.async_commit
  tile.async_commit
  // ROUND-NEXT: tile.async_wait 0
  tile.async_wait 0
  // ROUND-NEXT: tile.shared_read %[[B]][%s] : memref<2x16x40xf16, 3 : i32> -> tensor<16x32xf16>
  %t = tile.shared_read %b[%s] : memref<2x16x40xf16, 3 : i32> -> tensor<16x32xf16>
  func.return
}

// A 1-D tile is a stage's one row.
// ROUND-LABEL: func.func @row
func.func @row(%p: tensor<64x!tile.ptr<f32>>, %s: i32) {
  // ROUND: %[[B:.*]] = tile.shared_alloc : memref<3x1x64xf32, 3 : i32>
  %b = tile.shared_alloc : memref<3x1x64xf32, 3 : i32>
  // ROUND-NEXT: tile.async_copy %p, %[[B]][%s] : tensor<64x!tile.ptr<f32>>, memref<3x1x64xf32, 3 : i32>
  tile.async_copy %p, %b[%s] : tensor<64x!tile.ptr<f32>>, memref<3x1x64xf32, 3 : i32>
  // ROUND-NEXT: tile.shared_read %[[B]][%s] : memref<3x1x64xf32, 3 : i32> -> tensor<64xf32>
  %t = tile.shared_read %b[%s] : memref<3x1x64xf32, 3 : i32> -> tensor<64xf32>
  func.return
}

// CHECK-LABEL: func.func @matmul
// CHECK: %[[A:.*]] = tile.shared_alloc : memref<3x32x24xf16, 3 : i32>
// (rows of 16 halves, two 16-byte chunks, padded by one chunk)
// CHECK: %[[B:.*]] = tile.shared_alloc : memref<3x16x40xf16, 3 : i32>
// CHECK: tile.async_copy %{{.*}}, %[[A]][%{{.*}}] mask
// CHECK: tile.async_copy %{{.*}}, %[[B]][%{{.*}}] mask
// CHECK-NEXT: tile.async_commit
// CHECK: tile.async_copy
// CHECK: tile.async_copy
// CHECK-NEXT: tile.async_commit
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[S:.*]] = %{{.*}}) -> (tensor<32x32xf32>, i32)
// CHECK-NEXT: tile.async_wait 1
// CHECK-NEXT: %[[X:.*]] = tile.shared_read %[[A]][%[[S]]]
// CHECK-NEXT: %[[Y:.*]] = tile.shared_read %[[B]][%[[S]]]
// CHECK: tile.async_copy %{{.*}}, %[[A]][%[[W:.*]]] mask
// CHECK: tile.async_copy %{{.*}}, %[[B]][%[[W]]] mask
// CHECK-NEXT: tile.async_commit
// CHECK: tile.dot %[[X]], %[[Y]]
// CHECK: scf.yield
// CHECK: tile.async_wait 0
func.func @matmul(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                   %K: i32 {tile.divisibility = 16 : i32}) -> tensor<32x32xf32> {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<32x32xf32>
  %r = tile.range 0, 32 : tensor<32xi32>
  %r1 = tile.expand_dims %r, 1 : tensor<32xi32> -> tensor<32x1xi32>
  %arow = tile.broadcast %r1 : tensor<32x1xi32> -> tensor<32x16xi32>
  %q = tile.range 0, 16 : tensor<16xi32>
  %q0 = tile.expand_dims %q, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %acol = tile.broadcast %q0 : tensor<1x16xi32> -> tensor<32x16xi32>
  %q1 = tile.expand_dims %q, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %brow = tile.broadcast %q1 : tensor<16x1xi32> -> tensor<16x32xi32>
  %r0 = tile.expand_dims %r, 0 : tensor<32xi32> -> tensor<1x32xi32>
  %bcol = tile.broadcast %r0 : tensor<1x32xi32> -> tensor<16x32xi32>
  %Kr = tile.splat %K : i32 -> tensor<32x16xi32>
  %arowK = arith.muli %arow, %Kr : tensor<32x16xi32>
  %c32 = arith.constant dense<32> : tensor<16x32xi32>
  %pa = tile.splat %a : !tile.ptr<f16> -> tensor<32x16x!tile.ptr<f16>>
  %pb = tile.splat %b : !tile.ptr<f16> -> tensor<16x32x!tile.ptr<f16>>
  %acc = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0) -> (tensor<32x32xf32>) : i32 {
    %ka = tile.splat %k : i32 -> tensor<32x16xi32>
    %kcol = arith.addi %acol, %ka : tensor<32x16xi32>
    %Ka = tile.splat %K : i32 -> tensor<32x16xi32>
    %ina = tile.cmpi "slt", %kcol, %Ka : tensor<32x16xi32> -> tensor<32x16xi1>
    %aoff = arith.addi %arowK, %kcol : tensor<32x16xi32>
    %ap = tile.addptr %pa, %aoff : tensor<32x16x!tile.ptr<f16>>, tensor<32x16xi32>
    %x = tile.load %ap mask %ina : tensor<32x16xi1> : tensor<32x16x!tile.ptr<f16>> -> tensor<32x16xf16>
    %kb = tile.splat %k : i32 -> tensor<16x32xi32>
    %krow = arith.addi %brow, %kb : tensor<16x32xi32>
    %Kb = tile.splat %K : i32 -> tensor<16x32xi32>
    %inb = tile.cmpi "slt", %krow, %Kb : tensor<16x32xi32> -> tensor<16x32xi1>
    %krow32 = arith.muli %krow, %c32 : tensor<16x32xi32>
    %boff = arith.addi %krow32, %bcol : tensor<16x32xi32>
    %bp = tile.addptr %pb, %boff : tensor<16x32x!tile.ptr<f16>>, tensor<16x32xi32>
    %y = tile.load %bp mask %inb : tensor<16x32xi1> : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
    %d = tile.dot %x, %y, %acc_i precision "ieee" : tensor<32x16xf16>, tensor<16x32xf16> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  func.return %acc : tensor<32x32xf32>
}
