// Each verifier message of simt.ldmatrix and simt.mma, one invalid case per part.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}simt.ldmatrix needs a shared-memory buffer (memory space 3){{$}}
func.func @ldmatrix_global(%o: i32, %m: memref<256xf16>) {
  %a = simt.ldmatrix %m[%o] : memref<256xf16> -> vector<8xf16>
  func.return
}

// -----

// CHECK: {{^}}simt.ldmatrix result must have the buffer's element type{{$}}
func.func @ldmatrix_type(%o: i32) {
  %h = simt.shared_alloc : memref<256xf16, 3 : i32>
  %a = simt.ldmatrix %h[%o] : memref<256xf16, 3 : i32> -> vector<8xbf16>
  func.return
}

// -----

// CHECK: {{^}}simt.ldmatrix gives 1, 2 or 4 registers of 8-, 16- or 32-bit elements{{$}}
func.func @ldmatrix_count(%o: i32) {
  %h = simt.shared_alloc : memref<256xf16, 3 : i32>
  %a = simt.ldmatrix %h[%o] : memref<256xf16, 3 : i32> -> vector<6xf16>
  func.return
}

// -----

// CHECK: {{^}}simt.ldmatrix trans needs 16-bit elements{{$}}
func.func @ldmatrix_trans(%o: i32) {
  %f = simt.shared_alloc : memref<256xf32, 3 : i32>
  %a = simt.ldmatrix %f[%o] trans : memref<256xf32, 3 : i32> -> vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.mma: unknown shape 'm8n8k4'{{$}}
func.func @mma_shape(%a: vector<8xf16>, %b: vector<4xf16>, %c: vector<4xf32>) {
  %d = simt.mma "m8n8k4" %a, %b, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.mma m16n8k32: A and B must be one of i8{{$}}
func.func @mma_operands(%a: vector<16xf16>, %b: vector<8xf16>, %c: vector<4xf32>) {
  %d = simt.mma "m16n8k32" %a, %b, %c : vector<16xf16>, vector<8xf16>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.mma: bf16 operands cannot accumulate into f16{{$}}
func.func @mma_accumulator(%a: vector<8xbf16>, %b: vector<4xbf16>, %c: vector<4xf16>) {
  %d = simt.mma "m16n8k16" %a, %b, %c : vector<8xbf16>, vector<4xbf16>, vector<4xf16>
  func.return
}

// -----

// CHECK: {{^}}simt.mma m16n8k16: B needs 4 elements per thread{{$}}
func.func @mma_fragment(%a: vector<8xf16>, %b: vector<2xf16>, %c: vector<4xf32>) {
  %d = simt.mma "m16n8k16" %a, %b, %c : vector<8xf16>, vector<2xf16>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.wgmma: A and B must both be f16 or bf16{{$}}
func.func @wgmma_operands(%o: i32, %c: vector<32xf32>) {
  %a = simt.shared_alloc : memref<4096xf32, 3 : i32>
  %d = simt.wgmma %a[%o], %a[%o], %c {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<4096xf32, 3 : i32>, memref<4096xf32, 3 : i32>, vector<32xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.wgmma: C needs n / 2 f32 lanes, n a multiple of 8 up to 256{{$}}
func.func @wgmma_n(%o: i32, %c: vector<3xf32>) {
  %a = simt.shared_alloc : memref<4096xf16, 3 : i32>
  %d = simt.wgmma %a[%o], %a[%o], %c {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<4096xf16, 3 : i32>, memref<4096xf16, 3 : i32>, vector<3xf32>
  func.return
}
