// The verifiers of the ptx dialect's shared-memory ops.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}ptx.ld_shared needs one address per 1 lanes{{$}}
func.func @lanes(%a: i32) {
  %x = ptx.ld_shared %a : i32 -> vector<2xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.st_shared: predicates are not memory types (use i8){{$}}
func.func @pred(%a: i32, %p: i1) {
  ptx.st_shared %a, %p : i32, i1
  func.return
}

// -----

// CHECK: {{^}}ptx.st_shared accesses are at most 128 bits wide{{$}}
func.func @wide(%a: i32, %v: vector<4xf64>) {
  ptx.st_shared %a, %v {vec = 4 : i32} : i32, vector<4xf64>
  func.return
}

// -----

// CHECK: {{^}}ptx.ld_shared addresses must be i32{{$}}
func.func @space(%a: i64) {
  %x = ptx.ld_shared %a : i64 -> f32
  func.return
}
