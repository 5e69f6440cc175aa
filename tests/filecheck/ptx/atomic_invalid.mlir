// The verifier messages of ptx.atom and ptx.atom_loop.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}ptx.atom: 'ld.global.b32' is not an atom.global{{$}}
func.func @opcode(%a: i64, %v: i32) {
  %o = ptx.atom "ld.global.b32" %a, %v : i64, i32 -> i32
  func.return
}

// -----

// CHECK: {{^}}ptx.atom operands must have the result's type{{$}}
func.func @types(%a: i64, %v: i32, %f: f32) {
  %o = ptx.atom "atom.global.cas.b32" %a, %f, %v : i64, f32, i32 -> i32
  func.return
}

// -----

// CHECK: {{^}}ptx.atom_loop works on 32-bit values{{$}}
func.func @wide(%a: i64, %v: f64) {
  %o = ptx.atom_loop "max.f64" %a, %v : i64, f64
  func.return
}

// -----

// CHECK: {{^}}ptx.atom_loop needs one address per 1 lanes{{$}}
func.func @lanes(%a: i64, %v: vector<2xf32>) {
  %o = ptx.atom_loop "max.NaN.f32" %a, %v : i64, vector<2xf32>
  func.return
}
