// lower-array-views: a view access becomes a tile-index check (debug=true, for NumPy), a
// pointer tile (index * tile + range, times the stride unless it is the constant 1), an
// unsigned bounds mask and a masked load/store reading the padding value; the views
// disappear. With a unit last stride and
// 16-divisible facts, assign-layouts then gives 128-bit accesses (vec = 4 for f32).
// RUN: %opt %s -p "lower-array-views{debug=true}" | filecheck %s
// RUN: %opt %s -p "lower-array-views{debug=true},canonicalize,cse,assign-layouts{vector-bits=128}" | filecheck %s --check-prefix=VEC

func.func @views(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %m: i32, %n: i32 {tile.divisibility = 16 : i32}, %s0: i32 {tile.divisibility = 16 : i32}, %i: i32, %j: i32) {
  %one = arith.constant 1 : i32
  %v = tile.make_view %a shape [%m, %n] strides [%s0, %one] : !tile.ptr<f32> -> !tile.array<f32, 2>
  %t = tile.view_load %v[%i, %j] padding "neg_inf" : !tile.array<f32, 2> -> tensor<16x32xf32>
  tile.view_store %v[%i, %j], %t : !tile.array<f32, 2>, tensor<16x32xf32>
  func.return
}
// CHECK-LABEL: func.func @views(
// CHECK-NOT:     tile.make_view
// CHECK:         %[[T0:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[S0:.*]] = arith.muli %i, %[[T0]] : i32
// CHECK-NEXT:    %[[B0:.*]] = tile.splat %[[S0]] : i32 -> tensor<16xi32>
// CHECK-NEXT:    %[[R0:.*]] = tile.range 0, 16 : tensor<16xi32>
// CHECK-NEXT:    %[[O0:.*]] = arith.addi %[[B0]], %[[R0]] : tensor<16xi32>
// CHECK-NEXT:    %[[M:.*]] = tile.splat %m : i32 -> tensor<16xi32>
// CHECK-NEXT:    %{{.*}} = tile.cmpi "ult", %[[O0]], %[[M]] : tensor<16xi32> -> tensor<16xi1>
// CHECK-NEXT:    %[[ST:.*]] = tile.splat %s0 : i32 -> tensor<16xi32>
// CHECK-NEXT:    %{{.*}} = arith.muli %[[O0]], %[[ST]] : tensor<16xi32>
// CHECK:         %[[S1:.*]] = arith.muli %j, %{{.*}} : i32
// CHECK:         %[[O1:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<32xi32>
// CHECK-NEXT:    %[[N:.*]] = tile.splat %n : i32 -> tensor<32xi32>
// CHECK-NEXT:    %{{.*}} = tile.cmpi "ult", %[[O1]], %[[N]] : tensor<32xi32> -> tensor<32xi1>
// CHECK-NEXT:    %{{.*}} = tile.expand_dims %[[O1]], 0 : tensor<32xi32> -> tensor<1x32xi32>
// CHECK:         %[[OFF:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<16x32xi32>
// CHECK-NEXT:    %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<16x32xi1>
// CHECK-NEXT:    %[[BASE:.*]] = tile.splat %a : !tile.ptr<f32> -> tensor<16x32x!tile.ptr<f32>>
// CHECK-NEXT:    %[[P:.*]] = tile.addptr %[[BASE]], %[[OFF]] : tensor<16x32x!tile.ptr<f32>>, tensor<16x32xi32>
// CHECK-NEXT:    tile.check_tile_index "load" "a" start[%[[S0]], %[[S1]]] tile [16, 32] shape[%m, %n]
// CHECK-NEXT:    %[[PAD:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[PADS:.*]] = tile.splat %[[PAD]] : f32 -> tensor<16x32xf32>
// CHECK-NEXT:    %t = tile.load %[[P]] mask %[[MASK]] : tensor<16x32xi1> other %[[PADS]] : tensor<16x32x!tile.ptr<f32>> -> tensor<16x32xf32>
// CHECK:         tile.check_tile_index "store" "a" start[%{{.*}}, %{{.*}}] tile [16, 32] shape[%m, %n]
// CHECK-NEXT:    tile.store %{{.*}}, %t mask %{{.*}} : tensor<16x32xi1> : tensor<16x32x!tile.ptr<f32>>, tensor<16x32xf32>
// CHECK-NOT:     tile.view_
// VEC:           tile.load {{.*}} {vec = 4 : i32}
// VEC:           tile.store {{.*}} {vec = 4 : i32}

func.func @int_padding(%x: !tile.ptr<i32>, %n: i32, %i: i32) {
  %one = arith.constant 1 : i32
  %v = tile.make_view %x shape [%n] strides [%one] : !tile.ptr<i32> -> !tile.array<i32, 1>
  %t = tile.view_load %v[%i] padding "undetermined" : !tile.array<i32, 1> -> tensor<64xi32>
  func.return
}
// CHECK-LABEL: func.func @int_padding(
// CHECK-NOT:     arith.muli %{{.*}} : tensor<64xi32>
// CHECK:         arith.constant 0 : i32
// CHECK:         %t = tile.load
