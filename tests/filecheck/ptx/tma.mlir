// Hopper's TMA in SIMT IR (the nvgpu dialect), its round trip and simt-to-ptx: a tensor
// map is a parameter after the kernel's own (ptx.tensor_map_param, carrying how the host
// makes it: triples (parameter i or -1, scale, divisor)), the barrier operations and bulk copies are
// ptx.asm templates: thread 0 initializes every barrier (then fence.mbarrier_init), a copy
// names its coordinates innermost first, a wait spins on mbarrier.try_wait.parity.
// RUN: %opt %s | %opt | filecheck %s --check-prefix=ROUND
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @copy(%a: !tile.ptr<f16>, %m: i32, %k: i32, %row: i32, %col: i32, %go: i1) attributes {simt.num_warps = 4 : i32} {
  %one = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %map = nvgpu.tensor_map %a sizes [%m, %k] strides [%k, %one] box [8, 64] swizzle 128 : !tile.ptr<f16>
  %buf = simt.shared_alloc {align = 1024 : i32} : memref<8192xf16, 3 : i32>
  %bars = simt.shared_alloc {align = 8 : i32} : memref<2xi64, 3 : i32>
  nvgpu.mbarrier_init %bars arrivals 1 : memref<2xi64, 3 : i32>
  nvgpu.mbarrier_expect %bars[%one], 1024 if %go : memref<2xi64, 3 : i32>
  nvgpu.tma_load %map[%row, %col] to %buf[%c0], %bars[%one] if %go : memref<8192xf16, 3 : i32>, memref<2xi64, 3 : i32>
  nvgpu.mbarrier_wait %bars[%one], %c0 : memref<2xi64, 3 : i32>
  nvgpu.mbarrier_inval %bars : memref<2xi64, 3 : i32>
  func.return
}
// ROUND: %map = nvgpu.tensor_map %a sizes[%m, %k] strides[%k, %one] box [8, 64] swizzle 128 : !tile.ptr<f16>
// ROUND: nvgpu.tma_load %map[%row, %col] to %{{.*}}[%c0], %{{.*}}[%one] if %go
// ROUND: nvgpu.mbarrier_wait %{{.*}}[%one], %c0

// CHECK: %[[MAP:.*]] = ptx.tensor_map_param 0 {base = 0 : i32, dtype = "f16", swizzle = 128 : i32, sizes = array<i64: 1, 1, 1, 2, 1, 1>, strides = array<i64: 2, 1, 1, -1, 1, 1>, box = array<i64: 8, 64>}
// CHECK: ptx.asm "setp.eq.u32 {p}, {0}, 0;@{p} mbarrier.init.shared::cta.b64 [{1}+0], 1;@{p} mbarrier.init.shared::cta.b64 [{1}+8], 1;"
// CHECK-NEXT: ptx.plain "fence.mbarrier_init.release.cluster"
// CHECK: ptx.asm "@{0} mbarrier.arrive.expect_tx.shared::cta.b64 _, [{1}], 1024"
// CHECK: ptx.asm "@{0} cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{1}], [{2}, {{[{]}}{4}, {5}{{[}]}}], [{3}]" %{{.*}}, %{{.*}}, %[[MAP]], %{{.*}}, %[[COL:.*]], %[[ROW:.*]] :
// CHECK: ptx.asm "{label}:;mbarrier.try_wait.parity.shared::cta.b64 {p}, [{0}], {1};@!{p} bra {label}"
// CHECK: ptx.asm "setp.eq.u32 {p}, {0}, 0;@{p} mbarrier.inval.shared::cta.b64 [{1}+0];@{p} mbarrier.inval.shared::cta.b64 [{1}+8];"

// A TMA store: a bulk copy of the buffer from shared memory to the box (coordinates
// innermost first), in the thread's bulk group, which the wait closes and waits on until
// the copies have read the buffer.
func.func @store(%c: !tile.ptr<f16>, %m: i32, %n: i32, %row: i32, %col: i32, %go: i1) attributes {simt.num_warps = 4 : i32} {
  %one = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %map = nvgpu.tensor_map %c sizes [%m, %n] strides [%n, %one] box [64, 64] swizzle 128 : !tile.ptr<f16>
  %buf = simt.shared_alloc {align = 1024 : i32} : memref<4096xf16, 3 : i32>
  nvgpu.tma_store %buf[%c0] to %map[%row, %col] if %go : memref<4096xf16, 3 : i32>
  nvgpu.tma_store_wait if %go
  func.return
}
// ROUND: nvgpu.tma_store %{{.*}}[%c0] to %map[%row, %col] if %go : memref<4096xf16, 3 : i32>
// ROUND: nvgpu.tma_store_wait if %go

// CHECK-LABEL: @store
// CHECK: %[[MAP:.*]] = ptx.tensor_map_param 0 {base = 0 : i32, dtype = "f16", swizzle = 128 : i32
// CHECK: ptx.asm "@{0} cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [{2}, {{[{]}}{3}, {4}{{[}]}}], [{1}]" %{{.*}}, %{{.*}}, %[[MAP]], %[[COL:.*]], %[[ROW:.*]] :
// CHECK: ptx.asm "@{0} cp.async.bulk.commit_group;@{0} cp.async.bulk.wait_group.read 0"
