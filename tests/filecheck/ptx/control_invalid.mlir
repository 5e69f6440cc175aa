// The verifier messages of ptx.label, ptx.bra, ptx.reg and ptx.assign.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}ptx.label: bad label 'no spaces'{{$}}
func.func @label() {
  ptx.label "no spaces"
  func.return
}

// -----

// CHECK: {{^}}ptx.bra: only a guarded branch can be negated{{$}}
func.func @negated() {
  ptx.bra "$L1" negated
  func.return
}

// -----

// CHECK: {{^}}ptx.reg: register vectors must be 1-D, got vector<2x2xf32>{{$}}
func.func @reg() {
  %r = ptx.reg : vector<2x2xf32>
  func.return
}

// -----

// CHECK: {{^}}ptx.assign writes the result of a ptx.reg{{$}}
func.func @target(%a: i32, %b: i32) {
  ptx.assign %a, %b : i32, i32
  func.return
}

// -----

// CHECK: {{^}}ptx.assign value must have the register's element type and lanes (or be a scalar){{$}}
func.func @lanes(%v: vector<4xf32>) {
  %r = ptx.reg : vector<2xf32>
  ptx.assign %r, %v : vector<2xf32>, vector<4xf32>
  func.return
}
