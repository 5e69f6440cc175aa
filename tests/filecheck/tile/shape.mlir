// The shape ops printed, re-parsed and printed again, in custom and generic form, with
// and without layouts.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @shapes(%x: tensor<32xf32>, %p: tensor<16x!tile.ptr<f16>>) {
  %e0 = tile.expand_dims %x, 0 : tensor<32xf32> -> tensor<1x32xf32>
  %e1 = tile.expand_dims %x, 1 : tensor<32xf32> -> tensor<32x1xf32>
  %b = tile.broadcast %e1 : tensor<32x1xf32> -> tensor<32x64xf32>
  %r = tile.reshape %b : tensor<32x64xf32> -> tensor<2x16x64xf32>
  %t = tile.trans %r, [2, 0, 1] : tensor<2x16x64xf32> -> tensor<64x2x16xf32>
  %pe = tile.expand_dims %p, 1 : tensor<16x!tile.ptr<f16>> -> tensor<16x1x!tile.ptr<f16>>
  %pb = tile.broadcast %pe : tensor<16x1x!tile.ptr<f16>> -> tensor<16x8x!tile.ptr<f16>>
  func.return
}
// CHECK-LABEL: func.func @shapes(%x: tensor<32xf32>, %p: tensor<16x!tile.ptr<f16>>) {
// CHECK-NEXT:    %e0 = tile.expand_dims %x, 0 : tensor<32xf32> -> tensor<1x32xf32>
// CHECK-NEXT:    %e1 = tile.expand_dims %x, 1 : tensor<32xf32> -> tensor<32x1xf32>
// CHECK-NEXT:    %b = tile.broadcast %e1 : tensor<32x1xf32> -> tensor<32x64xf32>
// CHECK-NEXT:    %r = tile.reshape %b : tensor<32x64xf32> -> tensor<2x16x64xf32>
// CHECK-NEXT:    %t = tile.trans %r, [2, 0, 1] : tensor<2x16x64xf32> -> tensor<64x2x16xf32>
// CHECK-NEXT:    %pe = tile.expand_dims %p, 1 : tensor<16x!tile.ptr<f16>> -> tensor<16x1x!tile.ptr<f16>>
// CHECK-NEXT:    %pb = tile.broadcast %pe : tensor<16x1x!tile.ptr<f16>> -> tensor<16x8x!tile.ptr<f16>>
// CHECK-NEXT:    func.return
// GENERIC:       "tile.expand_dims"(%x) <{axis = 1 : i32}> : (tensor<32xf32>) -> tensor<32x1xf32>
// GENERIC:       "tile.broadcast"(%e1) : (tensor<32x1xf32>) -> tensor<32x64xf32>
// GENERIC:       "tile.reshape"(%b) : (tensor<32x64xf32>) -> tensor<2x16x64xf32>
// GENERIC:       "tile.trans"(%r) <{order = array<i32: 2, 0, 1>}> : (tensor<2x16x64xf32>) -> tensor<64x2x16xf32>

func.func @laid_out(%x: tensor<16xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>>) {
  %e = tile.expand_dims %x, 1 : tensor<16xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>> -> tensor<16x1xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
  %b = tile.broadcast %e : tensor<16x1xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16x64xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
  %c = tile.convert_layout %b : tensor<16x64xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16x64xi32, #tile.blocked<spt = [1, 1], tpw = [1, 32], wpc = [4, 1]>>
  %s = tile.convert_layout %x : tensor<16xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>> -> tensor<16xi32, #tile.slice<dim = 0, parent = #tile.slice<dim = 2, parent = #tile.blocked<spt = [1, 1, 1], tpw = [1, 1, 32], wpc = [1, 4, 1]>>>>
  func.return
}
// CHECK-LABEL: func.func @laid_out(
// CHECK-NEXT:    %e = tile.expand_dims %x, 1 : tensor<16xi32, #tile.slice<dim = 1, parent = #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>> -> tensor<16x1xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
// CHECK-NEXT:    %b = tile.broadcast %e : tensor<16x1xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16x64xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
// CHECK-NEXT:    %c = tile.convert_layout %b : tensor<16x64xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<16x64xi32, #tile.blocked<spt = [1, 1], tpw = [1, 32], wpc = [4, 1]>>
// CHECK-NEXT:    %s = tile.convert_layout %x : {{.*}} -> tensor<16xi32, #tile.slice<dim = 0, parent = #tile.slice<dim = 2, parent = #tile.blocked<spt = [1, 1, 1], tpw = [1, 1, 32], wpc = [1, 4, 1]>>>>
// CHECK-NEXT:    func.return
// GENERIC:       "tile.convert_layout"(%b) : (tensor<16x64xi32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>) -> tensor<16x64xi32, #tile.blocked<spt = [1, 1], tpw = [1, 32], wpc = [4, 1]>>
