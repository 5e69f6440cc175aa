// canonicalize: split(permute(reshape(x, (M, 2, N / 2)), (0, 2, 1))) of a 2-D tile becomes
// two tile.extract windows, x[:, :N / 2] and x[:, N / 2:]; not for another permutation
// or reshape, nor for pointer tiles.
// RUN: %opt %s -p canonicalize | filecheck %s

func.func @halves(%x: tensor<16x8xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>) {
  %r = tile.reshape %x : tensor<16x8xf32> -> tensor<16x2x4xf32>
  %t = tile.trans %r, [0, 2, 1] : tensor<16x2x4xf32> -> tensor<16x4x2xf32>
  %lo, %hi = tile.split %t : tensor<16x4x2xf32> -> tensor<16x4xf32>
  func.return %lo, %hi : tensor<16x4xf32>, tensor<16x4xf32>
}
// CHECK-LABEL: func.func @halves(
// CHECK-NEXT:    %[[LO:.*]] = tile.extract %x, [0, 0] : tensor<16x8xf32> -> tensor<16x4xf32>
// CHECK-NEXT:    %[[HI:.*]] = tile.extract %x, [0, 4] : tensor<16x8xf32> -> tensor<16x4xf32>
// CHECK-NEXT:    func.return %[[LO]], %[[HI]]

func.func @kept(%x: tensor<16x8xf32>, %p: tensor<16x8x!tile.ptr<f32>>)
    -> (tensor<8x8xf32>, tensor<16x4xf32>, tensor<16x4x!tile.ptr<f32>>) {
  %r = tile.reshape %x : tensor<16x8xf32> -> tensor<8x2x8xf32>
  %t = tile.trans %r, [2, 0, 1] : tensor<8x2x8xf32> -> tensor<8x8x2xf32>
  %a, %b = tile.split %t : tensor<8x8x2xf32> -> tensor<8x8xf32>
  %r2 = tile.reshape %x : tensor<16x8xf32> -> tensor<16x4x2xf32>
  %c, %d = tile.split %r2 : tensor<16x4x2xf32> -> tensor<16x4xf32>
  %rp = tile.reshape %p : tensor<16x8x!tile.ptr<f32>> -> tensor<16x2x4x!tile.ptr<f32>>
  %tp = tile.trans %rp, [0, 2, 1] : tensor<16x2x4x!tile.ptr<f32>> -> tensor<16x4x2x!tile.ptr<f32>>
  %e, %f = tile.split %tp : tensor<16x4x2x!tile.ptr<f32>> -> tensor<16x4x!tile.ptr<f32>>
  func.return %a, %c, %e : tensor<8x8xf32>, tensor<16x4xf32>, tensor<16x4x!tile.ptr<f32>>
}
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tile.extract
// CHECK:         func.return
