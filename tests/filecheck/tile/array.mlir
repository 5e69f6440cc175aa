// Array views: tile.make_view, tile.view_load and tile.view_store printed, re-parsed and
// printed again, in custom and generic form.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @views(%a: !tile.ptr<f32>, %m: i32, %n: i32, %s0: i32, %i: i32, %j: i32) {
  %one = arith.constant 1 : i32
  %v = tile.make_view %a shape [%m, %n] strides [%s0, %one] : !tile.ptr<f32> -> !tile.array<f32, 2>
  %t = tile.view_load %v[%i, %j] padding "neg_inf" : !tile.array<f32, 2> -> tensor<16x32xf32>
  tile.view_store %v[%j, %i], %t : !tile.array<f32, 2>, tensor<16x32xf32>
  func.return
}
// CHECK-LABEL: func.func @views(
// CHECK:         %v = tile.make_view %a shape[%m, %n] strides[%s0, %one] : !tile.ptr<f32> -> !tile.array<f32, 2>
// CHECK-NEXT:    %t = tile.view_load %v[%i, %j] padding "neg_inf" : !tile.array<f32, 2> -> tensor<16x32xf32>
// CHECK-NEXT:    tile.view_store %v[%j, %i], %t : !tile.array<f32, 2>, tensor<16x32xf32>
// GENERIC:       "tile.make_view"(%a, %m, %n, %s0, %one) <{operandSegmentSizes = array<i32: 1, 2, 2>}> : (!tile.ptr<f32>, i32, i32, i32, i32) -> !tile.array<f32, 2>
// GENERIC:       "tile.view_load"(%v, %i, %j) <{padding = "neg_inf"}> : (!tile.array<f32, 2>, i32, i32) -> tensor<16x32xf32>

func.func @vector(%x: !tile.ptr<i8>, %n: i32, %i: i32) {
  %one = arith.constant 1 : i32
  %v = tile.make_view %x shape [%n] strides [%one] : !tile.ptr<i8> -> !tile.array<i8, 1>
  %t = tile.view_load %v[%i] padding "zero" : !tile.array<i8, 1> -> tensor<64xi8>
  tile.view_store %v[%i], %t : !tile.array<i8, 1>, tensor<64xi8>
  func.return
}
// CHECK-LABEL: func.func @vector(
// CHECK:         tile.view_load %v[%i] padding "zero" : !tile.array<i8, 1> -> tensor<64xi8>
