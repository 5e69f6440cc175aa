// simt-to-ptx of simt.wgmma's shared-memory operands: a descriptor's low word is the start
// address >> 4 (14 bits) with the leading byte offset >> 4 at bit 16, its high word the
// stride byte offset >> 4 and the 128-byte swizzle. The k steps of a dot read x, x + 16,
// x + 32 ... elements: their descriptors share x's address arithmetic and add the
// constant's 16-byte units to the low word (x + 16 f16 is 2 units, x + 512 is 64). A
// constant that is no whole number of units (x + 4: 8 bytes) is computed in full.
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
// CHECK-NEXT: %{{.*}} = ptx.inst "or.b64" %[[A0]], %[[HIGH]] : (i64, i64) -> i64
// B: leading byte offset 8192 >> 4 = 512 at bit 16, x's address not computed again
// CHECK-NEXT: %[[LBO_B:.*]] = ptx.mov_imm 33554432 : i32
// CHECK-NEXT: %[[LOW_B:.*]] = ptx.inst "or.b32" %[[START]], %[[LBO_B]] : (i32, i32) -> i32
// CHECK:      ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
// CHECK-NEXT: %[[A1:.*]] = ptx.inst "add.s32" %[[LOW_A]], %[[TWO]] : (i32, i32) -> i32
// CHECK-NEXT: %{{.*}} = ptx.inst "cvt.u64.u32" %[[A1]] : (i32) -> i64
// CHECK-NEXT: %{{.*}} = ptx.inst "or.b64"
// CHECK-NEXT: %[[UNITS:.*]] = ptx.mov_imm 64 : i32
// CHECK-NEXT: %[[B1:.*]] = ptx.inst "add.s32" %[[LOW_B]], %[[UNITS]] : (i32, i32) -> i32
// CHECK:      ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
// x + 4 is 8 bytes from x: its own address
// CHECK-NEXT: %[[ADDR4:.*]] = ptx.inst "mad.lo.s32" %{{.*}}, %{{.*}}, %[[W]] : (i32, i32, i32) -> i32
// CHECK-NEXT: ptx.inst "bfe.u32" %[[ADDR4]]
// CHECK-NOT:  ptx.inst "bfe.u32"
// CHECK:      ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"

// A read at constant indices (kept in shared memory through a loop): the buffer's own
// address gives the start field, no multiply, and index 64 (128 bytes) is 8 units more.
func.func @constant_index(%cw: vector<32xf32>) attributes {simt.num_warps = 4 : i32} {
  %w = simt.shared_alloc {align = 1024 : i32} : memref<8192xf16, 3 : i32>
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %d0 = simt.wgmma %w[%c0], %w[%c0], %cw {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xf16, 3 : i32>, memref<8192xf16, 3 : i32>, vector<32xf32>
  %d1 = simt.wgmma %w[%c64], %w[%c0], %d0 {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32} : memref<8192xf16, 3 : i32>, memref<8192xf16, 3 : i32>, vector<32xf32>
  simt.wgmma_commit
  simt.wgmma_wait 0
  func.return
}

// CHECK-LABEL: @constant_index
// CHECK:       %[[W2:.*]] = ptx.shared 16384 align 1024 : i32
// CHECK-NOT:   mad.lo.s32
// CHECK:       %[[START2:.*]] = ptx.inst "bfe.u32" %[[W2]], %{{.*}}, %{{.*}} : (i32, i32, i32) -> i32
// CHECK-NEXT:  %{{.*}} = ptx.mov_imm 65536 : i32
// CHECK-NEXT:  %[[LOW2:.*]] = ptx.inst "or.b32" %[[START2]], %{{.*}} : (i32, i32) -> i32
// CHECK:       ptx.mma
// CHECK-NOT:   bfe.u32
// CHECK:       %[[EIGHT:.*]] = ptx.mov_imm 8 : i32
// CHECK-NEXT:  ptx.inst "add.s32" %[[LOW2]], %[[EIGHT]] : (i32, i32) -> i32
// CHECK:       ptx.mma
