// The verifier messages of the array-view ops.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.make_view of rank 2 needs 2 shape and stride values{{$}}
func.func @rank(%a: !tile.ptr<f32>, %n: i32) {
  %v = "tile.make_view"(%a, %n, %n) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!tile.ptr<f32>, i32, i32) -> !tile.array<f32, 2>
  func.return
}

// -----

// CHECK: {{^}}tile.make_view element type must be the pointee type{{$}}
func.func @element(%a: !tile.ptr<f32>, %n: i32) {
  %v = tile.make_view %a shape [%n] strides [%n] : !tile.ptr<f32> -> !tile.array<f16, 1>
  func.return
}

// -----

// CHECK: {{^}}tile.view_load: an array of rank 2 needs 2 indices, got 1{{$}}
func.func @index_rank(%a: !tile.ptr<f32>, %n: i32) {
  %v = tile.make_view %a shape [%n, %n] strides [%n, %n] : !tile.ptr<f32> -> !tile.array<f32, 2>
  %t = tile.view_load %v[%n] padding "zero" : !tile.array<f32, 2> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.view_load: tile of rank 2 for an array of rank 1{{$}}
func.func @tile_rank(%a: !tile.ptr<f32>, %n: i32) {
  %v = tile.make_view %a shape [%n] strides [%n] : !tile.ptr<f32> -> !tile.array<f32, 1>
  %t = tile.view_load %v[%n] padding "zero" : !tile.array<f32, 1> -> tensor<16x16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.view_load: tile dimensions must be powers of two{{$}}
func.func @pow2(%a: !tile.ptr<f32>, %n: i32) {
  %v = tile.make_view %a shape [%n] strides [%n] : !tile.ptr<f32> -> !tile.array<f32, 1>
  %t = tile.view_load %v[%n] padding "zero" : !tile.array<f32, 1> -> tensor<12xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.view_load: unknown padding 'one'; choose from zero, neg_inf, pos_inf, nan, undetermined{{$}}
func.func @padding(%a: !tile.ptr<f32>, %n: i32) {
  %v = tile.make_view %a shape [%n] strides [%n] : !tile.ptr<f32> -> !tile.array<f32, 1>
  %t = tile.view_load %v[%n] padding "one" : !tile.array<f32, 1> -> tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.view_load: padding 'nan' needs a float element type, got i32{{$}}
func.func @int_nan(%a: !tile.ptr<i32>, %n: i32) {
  %v = tile.make_view %a shape [%n] strides [%n] : !tile.ptr<i32> -> !tile.array<i32, 1>
  %t = tile.view_load %v[%n] padding "nan" : !tile.array<i32, 1> -> tensor<16xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.view_store: the tile must be a tensor or scalar of f32{{$}}
func.func @store_type(%a: !tile.ptr<f32>, %n: i32, %t: tensor<16xf16>) {
  %v = tile.make_view %a shape [%n] strides [%n] : !tile.ptr<f32> -> !tile.array<f32, 1>
  tile.view_store %v[%n], %t : !tile.array<f32, 1>, tensor<16xf16>
  func.return
}

// -----

// CHECK: {{^}}tile.array has 1 to 5 dimensions, got 6{{$}}
func.func @big(%a: !tile.array<f32, 6>) {
  func.return
}
