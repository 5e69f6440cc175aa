// simt-to-ptx of shared-memory accesses with vec: one address per access of up to 128
// bits. 8 halves or 16 bytes are 4 words (ptx.st_shared/ld_shared vec 4 of i32); a store
// of what a word load produced passes its words on, without splitting and joining them
// again. Bools split from words are zero-extended before their test (the upper byte of
// such a register holds the next lane).
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @sv(%h: !tile.ptr<f16>, %x: !tile.ptr<i8>) attributes {simt.num_warps = 1 : i32} {
  %tid = simt.thread_id : i32
  %c8 = arith.constant 8 : i32
  %t8 = arith.muli %tid, %c8 : i32
  %b8 = vector.broadcast %t8 : i32 to vector<8xi32>
  %l8 = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
  %i8 = arith.addi %b8, %l8 : vector<8xi32>
  %v = simt.load %h[%i8] {vec = 8 : i32} : !tile.ptr<f16>, vector<8xi32> -> vector<8xf16>
  %hb = simt.shared_alloc : memref<256xf16, 3 : i32>
  simt.shared_store %hb[%i8], %v {vec = 8 : i32} : memref<256xf16, 3 : i32>, vector<8xi32>, vector<8xf16>
  simt.barrier
  %w = simt.shared_load %hb[%i8] {vec = 8 : i32} : memref<256xf16, 3 : i32>, vector<8xi32> -> vector<8xf16>
  %fb = simt.shared_alloc : memref<256xf32, 3 : i32>
  %f = arith.extf %w : vector<8xf16> to vector<8xf32>
  simt.shared_store %fb[%i8], %f {vec = 4 : i32} : memref<256xf32, 3 : i32>, vector<8xi32>, vector<8xf32>
  %c16 = arith.constant 16 : i32
  %t16 = arith.muli %tid, %c16 : i32
  %b16 = vector.broadcast %t16 : i32 to vector<16xi32>
  %l16 = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xi32>
  %i16 = arith.addi %b16, %l16 : vector<16xi32>
  %bb = simt.shared_alloc : memref<512xi1, 3 : i32>
  %p = simt.shared_load %bb[%i16] {vec = 16 : i32} : memref<512xi1, 3 : i32>, vector<16xi32> -> vector<16xi1>
  %y = simt.load %x[%i16] {vec = 16 : i32} : !tile.ptr<i8>, vector<16xi32> -> vector<16xi8>
  %z = arith.addi %y, %y : vector<16xi8>
  %xb = simt.shared_alloc : memref<512xi8, 3 : i32>
  simt.shared_store %xb[%i16], %z mask %p : vector<16xi1> {vec = 16 : i32} : memref<512xi8, 3 : i32>, vector<16xi32>, vector<16xi8>
  func.return
}
// CHECK-LABEL: func.func @sv(
// CHECK:         %[[AT:.*]] = ptx.lanes %{{.*}} [0] : vector<8xi32> -> i32
// CHECK-NEXT:    %[[TWO:.*]] = ptx.mov_imm 2 : i32
// CHECK:         %[[W:.*]] = ptx.ld_global %{{.*}} {vec = 4 : i32} : i64 -> vector<4xi32>
// CHECK-NEXT:    ptx.repack %[[W]] : vector<4xi32> -> vector<8xf16>
// CHECK-NEXT:    %[[HB:.*]] = ptx.shared 512 align 16 : i32
// CHECK-NEXT:    %[[A:.*]] = ptx.inst "mad.lo.s32" %[[AT]], %[[TWO]], %[[HB]] : (i32, i32, i32) -> i32
// CHECK-NEXT:    ptx.st_shared %[[A]], %[[W]] {vec = 4 : i32} : i32, vector<4xi32>
// CHECK-NEXT:    ptx.bar
// CHECK-NEXT:    %[[A2:.*]] = ptx.inst "mad.lo.s32" %[[AT]], %[[TWO]], %[[HB]]
// CHECK-NEXT:    %[[LW:.*]] = ptx.ld_shared %[[A2]] {vec = 4 : i32} : i32 -> vector<4xi32>
// CHECK-NEXT:    %[[H:.*]] = ptx.repack %[[LW]] : vector<4xi32> -> vector<8xf16>
// CHECK:         %[[F:.*]] = ptx.inst "cvt.f32.f16" %[[H]] : (vector<8xf16>) -> vector<8xf32>
// CHECK-NEXT:    %[[FI:.*]] = ptx.lanes %{{.*}} [0, 4] : vector<8xi32> -> vector<2xi32>
// CHECK:         %[[FA:.*]] = ptx.inst "mad.lo.s32" %[[FI]], {{.*}} -> vector<2xi32>
// CHECK-NEXT:    ptx.st_shared %[[FA]], %[[F]] {vec = 4 : i32} : vector<2xi32>, vector<8xf32>
// CHECK:         ptx.ld_shared %{{.*}} {vec = 4 : i32} : i32 -> vector<4xi32>
// CHECK:         ptx.inst "shr.u16"
// CHECK:         %[[BYTES:.*]] = ptx.lanes {{.*}} -> vector<16xi8>
// CHECK-NEXT:    %[[LOW:.*]] = ptx.inst "cvt.u16.u8" %[[BYTES]] : (vector<16xi8>) -> vector<16xi8>
// CHECK-NEXT:    %[[ZERO:.*]] = ptx.mov_imm 0 : i8
// CHECK-NEXT:    %[[P:.*]] = ptx.inst "setp.ne.u16" %[[LOW]], %[[ZERO]] : (vector<16xi8>, i8) -> vector<16xi1>
// CHECK:         ptx.inst "add.s16" {{.*}} -> vector<16xi8>
// CHECK:         %[[G:.*]] = ptx.lanes %[[P]] [0] : vector<16xi1> -> i1
// CHECK:         %[[ZW:.*]] = ptx.inst "prmt.b32" {{.*}} -> vector<4xi32>
// CHECK-NEXT:    ptx.st_shared %{{.*}}, %[[ZW]] if %[[G]] : i1 {vec = 4 : i32} : i32, vector<4xi32>
