// tile.check_tile_index (lower-array-views puts one next to each view access) printed,
// re-parsed and printed again, in custom and generic form.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @check(%m: i32, %n: i32, %i: i32, %j: i32) {
  tile.check_tile_index "load" "x" start [%i, %j] tile [16, 32] shape [%m, %n]
  tile.check_tile_index "store" "out" start [%i] tile [64] shape [%n]
  func.return
}
// CHECK-LABEL: func.func @check(
// CHECK-NEXT:    tile.check_tile_index "load" "x" start[%i, %j] tile [16, 32] shape[%m, %n]
// CHECK-NEXT:    tile.check_tile_index "store" "out" start[%i] tile [64] shape[%n]
// GENERIC:       "tile.check_tile_index"(%i, %j, %m, %n) <{access = "load", array = "x", tile = array<i64: 16, 32>, operandSegmentSizes = array<i32: 2, 2>}> : (i32, i32, i32, i32) -> ()
