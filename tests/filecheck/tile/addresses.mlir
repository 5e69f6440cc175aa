// Casts between i64 addresses and pointers (`tl.pointer_type`), printed and parsed back in
// custom and generic form. tile-to-simt keeps a scalar cast as the base its pointers are
// accessed from (as an argument is), and makes a pointer's address that base's address
// plus the index in bytes; lower-control carries a loop's pointer from a cast as the i32
// offset from it and rebuilds the pointer from the cast.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %opt %s -p lower-control,assign-layouts,tile-to-simt | filecheck %s --check-prefix=SIMT
// RUN: %opt %s -p lower-control | filecheck %s --check-prefix=LOWER

func.func @through(%table: !tile.ptr<i64>, %out: !tile.ptr<i64>) {
  %pid = tile.program_id 0 : i32
  %at = tile.addptr %table, %pid : !tile.ptr<i64>, i32
  %addr = tile.load %at : !tile.ptr<i64> -> i64
  %p = tile.int_to_ptr %addr : i64 -> !tile.ptr<f32>
  %r = tile.range 0, 128 : tensor<128xi32>
  %ps = tile.splat %p : !tile.ptr<f32> -> tensor<128x!tile.ptr<f32>>
  %q = tile.addptr %ps, %r : tensor<128x!tile.ptr<f32>>, tensor<128xi32>
  %v = tile.load %q : tensor<128x!tile.ptr<f32>> -> tensor<128xf32>
  %w = arith.addf %v, %v : tensor<128xf32>
  tile.store %q, %w : tensor<128x!tile.ptr<f32>>, tensor<128xf32>
  %back = tile.ptr_to_int %q : tensor<128x!tile.ptr<f32>> -> tensor<128xi64>
  %os = tile.splat %out : !tile.ptr<i64> -> tensor<128x!tile.ptr<i64>>
  %o = tile.addptr %os, %r : tensor<128x!tile.ptr<i64>>, tensor<128xi32>
  tile.store %o, %back : tensor<128x!tile.ptr<i64>>, tensor<128xi64>
  func.return
}
// CHECK-LABEL: func.func @through(
// CHECK:         %p = tile.int_to_ptr %addr : i64 -> !tile.ptr<f32>
// CHECK:         %back = tile.ptr_to_int %q : tensor<128x!tile.ptr<f32>> -> tensor<128xi64>
// GENERIC:       "tile.int_to_ptr"(%{{.*}}) : (i64) -> !tile.ptr<f32>
// GENERIC:       "tile.ptr_to_int"(%{{.*}}) : (tensor<128x!tile.ptr<f32>>) -> tensor<128xi64>
// SIMT-LABEL:  func.func @through(
// SIMT:          %addr = simt.load %table[%pid]
// SIMT-NEXT:     %p = tile.int_to_ptr %addr : i64 -> !tile.ptr<f32>
// SIMT:          %v = simt.load %p[%[[IDX:.*]]] {vec = 1 : i32} : !tile.ptr<f32>, vector<1xi32> -> vector<1xf32>
// SIMT:          simt.store %p[%[[IDX]]], %w
// SIMT-NEXT:     %[[BASE:.*]] = tile.ptr_to_int %p : !tile.ptr<f32> -> i64
// SIMT-NEXT:     %[[BASES:.*]] = vector.broadcast %[[BASE]] : i64 to vector<1xi64>
// SIMT-NEXT:     %[[WIDE:.*]] = arith.extsi %[[IDX]] : vector<1xi32> to vector<1xi64>
// SIMT-NEXT:     %[[SIZE:.*]] = arith.constant dense<4> : vector<1xi64>
// SIMT-NEXT:     %[[BYTES:.*]] = arith.muli %[[WIDE]], %[[SIZE]] : vector<1xi64>
// SIMT-NEXT:     %[[SUM:.*]] = arith.addi %[[BASES]], %[[BYTES]] : vector<1xi64>
// SIMT:          simt.store %out[%{{.*}}], %[[SUM]]

func.func @carried(%table: !tile.ptr<i64>, %n: i32) {
  %addr = tile.load %table : !tile.ptr<i64> -> i64
  %p = tile.int_to_ptr %addr : i64 -> !tile.ptr<f32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %f = arith.constant 1.0 : f32
  %end = scf.for %i = %c0 to %n step %c1 iter_args(%q = %p) -> (!tile.ptr<f32>) : i32 {
    tile.store %q, %f : !tile.ptr<f32>, f32
    %next = tile.addptr %q, %c1 : !tile.ptr<f32>, i32
    scf.yield %next : !tile.ptr<f32>
  }
  func.return
}
// LOWER-LABEL: func.func @carried(
// LOWER:         %p = tile.int_to_ptr %addr : i64 -> !tile.ptr<f32>
// LOWER:         scf.for %i = %c0 to %n step %c1 iter_args(%[[OFF:.*]] = %{{.*}}) -> (i32)
// LOWER-NEXT:      %[[Q:.*]] = tile.addptr %p, %[[OFF]] : !tile.ptr<f32>, i32
// LOWER-NEXT:      tile.store %[[Q]], %f
