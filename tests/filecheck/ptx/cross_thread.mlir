// simt-to-ptx of the cross-thread SIMT ops: shared memory is a ptx.shared array addressed
// with 32-bit mad.lo, bools stored as bytes; barriers are ptx.bar; shuffles are
// shfl.sync (c = 31 for bfly/down, 0 for up) on 32 bits: f16 widened (and narrowed back by
// splitting the word), f64 in two halves,
// i1 through selp/setp. vector.extract and a two-vector vector.shuffle rename registers.
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @xt(%x: !tile.ptr<f32>, %h: !tile.ptr<f16>, %d: !tile.ptr<f64>, %b: i1) attributes {simt.num_warps = 2 : i32} {
  %tid = simt.thread_id : i32
  %t = vector.broadcast %tid : i32 to vector<2xi32>
  %c = arith.constant dense<[0, 64]> : vector<2xi32>
  %i = arith.addi %t, %c : vector<2xi32>
  %v = simt.load %x[%i] : !tile.ptr<f32>, vector<2xi32> -> vector<2xf32>
  %buf = simt.shared_alloc : memref<128xf32, 3 : i32>
  %m = tile.cmpi "slt", %tid, %tid : i32 -> i1
  %s = vector.extract %v[1] : f32 from vector<2xf32>
  simt.shared_store %buf[%tid], %s mask %m : i1 : memref<128xf32, 3 : i32>, i32, f32
  simt.barrier
  %l = simt.shared_load %buf[%i] : memref<128xf32, 3 : i32>, vector<2xi32> -> vector<2xf32>
  %x1 = simt.shuffle_xor %l, 1 : vector<2xf32>
  %u = simt.shuffle_up %x1, 2 : vector<2xf32>
  %j = vector.shuffle %u, %v [3, 0, 1] : vector<2xf32>, vector<2xf32>
  %hv = simt.load %h[%tid] : !tile.ptr<f16>, i32 -> f16
  %hs = simt.shuffle_down %hv, 4 : f16
  %dv = simt.load %d[%tid] : !tile.ptr<f64>, i32 -> f64
  %ds = simt.shuffle_xor %dv, 8 : f64
  %bs = simt.shuffle_xor %b, 16 : i1
  %bb = simt.shared_alloc : memref<64xi1, 3 : i32>
  simt.shared_store %bb[%tid], %bs : memref<64xi1, 3 : i32>, i32, i1
  %bl = simt.shared_load %bb[%tid] : memref<64xi1, 3 : i32>, i32 -> i1
  %k = vector.extract %j[2] : f32 from vector<3xf32>
  simt.store %x[%tid], %k : !tile.ptr<f32>, i32, f32
  simt.store %h[%tid], %hs mask %bl : i1 : !tile.ptr<f16>, i32, f16
  simt.store %d[%tid], %ds : !tile.ptr<f64>, i32, f64
  func.return
}
// CHECK-LABEL: func.func @xt(
// CHECK:         %[[TID:.*]] = ptx.sreg "%tid.x" : i32
// CHECK:         %[[I:.*]] = ptx.inst "add.s32" {{.*}} -> vector<2xi32>
// CHECK:         %[[FOUR:.*]] = ptx.mov_imm 4 : i32
// CHECK:         %[[V:.*]] = ptx.ld_global {{.*}} -> vector<2xf32>
// CHECK-NEXT:    %[[BUF:.*]] = ptx.shared 512 align 16 : i32
// CHECK-NEXT:    %[[M:.*]] = ptx.inst "setp.lt.s32"
// CHECK-NEXT:    %[[S:.*]] = ptx.lanes %[[V]] [1] : vector<2xf32> -> f32
// CHECK-NEXT:    %[[A:.*]] = ptx.inst "mad.lo.s32" %[[TID]], %[[FOUR]], %[[BUF]] : (i32, i32, i32) -> i32
// CHECK-NEXT:    ptx.st_shared %[[A]], %[[S]] if %[[M]] : i1 : i32, f32
// CHECK-NEXT:    ptx.bar
// CHECK-NEXT:    %[[AV:.*]] = ptx.inst "mad.lo.s32" %[[I]], %[[FOUR]], %[[BUF]] : (vector<2xi32>, i32, i32) -> vector<2xi32>
// CHECK-NEXT:    %[[L:.*]] = ptx.ld_shared %[[AV]] : vector<2xi32> -> vector<2xf32>
// CHECK-NEXT:    %[[ONE:.*]] = ptx.mov_imm 1 : i32
// CHECK-NEXT:    %[[C31:.*]] = ptx.mov_imm 31 : i32
// CHECK-NEXT:    %[[ALL:.*]] = ptx.mov_imm -1 : i32
// CHECK-NEXT:    %[[X:.*]] = ptx.inst "shfl.sync.bfly.b32" %[[L]], %[[ONE]], %[[C31]], %[[ALL]] : (vector<2xf32>, i32, i32, i32) -> vector<2xf32>
// CHECK-NEXT:    %[[TWO:.*]] = ptx.mov_imm 2 : i32
// CHECK-NEXT:    %[[C0:.*]] = ptx.mov_imm 0 : i32
// CHECK-NEXT:    %[[U:.*]] = ptx.inst "shfl.sync.up.b32" %[[X]], %[[TWO]], %[[C0]], %[[ALL]]
// CHECK-NEXT:    %[[J:.*]] = ptx.concat %[[U]], %[[V]] : vector<2xf32>, vector<2xf32> -> vector<4xf32>
// CHECK-NEXT:    %[[K:.*]] = ptx.lanes %[[J]] [3, 0, 1] : vector<4xf32> -> vector<3xf32>
// CHECK:         %[[H:.*]] = ptx.ld_global {{.*}} -> f16
// CHECK-NEXT:    %[[HW:.*]] = ptx.inst "cvt.u32.u16" %[[H]] : (f16) -> i32
// CHECK-NEXT:    %[[HS:.*]] = ptx.inst "shfl.sync.down.b32" %[[HW]], %[[FOUR]], %[[C31]], %[[ALL]]
// CHECK-NEXT:    %[[HP:.*]] = ptx.repack %[[HS]] : i32 -> vector<2xf16>
// CHECK-NEXT:    ptx.lanes %[[HP]] [0] : vector<2xf16> -> f16
// CHECK:         %[[D:.*]] = ptx.ld_global {{.*}} -> f64
// CHECK-NEXT:    %[[DB:.*]] = ptx.inst "mov.b64" %[[D]] : (f64) -> i64
// CHECK-NEXT:    ptx.inst "cvt.u32.u64" %[[DB]]
// CHECK:         ptx.inst "shr.u64" %[[DB]]
// CHECK:         ptx.inst "shfl.sync.bfly.b32"
// CHECK:         ptx.inst "shfl.sync.bfly.b32"
// CHECK:         ptx.inst "or.b64"
// CHECK-NEXT:    ptx.inst "mov.b64" %{{.*}} : (i64) -> f64
// CHECK-NEXT:    %[[B32:.*]] = ptx.inst "selp.b32" %[[ONE]], %[[C0]], %{{.*}} : (i32, i32, i1) -> i32
// CHECK:         %[[BS:.*]] = ptx.inst "shfl.sync.bfly.b32" %[[B32]]
// CHECK-NEXT:    %[[BB:.*]] = ptx.inst "setp.ne.u32" %[[BS]], %[[C0]] : (i32, i32) -> i1
// CHECK-NEXT:    %[[BBUF:.*]] = ptx.shared 64 align 16 : i32
// CHECK:         %[[BYTE:.*]] = ptx.inst "selp.b16" %{{.*}}, %{{.*}}, %[[BB]] : (i8, i8, i1) -> i8
// CHECK-NEXT:    ptx.st_shared %{{.*}}, %[[BYTE]] : i32, i8
// CHECK:         %[[RB:.*]] = ptx.ld_shared %{{.*}} : i32 -> i8
// CHECK-NEXT:    ptx.inst "setp.ne.u16" %[[RB]]
// CHECK-NEXT:    ptx.lanes %[[K]] [2] : vector<3xf32> -> f32
