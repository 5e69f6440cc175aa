// The verifier messages of tile.check_tile_index.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.check_tile_index: 2 starts, 1 tile dimensions and 2 array dimensions differ{{$}}
func.func @rank(%n: i32) {
  tile.check_tile_index "load" "x" start [%n, %n] tile [16] shape [%n, %n]
  func.return
}

// -----

// CHECK: {{^}}tile.check_tile_index: tile dimensions must be positive{{$}}
func.func @zero(%n: i32) {
  tile.check_tile_index "load" "x" start [%n] tile [0] shape [%n]
  func.return
}

// -----

// CHECK: {{^}}tile.check_tile_index: access must be "load" or "store"{{$}}
func.func @access(%n: i32) {
  tile.check_tile_index "read" "x" start [%n] tile [16] shape [%n]
  func.return
}
