// The verifier messages of tile.print and tile.assert.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.print operands must be scalars or tiles of one shape{{$}}
func.func @shapes(%a: tensor<4xi32>, %b: tensor<8xi32>) {
  tile.print "x" %a, %b : tensor<4xi32>, tensor<8xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.print cannot print pointers{{$}}
func.func @pointer(%p: !tile.ptr<f32>) {
  tile.print "p" %p : !tile.ptr<f32>
  func.return
}

// -----

// CHECK: {{^}}tile.assert condition must be i1 (a scalar or a tile){{$}}
func.func @cond(%c: tensor<4xi32>) {
  tile.assert %c, "no" : tensor<4xi32>
  func.return
}

