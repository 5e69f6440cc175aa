// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}simt.shuffle_up delta must be in 1..31{{$}}
func.func @zero(%v: f32) {
  %u = simt.shuffle_up %v, 0 : f32
  func.return
}

// -----

// CHECK: {{^}}simt.shuffle_down delta must be in 1..31{{$}}
func.func @wide(%v: f32) {
  %u = simt.shuffle_down %v, 32 : f32
  func.return
}
