// The verifier messages of tile.check_bounds.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.check_bounds offsets must be i32 (a scalar or a tile){{$}}
func.func @wide(%o: tensor<16xi64>, %n: i32) {
  tile.check_bounds "load" "x" %o, %n : tensor<16xi64>
  func.return
}

// -----

// CHECK: {{^}}tile.check_bounds mask must be i1 of the pointers' shape{{$}}
func.func @mask(%o: tensor<16xi32>, %n: i32, %m: tensor<8xi1>) {
  tile.check_bounds "store" "x" %o, %n mask %m : tensor<8xi1> : tensor<16xi32>
  func.return
}
