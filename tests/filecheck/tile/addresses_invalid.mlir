// Each verifier message of tile.int_to_ptr and tile.ptr_to_int.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.int_to_ptr: addresses must be i64{{$}}
func.func @narrow(%a: i32) {
  %p = tile.int_to_ptr %a : i32 -> !tile.ptr<f32>
  func.return
}

// -----

// CHECK: {{^}}tile.int_to_ptr: expected a pointer or tile of pointers{{$}}
func.func @not_a_pointer(%a: i64) {
  %p = tile.int_to_ptr %a : i64 -> f32
  func.return
}

// -----

// CHECK: {{^}}tile.int_to_ptr result must have the operand's shape{{$}}
func.func @shape(%a: tensor<4xi64>) {
  %p = tile.int_to_ptr %a : tensor<4xi64> -> tensor<8x!tile.ptr<f32>>
  func.return
}

// -----

// CHECK: {{^}}tile.ptr_to_int: addresses must be i64{{$}}
func.func @narrow_back(%p: !tile.ptr<f32>) {
  %a = tile.ptr_to_int %p : !tile.ptr<f32> -> i32
  func.return
}

// -----

// CHECK: {{^}}tile.ptr_to_int: expected a pointer or tile of pointers{{$}}
func.func @from_an_integer(%a: i64) {
  %b = tile.ptr_to_int %a : i64 -> i64
  func.return
}
