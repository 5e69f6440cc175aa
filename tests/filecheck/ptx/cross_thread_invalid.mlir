// The verifiers of the ptx dialect's shared-memory ops.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}ptx.ld_shared needs one i32 shared address per lane{{$}}
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
