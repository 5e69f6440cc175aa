// Array-view accesses at element offsets (property `elements`, Triton's tensor
// descriptors): printed, re-parsed and printed again in custom and generic form; and
// lower-array-views, which starts each dimension at the index itself (not index * tile)
// and puts no tile.check_tile_index in front (any offset is defined, negative included).
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s --print-op-generic | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %opt %s -p "lower-array-views{debug=true}" | filecheck %s --check-prefix=LOWER

func.func @elements(%a: !tile.ptr<f16>, %m: i32, %n: i32, %s0: i32, %i: i32, %j: i32) {
  %one = arith.constant 1 : i32
  %v = tile.make_view %a shape [%m, %n] strides [%s0, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %t = tile.view_load %v[%i, %j] padding "zero" elements : !tile.array<f16, 2> -> tensor<16x32xf16>
  tile.view_store %v[%j, %i], %t elements : !tile.array<f16, 2>, tensor<16x32xf16>
  func.return
}
// ROUND-LABEL: func.func @elements(
// ROUND:         %t = tile.view_load %v[%i, %j] padding "zero" elements : !tile.array<f16, 2> -> tensor<16x32xf16>
// ROUND-NEXT:    tile.view_store %v[%j, %i], %t elements : !tile.array<f16, 2>, tensor<16x32xf16>
// GENERIC:       "tile.view_load"(%v, %i, %j) <{padding = "zero", elements}> : (!tile.array<f16, 2>, i32, i32) -> tensor<16x32xf16>
// GENERIC:       "tile.view_store"(%v, %j, %i, %t) <{elements, operandSegmentSizes = array<i32: 1, 2, 1>}>

// LOWER-LABEL: func.func @elements(
// LOWER-NOT:     tile.check_tile_index
// LOWER-NOT:     arith.muli %i
// LOWER:         %[[B0:.*]] = tile.splat %i : i32 -> tensor<16xi32>
// LOWER-NEXT:    %[[R0:.*]] = tile.range 0, 16 : tensor<16xi32>
// LOWER-NEXT:    %[[O0:.*]] = arith.addi %[[B0]], %[[R0]] : tensor<16xi32>
// LOWER-NEXT:    %[[M:.*]] = tile.splat %m : i32 -> tensor<16xi32>
// LOWER-NEXT:    %{{.*}} = tile.cmpi "ult", %[[O0]], %[[M]] : tensor<16xi32> -> tensor<16xi1>
// LOWER-NEXT:    %[[ST:.*]] = tile.splat %s0 : i32 -> tensor<16xi32>
// LOWER-NEXT:    %{{.*}} = arith.muli %[[O0]], %[[ST]] : tensor<16xi32>
// LOWER:         %[[B1:.*]] = tile.splat %j : i32 -> tensor<32xi32>
// LOWER-NEXT:    %[[R1:.*]] = tile.range 0, 32 : tensor<32xi32>
// LOWER-NEXT:    %[[O1:.*]] = arith.addi %[[B1]], %[[R1]] : tensor<32xi32>
// LOWER-NEXT:    %[[N:.*]] = tile.splat %n : i32 -> tensor<32xi32>
// LOWER-NEXT:    %{{.*}} = tile.cmpi "ult", %[[O1]], %[[N]] : tensor<32xi32> -> tensor<32xi1>
// LOWER:         %[[P:.*]] = tile.addptr %{{.*}}, %{{.*}} : tensor<16x32x!tile.ptr<f16>>, tensor<16x32xi32>
// LOWER-NEXT:    %[[PAD:.*]] = arith.constant 0.000000e+00 : f16
// LOWER-NEXT:    %[[PADS:.*]] = tile.splat %[[PAD]] : f16 -> tensor<16x32xf16>
// LOWER-NEXT:    %t = tile.load %[[P]] mask %{{.*}} : tensor<16x32xi1> other %[[PADS]] : tensor<16x32x!tile.ptr<f16>> -> tensor<16x32xf16>
// LOWER-NOT:     tile.check_tile_index
// LOWER:         %{{.*}} = tile.splat %j : i32 -> tensor<16xi32>
// LOWER:         %{{.*}} = tile.splat %i : i32 -> tensor<32xi32>
// LOWER:         tile.store %{{.*}}, %t mask %{{.*}} : tensor<16x32xi1> : tensor<16x32x!tile.ptr<f16>>, tensor<16x32xf16>
// LOWER-NOT:     tile.check_tile_index
// LOWER-NOT:     tile.view_

// A tile-indexed access next to it keeps its multiply and its check.
func.func @mixed(%x: !tile.ptr<f32>, %n: i32, %i: i32) {
  %one = arith.constant 1 : i32
  %v = tile.make_view %x shape [%n] strides [%one] : !tile.ptr<f32> -> !tile.array<f32, 1>
  %e = tile.view_load %v[%i] padding "zero" elements : !tile.array<f32, 1> -> tensor<64xf32>
  %t = tile.view_load %v[%i] padding "zero" : !tile.array<f32, 1> -> tensor<64xf32>
  func.return
}
// ROUND-LABEL: func.func @mixed(
// ROUND:         %e = tile.view_load %v[%i] padding "zero" elements : !tile.array<f32, 1> -> tensor<64xf32>
// ROUND-NEXT:    %t = tile.view_load %v[%i] padding "zero" : !tile.array<f32, 1> -> tensor<64xf32>
// LOWER-LABEL: func.func @mixed(
// LOWER-NOT:     tile.check_tile_index
// LOWER:         %e = tile.load
// LOWER:         %[[S:.*]] = arith.muli %i, %{{.*}} : i32
// LOWER:         tile.check_tile_index "load" "x" start[%[[S]]] tile [64] shape[%n]
// LOWER-NEXT:    %{{.*}} = arith.constant
// LOWER:         %t = tile.load
