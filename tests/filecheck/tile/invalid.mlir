// Each tile verifier message, one invalid case per part. `{{^}}` anchors the message to the
// line opt prints first for each part, so a part that wrongly verifies cannot borrow the
// message of its neighbour.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.range result must be tensor<16xi32>{{$}}
func.func @range_shape() {
  %r = tile.range 0, 16 : tensor<8xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.range result must be tensor<32xi32>{{$}}
func.func @range_element() {
  %r = tile.range 0, 32 : tensor<32xi64>
  func.return
}

// -----

// CHECK: {{^}}tile.splat result element type must match the scalar{{$}}
func.func @splat(%a: i32) {
  %s = tile.splat %a : i32 -> tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.addptr expects a pointer or tile of pointers{{$}}
func.func @addptr_not_pointer(%a: i32) {
  %p = tile.addptr %a, %a : i32, i32
  func.return
}

// -----

// CHECK: {{^}}tile.addptr offset must be an integer{{$}}
func.func @addptr_float_offset(%p: !tile.ptr<f32>, %f: f32) {
  %q = tile.addptr %p, %f : !tile.ptr<f32>, f32
  func.return
}

// -----

// CHECK: {{^}}tile.addptr offset shape must match the pointers{{$}}
func.func @addptr_shape(%p: tensor<16x!tile.ptr<f32>>, %o: tensor<32xi32>) {
  %q = tile.addptr %p, %o : tensor<16x!tile.ptr<f32>>, tensor<32xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.load expects a pointer or tile of pointers{{$}}
func.func @load_not_pointer(%p: tensor<16xi32>) {
  %v = "tile.load"(%p) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<16xi32>) -> tensor<16xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.load result must be the pointee type{{$}}
func.func @load_result(%p: tensor<16x!tile.ptr<f32>>) {
  %v = tile.load %p : tensor<16x!tile.ptr<f32>> -> tensor<16xf16>
  func.return
}

// -----

// CHECK: {{^}}tile.load mask must be i1 of the pointers' shape{{$}}
func.func @load_mask_shape(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<8xi1>) {
  %v = tile.load %p mask %m : tensor<8xi1> : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.load mask must be i1 of the pointers' shape{{$}}
func.func @load_mask_element(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi8>) {
  %v = tile.load %p mask %m : tensor<16xi8> : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  func.return
}

// -----

// In the custom form `other` takes the result type, so a wrong one is a parse error
// (reported at the right line of the whole file although the part is parsed alone).
func.func @load_other_custom(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi1>, %z: f32) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:51
  // CHECK-NEXT: {{^}}  %v = tile.load
  %v = tile.load %p mask %m : tensor<16xi1> other %z : tensor<16x!tile.ptr<f32>> -> tensor<16xf32>
  // CHECK: operand is used with type tensor<16xf32>, but has been previously used or defined with type f32
  func.return
}

// -----

// CHECK: {{^}}result 'result' at position 0 does not verify:{{$}}
// CHECK-NEXT: {{^}}attribute f32 expected from variable 'T', but got tensor<16xf32>{{$}}
func.func @load_other_generic(%p: tensor<16x!tile.ptr<f32>>, %m: tensor<16xi1>, %z: f32) {
  %v = "tile.load"(%p, %m, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<16x!tile.ptr<f32>>, tensor<16xi1>, f32) -> tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.store value must have the pointee type{{$}}
func.func @store_value(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<16xf16>) {
  tile.store %p, %v : tensor<16x!tile.ptr<f32>>, tensor<16xf16>
  func.return
}

// -----

// CHECK: {{^}}tile.store mask must be i1 of the pointers' shape{{$}}
func.func @store_mask(%p: tensor<16x!tile.ptr<f32>>, %v: tensor<16xf32>, %m: i1) {
  tile.store %p, %v mask %m : i1 : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.cmpi: unknown predicate 'lt'{{$}}
func.func @cmpi_predicate(%a: i32) {
  %c = tile.cmpi "lt", %a, %a : i32 -> i1
  func.return
}

// -----

// CHECK: {{^}}tile.cmpf: unknown predicate 'slt'{{$}}
func.func @cmpf_predicate(%a: f32) {
  %c = tile.cmpf "slt", %a, %a : f32 -> i1
  func.return
}

// -----

// CHECK: {{^}}tile.cmpi result must be i1 shaped like the operands{{$}}
func.func @cmpi_result(%a: tensor<16xi32>) {
  %c = tile.cmpi "eq", %a, %a : tensor<16xi32> -> i1
  func.return
}

// -----

// CHECK: {{^}}tile.select condition must be i1 shaped like the values{{$}}
func.func @select_condition(%c: tensor<8xi1>, %a: tensor<16xf32>) {
  %s = tile.select %c, %a, %a : tensor<8xi1>, tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.umulhi operands must be i32 or i64 (scalar or shaped){{$}}
func.func @umulhi_type(%a: tensor<16xi16>) {
  %h = tile.umulhi %a, %a : tensor<16xi16>
  func.return
}

// -----

// CHECK: {{^}}tile.program_id axis must be 0, 1 or 2{{$}}
func.func @program_id_axis() {
  %p = tile.program_id 3 : i32
  func.return
}

// -----

// CHECK: {{^}}tile.num_programs axis must be 0, 1 or 2{{$}}
func.func @num_programs_axis() {
  %p = tile.num_programs -1 : i32
  func.return
}

// -----

// CHECK: {{^}}blocked layout sizes must be powers of two{{$}}
func.func @blocked_power_of_two(%a: tensor<96xf32, #tile.blocked<spt = [3], tpw = [32], wpc = [1]>>) {
  func.return
}

// -----

// CHECK: {{^}}blocked layout parameters must have the same rank{{$}}
func.func @blocked_rank(%a: tensor<16x16xf32, #tile.blocked<spt = [1, 1], tpw = [32], wpc = [1, 1]>>) {
  func.return
}

// -----

// A valid part after the invalid ones is still printed.
// CHECK: func.func @valid(%p: !tile.ptr<f32>) {
func.func @valid(%p: !tile.ptr<f32>) {
  func.return
}

// -----

// CHECK: {{^}}tile.brev operand must be i32 or i64 (scalar or shaped){{$}}
func.func @brev_type(%a: tensor<16xf32>) {
  %b = tile.brev %a : tensor<16xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.libm: unknown function 'j0'{{$}}
func.func @libm_name(%a: f32) {
  %b = tile.libm "j0"(%a) : (f32) -> f32
  func.return
}

// -----

// CHECK: {{^}}tile.libm hypot takes 2 operands{{$}}
func.func @libm_arity(%a: f32) {
  %b = tile.libm "hypot"(%a) : (f32) -> f32
  func.return
}

// -----

// CHECK: {{^}}tile.libm ldexp operands must be (f, i): f the result's type, i i32{{$}}
func.func @libm_operands(%a: f32, %n: i64) {
  %b = tile.libm "ldexp"(%a, %n) : (f32, i64) -> f32
  func.return
}

// -----

// CHECK: {{^}}tile.libm result must be a float (scalar or shaped){{$}}
func.func @libm_result(%a: i32) {
  %b = tile.libm "lgamma"(%a) : (i32) -> i32
  func.return
}
