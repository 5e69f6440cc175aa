// The verifier messages of simt.atomic_rmw and simt.atomic_cas.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}simt.atomic_rmw value must be the pointee in the index's shape{{$}}
func.func @value_shape(%p: !tile.ptr<i32>, %i: vector<2xi32>, %v: i32) {
  %o = simt.atomic_rmw "add", %p[%i], %v : !tile.ptr<i32>, vector<2xi32>, i32
  func.return
}

// -----

// CHECK: {{^}}simt.atomic_cas mask must be i1 in the index's shape{{$}}
func.func @mask_shape(%p: !tile.ptr<i32>, %i: vector<2xi32>, %v: vector<2xi32>, %m: i1) {
  %o = simt.atomic_cas %p[%i], %v, %v mask %m : i1 : !tile.ptr<i32>, vector<2xi32>, vector<2xi32>
  func.return
}

// -----

// CHECK: {{^}}simt.atomic_rmw umin needs integers{{$}}
func.func @unsigned_float(%p: !tile.ptr<f32>, %i: i32, %v: f32) {
  %o = simt.atomic_rmw "umin", %p[%i], %v : !tile.ptr<f32>, i32, f32
  func.return
}

// -----

// CHECK: {{^}}simt.atomic_rmw: unknown sem 'acqrel'{{$}}
func.func @sem(%p: !tile.ptr<i32>, %i: i32, %v: i32) {
  %o = simt.atomic_rmw "add", %p[%i], %v sem "acqrel" : !tile.ptr<i32>, i32, i32
  func.return
}

// -----

// CHECK: {{^}}simt.atomic_cas: unknown scope 'device'{{$}}
func.func @scope(%p: !tile.ptr<i32>, %i: i32, %v: i32) {
  %o = simt.atomic_cas %p[%i], %v, %v scope "device" : !tile.ptr<i32>, i32, i32
  func.return
}
