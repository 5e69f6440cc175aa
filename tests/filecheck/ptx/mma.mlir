// simt-to-ptx of the warp-level matrix ops: ldmatrix at base + offset * size gives i32
// registers that feed mma directly (the f16 unpacking into %h pairs is dead then); f16
// accumulators are packed and unpacked with ptx.repack; tf32 operands are rounded with
// cvt.rna.tf32.f32; s8 fragments are unpacked with shr.u16, and a fragment that picks
// whole words of one whose words are known (B: lanes 0-7 of an ldmatrix) takes them
// without packing again.
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @mma(%o: i32, %c: vector<4xf32>, %ch: vector<4xf16>, %ci: vector<4xi32>, %bb: vector<4xbf16>, %ab: vector<8xbf16>) attributes {simt.num_warps = 1 : i32} {
  %h = simt.shared_alloc : memref<1024xf16, 3 : i32>
  %a = simt.ldmatrix %h[%o] : memref<1024xf16, 3 : i32> -> vector<8xf16>
  %b = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<4xf16>
  %d = simt.mma "m16n8k16" %a, %b, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %dh = simt.mma "m16n8k16" %a, %b, %ch : vector<8xf16>, vector<4xf16>, vector<4xf16>
  %db = simt.mma "m16n8k16" %ab, %bb, %d : vector<8xbf16>, vector<4xbf16>, vector<4xf32>
  %f = simt.shared_alloc : memref<512xf32, 3 : i32>
  %af = simt.ldmatrix %f[%o] : memref<512xf32, 3 : i32> -> vector<4xf32>
  %bf = simt.ldmatrix %f[%o] : memref<512xf32, 3 : i32> -> vector<2xf32>
  %df = simt.mma "m16n8k8" %af, %bf, %c : vector<4xf32>, vector<2xf32>, vector<4xf32>
  %q = simt.shared_alloc : memref<2048xi8, 3 : i32>
  %aq = simt.ldmatrix %q[%o] : memref<2048xi8, 3 : i32> -> vector<16xi8>
  %bq = vector.shuffle %aq, %aq [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi8>, vector<16xi8>
  %di = simt.mma "m16n8k32" %aq, %bq, %ci : vector<16xi8>, vector<8xi8>, vector<4xi32>
  %b4 = simt.ldmatrix %h[%o] trans : memref<1024xf16, 3 : i32> -> vector<8xf16>
  %hi = vector.shuffle %b4, %b4 [4, 5, 6, 7] : vector<8xf16>, vector<8xf16>
  %e1 = simt.mma "m16n8k16" %a, %hi, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %mid = vector.shuffle %b4, %b4 [2, 3, 6, 7] : vector<8xf16>, vector<8xf16>
  %e2 = simt.mma "m16n8k16" %a, %mid, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  %odd = vector.shuffle %b4, %b4 [1, 2, 3, 4] : vector<8xf16>, vector<8xf16>
  %e3 = simt.mma "m16n8k16" %a, %odd, %c : vector<8xf16>, vector<4xf16>, vector<4xf32>
  func.return
}

// CHECK:      %[[O:.*]] = ptx.ld_param %o : i32 -> i32
// CHECK-NEXT: %[[C:.*]] = ptx.ld_param %c
// CHECK-NEXT: %[[CH0:.*]] = ptx.ld_param %ch
// CHECK-NEXT: %[[CI:.*]] = ptx.ld_param %ci
// CHECK-NEXT: %[[BB0:.*]] = ptx.ld_param %bb
// CHECK-NEXT: %[[AB0:.*]] = ptx.ld_param %ab
// CHECK-NEXT: %[[H:.*]] = ptx.shared 2048 align 16 : i32
// CHECK-NEXT: %[[TWO:.*]] = ptx.mov_imm 2 : i32
// CHECK-NEXT: %[[AA:.*]] = ptx.inst "mad.lo.s32" %[[O]], %[[TWO]], %[[H]] : (i32, i32, i32) -> i32
// CHECK-NEXT: %[[A:.*]] = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x4.shared.b16" %[[AA]] : vector<4xi32>
// CHECK-NEXT: %{{.*}} = ptx.repack %[[A]] : vector<4xi32> -> vector<8xf16>
// CHECK:      %[[B:.*]] = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" %{{.*}} : vector<2xi32>
// CHECK-NEXT: %{{.*}} = ptx.repack %[[B]] : vector<2xi32> -> vector<4xf16>
// CHECK-NEXT: %[[D:.*]] = ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %[[A]], %[[B]], %[[C]] : vector<4xi32>, vector<2xi32>, vector<4xf32>
// CHECK-NEXT: %[[CH:.*]] = ptx.repack %[[CH0]] : vector<4xf16> -> vector<2xi32>
// CHECK-NEXT: %[[DH:.*]] = ptx.mma "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16" %[[A]], %[[B]], %[[CH]] : vector<4xi32>, vector<2xi32>, vector<2xi32>
// CHECK-NEXT: %{{.*}} = ptx.repack %[[DH]] : vector<2xi32> -> vector<4xf16>
// CHECK-NEXT: %[[AB:.*]] = ptx.repack %[[AB0]] : vector<8xbf16> -> vector<4xi32>
// CHECK-NEXT: %[[BB:.*]] = ptx.repack %[[BB0]] : vector<4xbf16> -> vector<2xi32>
// CHECK-NEXT: %{{.*}} = ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" %[[AB]], %[[BB]], %[[D]] : vector<4xi32>, vector<2xi32>, vector<4xf32>
// CHECK:      %[[FW:.*]] = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x4.shared.b16" %{{.*}} : vector<4xi32>
// CHECK-NEXT: %[[AF:.*]] = ptx.inst "mov.b32" %[[FW]] : (vector<4xi32>) -> vector<4xf32>
// CHECK:      ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x2.shared.b16"
// CHECK:      %[[TA:.*]] = ptx.inst "cvt.rna.tf32.f32" %[[AF]] : (vector<4xf32>) -> vector<4xi32>
// CHECK-NEXT: %[[TB:.*]] = ptx.inst "cvt.rna.tf32.f32" %{{.*}} : (vector<2xf32>) -> vector<2xi32>
// CHECK-NEXT: ptx.mma "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" %[[TA]], %[[TB]], %[[C]] : vector<4xi32>, vector<2xi32>, vector<4xf32>
// CHECK:      %[[QW:.*]] = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x4.shared.b16" %{{.*}} : vector<4xi32>
// CHECK-NEXT: %[[QH:.*]] = ptx.repack %[[QW]] : vector<4xi32> -> vector<8xi8>
// CHECK:      %{{.*}} = ptx.inst "shr.u16" %[[QH]], %{{.*}} : (vector<8xi8>, i32) -> vector<8xi8>
// CHECK-NOT:  ptx.inst "prmt.b32"
// CHECK:      %[[BW:.*]] = ptx.lanes %[[QW]] [0, 1] : vector<4xi32> -> vector<2xi32>
// CHECK-NEXT: ptx.mma "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" %[[QW]], %[[BW]], %[[CI]] : vector<4xi32>, vector<2xi32>, vector<4xi32>
// CHECK:      %[[B4:.*]] = ptx.ldmatrix "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" %{{.*}} : vector<4xi32>
// CHECK:      %[[HI:.*]] = ptx.lanes %[[B4]] [2, 3] : vector<4xi32> -> vector<2xi32>
// CHECK-NEXT: ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %[[A]], %[[HI]], %[[C]]
// CHECK:      %[[MID:.*]] = ptx.lanes %[[B4]] [1, 3] : vector<4xi32> -> vector<2xi32>
// CHECK-NEXT: ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %[[A]], %[[MID]], %[[C]]
// CHECK:      %[[ODD:.*]] = ptx.repack %{{.*}} : vector<4xf16> -> vector<2xi32>
// CHECK-NEXT: ptx.mma "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" %[[A]], %[[ODD]], %[[C]]
