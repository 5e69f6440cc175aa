// The verifier messages of tile.tma_store.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.tma_store stores 2-D tiles{{$}}
func.func @rank(%c: !tile.ptr<f16>, %n: i32, %v: tensor<64xf16>) {
  tile.tma_store %v to %c sizes[%n] strides[%n] at[%n] : tensor<64xf16>, !tile.ptr<f16>
  func.return
}

// -----

// CHECK: {{^}}tile.tma_store: the array must hold the tile's type{{$}}
func.func @dtype(%c: !tile.ptr<f32>, %n: i32, %v: tensor<64x64xf16>) {
  tile.tma_store %v to %c sizes[%n, %n] strides[%n, %n] at[%n, %n] : tensor<64x64xf16>, !tile.ptr<f32>
  func.return
}

// -----

// CHECK: {{^}}tile.tma_store: an array of 2 to 5 dimensions, one size, stride and start each{{$}}
func.func @starts(%c: !tile.ptr<f16>, %n: i32, %v: tensor<64x64xf16>) {
  tile.tma_store %v to %c sizes[%n, %n, %n] strides[%n, %n, %n] at[%n, %n] : tensor<64x64xf16>, !tile.ptr<f16>
  func.return
}
