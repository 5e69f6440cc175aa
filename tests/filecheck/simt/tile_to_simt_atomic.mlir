// tile-to-simt of atomics: one simt atomic per element. A tile as wide as the layout
// lowers directly; a smaller tile (here 32 elements over 128 threads) is held by 4
// threads per element, so only the owner (thread id bits 5-6 clear) performs the atomic
// and, where the old values are used, passes them to the replicas through shared memory.
// A scalar is held by every thread: thread 0 alone performs it. sem and scope go along.
// RUN: %opt %s -p assign-layouts,tile-to-simt,canonicalize,cse | filecheck %s

func.func @wide(%c: !tile.ptr<i32>, %o: !tile.ptr<i32>) {
  %r = tile.range 0, 256 : tensor<256xi32>
  %cs = tile.splat %c : !tile.ptr<i32> -> tensor<256x!tile.ptr<i32>>
  %cp = tile.addptr %cs, %r : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
  %a = tile.atomic_rmw "add", %cp, %r : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
  %os = tile.splat %o : !tile.ptr<i32> -> tensor<256x!tile.ptr<i32>>
  %op = tile.addptr %os, %r : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
  tile.store %op, %a : tensor<256x!tile.ptr<i32>>, tensor<256xi32>
  func.return
}
// CHECK-LABEL: func.func @wide(
// CHECK-NOT:     shared
// CHECK:         %[[R:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK-NEXT:    %a = simt.atomic_rmw "add", %c[%[[R]]], %[[R]] : !tile.ptr<i32>, vector<2xi32>, vector<2xi32>
// CHECK-NEXT:    simt.store %o[%[[R]]], %a

func.func @small(%c: !tile.ptr<f32>, %o: !tile.ptr<f32>, %v: f32) {
  %r = tile.range 0, 32 : tensor<32xi32>
  %cs = tile.splat %c : !tile.ptr<f32> -> tensor<32x!tile.ptr<f32>>
  %cp = tile.addptr %cs, %r : tensor<32x!tile.ptr<f32>>, tensor<32xi32>
  %vs = tile.splat %v : f32 -> tensor<32xf32>
  %a = tile.atomic_rmw "max", %cp, %vs : tensor<32x!tile.ptr<f32>>, tensor<32xf32>
  %b = tile.atomic_rmw "add", %cp, %vs sem "relaxed" scope "cta" : tensor<32x!tile.ptr<f32>>, tensor<32xf32>
  %os = tile.splat %o : !tile.ptr<f32> -> tensor<32x!tile.ptr<f32>>
  %op = tile.addptr %os, %r : tensor<32x!tile.ptr<f32>>, tensor<32xi32>
  tile.store %op, %a : tensor<32x!tile.ptr<f32>>, tensor<32xf32>
  func.return
}
// CHECK-LABEL: func.func @small(
// CHECK:         %[[TID:.*]] = simt.thread_id : i32
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<32xf32, 3 : i32>
// CHECK:         %[[R:.*]] = arith.addi %{{.*}}, %{{.*}} : vector<1xi32>
// CHECK:         %[[BITS:.*]] = arith.constant 96 : i32
// CHECK-NEXT:    %[[HELD:.*]] = arith.andi %[[TID]], %[[BITS]] : i32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[MINE:.*]] = tile.cmpi "eq", %[[HELD]], %[[ZERO]] : i32 -> i1
// CHECK-NEXT:    %[[OWN:.*]] = vector.broadcast %[[MINE]] : i1 to vector<1xi1>
// CHECK-NEXT:    %[[OLD:.*]] = simt.atomic_rmw "max", %c[%[[R]]], %vs mask %[[OWN]] : vector<1xi1>
// CHECK-NEXT:    simt.shared_store %[[BUF]][%[[R]]], %[[OLD]] mask %[[OWN]] : vector<1xi1>
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %a = simt.shared_load %[[BUF]][%[[R]]]
// CHECK-NEXT:    %b = simt.atomic_rmw "add", %c[%[[R]]], %vs mask %[[OWN]] : vector<1xi1> sem "relaxed" scope "cta" :
// CHECK-NEXT:    simt.store %o[%[[R]]], %a

func.func @scalar(%c: !tile.ptr<i32>, %o: !tile.ptr<i32>, %n: i32) {
  %one = arith.constant 1 : i32
  %pm = tile.cmpi "sgt", %n, %one : i32 -> i1
  %a = tile.atomic_cas %c, %n, %one mask %pm : i1 sem "acquire" : !tile.ptr<i32>, i32
  tile.store %o, %a : !tile.ptr<i32>, i32
  func.return
}
// CHECK-LABEL: func.func @scalar(
// CHECK:         %[[TID:.*]] = simt.thread_id : i32
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<1xi32, 3 : i32>
// CHECK:         %[[PM:.*]] = tile.cmpi "sgt", %n, %one : i32 -> i1
// CHECK:         %[[ALL:.*]] = arith.constant 127 : i32
// CHECK-NEXT:    %[[HELD:.*]] = arith.andi %[[TID]], %[[ALL]] : i32
// CHECK-NEXT:    %[[MINE:.*]] = tile.cmpi "eq", %[[HELD]], %[[Z:.*]] : i32 -> i1
// CHECK-NEXT:    %[[M:.*]] = arith.andi %[[PM]], %[[MINE]] : i1
// CHECK-NEXT:    %[[OLD:.*]] = simt.atomic_cas %c[%[[Z]]], %n, %one mask %[[M]] : i1 sem "acquire" : !tile.ptr<i32>, i32, i32
// CHECK-NEXT:    simt.shared_store %[[BUF]][%[[Z]]], %[[OLD]] mask %[[MINE]] : i1
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %a = simt.shared_load %[[BUF]][%[[Z]]]
// CHECK-NEXT:    simt.store %o[%[[Z]]], %a
