// Every simt op printed, re-parsed and printed again, in custom and generic form, with the
// other ops SIMT IR uses (vector.broadcast, dense lane constants, tile.cmpi/select on vectors).
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @add(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32) attributes {simt.num_warps = 4 : i32} {
  %tid = simt.thread_id : i32
  %c4 = arith.constant 4 : i32
  %t4 = arith.muli %tid, %c4 : i32
  %tb = vector.broadcast %t4 : i32 to vector<8xi32>
  %lanes = arith.constant dense<[0, 1, 2, 3, 512, 513, 514, 515]> : vector<8xi32>
  %offs = arith.addi %tb, %lanes : vector<8xi32>
  %nb = vector.broadcast %n : i32 to vector<8xi32>
  %m = tile.cmpi "slt", %offs, %nb : vector<8xi32> -> vector<8xi1>
  %zero = arith.constant dense<0.000000e+00> : vector<8xf32>
  %a = simt.load %x[%offs] : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
  %b = simt.load %x[%offs] mask %m : vector<8xi1> : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
  %c = simt.load %x[%offs] mask %m : vector<8xi1> other %zero {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
  %d = tile.select %m, %a, %c : vector<8xi1>, vector<8xf32>
  simt.store %o[%offs], %d : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>
  simt.store %o[%offs], %b mask %m : vector<8xi1> {vec = 2 : i32} : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>
  func.return
}
// CHECK-LABEL: func.func @add(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32) attributes {simt.num_warps = 4 : i32} {
// CHECK-NEXT:    %tid = simt.thread_id : i32
// CHECK-NEXT:    %c4 = arith.constant 4 : i32
// CHECK-NEXT:    %t4 = arith.muli %tid, %c4 : i32
// CHECK-NEXT:    %tb = vector.broadcast %t4 : i32 to vector<8xi32>
// CHECK-NEXT:    %lanes = arith.constant dense<[0, 1, 2, 3, 512, 513, 514, 515]> : vector<8xi32>
// CHECK-NEXT:    %offs = arith.addi %tb, %lanes : vector<8xi32>
// CHECK-NEXT:    %nb = vector.broadcast %n : i32 to vector<8xi32>
// CHECK-NEXT:    %m = tile.cmpi "slt", %offs, %nb : vector<8xi32> -> vector<8xi1>
// CHECK-NEXT:    %zero = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:    %a = simt.load %x[%offs] : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
// CHECK-NEXT:    %b = simt.load %x[%offs] mask %m : vector<8xi1> : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
// CHECK-NEXT:    %c = simt.load %x[%offs] mask %m : vector<8xi1> other %zero {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
// CHECK-NEXT:    %d = tile.select %m, %a, %c : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    simt.store %o[%offs], %d : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>
// CHECK-NEXT:    simt.store %o[%offs], %b mask %m : vector<8xi1> {vec = 2 : i32} : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>
// CHECK-NEXT:    func.return
// GENERIC:       "simt.thread_id"() : () -> i32
// GENERIC:       "simt.load"(%x, %offs, %m, %zero) <{vec = 4 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
// GENERIC:       "simt.store"(%o, %offs, %b, %m) <{vec = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
// GENERIC:       }) {simt.num_warps = 4 : i32} : () -> ()

func.func @scalar(%p: !tile.ptr<i16>, %q: !tile.ptr<f16>, %i: i32, %ok: i1) attributes {simt.num_warps = 1 : i32} {
  %v = simt.load %p[%i] : !tile.ptr<i16>, i32 -> i16
  %w = simt.load %p[%i] mask %ok : i1 other %v : !tile.ptr<i16>, i32 -> i16
  simt.store %p[%i], %w mask %ok : i1 : !tile.ptr<i16>, i32, i16
  %h = simt.load %q[%i] {vec = 1 : i32} : !tile.ptr<f16>, i32 -> f16
  simt.store %q[%i], %h : !tile.ptr<f16>, i32, f16
  func.return
}
// CHECK-LABEL: func.func @scalar(%p: !tile.ptr<i16>, %q: !tile.ptr<f16>, %i: i32, %ok: i1) attributes {simt.num_warps = 1 : i32} {
// CHECK-NEXT:    %v = simt.load %p[%i] : !tile.ptr<i16>, i32 -> i16
// CHECK-NEXT:    %w = simt.load %p[%i] mask %ok : i1 other %v : !tile.ptr<i16>, i32 -> i16
// CHECK-NEXT:    simt.store %p[%i], %w mask %ok : i1 : !tile.ptr<i16>, i32, i16
// CHECK-NEXT:    %h = simt.load %q[%i] {vec = 1 : i32} : !tile.ptr<f16>, i32 -> f16
// CHECK-NEXT:    simt.store %q[%i], %h : !tile.ptr<f16>, i32, f16
// CHECK-NEXT:    func.return
// GENERIC:       "simt.load"(%p, %i, %ok, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (!tile.ptr<i16>, i32, i1, i16) -> i16
