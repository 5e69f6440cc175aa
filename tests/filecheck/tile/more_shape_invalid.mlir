// Each verifier message of tile.join, split, flip and gather.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.join result must be the operand type with a last dimension of 2{{$}}
func.func @join_shape(%a: tensor<8xf32>) {
  %j = tile.join %a, %a : tensor<8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.split operand must have a last dimension of 2{{$}}
func.func @split_last(%a: tensor<8x4xf32>) {
  %lo, %hi = tile.split %a : tensor<8x4xf32> -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.split results must be the operand type without its last dimension{{$}}
func.func @split_shape(%a: tensor<8x2xf32>) {
  %lo, %hi = tile.split %a : tensor<8x2xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.flip dim must be in 0..rank-1{{$}}
func.func @flip_dim(%a: tensor<8xf32>) {
  %f = tile.flip %a, 1 : tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.gather index must have the operand's shape except along axis{{$}}
func.func @gather_shape(%a: tensor<8x4xf32>, %i: tensor<8x8xi32>) {
  %g = tile.gather %a[%i], 0 : tensor<8x4xf32>, tensor<8x8xi32> -> tensor<8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.gather index must be integers{{$}}
func.func @gather_float_index(%a: tensor<8xf32>, %i: tensor<8xf32>) {
  %g = tile.gather %a[%i], 0 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.gather axis must be in 0..rank-1{{$}}
func.func @gather_axis(%a: tensor<8xf32>, %i: tensor<8xi32>) {
  %g = tile.gather %a[%i], 1 : tensor<8xf32>, tensor<8xi32> -> tensor<8xf32>
  func.return
}
