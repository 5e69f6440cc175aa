// tma-stores (sm_90): an array-view store of a dot's result, outside loops and with no
// load after it, whose array TMA can describe (kernel parameters, 16-byte aligned rows,
// unit column stride) becomes tile.tma_store at element starts (tile indices times the
// tile); a store of anything else, or of an array with rows of unknown alignment, stays.
// RUN: %opt %s -p 'tma-stores' | filecheck %s
// RUN: %opt %s -p 'tma-stores' | %opt | filecheck %s --check-prefix=ROUND

// CHECK-LABEL: func.func @epilogue
// CHECK: %[[R:.*]] = arith.muli %pm, %{{.*}} : i32
// CHECK: %[[C:.*]] = arith.muli %pn, %{{.*}} : i32
// CHECK: tile.tma_store %{{.*}} to %c sizes[%M, %N] strides[%N, %one] at[%[[R]], %[[C]]] : tensor<64x64xf16>, !tile.ptr<f16>
// CHECK-NOT: tile.view_store
// ROUND: tile.tma_store
func.func @epilogue(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                    %M: i32, %N: i32 {tile.divisibility = 16 : i32}, %pm: i32, %pn: i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%M, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %x = tile.view_load %va[%pm, %pn] padding "zero" : !tile.array<f16, 2> -> tensor<64x64xf16>
  %d = tile.dot %x, %x, %acc precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %h = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf16>
  %vc = tile.make_view %c shape [%M, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  tile.view_store %vc[%pm, %pn], %h : !tile.array<f16, 2>, tensor<64x64xf16>
  func.return
}

// CHECK-LABEL: func.func @stays
// CHECK-NOT: tile.tma_store
// CHECK: tile.view_store %{{.*}}, %x
// CHECK: tile.view_store %{{.*}}, %h
// CHECK: tile.view_store %{{.*}}, %h
func.func @stays(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                 %M: i32, %N: i32 {tile.divisibility = 16 : i32}, %odd: i32, %pm: i32, %pn: i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%M, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %x = tile.view_load %va[%pm, %pn] padding "zero" : !tile.array<f16, 2> -> tensor<64x64xf16>
  %vc = tile.make_view %c shape [%M, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  tile.view_store %vc[%pm, %pn], %x : !tile.array<f16, 2>, tensor<64x64xf16>
  %d = tile.dot %x, %x, %acc precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %h = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf16>
  %vo = tile.make_view %c shape [%M, %odd] strides [%odd, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  tile.view_store %vo[%pm, %pn], %h : !tile.array<f16, 2>, tensor<64x64xf16>
  tile.view_store %vc[%pm, %pn], %h : !tile.array<f16, 2>, tensor<64x64xf16>
  %again = tile.view_load %va[%pm, %pn] padding "zero" : !tile.array<f16, 2> -> tensor<64x64xf16>
  func.return
}

// Stored twice: the second store could land before the first one's TMA copy, so only
// the last becomes a TMA store.
// CHECK-LABEL: func.func @twice
// CHECK: tile.view_store %{{.*}}, %h
// CHECK-NOT: tile.view_store
// CHECK: tile.tma_store %h
func.func @twice(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %M: i32, %N: i32 {tile.divisibility = 16 : i32}) {
  %one = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%M, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %x = tile.view_load %va[%c0, %c0] padding "zero" : !tile.array<f16, 2> -> tensor<64x64xf16>
  %d = tile.dot %x, %x, %acc precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %h = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf16>
  tile.view_store %va[%c0, %c0], %h : !tile.array<f16, 2>, tensor<64x64xf16>
  tile.view_store %va[%c0, %c0], %h : !tile.array<f16, 2>, tensor<64x64xf16>
  func.return
}

// A 2-D tile of a (batch, m, n) array (cuTile's (1, tm, tn) tiles): the batch index is
// an element start (the tile is one long there), the others tile indices times the tile.
// CHECK-LABEL: func.func @batched
// CHECK: %[[R:.*]] = arith.muli %pm, %{{.*}} : i32
// CHECK: %[[C:.*]] = arith.muli %pn, %{{.*}} : i32
// CHECK: tile.tma_store %h to %c sizes[%nb, %M, %N] strides[%sc, %N, %one] at[%bat, %[[R]], %[[C]]] : tensor<64x64xf16>, !tile.ptr<f16>
func.func @batched(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %c: !tile.ptr<f16> {tile.divisibility = 16 : i32},
                   %nb: i32, %M: i32, %N: i32 {tile.divisibility = 16 : i32}, %sc: i32 {tile.divisibility = 16 : i32},
                   %bat: i32, %pm: i32, %pn: i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tile.splat %zero : f32 -> tensor<64x64xf32>
  %va = tile.make_view %a shape [%M, %N] strides [%N, %one] : !tile.ptr<f16> -> !tile.array<f16, 2>
  %x = tile.view_load %va[%pm, %pn] padding "zero" : !tile.array<f16, 2> -> tensor<64x64xf16>
  %d = tile.dot %x, %x, %acc precision "ieee" : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %h = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf16>
  %vc = tile.make_view %c shape [%nb, %M, %N] strides [%sc, %N, %one] : !tile.ptr<f16> -> !tile.array<f16, 3>
  tile.view_store %vc[%bat, %pm, %pn], %h : !tile.array<f16, 3>, tensor<64x64xf16>
  func.return
}
