// The warp-level matrix ops printed, re-parsed and printed again, in custom and generic
// form: ldmatrix of f16 (plain and trans), s8 and f32 (tf32) fragments, and mma of every
// shape and operand type; Hopper's wgmma (in place, too) with its groups and fences.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s

func.func @mma(%o: i32) attributes {simt.num_warps = 1 : i32} {
  %h = simt.shared_alloc : memref<1024xf16, 3 : i32>
  %a = simt.ldmatrix %h[%o] : memref<1024xf16, 3 : i32> -> vector<8xf16>
  %b = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<4xf16>
  %b1 = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<2xf16>
  %c = arith.constant dense<0.0> : vector<4xf32>
  %d = simt.mma "m16n8k16" %a, %b, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %ch = arith.constant dense<0.0> : vector<4xf16>
  %dh = simt.mma "m16n8k16" %a, %b, %ch : vector<8xf16>, vector<4xf16>, vector<4xf16>
  %f = simt.shared_alloc : memref<512xf32, 3 : i32>
  %af = simt.ldmatrix %f[%o] : memref<512xf32, 3 : i32> -> vector<4xf32>
  %bf = simt.ldmatrix %f[%o] : memref<512xf32, 3 : i32> -> vector<2xf32>
  %df = simt.mma "m16n8k8" %af, %bf, %c : vector<4xf32>, vector<2xf32>, vector<4xf32>
  %q = simt.shared_alloc : memref<2048xi8, 3 : i32>
  %aq = simt.ldmatrix %q[%o] : memref<2048xi8, 3 : i32> -> vector<16xi8>
  %bq = simt.ldmatrix %q[%o] : memref<2048xi8, 3 : i32> -> vector<8xi8>
  %ci = arith.constant dense<0> : vector<4xi32>
  %di = simt.mma "m16n8k32" %aq, %bq, %ci : vector<16xi8>, vector<8xi8>, vector<4xi32>
  %w = simt.shared_alloc {align = 1024 : i32} : memref<8192xbf16, 3 : i32>
  %cw = arith.constant dense<0.0> : vector<64xf32>
  %dw = simt.wgmma %w[%o], %w[%o], %cw {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xbf16, 3 : i32>, memref<8192xbf16, 3 : i32>, vector<64xf32>
  %ew = simt.wgmma %w[%o], %w[%o], %dw {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32, in_place} : memref<8192xbf16, 3 : i32>, memref<8192xbf16, 3 : i32>, vector<64xf32>
  simt.wgmma_commit
  simt.wgmma_wait 1
  simt.fence_proxy_async
  func.return
}

// CHECK:      %a = simt.ldmatrix %h[%o] : memref<1024xf16, 3 : i32> -> vector<8xf16>
// CHECK-NEXT: %b = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<4xf16>
// CHECK-NEXT: %b1 = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<2xf16>
// CHECK:      %d = simt.mma "m16n8k16" %a, %b, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
// CHECK:      %dh = simt.mma "m16n8k16" %a, %b, %ch : vector<8xf16>, vector<4xf16>, vector<4xf16>
// CHECK:      %af = simt.ldmatrix %f[%o] : memref<512xf32, 3 : i32> -> vector<4xf32>
// CHECK-NEXT: %bf = simt.ldmatrix %f[%o] : memref<512xf32, 3 : i32> -> vector<2xf32>
// CHECK-NEXT: %df = simt.mma "m16n8k8" %af, %bf, %c : vector<4xf32>, vector<2xf32>, vector<4xf32>
// CHECK:      %aq = simt.ldmatrix %q[%o] : memref<2048xi8, 3 : i32> -> vector<16xi8>
// CHECK-NEXT: %bq = simt.ldmatrix %q[%o] : memref<2048xi8, 3 : i32> -> vector<8xi8>
// CHECK:      %di = simt.mma "m16n8k32" %aq, %bq, %ci : vector<16xi8>, vector<8xi8>, vector<4xi32>
// CHECK:      %w = simt.shared_alloc {align = 1024 : i32} : memref<8192xbf16, 3 : i32>
// CHECK:      %dw = simt.wgmma %w[%o], %w[%o], %cw {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xbf16, 3 : i32>, memref<8192xbf16, 3 : i32>, vector<64xf32>
// CHECK-NEXT: %ew = simt.wgmma %w[%o], %w[%o], %dw {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32, in_place} : memref<8192xbf16, 3 : i32>, memref<8192xbf16, 3 : i32>, vector<64xf32>
// CHECK-NEXT: simt.wgmma_commit
// CHECK-NEXT: simt.wgmma_wait 1
// CHECK-NEXT: simt.fence_proxy_async
