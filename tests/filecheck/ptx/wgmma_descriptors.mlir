// simt-to-ptx of simt.wgmma's shared-memory operands: a descriptor's low word is the start
// address >> 4 (14 bits) with the leading byte offset >> 4 at bit 16, its high word the
// stride byte offset >> 4 and the 128-byte swizzle. The k steps of a dot read x, x + 16,
// x + 32 ... elements: their descriptors are x's plus the constant's 16-byte units, one
// 64-bit add (x + 16 f16 is 2 units, x + 512 is 64). A constant that is no whole number
// of units (x + 4: 8 bytes) is computed in full.
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @k_steps(%x: i32, %cw: vector<32xf32>) attributes {simt.num_warps = 4 : i32} {
  %w = simt.shared_alloc {align = 1024 : i32} : memref<8192xf16, 3 : i32>
  %c16 = arith.constant 16 : i32
  %c512 = arith.constant 512 : i32
  %c4 = arith.constant 4 : i32
  %x16 = arith.addi %x, %c16 : i32
  %x512 = arith.addi %x, %c512 : i32
  %x4 = arith.addi %x, %c4 : i32
  %d0 = simt.wgmma %w[%x], %w[%x], %cw {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xf16, 3 : i32>, memref<8192xf16, 3 : i32>, vector<32xf32>
  %d1 = simt.wgmma %w[%x16], %w[%x512], %d0 {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xf16, 3 : i32>, memref<8192xf16, 3 : i32>, vector<32xf32>
  %d2 = simt.wgmma %w[%x4], %w[%x], %d1 {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xf16, 3 : i32>, memref<8192xf16, 3 : i32>, vector<32xf32>
  simt.wgmma_commit
  simt.wgmma_wait 0
  func.return
}

// CHECK:      %[[X:.*]] = ptx.ld_param %x : i32 -> i32
// CHECK:      %[[W:.*]] = ptx.shared 16384 align 1024 : i32
// CHECK:      %[[TWO:.*]] = ptx.mov_imm 2 : i32
// CHECK-NEXT: %[[ADDR:.*]] = ptx.inst "mad.lo.s32" %[[X]], %[[TWO]], %[[W]] : (i32, i32, i32) -> i32
// CHECK:      %[[START:.*]] = ptx.inst "bfe.u32" %[[ADDR]], %{{.*}}, %{{.*}} : (i32, i32, i32) -> i32
// A (K-major): leading byte offset 16 >> 4 = 1 at bit 16
// CHECK-NEXT: %[[LBO_A:.*]] = ptx.mov_imm 65536 : i32
// CHECK-NEXT: %[[LOW_A:.*]] = ptx.inst "or.b32" %[[START]], %[[LBO_A]] : (i32, i32) -> i32
// CHECK-NEXT: %[[A0:.*]] = ptx.inst "cvt.u64.u32" %[[LOW_A]] : (i32) -> i64
// 1 << 62 | (1024 >> 4) << 32
// CHECK-NEXT: %[[HIGH:.*]] = ptx.mov_imm 4611686293305294848 : i64
// CHECK-NEXT: %[[DESC_A:.*]] = ptx.inst "or.b64" %[[A0]], %[[HIGH]] : (i64, i64) -> i64
// B: leading byte offset 8192 >> 4 = 512 at bit 16, x's address not computed again
// CHECK-NEXT: %[[LBO_B:.*]] = ptx.mov_imm 33554432 : i32
// CHECK-NEXT: %[[LOW_B:.*]] = ptx.inst "or.b32" %[[START]], %[[LBO_B]] : (i32, i32) -> i32
// CHECK-NEXT: %[[B0:.*]] = ptx.inst "cvt.u64.u32" %[[LOW_B]] : (i32) -> i64
// CHECK-NEXT: %[[DESC_B:.*]] = ptx.inst "or.b64" %[[B0]], %[[HIGH]] : (i64, i64) -> i64
// CHECK-NEXT: ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" %[[DESC_A]], %[[DESC_B]]
// CHECK-NEXT: %[[TWO64:.*]] = ptx.mov_imm 2 : i64
// CHECK-NEXT: %[[A1:.*]] = ptx.inst "add.s64" %[[DESC_A]], %[[TWO64]] : (i64, i64) -> i64
// CHECK-NEXT: %[[UNITS:.*]] = ptx.mov_imm 64 : i64
// CHECK-NEXT: %[[B1:.*]] = ptx.inst "add.s64" %[[DESC_B]], %[[UNITS]] : (i64, i64) -> i64
// CHECK-NEXT: ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" %[[A1]], %[[B1]]
// x + 4 is 8 bytes from x: its own address
// CHECK-NEXT: %[[ADDR4:.*]] = ptx.inst "mad.lo.s32" %{{.*}}, %{{.*}}, %[[W]] : (i32, i32, i32) -> i32
// CHECK-NEXT: ptx.inst "bfe.u32" %[[ADDR4]]
// CHECK-NOT:  ptx.inst "bfe.u32"
// CHECK:      ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
