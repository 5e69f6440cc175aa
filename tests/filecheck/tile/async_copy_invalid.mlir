// The verifier messages of the shared-memory stage ops.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.shared_alloc needs a 3-D buffer in shared memory (memory space 3){{$}}
func.func @global() {
  %b = tile.shared_alloc : memref<2x16x16xf16>
  func.return
}

// -----

// CHECK: {{^}}tile.async_copy: a 32x16 tile does not fit a stage of 16x16{{$}}
func.func @too_big(%p: tensor<32x16x!tile.ptr<f16>>, %s: i32) {
  %b = tile.shared_alloc : memref<2x16x16xf16, 3 : i32>
  tile.async_copy %p, %b[%s] : tensor<32x16x!tile.ptr<f16>>, memref<2x16x16xf16, 3 : i32>
  func.return
}

// -----

// CHECK: {{^}}tile.shared_read: a 64 tile does not fit a stage of 2x64{{$}}
func.func @row_of_two(%s: i32) {
  %b = tile.shared_alloc : memref<2x2x64xf32, 3 : i32>
  %t = tile.shared_read %b[%s] : memref<2x2x64xf32, 3 : i32> -> tensor<64xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.async_copy moves 1-D or 2-D tiles{{$}}
func.func @three_d(%p: tensor<2x4x8x!tile.ptr<f32>>, %s: i32) {
  %b = tile.shared_alloc : memref<2x4x8xf32, 3 : i32>
  tile.async_copy %p, %b[%s] : tensor<2x4x8x!tile.ptr<f32>>, memref<2x4x8xf32, 3 : i32>
  func.return
}

// -----

// CHECK: {{^}}tile.async_copy: the buffer must hold the pointee type{{$}}
func.func @pointee(%p: tensor<16x16x!tile.ptr<f32>>, %s: i32) {
  %b = tile.shared_alloc : memref<2x16x16xf16, 3 : i32>
  tile.async_copy %p, %b[%s] : tensor<16x16x!tile.ptr<f32>>, memref<2x16x16xf16, 3 : i32>
  func.return
}

// -----

// CHECK: {{^}}tile.shared_read gives the buffer's element type{{$}}
func.func @elem(%s: i32) {
  %b = tile.shared_alloc : memref<2x16x16xf16, 3 : i32>
  %t = tile.shared_read %b[%s] : memref<2x16x16xf16, 3 : i32> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.shared_alloc: swizzle = 128 needs rows of whole 128-byte atoms{{$}}
func.func @swizzle_width() {
  %b = tile.shared_alloc {swizzle = 128 : i32} : memref<2x64x32xf16, 3 : i32>
  func.return
}

// -----

// CHECK: {{^}}tile.shared_alloc: warps permute swizzled rows only{{$}}
func.func @warps_unswizzled() {
  %b = tile.shared_alloc {warps = 4 : i32} : memref<2x64x64xf16, 3 : i32>
  func.return
}

// -----

// CHECK: {{^}}tile.shared_alloc: warps must be whole warpgroups, a power of two, with 16 rows each{{$}}
func.func @warps_rows() {
  %b = tile.shared_alloc {swizzle = 128 : i32, warps = 8 : i32} : memref<2x64x64xf16, 3 : i32>
  func.return
}
