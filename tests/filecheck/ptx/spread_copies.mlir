// spread-copies: the copies of a commit group move, each with the address arithmetic
// that only it reads, to after evenly spaced mma.syncs of the dot that follows them, and
// the commit after the last; arithmetic two copies share stays where it was. A wait or a
// barrier ends the stretch a copy may move in; copies with no mma after them stay.
// RUN: %opt %s -p simt-to-ptx,spread-copies | filecheck %s

func.func @stage(%p: !tile.ptr<f32>, %i: i32, %j: i32, %o: i32, %c: vector<4xf32>) attributes {simt.num_warps = 1 : i32} {
  %h = simt.shared_alloc : memref<1024xf16, 3 : i32>
  %s = simt.shared_alloc : memref<1024xf32, 3 : i32>
  %c8 = arith.constant 8 : i32
  %c64 = arith.constant 64 : i32
  %shared = arith.addi %i, %c8 : i32
  %first = arith.addi %j, %c64 : i32
  %second = arith.muli %j, %c64 : i32
  simt.cp_async %p[%first] to %s[%shared] {vec = 1 : i32} : !tile.ptr<f32>, i32, memref<1024xf32, 3 : i32>, i32
  simt.cp_async %p[%second] to %s[%shared] {vec = 1 : i32} : !tile.ptr<f32>, i32, memref<1024xf32, 3 : i32>, i32
  simt.cp_async_commit
  %a = simt.ldmatrix %h[%o] : memref<1024xf16, 3 : i32> -> vector<8xf16>
  %b = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<4xf16>
  %d0 = simt.mma "m16n8k16" %a, %b, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %d1 = simt.mma "m16n8k16" %a, %b, %d0 : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %d2 = simt.mma "m16n8k16" %a, %b, %d1 : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %d3 = simt.mma "m16n8k16" %a, %b, %d2 : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %d4 = simt.mma "m16n8k16" %a, %b, %d3 : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %d5 = simt.mma "m16n8k16" %a, %b, %d4 : vector<8xf16>, vector<4xf16>, vector<4xf32>
  simt.cp_async_wait 0
  simt.cp_async %p[%first] to %s[%shared] {vec = 1 : i32} : !tile.ptr<f32>, i32, memref<1024xf32, 3 : i32>, i32
  simt.cp_async_commit
  simt.barrier
  %e = simt.mma "m16n8k16" %a, %b, %d5 : vector<8xf16>, vector<4xf16>, vector<4xf32>
  func.return
}

// The address both the first and the last copy read stays ahead of the dot:
// CHECK:      %[[FIRST:.*]] = ptx.inst "mul.wide.s32"
// CHECK-NOT:  ptx.cp_async
// CHECK:      ptx.ldmatrix
// CHECK:      ptx.mma
// CHECK-NEXT: ptx.mma
// CHECK-NEXT: %[[SRC:.*]] = ptx.inst "add.s64" %{{.*}}, %[[FIRST]]
// CHECK-NEXT: %[[DST:.*]] = ptx.inst "mad.lo.s32"
// CHECK-NEXT: ptx.cp_async %[[DST]], %[[SRC]], 4
// CHECK-NEXT: ptx.mma
// CHECK-NEXT: ptx.mma
// CHECK-NEXT: ptx.inst "mul.lo.s32"
// CHECK:      ptx.cp_async
// CHECK-NEXT: ptx.plain "cp.async.commit_group"
// CHECK-NEXT: ptx.mma
// CHECK-NEXT: ptx.mma
// CHECK-NEXT: ptx.plain "cp.async.wait_group 0"
// CHECK:      ptx.cp_async
// CHECK-NEXT: ptx.plain "cp.async.commit_group"
// CHECK-NEXT: ptx.bar
// CHECK-NEXT: ptx.mma
