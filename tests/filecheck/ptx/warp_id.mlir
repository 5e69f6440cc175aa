// simt.warp_id is %tid.x / 32 broadcast from lane 0 (shfl.sync.idx): ptxas then knows every
// lane holds the same and keeps what is computed from it in the warp's uniform registers.
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @warps(%x: !tile.ptr<i32>) attributes {simt.num_warps = 8 : i32} {
  %w = simt.warp_id : i32
  %tid = simt.thread_id : i32
  simt.store %x[%tid], %w : !tile.ptr<i32>, i32, i32
  func.return
}
// CHECK-LABEL: func.func @warps(
// CHECK:         %[[T:.*]] = ptx.sreg "%tid.x" : i32
// CHECK-NEXT:    %[[K:.*]] = ptx.mov_imm 5 : i32
// CHECK-NEXT:    %[[W:.*]] = ptx.inst "shr.u32" %[[T]], %[[K]] : (i32, i32) -> i32
// CHECK-NEXT:    %[[L:.*]] = ptx.mov_imm 0 : i32
// CHECK-NEXT:    %[[C:.*]] = ptx.mov_imm 31 : i32
// CHECK-NEXT:    %[[M:.*]] = ptx.mov_imm -1 : i32
// CHECK-NEXT:    %[[B:.*]] = ptx.inst "shfl.sync.idx.b32" %[[W]], %[[L]], %[[C]], %[[M]]
// CHECK:         ptx.st_global %{{.*}}, %[[B]]
