// Hopper's TMA path: array-view loads (tile.view_load, from a tile.make_view of kernel
// parameters, 16-byte aligned with a unit column stride) feeding a dot that wgmma can do
// are staged 128-byte swizzled and filled by tile.tma_copy: one barrier per stage with
// one arrival per operand, made before the loop and released after it; iteration i waits
// for its stage's barrier in the phase the loop carries (it flips when the stage wraps
// around). The dot runs on into the next iteration, so the stage the last iteration read
// is refilled after it and a barrier (every warpgroup has waited for its wgmma of that
// iteration by then), 3 iterations ahead in 4 stages. The view loads stay when lower-array-views runs with tma=1; without it (or on
// sm_80) they become pointers and masks and cp.async copies, as before.
// RUN: %opt %s -p 'lower-array-views{tma=1},pipeline-loads{num-stages=4 cp-async=90 num-warps=4},lower-array-views' | filecheck %s
// RUN: %opt %s -p 'lower-array-views{tma=1},pipeline-loads{num-stages=3 cp-async=80 num-warps=4},lower-array-views' | filecheck %s --check-prefix=AMPERE
// RUN: %opt %s -p 'lower-array-views{tma=1},pipeline-loads{num-stages=4 cp-async=90 num-warps=4}' | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s -p 'lower-array-views{tma=1}' | filecheck %s --check-prefix=KEPT

// CHECK-LABEL: func.func @matmul
// CHECK: %[[A:.*]] = tile.shared_alloc {swizzle = 128 : i32, warps = 4 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: %[[B:.*]] = tile.shared_alloc {swizzle = 128 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: %[[BARS:.*]] = tile.barrier_alloc arrivals 2 : memref<4xi64, 3 : i32>
// CHECK: tile.tma_copy %a sizes[%M, %K] strides[%K, %{{.*}}] at[%{{.*}}, %{{.*}}] to %[[A]][%{{.*}}], %[[BARS]] if
// CHECK: tile.tma_copy %b sizes[%K, %N] strides[%N, %{{.*}}] at[%{{.*}}, %{{.*}}] to %[[B]][%{{.*}}], %[[BARS]] if
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[S:.*]] = %{{.*}}, %[[P:.*]] = %{{.*}}) -> (tensor<64x64xf32>, i32, i32)
// CHECK-NEXT: tile.barrier_wait %[[BARS]][%[[S]]], %[[P]]
// CHECK-NEXT: %[[X:.*]] = tile.shared_read %[[A]][%[[S]]]
// CHECK-NEXT: %[[Y:.*]] = tile.shared_read %[[B]][%[[S]]]
// CHECK: arith.xori %[[P]]
// CHECK: tile.dot %[[X]], %[[Y]]
// CHECK-SAME: tile.async_dot
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.tma_copy %a {{.*}} to %[[A]][%[[W:.*]]], %[[BARS]] if
// CHECK-NEXT: tile.tma_copy %b {{.*}} to %[[B]][%[[W]]], %[[BARS]] if
// CHECK-NEXT: scf.yield
// CHECK: tile.barrier_release %[[BARS]]
// CHECK-NOT: tile.view_load
// CHECK-NOT: tile.make_view
// AMPERE-NOT: tile.tma_copy
// AMPERE: tile.async_copy
// AMPERE-NOT: tile.view_load
// ROUND: tile.barrier_wait
func.func @matmul(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                  %M: i32, %N: i32 {tile.divisibility = 16 : i32}, %K: i32 {tile.divisibility = 16 : i32}, %pm: i32, %pn: i32) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%M, %K] strides [%K, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %vb = tile.make_view %b shape [%K, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %row = arith.muli %pm, %c64 : i32
  %col = arith.muli %pn, %c64 : i32
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc1 = %acc0) -> (tensor<64x64xf32>) : i32 {
    %x = tile.view_load %va[%row, %k] padding "zero" elements : !tile.array<f16, 2> -> tensor<64x64xf16>
    %y = tile.view_load %vb[%k, %col] padding "zero" elements : !tile.array<f16, 2> -> tensor<64x64xf16>
    %d = tile.dot %x, %y, %acc1 precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  func.return
}

// A tile read as B through a transpose (K in attention: tl.dot(q, tl.trans(k))) is
// staged as it is loaded, its rows not permuted (it is not an A); the dot reads it
// K-major. Q, loaded before the loop, is not staged.
// CHECK-LABEL: func.func @scores
// CHECK: %[[K:.*]] = tile.shared_alloc {swizzle = 128 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: tile.tma_copy %k {{.*}} to %[[K]]
// CHECK: scf.for
// CHECK: %[[R:.*]] = tile.shared_read %[[K]]
// CHECK: %[[T:.*]] = tile.trans %[[R]]
// CHECK: tile.dot %{{.*}}, %[[T]]
func.func @scores(%q: tensor<64x64xf16>, %k: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                  %S: i32 {tile.divisibility = 16 : i32}) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %vk = tile.make_view %k shape [%S, %c64] strides [%c64, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %acc = scf.for %n = %c0 to %S step %c64 iter_args(%acc1 = %acc0) -> (tensor<64x64xf32>) : i32 {
    %kb = tile.view_load %vk[%n, %c0] padding "zero" elements : !tile.array<f16, 2> -> tensor<64x64xf16>
    %kt = tile.trans %kb, [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %d = tile.dot %q, %kt, %acc1 precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  func.return
}

// A batch of matrices (cuTile's (1, tm, tk) tiles of (batch, m, k) arrays): a 2-D tile
// of a 3-D view is one element long in the leading dimension, so TMA copies it with
// three coordinates, the leading one the batch index itself (a tile index times 1) and
// the others tile indices times the tile.
// CHECK-LABEL: func.func @batched
// CHECK: %[[A:.*]] = tile.shared_alloc {swizzle = 128 : i32, warps = 4 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: %[[B:.*]] = tile.shared_alloc {swizzle = 128 : i32} : memref<4x64x64xf16, 3 : i32>
// CHECK: tile.tma_copy %a sizes[%nb, %M, %K] strides[%sa, %K, %{{.*}}] at[%bat, %{{.*}}, %{{.*}}] to %[[A]]
// CHECK: tile.tma_copy %b sizes[%nb, %K, %N] strides[%sb, %N, %{{.*}}] at[%bat, %{{.*}}, %{{.*}}] to %[[B]]
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = arith.muli %pm, %{{.*}} : i32
// CHECK: tile.tma_copy %a {{.*}} at[%bat, %[[ROW]], %{{.*}}] to %[[A]]
// CHECK-NOT: tile.view_load
// AMPERE-LABEL: func.func @batched
// AMPERE-NOT: tile.tma_copy
// AMPERE: tile.async_copy
func.func @batched(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                   %nb: i32, %M: i32, %N: i32 {tile.divisibility = 16 : i32}, %K: i32 {tile.divisibility = 16 : i32},
                   %sa: i32 {tile.divisibility = 16 : i32}, %sb: i32 {tile.divisibility = 16 : i32},
                   %bat: i32, %pm: i32, %pn: i32, %nk: i32) {
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%nb, %M, %K] strides [%sa, %K, %one] : !tile.ptr<f16> -> !tile.array<f16, 3>
  %vb = tile.make_view %b shape [%nb, %K, %N] strides [%sb, %N, %one] : !tile.ptr<f16> -> !tile.array<f16, 3>
  %acc = scf.for %k = %c0 to %nk step %one iter_args(%acc1 = %acc0) -> (tensor<64x64xf32>) : i32 {
    %x = tile.view_load %va[%bat, %pm, %k] padding "zero" : !tile.array<f16, 3> -> tensor<64x64xf16>
    %y = tile.view_load %vb[%bat, %k, %pn] padding "zero" : !tile.array<f16, 3> -> tensor<64x64xf16>
    %d = tile.dot %x, %y, %acc1 precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  func.return
}

// The expand_dims a cuTile reshape undid ((1, tm, tk) tile -> (tm, tk)), unused until
// canonicalize erases it, does not count as a use: the load stays for pipeline-loads.
// KEPT-LABEL: func.func @reshaped
// KEPT: tile.view_load %va[%bat, %pm, %k]
func.func @reshaped(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %nb: i32, %M: i32,
                    %K: i32 {tile.divisibility = 16 : i32}, %sa: i32 {tile.divisibility = 16 : i32},
                    %bat: i32, %pm: i32, %nk: i32, %y: tensor<64x64xf16>) {
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc0 = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%nb, %M, %K] strides [%sa, %K, %one] : !tile.ptr<f16> -> !tile.array<f16, 3>
  %acc = scf.for %k = %c0 to %nk step %one iter_args(%acc1 = %acc0) -> (tensor<64x64xf32>) : i32 {
    %x = tile.view_load %va[%bat, %pm, %k] padding "zero" : !tile.array<f16, 3> -> tensor<64x64xf16>
    %x3 = tile.expand_dims %x, 0 : tensor<64x64xf16> -> tensor<1x64x64xf16>
    %x4 = tile.expand_dims %x3, 0 : tensor<1x64x64xf16> -> tensor<1x1x64x64xf16>
    %d = tile.dot %x, %y, %acc1 precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  func.return
}
