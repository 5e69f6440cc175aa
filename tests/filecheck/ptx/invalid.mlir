// Each ptx verifier message, one invalid case per part (`{{^}}`: see tile/invalid.mlir).
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}ptx.inst operands must be scalars or have the result's lanes{{$}}
func.func @inst_lanes(%a: vector<4xi32>) {
  %r = ptx.inst "add.s32" %a, %a : (vector<4xi32>, vector<4xi32>) -> vector<8xi32>
  func.return
}

// -----

// CHECK: {{^}}ptx.inst: bad opcode 'add s32'{{$}}
func.func @inst_opcode(%a: i32) {
  %r = ptx.inst "add s32" %a : (i32) -> i32
  func.return
}

// -----

// CHECK: {{^}}ptx.inst: into names an operand of the result's type{{$}}
func.func @inst_into(%a: vector<4xf32>, %s: f32) {
  %r = ptx.inst "mul.rn.f32" %a, %s {into = 1 : i32} : (vector<4xf32>, f32) -> vector<4xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.inst: index is not a PTX register type{{$}}
func.func @inst_type(%a: index) {
  %r = ptx.inst "mov.b64" %a : (index) -> index
  func.return
}

// -----

// CHECK: {{^}}ptx.lanes index out of range{{$}}
func.func @lanes_range(%a: vector<4xi32>) {
  %r = ptx.lanes %a [0, 4] : vector<4xi32> -> vector<2xi32>
  func.return
}

// -----

// CHECK: {{^}}ptx.lanes keeps the element type{{$}}
func.func @lanes_type(%a: vector<4xi32>) {
  %r = ptx.lanes %a [0, 1] : vector<4xi32> -> vector<2xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.sreg: unknown special register '%laneid'{{$}}
func.func @sreg() {
  %r = ptx.sreg "%laneid" : i32
  func.return
}

// -----

// CHECK: {{^}}ptx.ld_param of i1 loads a i8{{$}}
func.func @param(%b: i1) {
  %r = ptx.ld_param %b : i1 -> i1
  func.return
}

// -----

// CHECK: {{^}}ptx.ld_global needs one address per 4 lanes{{$}}
func.func @ld_vec(%a: vector<4xi64>) {
  %r = ptx.ld_global %a {vec = 4 : i32} : vector<4xi64> -> vector<8xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.ld_global accesses are at most 128 bits wide{{$}}
func.func @ld_wide(%a: i64) {
  %r = ptx.ld_global %a {vec = 4 : i32} : i64 -> vector<4xf64>
  func.return
}

// -----

// CHECK: {{^}}ptx.st_global: predicates are not memory types (use i8){{$}}
func.func @st_bool(%a: i64, %v: i1) {
  ptx.st_global %a, %v : i64, i1
  func.return
}

// -----

// CHECK: {{^}}ptx.st_global predicate must be i1, one per address or scalar{{$}}
func.func @st_pred(%a: vector<2xi64>, %v: vector<8xf32>, %p: vector<8xi1>) {
  ptx.st_global %a, %v if %p : vector<8xi1> {vec = 4 : i32} : vector<2xi64>, vector<8xf32>
  func.return
}
