// Each tile.reduce / tile.scan / tile.yield verifier message, one invalid case per part.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.reduce operands must have one shape{{$}}
func.func @shapes(%x: tensor<8xf32>, %y: tensor<16xf32>) {
  %a, %b = tile.reduce %x, %y axis 0 : tensor<8xf32>, tensor<16xf32> -> f32, f32 {
  ^bb0(%p: f32, %q: f32, %r: f32, %s: f32):
    tile.yield %p, %q : f32, f32
  }
  func.return
}

// -----

// CHECK: {{^}}tile.reduce axis must be a dimension of the operands{{$}}
func.func @axis(%x: tensor<8xf32>) {
  %a = tile.reduce %x axis 1 : tensor<8xf32> -> f32 {
  ^bb0(%p: f32, %q: f32):
    tile.yield %p : f32
  }
  func.return
}

// -----

// CHECK: {{^}}tile.reduce results must be tensor<8xf32>{{$}}
func.func @result(%x: tensor<4x8xf32>) {
  %a = tile.reduce %x axis 0 : tensor<4x8xf32> -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    tile.yield %p : f32
  }
  func.return
}

// -----

// CHECK: {{^}}tile.reduce combiner must take the operands' element types twice{{$}}
func.func @args(%x: tensor<8xf32>) {
  %a = tile.reduce %x axis 0 : tensor<8xf32> -> f32 {
  ^bb0(%p: f32, %q: i32):
    tile.yield %p : f32
  }
  func.return
}

// -----

// CHECK: {{^}}tile.scan combiner must end in tile.yield of the operands' element types{{$}}
func.func @yield(%x: tensor<8xf32>) {
  %a = tile.scan %x axis 0 : tensor<8xf32> -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %c = arith.constant 1 : i32
    tile.yield %c : i32
  }
  func.return
}

// -----

// CHECK: {{^}}tile.scan results must be tensor<8xf32>{{$}}
func.func @scan_result(%x: tensor<8xf32>) {
  %a = tile.scan %x axis 0 : tensor<8xf32> -> f32 {
  ^bb0(%p: f32, %q: f32):
    tile.yield %p : f32
  }
  func.return
}

// -----

// CHECK: {{^}}'tile.yield' expects parent op to be one of 'tile.reduce', 'tile.scan'{{$}}
func.func @orphan(%x: f32) {
  tile.yield %x : f32
}

// -----

// CHECK: {{^}}Operation using value defined out of its IsolatedFromAbove parent: AddfOp
func.func @outer(%x: tensor<8xf32>, %c: f32) {
  %a = tile.reduce %x axis 0 : tensor<8xf32> -> f32 {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %c : f32
    tile.yield %s : f32
  }
  func.return
}
