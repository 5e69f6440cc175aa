// pipeline-loads on loops that ask for pipelining themselves (tl.range(..., num_stages=S):
// the tile.num_stages attribute): every load of the body moves S-1 iterations ahead, not
// only a dot's operands, also where the body stores. With cp.async (cp-async=80) a row
// read whole waits in one of S-1 shared-memory stages: each iteration reads its stage,
// waits again (every thread has read it) and copies iteration i + S-1 into that same
// stage; lanes masked off get -inf back by a select. Without, the rows wait in registers.
// A plain loop (no attribute) is left alone.
// RUN: %opt %s -p 'pipeline-loads{cp-async=80 num-warps=1}' | filecheck %s
// RUN: %opt %s -p 'pipeline-loads' | filecheck %s --check-prefix=REGS
// Each thread reads its lanes of a stage as its layout has them (vectorized), and copies
// the next row into the same places:
// RUN: %opt %s -p 'pipeline-loads{cp-async=80 num-warps=1},assign-layouts{num-warps=1},tile-to-simt,canonicalize,cse' | filecheck %s --check-prefix=SIMT

// Persistent rows, Triton's fused-softmax tutorial's loop: a step known at run time.
func.func @rows(%out: !tile.ptr<f32> {tile.divisibility = 16 : i32},
                %x: !tile.ptr<f32> {tile.divisibility = 16 : i32},
                %n_rows: i32, %n_cols: i32 {tile.divisibility = 16 : i32}) {
  %pid = tile.program_id 0 : i32
  %grid = tile.num_programs 0 : i32
  %ninf = arith.constant 0xff800000 : f32
  scf.for %row = %pid to %n_rows step %grid : i32 {
    %cols = tile.range 0, 64 : tensor<64xi32>
    %start = arith.muli %row, %n_cols : i32
    %base = tile.addptr %x, %start : !tile.ptr<f32>, i32
    %bases = tile.splat %base : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
    %ptrs = tile.addptr %bases, %cols : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    %n = tile.splat %n_cols : i32 -> tensor<64xi32>
    %in = tile.cmpi "slt", %cols, %n : tensor<64xi32> -> tensor<64xi1>
    %other = tile.splat %ninf : f32 -> tensor<64xf32>
    %v = tile.load %ptrs mask %in : tensor<64xi1> other %other : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
    %e = math.exp %v : tensor<64xf32>
    %obase = tile.addptr %out, %start : !tile.ptr<f32>, i32
    %obases = tile.splat %obase : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
    %optrs = tile.addptr %obases, %cols : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    tile.store %optrs, %e mask %in : tensor<64xi1> : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  } {tile.num_stages = 3 : i32}
  func.return
}
// Two stages of one 64-element row; the prologue copies iterations 0 and 1, the second
// live where pid < n_rows, grid < n_rows - pid and grid is small enough for 1 * grid not
// to wrap:
// CHECK-LABEL: func.func @rows(
// CHECK:         %[[BUF:.*]] = tile.shared_alloc : memref<2x1x64xf32, 3 : i32>
// CHECK:         %[[FIRST:.*]] = tile.cmpi "slt", %pid, %n_rows : i32 -> i1
// CHECK:         tile.async_copy %{{.*}}, %[[BUF]][%{{.*}}] mask
// CHECK-NEXT:    tile.async_commit
// CHECK:         %[[LEFT1:.*]] = arith.subi %n_rows, %pid : i32
// CHECK-NEXT:    %[[C1:.*]] = tile.cmpi "ult", %grid, %[[LEFT1]] : i32 -> i1
// CHECK-NEXT:    %[[MAX1:.*]] = arith.constant 2147483647 : i32
// CHECK-NEXT:    %[[SMALL1:.*]] = tile.cmpi "ule", %grid, %[[MAX1]] : i32 -> i1
// CHECK-NEXT:    %[[LIVE1:.*]] = arith.andi %[[C1]], %[[SMALL1]] : i1
// CHECK-NEXT:    arith.andi %[[FIRST]], %[[LIVE1]] : i1
// CHECK:         tile.async_copy %{{.*}}, %[[BUF]][%{{.*}}] mask
// CHECK-NEXT:    tile.async_commit
// The loop carries the stage it reads; it refills that stage with iteration row + 2*grid
// once every thread has read it:
// CHECK:         %[[S:.*]] = scf.for %row = %pid to %n_rows step %grid iter_args(%[[STAGE:.*]] = %{{.*}}) -> (i32) : i32 {
// CHECK-NEXT:      tile.async_wait 1
// CHECK-NEXT:      %[[READ:.*]] = tile.shared_read %[[BUF]][%[[STAGE]]] : memref<2x1x64xf32, 3 : i32> -> tensor<64xf32>
// CHECK:           %[[TWO:.*]] = arith.muli %grid, %{{.*}} : i32
// CHECK-NEXT:      tile.cmpi "ult", %[[TWO]], %{{.*}} : i32 -> i1
// CHECK-NEXT:      %{{.*}} = arith.constant 1073741823 : i32
// CHECK:           tile.async_wait 1
// CHECK:           tile.async_copy %{{.*}}, %[[BUF]][%[[STAGE]]] mask
// CHECK-NEXT:      tile.async_commit
// CHECK:           %[[IN:.*]] = tile.cmpi "slt", %cols{{.*}}, %n
// CHECK:           %[[V:.*]] = tile.select %[[IN]], %[[READ]], %other
// CHECK-NEXT:      %e = math.exp %[[V]]
// CHECK:           tile.store %optrs, %e mask %[[IN]]
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.async_wait 0
// SIMT-LABEL: func.func @rows(
// SIMT:         %[[BUF:.*]] = simt.shared_alloc : memref<128xf32, 3 : i32>
// SIMT:         simt.cp_async %x[%{{.*}}] to %[[BUF]][%{{.*}}] mask %{{.*}} : vector<2xi1> {vec = 2 : i32}
// SIMT:         scf.for
// SIMT-NEXT:      simt.cp_async_wait 1
// SIMT-NEXT:      simt.barrier
// SIMT:           simt.shared_load %[[BUF]][%[[AT:.*]]] {vec = 2 : i32}
// SIMT:           simt.cp_async_wait 1
// SIMT-NEXT:      simt.barrier
// SIMT:           simt.cp_async %x[%{{.*}}] to %[[BUF]][%[[AT]]] mask %{{.*}} : vector<2xi1> {vec = 2 : i32}
// SIMT-NEXT:      simt.cp_async_commit
// REGS-LABEL: func.func @rows(
// REGS:         %[[V0:.*]] = tile.load %{{.*}} mask %{{.*}} other %{{.*}}
// REGS:         %[[V1:.*]] = tile.load %{{.*}} mask %{{.*}} other %{{.*}}
// REGS-NEXT:    scf.for %row = %pid to %n_rows step %grid iter_args(%v = %[[V0]], %[[Q:.*]] = %[[V1]]) -> (tensor<64xf32>, tensor<64xf32>) : i32 {
// REGS:           %[[VN:.*]] = tile.load
// REGS:           %e = math.exp %v
// REGS:           tile.store %optrs, %e
// REGS-NEXT:      scf.yield %[[Q]], %[[VN]]

// The same body in a plain loop, and in an asking loop a load after a store of its own
// iteration (prefetched, it would no longer see that store): both left alone.
func.func @left_alone(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n_rows: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  scf.for %row = %c0 to %n_rows step %c1 : i32 {
    %cols = tile.range 0, 64 : tensor<64xi32>
    %start = arith.muli %row, %c64 : i32
    %base = tile.addptr %x, %start : !tile.ptr<f32>, i32
    %bases = tile.splat %base : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
    %ptrs = tile.addptr %bases, %cols : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    %v = tile.load %ptrs : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
    %e = math.exp %v : tensor<64xf32>
    tile.store %ptrs, %e : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  }
  scf.for %r = %c0 to %n_rows step %c1 : i32 {
    %cs = tile.range 0, 64 : tensor<64xi32>
    %s = arith.muli %r, %c64 : i32
    %b = tile.addptr %x, %s : !tile.ptr<f32>, i32
    %bs = tile.splat %b : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
    %ps = tile.addptr %bs, %cs : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    %ss = tile.splat %s : i32 -> tensor<64xi32>
    %f = arith.sitofp %ss : tensor<64xi32> to tensor<64xf32>
    tile.store %ps, %f : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
    %u = tile.load %ps : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
    %w = math.exp %u : tensor<64xf32>
    tile.store %ps, %w : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  } {tile.num_stages = 3 : i32}
  func.return
}
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     tile.async_copy
// CHECK:         scf.for %row = %c0 to %n_rows step %c1 : i32 {
// CHECK-NEXT:      %cols = tile.range 0, 64
// CHECK:           %v = tile.load %ptrs : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
// CHECK-NOT:     tile.async_copy
// CHECK:         scf.for %r = %c0 to %n_rows step %c1 : i32 {
// CHECK:           tile.store %ps, %f
// CHECK-NEXT:      %u = tile.load %ps : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
// CHECK-NOT:     tile.async_copy
// CHECK:         func.return
// REGS-LABEL: func.func @left_alone(
// REGS:         scf.for %row = %c0 to %n_rows step %c1 : i32 {
// REGS:         scf.for %r = %c0 to %n_rows step %c1 : i32 {
