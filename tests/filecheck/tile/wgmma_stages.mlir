// Hopper's wgmma path: pipeline-loads{cp-async=90} stages a dot's operands 128-byte
// swizzled when wgmma can do the dot (f16 into f32, 16 rows a warp in warpgroups, K and N
// whole 128-byte atoms): A's rows permuted for the accumulator's 4 warps, B's not. Reading
// both in place, the dot runs on into the next iteration (`tile.async_dot`, as from TMA
// stages: tma_stages.mlir); with 4 stages the copies go 3 iterations ahead into the stage
// read the iteration before, issued after the dot (its wait for all but its latest
// wgmma) and a barrier. assign-layouts then picks #tile.mma version 3
// for it. With 3 stages the copies go 2 ahead.
// For mma.sync (cp-async=80) the stages are swizzled too, rows not permuted, and the dot
// waits for its stage: 2 iterations ahead.
// RUN: %opt %s -p 'pipeline-loads{num-stages=4 cp-async=90 num-warps=4}' | filecheck %s
// RUN: %opt %s -p 'pipeline-loads{num-stages=4 cp-async=90 num-warps=4},assign-layouts{num-warps=4 mma=90}' | filecheck %s --check-prefix=LAYOUT
// RUN: %opt %s -p 'pipeline-loads{num-stages=3 cp-async=90 num-warps=4}' | filecheck %s --check-prefix=THREE
// RUN: %opt %s -p 'pipeline-loads{num-stages=3 cp-async=80 num-warps=4}' | filecheck %s --check-prefix=AMPERE

// CHECK-LABEL: func.func @matmul
// CHECK: %[[A:.*]] = tile.shared_alloc {swizzle = 128 : i32, warps = 4 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: %[[B:.*]] = tile.shared_alloc {swizzle = 128 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: tile.async_copy %{{.*}}, %[[A]][%{{.*}}] mask
// CHECK: tile.async_copy %{{.*}}, %[[B]][%{{.*}}] mask
// CHECK-NEXT: tile.async_commit
// CHECK: tile.async_commit
// CHECK: tile.async_commit
// CHECK-NOT: tile.async_commit
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[S:.*]] = %{{.*}}) -> (tensor<64x64xf32>, i32)
// CHECK-NEXT: tile.async_wait 2
// CHECK-NEXT: %[[X:.*]] = tile.shared_read %[[A]][%[[S]]]
// CHECK-NEXT: %[[Y:.*]] = tile.shared_read %[[B]][%[[S]]]
// CHECK: %[[BACK:.*]] = arith.constant 3 : i32
// CHECK: arith.addi %[[S]], %[[BACK]]
// CHECK: tile.dot %[[X]], %[[Y]]
// CHECK-SAME: tile.async_dot
// CHECK-NEXT: tile.barrier
// CHECK: tile.async_copy %{{.*}}, %[[A]][%[[W:.*]]] mask
// CHECK: tile.async_copy %{{.*}}, %[[B]][%[[W]]] mask
// CHECK-NEXT: tile.async_commit
// LAYOUT: tile.dot {{.*}} -> tensor<64x64xf32, #tile.mma<version = 3, warps = [4, 1]>>
// THREE: tile.shared_alloc {swizzle = 128 : i32, warps = 4 : i32} : memref<3x64x64xf16, 3 : i32>
// THREE: tile.async_wait 1
// THREE: tile.dot
// THREE-SAME: tile.async_dot
// THREE-NEXT: tile.barrier
// AMPERE: tile.shared_alloc {swizzle = 128 : i32} : memref<3x64x64xf16, 3 : i32>
// AMPERE-NEXT: tile.shared_alloc {swizzle = 128 : i32} : memref<3x64x64xf16, 3 : i32>
// AMPERE: tile.async_wait 1
func.func @matmul(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                   %K: i32 {tile.divisibility = 16 : i32}) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 64 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %r = tile.range 0, 64 : tensor<64xi32>
  %r1 = tile.expand_dims %r, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %arow = tile.broadcast %r1 : tensor<64x1xi32> -> tensor<64x64xi32>
  %q = tile.range 0, 64 : tensor<64xi32>
  %q0 = tile.expand_dims %q, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %acol = tile.broadcast %q0 : tensor<1x64xi32> -> tensor<64x64xi32>
  %q1 = tile.expand_dims %q, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %brow = tile.broadcast %q1 : tensor<64x1xi32> -> tensor<64x64xi32>
  %r0 = tile.expand_dims %r, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %bcol = tile.broadcast %r0 : tensor<1x64xi32> -> tensor<64x64xi32>
  %Kr = tile.splat %K : i32 -> tensor<64x64xi32>
  %arowK = arith.muli %arow, %Kr : tensor<64x64xi32>
  %c64 = arith.constant dense<64> : tensor<64x64xi32>
  %pa = tile.splat %a : !tile.ptr<f16> -> tensor<64x64x!tile.ptr<f16>>
  %pb = tile.splat %b : !tile.ptr<f16> -> tensor<64x64x!tile.ptr<f16>>
  %acc = scf.for %k = %c0 to %K step %c16 iter_args(%acc_i = %acc0) -> (tensor<64x64xf32>) : i32 {
    %ka = tile.splat %k : i32 -> tensor<64x64xi32>
    %kcol = arith.addi %acol, %ka : tensor<64x64xi32>
    %Ka = tile.splat %K : i32 -> tensor<64x64xi32>
    %ina = tile.cmpi "slt", %kcol, %Ka : tensor<64x64xi32> -> tensor<64x64xi1>
    %aoff = arith.addi %arowK, %kcol : tensor<64x64xi32>
    %ap = tile.addptr %pa, %aoff : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
    %x = tile.load %ap mask %ina : tensor<64x64xi1> : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
    %kb = tile.splat %k : i32 -> tensor<64x64xi32>
    %krow = arith.addi %brow, %kb : tensor<64x64xi32>
    %Kb = tile.splat %K : i32 -> tensor<64x64xi32>
    %inb = tile.cmpi "slt", %krow, %Kb : tensor<64x64xi32> -> tensor<64x64xi1>
    %krow64 = arith.muli %krow, %c64 : tensor<64x64xi32>
    %boff = arith.addi %krow64, %bcol : tensor<64x64xi32>
    %bp = tile.addptr %pb, %boff : tensor<64x64x!tile.ptr<f16>>, tensor<64x64xi32>
    %y = tile.load %bp mask %inb : tensor<64x64xi1> : tensor<64x64x!tile.ptr<f16>> -> tensor<64x64xf16>
    %d = tile.dot %x, %y, %acc_i precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  func.return
}

