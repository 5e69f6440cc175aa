// The verifier messages of tile.dot.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.dot shapes do not match: (16, 32) x (16, 16) -> [16, 16]{{$}}
func.func @k_mismatch(%a: tensor<16x32xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  %d = tile.dot %a, %b, %c precision "ieee" : tensor<16x32xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.dot operands must have one element type{{$}}
func.func @mixed(%a: tensor<16x16xf16>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  %d = tile.dot %a, %b, %c precision "ieee" : tensor<16x16xf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.dot of i8 cannot accumulate in f32{{$}}
func.func @int_acc(%a: tensor<16x16xi8>, %b: tensor<16x16xi8>, %c: tensor<16x16xf32>) {
  %d = tile.dot %a, %b, %c precision "ieee" : tensor<16x16xi8>, tensor<16x16xi8> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.dot precision 'tf32' needs f32 operands{{$}}
func.func @tf32_f16(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) {
  %d = tile.dot %a, %b, %c precision "tf32" : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.dot operands must be 2-D tiles{{$}}
func.func @rank(%a: tensor<16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  %d = tile.dot %a, %b, %c precision "ieee" : tensor<16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  func.return
}
