// Each simt verifier message, one invalid case per part (`{{^}}`: see tile/invalid.mlir).
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}simt.load vec must divide the number of lanes{{$}}
func.func @load_vec(%x: !tile.ptr<f32>, %i: vector<8xi32>) {
  %v = simt.load %x[%i] {vec = 3 : i32} : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.load vec must divide the number of lanes{{$}}
func.func @load_vec_zero(%x: !tile.ptr<f32>, %i: i32) {
  %v = simt.load %x[%i] {vec = 0 : i32} : !tile.ptr<f32>, i32 -> f32
  func.return
}

// -----

// CHECK: {{^}}simt.store vec must divide the number of lanes{{$}}
func.func @store_vec(%x: !tile.ptr<f32>, %i: vector<4xi32>, %v: vector<4xf32>) {
  simt.store %x[%i], %v {vec = 8 : i32} : !tile.ptr<f32>, vector<4xi32>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.store mask must be i1 in the index's shape{{$}}
func.func @store_mask(%x: !tile.ptr<f32>, %i: vector<4xi32>, %v: vector<4xf32>, %m: vector<8xi1>) {
  simt.store %x[%i], %v mask %m : vector<8xi1> : !tile.ptr<f32>, vector<4xi32>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.load mask must be i1 in the index's shape{{$}}
func.func @load_mask(%x: !tile.ptr<f32>, %i: vector<4xi32>, %m: i1) {
  %v = simt.load %x[%i] mask %m : i1 : !tile.ptr<f32>, vector<4xi32> -> vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.load value must be the pointee in the index's shape{{$}}
func.func @load_result(%x: !tile.ptr<f32>, %i: vector<4xi32>) {
  %v = simt.load %x[%i] : !tile.ptr<f32>, vector<4xi32> -> vector<8xf32>
  func.return
}

// -----

// CHECK: {{^}}simt.store value must be the pointee in the index's shape{{$}}
func.func @store_value(%x: !tile.ptr<f16>, %i: vector<4xi32>, %v: vector<4xf32>) {
  simt.store %x[%i], %v : !tile.ptr<f16>, vector<4xi32>, vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}i32 should be of base attribute tile.ptr{{$}}
func.func @base_not_pointer(%x: i32, %i: i32) {
  %v = simt.load %x[%i] : i32, i32 -> i32
  func.return
}

// -----

// CHECK: func.func @valid(%x: !tile.ptr<f32>, %i: i32) {
// CHECK-NEXT: %v = simt.load %x[%i] {vec = 1 : i32} : !tile.ptr<f32>, i32 -> f32
func.func @valid(%x: !tile.ptr<f32>, %i: i32) {
  %v = simt.load %x[%i] {vec = 1 : i32} : !tile.ptr<f32>, i32 -> f32
  func.return
}
