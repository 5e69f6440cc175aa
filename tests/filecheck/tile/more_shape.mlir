// tile.join, tile.split, tile.flip and tile.gather printed, re-parsed and printed again,
// in custom and generic form, with and without layouts.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @more_shapes(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %i: tensor<4x16xi32>) {
  %j = tile.join %a, %b : tensor<8x16xf32> -> tensor<8x16x2xf32>
  %lo, %hi = tile.split %j : tensor<8x16x2xf32> -> tensor<8x16xf32>
  %f = tile.flip %lo, 1 : tensor<8x16xf32> -> tensor<8x16xf32>
  %g = tile.gather %f[%i], 0 : tensor<8x16xf32>, tensor<4x16xi32> -> tensor<4x16xf32>
  func.return
}
// CHECK-LABEL: func.func @more_shapes(
// CHECK-NEXT:    %j = tile.join %a, %b : tensor<8x16xf32> -> tensor<8x16x2xf32>
// CHECK-NEXT:    %lo, %hi = tile.split %j : tensor<8x16x2xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %f = tile.flip %lo, 1 : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %g = tile.gather %f[%i], 0 : tensor<8x16xf32>, tensor<4x16xi32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return
// GENERIC:       "tile.join"(%a, %b) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16x2xf32>
// GENERIC:       "tile.split"(%j) : (tensor<8x16x2xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
// GENERIC:       "tile.flip"(%lo) <{dim = 1 : i32}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
// GENERIC:       "tile.gather"(%f, %i) <{axis = 0 : i32}> : (tensor<8x16xf32>, tensor<4x16xi32>) -> tensor<4x16xf32>

func.func @laid_out(%x: tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>) {
  %f = tile.flip %x, 0 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>> -> tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  %g = tile.gather %x[%f], 0 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>, tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>> -> tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
  func.return
}
// CHECK-LABEL: func.func @laid_out(
// CHECK-NEXT:    %f = tile.flip %x, 0 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>> -> tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
// CHECK-NEXT:    %g = tile.gather %x[%f], 0 : tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>, tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>> -> tensor<64xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [1]>>
