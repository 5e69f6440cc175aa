// Each verifier message of the shape ops, one invalid case per part (see invalid.mlir).
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.expand_dims axis must be in 0..rank{{$}}
func.func @expand_axis(%x: tensor<8xf32>) {
  %e = tile.expand_dims %x, 2 : tensor<8xf32> -> tensor<8x1xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.expand_dims result must have shape [1, 8]{{$}}
func.func @expand_shape(%x: tensor<8xf32>) {
  %e = tile.expand_dims %x, 0 : tensor<8xf32> -> tensor<8x1xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.expand_dims keeps the element type{{$}}
func.func @expand_element(%x: tensor<8xf32>) {
  %e = tile.expand_dims %x, 0 : tensor<8xf32> -> tensor<1x8xf16>
  func.return
}

// -----

// CHECK: {{^}}tile.expand_dims operand layout must be the #tile.slice along axis of the result layout{{$}}
func.func @expand_layout(%x: tensor<8xf32, #tile.slice<dim = 0, parent = #tile.blocked<spt = [1, 1], tpw = [4, 8], wpc = [1, 1]>>>) {
  %e = tile.expand_dims %x, 1 : tensor<8xf32, #tile.slice<dim = 0, parent = #tile.blocked<spt = [1, 1], tpw = [4, 8], wpc = [1, 1]>>> -> tensor<8x1xf32, #tile.blocked<spt = [1, 1], tpw = [4, 8], wpc = [1, 1]>>
  func.return
}

// -----

// CHECK: {{^}}tile.broadcast cannot stretch [2, 8] to [4, 8]{{$}}
func.func @broadcast_size(%x: tensor<2x8xf32>) {
  %b = tile.broadcast %x : tensor<2x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.broadcast cannot stretch [8] to [4, 8]{{$}}
func.func @broadcast_rank(%x: tensor<8xf32>) {
  %b = tile.broadcast %x : tensor<8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.broadcast keeps the layout{{$}}
func.func @broadcast_layout(%x: tensor<1x8xf32, #tile.blocked<spt = [1, 1], tpw = [4, 8], wpc = [1, 1]>>) {
  %b = tile.broadcast %x : tensor<1x8xf32, #tile.blocked<spt = [1, 1], tpw = [4, 8], wpc = [1, 1]>> -> tensor<4x8xf32, #tile.blocked<spt = [1, 1], tpw = [8, 4], wpc = [1, 1]>>
  func.return
}

// -----

// CHECK: {{^}}tile.reshape keeps the number of elements{{$}}
func.func @reshape_count(%x: tensor<4x8xf32>) {
  %r = tile.reshape %x : tensor<4x8xf32> -> tensor<64xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.trans order must be a permutation of the dimensions{{$}}
func.func @trans_order(%x: tensor<4x8xf32>) {
  %t = tile.trans %x, [0, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.trans result must have shape [8, 4]{{$}}
func.func @trans_shape(%x: tensor<4x8xf32>) {
  %t = tile.trans %x, [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.convert_layout result must have shape [4, 8]{{$}}
func.func @convert_shape(%x: tensor<4x8xf32>) {
  %c = tile.convert_layout %x : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.extract window must lie inside the operand, one offset per dimension{{$}}
func.func @extract_outside(%x: tensor<4x8xf32>) {
  %e = tile.extract %x, [0, 6] : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return
}
