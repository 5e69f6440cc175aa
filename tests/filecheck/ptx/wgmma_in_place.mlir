// simt-to-ptx of a running-on wgmma whose C is the loop's accumulator scaled
// (attention's acc * alpha): the product is written over the accumulator's registers
// (`into = 0`), so the wgmma, in place, writes them too and the loop's yield assigns them
// to themselves (no mov that would wait for the wgmma). A product that is no in-place
// wgmma's C keeps registers of its own.
// RUN: %opt %s -p simt-to-ptx | filecheck %s
// RUN: %opt %s -p simt-to-ptx | %opt --print-op-generic | %opt | filecheck %s

func.func @scaled(%x: i32, %n: i32, %alpha: vector<32xf32>) attributes {simt.num_warps = 4 : i32} {
  %w = simt.shared_alloc {align = 1024 : i32} : memref<8192xf16, 3 : i32>
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (vector<32xf32>) : i32 {
    simt.wgmma_wait 0
    %scaled = arith.mulf %acc, %alpha : vector<32xf32>
    %d = simt.wgmma %w[%x], %w[%x], %scaled {a_sbo = 1024 : i32, b_lbo = 8192 : i32, b_sbo = 1024 : i32, in_place} : memref<8192xf16, 3 : i32>, memref<8192xf16, 3 : i32>, vector<32xf32>
    simt.wgmma_commit
    simt.wgmma_wait 1
    scf.yield %d : vector<32xf32>
  }
  simt.wgmma_wait 0
  %other = arith.mulf %out, %alpha : vector<32xf32>
  func.return
}

// CHECK:      %[[ACC:.*]] = ptx.reg : vector<32xf32>
// CHECK:      ptx.label "$L__for1"
// CHECK:      %[[SCALED:.*]] = ptx.inst "mul.rn.f32" %[[ACC]], %{{.*}} {into = 0 : i32} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:      %[[D:.*]] = ptx.mma "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" %{{.*}}, %{{.*}}, %[[SCALED]] {in_place} :
// CHECK:      ptx.assign %[[ACC]], %[[D]] : vector<32xf32>, vector<32xf32>
// CHECK:      ptx.label "$L__for1_end"
// CHECK:      ptx.inst "mul.rn.f32" %[[ACC]], %{{.*}} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
