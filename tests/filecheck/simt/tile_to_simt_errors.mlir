// tile-to-simt rejects pointers it cannot trace to a kernel argument.
// RUN: %opt %s -p assign-layouts,tile-to-simt --verify-diagnostics --split-input-file | filecheck %s

func.func @select_pointers(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %c: i1) {
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<128x!tile.ptr<f32>>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<128x!tile.ptr<f32>>
  %cs = tile.splat %c : i1 -> tensor<128xi1>
  %p = tile.select %cs, %xs, %ys : tensor<128xi1>, tensor<128x!tile.ptr<f32>>
  %v = tile.load %p : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  func.return
}
// CHECK: tile.select: cannot trace this pointer to a kernel argument

// -----

func.func @non_splat_constant(%x: !tile.ptr<i32>) {
  %k = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
  %xs = tile.splat %x : !tile.ptr<i32> -> tensor<4x!tile.ptr<i32>>
  %xp = tile.addptr %xs, %k : tensor<4x!tile.ptr<i32>>, tensor<4xi32>
  func.return
}
// CHECK: tile constants must have one value
