// #tile.mma (the mma.sync and wgmma accumulator layouts) printed and re-parsed, as a tile encoding and
// as the parent of a slice; then each verifier message.
// RUN: %opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: func.func @acc(%x: tensor<64x32xf32, #tile.mma<version = 2, warps = [2, 2]>>, %r: tensor<64xf32, #tile.slice<dim = 1, parent = #tile.mma<version = 2, warps = [2, 2]>>>)
func.func @acc(%x: tensor<64x32xf32, #tile.mma<version = 2, warps = [2, 2]>>, %r: tensor<64xf32, #tile.slice<dim = 1, parent = #tile.mma<version = 2, warps = [2, 2]>>>) {
  func.return
}

// -----

// CHECK: func.func @wgmma(%x: tensor<128x64xf32, #tile.mma<version = 3, warps = [8, 1]>>)
func.func @wgmma(%x: tensor<128x64xf32, #tile.mma<version = 3, warps = [8, 1]>>) {
  func.return
}

// -----

// CHECK: {{^}}tile.mma: version 2 (mma.sync) or 3 (wgmma){{$}}
func.func @version(%x: tensor<64x32xf32, #tile.mma<version = 1, warps = [2, 2]>>) {
  func.return
}

// -----

// CHECK: {{^}}tile.mma version 3 needs warps [4 k, 1] (whole warpgroups along M){{$}}
func.func @warpgroups(%x: tensor<64x32xf32, #tile.mma<version = 3, warps = [2, 2]>>) {
  func.return
}

// -----

// CHECK: {{^}}tile.mma warps must be two powers of two (along M, N){{$}}
func.func @warps(%x: tensor<64x32xf32, #tile.mma<version = 2, warps = [3, 1]>>) {
  func.return
}
