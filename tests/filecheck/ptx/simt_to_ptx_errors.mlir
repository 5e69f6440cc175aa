// simt-to-ptx errors: what the PTX backend cannot run, with the kernel's source line.
// RUN: %opt %s -p simt-to-ptx --split-input-file --verify-diagnostics | filecheck %s

// CHECK: {{^}}k.py:4:9: math.exp on f64 is not supported by the ptx backend{{$}}
func.func @exp64(%a: f64) attributes {simt.num_warps = 1 : i32} {
  %e = math.exp %a : f64 loc("k.py":4:9)
  func.return
}

// -----

// CHECK: {{^}}k.py:2:5: operation math.tanh is not supported by the ptx backend{{$}}
func.func @tanh(%a: f32) attributes {simt.num_warps = 1 : i32} {
  %e = math.tanh %a : f32 loc("k.py":2:5)
  func.return
}

// -----

// CHECK: {{^}}operation math.atan is not supported by the ptx backend{{$}}
func.func @noloc(%a: f32) attributes {simt.num_warps = 1 : i32} {
  %e = math.atan %a : f32
  func.return
}

// -----

// CHECK: {{^}}k.py:9:1: type index is not supported by the ptx backend{{$}}
func.func @index() attributes {simt.num_warps = 1 : i32} {
  %c = arith.constant 1 : index loc("k.py":9:1)
  %e = arith.addi %c, %c : index
  func.return
}

// -----

// CHECK: {{^}}type index is not supported by the ptx backend{{$}}
func.func @index_param(%a: index, %p: !tile.ptr<f32>) attributes {simt.num_warps = 1 : i32} {
  func.return
}
