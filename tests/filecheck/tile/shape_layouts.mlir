// assign-layouts on 2-D tiles: slices of one blocked layout for the operands of
// expand_dims and the results of reductions, rows of 128-bit accesses, copies of a range
// used along both dimensions, and a conversion where a loaded tile is needed both ways.
// RUN: %opt %s -p assign-layouts | filecheck %s

func.func @copy(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %s: i32 {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 64 : tensor<64xi32>
  %e0 = tile.expand_dims %r, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %ss = tile.splat %s : i32 -> tensor<64x1xi32>
  %rows = arith.muli %e0, %ss : tensor<64x1xi32>
  %e1 = tile.expand_dims %r, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %rb = tile.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tile.broadcast %e1 : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rb, %cb : tensor<64x64xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x64x!tile.ptr<f32>>
  %p = tile.addptr %xs, %offs : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xi32>
  %v = tile.load %p : tensor<64x64x!tile.ptr<f32>> -> tensor<64x64xf32>
  tile.store %p, %v : tensor<64x64x!tile.ptr<f32>>, tensor<64x64xf32>
  func.return
}
// CHECK-LABEL: func.func @copy(
// CHECK-DAG:     tile.range 0, 64 : tensor<64xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
// CHECK-DAG:     tile.range 0, 64 : tensor<64xi32, #tile.slice<dim = 0, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
// CHECK:         %e0 = tile.expand_dims {{.*}} -> tensor<64x1xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
// CHECK:         %rb = tile.broadcast %rows : tensor<64x1xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<64x64xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
// CHECK:         %v = tile.load %p {vec = 4 : i32}
// CHECK:         tile.store %p, %v {vec = 4 : i32}
// CHECK-NOT:     tile.convert_layout

func.func @pairwise(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 64 : tensor<64xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
  %p = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %v = tile.load %p : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %col = tile.expand_dims %v, 1 : tensor<64xf32> -> tensor<64x1xf32>
  %row = tile.expand_dims %v, 0 : tensor<64xf32> -> tensor<1x64xf32>
  %cb = tile.broadcast %col : tensor<64x1xf32> -> tensor<64x64xf32>
  %rb = tile.broadcast %row : tensor<1x64xf32> -> tensor<64x64xf32>
  %d = arith.subf %cb, %rb : tensor<64x64xf32>
  func.return
}
// CHECK-LABEL: func.func @pairwise(
// CHECK:         %v = tile.load %p {vec = 1 : i32} : tensor<64x!tile.ptr<f32>, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
// CHECK:         %col = tile.expand_dims %v, 1
// CHECK:         %[[ROW:.*]] = tile.convert_layout %v : tensor<64xf32, #tile.slice<dim = 1, {{.*}}>> -> tensor<64xf32, #tile.slice<dim = 0, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
// CHECK:         %row = tile.expand_dims %[[ROW]], 0

func.func @row_sums(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>) {
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<16x64x!tile.ptr<f32>>
  %v = tile.load %xs : tensor<16x64x!tile.ptr<f32>> -> tensor<16x64xf32>
  %s = tile.reduce %v axis 1 : tensor<16x64xf32> -> tensor<16xf32> {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tile.yield %c : f32
  }
  %r = tile.range 0, 16 : tensor<16xi32>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<16x!tile.ptr<f32>>
  %yp = tile.addptr %ys, %r : tensor<16x!tile.ptr<f32>>, tensor<16xi32>
  tile.store %yp, %s : tensor<16x!tile.ptr<f32>>, tensor<16xf32>
  func.return
}
// CHECK-LABEL: func.func @row_sums(
// CHECK:         %s = tile.reduce %v axis 1 : tensor<16x64xf32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16xf32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
// CHECK:         tile.store %yp, %s {vec = 1 : i32} : tensor<16x!tile.ptr<f32>, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>
