// Each verifier message of tile.assume_facts.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}tile.assume_facts operates on integers or pointers{{$}}
func.func @float(%x: tensor<8xf32>) {
  %a = tile.assume_facts %x divisibility [4] : tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}tile.assume_facts needs at least one fact{{$}}
func.func @none(%x: tensor<8xi32>) {
  %a = tile.assume_facts %x : tensor<8xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.assume_facts contiguity needs 2 values, one per dimension{{$}}
func.func @rank(%x: tensor<8x4xi32>) {
  %a = tile.assume_facts %x contiguity [4] : tensor<8x4xi32>
  func.return
}

// -----

// CHECK: {{^}}tile.assume_facts divisibility needs 1 values, one per dimension{{$}}
func.func @scalar(%x: i32) {
  %a = tile.assume_facts %x divisibility [4, 4] : i32
  func.return
}

// -----

// CHECK: {{^}}tile.assume_facts constancy must be positive{{$}}
func.func @zero(%x: tensor<8xi32>) {
  %a = tile.assume_facts %x constancy [0] : tensor<8xi32>
  func.return
}
