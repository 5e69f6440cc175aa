// The verifier messages of tile.atomic_rmw and tile.atomic_cas.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.atomic_rmw: unknown kind 'mul'{{$}}
func.func @kind(%p: !tile.ptr<i32>, %v: i32) {
  %o = tile.atomic_rmw "mul", %p, %v : !tile.ptr<i32>, i32
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_rmw umax needs integers{{$}}
func.func @unsigned_float(%p: !tile.ptr<f32>, %v: f32) {
  %o = tile.atomic_rmw "umax", %p, %v : !tile.ptr<f32>, f32
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_rmw operates on integers or floats, not i1{{$}}
func.func @bool(%p: !tile.ptr<i1>, %v: i1) {
  %o = tile.atomic_rmw "xchg", %p, %v : !tile.ptr<i1>, i1
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_rmw expects a pointer or tile of pointers{{$}}
func.func @not_pointer(%p: i32, %v: i32) {
  %o = tile.atomic_rmw "add", %p, %v : i32, i32
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_cas value must have the pointee type{{$}}
func.func @value_type(%p: !tile.ptr<f32>, %v: i32) {
  %o = tile.atomic_cas %p, %v, %v : !tile.ptr<f32>, i32
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_rmw mask must be i1 of the pointers' shape{{$}}
func.func @mask_shape(%p: !tile.ptr<i32>, %v: i32) {
  %r = tile.range 0, 8 : tensor<8xi32>
  %ps = tile.splat %p : !tile.ptr<i32> -> tensor<8x!tile.ptr<i32>>
  %m = arith.constant dense<true> : tensor<4xi1>
  %o = tile.atomic_rmw "add", %ps, %r mask %m : tensor<4xi1> : tensor<8x!tile.ptr<i32>>, tensor<8xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_rmw xor needs integers{{$}}
func.func @bitwise_float(%p: !tile.ptr<f32>, %v: f32) {
  %o = tile.atomic_rmw "xor", %p, %v : !tile.ptr<f32>, f32
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_rmw: unknown sem 'seq_cst'{{$}}
func.func @sem(%p: !tile.ptr<i32>, %v: i32) {
  %o = tile.atomic_rmw "add", %p, %v sem "seq_cst" : !tile.ptr<i32>, i32
  func.return
}

// -----

// CHECK: {{^}}tile.atomic_cas: unknown scope 'warp'{{$}}
func.func @scope(%p: !tile.ptr<i32>, %v: i32) {
  %o = tile.atomic_cas %p, %v, %v scope "warp" : !tile.ptr<i32>, i32
  func.return
}
