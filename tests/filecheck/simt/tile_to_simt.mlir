// tile-to-simt: per-thread vectors, thread-id arithmetic for ranges (a splat plus a
// range: the scalars added first, the constant lanes last), a mask whose lanes agree in
// runs of 4 compared once a run, pointers traced to
// (kernel argument, i32 index). The output must survive canonicalize and cse.
// RUN: %opt %s -p assign-layouts,tile-to-simt,canonicalize,cse | filecheck %s
// RUN: %opt %s -p 'assign-layouts{num-warps=2},tile-to-simt' | filecheck %s --check-prefix=W2

func.func @add(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) {
  %pid = tile.program_id 0 : i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = tile.range 0, 1024 : tensor<1024xi32>
  %ss = tile.splat %s : i32 -> tensor<1024xi32>
  %offs = arith.addi %ss, %r : tensor<1024xi32>
  %ns = tile.splat %n : i32 -> tensor<1024xi32>
  %m = tile.cmpi "slt", %offs, %ns : tensor<1024xi32> -> tensor<1024xi1>
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>>
  %yp = tile.addptr %ys, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %a = tile.load %xp mask %m : tensor<1024xi1> other %zero : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %b = tile.load %yp mask %m : tensor<1024xi1> other %zero : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %e = arith.addf %a, %b : tensor<1024xf32>
  %q = math.exp %e : tensor<1024xf32>
  %sel = tile.select %m, %q, %e : tensor<1024xi1>, tensor<1024xf32>
  %os = tile.splat %o : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>>
  %op = tile.addptr %os, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  tile.store %op, %sel mask %m : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  func.return
}
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    attributes {simt.num_warps = 4 : i32} {
// CHECK-NEXT:    %[[TID:.*]] = simt.thread_id : i32
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : i32
// CHECK-NEXT:    %[[T4:.*]] = arith.muli %[[TID]], %[[C4]] : i32
// CHECK-NEXT:    %pid = tile.program_id 0 : i32
// CHECK-NEXT:    %c = arith.constant 1024 : i32
// CHECK-NEXT:    %s = arith.muli %pid, %c : i32
// CHECK-NEXT:    %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3, 512, 513, 514, 515]> : vector<8xi32>
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %s, %[[T4]] : i32
// CHECK-NEXT:    %[[SPREAD:.*]] = vector.broadcast %[[SUM]] : i32 to vector<8xi32>
// CHECK-NEXT:    %offs = arith.addi %[[SPREAD]], %[[LANES]] : vector<8xi32>
// CHECK-NEXT:    %ns = vector.broadcast %n : i32 to vector<8xi32>
// CHECK-NEXT:    %[[FIRSTS:.*]] = vector.shuffle %offs, %offs [0, 4] : vector<8xi32>, vector<8xi32>
// CHECK-NEXT:    %[[NS:.*]] = vector.shuffle %ns, %ns [0, 4] : vector<8xi32>, vector<8xi32>
// CHECK-NEXT:    %[[RUNS:.*]] = tile.cmpi "slt", %[[FIRSTS]], %[[NS]] : vector<2xi32> -> vector<2xi1>
// CHECK-NEXT:    %m = vector.shuffle %[[RUNS]], %[[RUNS]] [0, 0, 0, 0, 1, 1, 1, 1] : vector<2xi1>, vector<2xi1>
// CHECK-NEXT:    %zero = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NEXT:    %a = simt.load %x[%offs] mask %m : vector<8xi1> other %zero {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
// CHECK-NEXT:    %b = simt.load %y[%offs] mask %m : vector<8xi1> other %zero {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
// CHECK-NEXT:    %e = arith.addf %a, %b : vector<8xf32>
// CHECK-NEXT:    %q = math.exp %e : vector<8xf32>
// CHECK-NEXT:    %sel = tile.select %m, %q, %e : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    simt.store %o[%offs], %sel mask %m : vector<8xi1> {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>
// CHECK-NEXT:    func.return
// W2-LABEL:    func.func @add(
// W2:            %[[T:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// W2:            %[[TB:.*]] = vector.broadcast %[[T]] : i32 to vector<16xi32>
// W2-NEXT:       arith.constant dense<[0, 1, 2, 3, 256, 257, 258, 259, 512, 513, 514, 515, 768, 769, 770, 771]> : vector<16xi32>

// 64 elements over 128 threads: thread t holds element t mod 64 (threads repeat), and
// threads 0..63 store them. Scalar accesses keep scalar indices (thread 0 stores); an i64
// offset becomes an i32 index.
func.func @small(%x: !tile.ptr<f32>, %i: i64) {
  %r = tile.range 16, 80 : tensor<64xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %a = tile.load %xp : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %xi = tile.addptr %x, %i : !tile.ptr<f32>, i64
  %v = tile.load %xi : !tile.ptr<f32> -> f32
  %vs = tile.splat %v : f32 -> tensor<64xf32>
  %s = arith.addf %a, %vs : tensor<64xf32>
  tile.store %xp, %s : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  tile.store %x, %v : !tile.ptr<f32>, f32
  func.return
}
// CHECK-LABEL: func.func @small(
// CHECK-NEXT:    %[[TID:.*]] = simt.thread_id : i32
// CHECK-NEXT:    %[[C63:.*]] = arith.constant 63 : i32
// CHECK-NEXT:    %[[T:.*]] = arith.andi %[[TID]], %[[C63]] : i32
// CHECK-NEXT:    %[[TB:.*]] = vector.broadcast %[[T]] : i32 to vector<1xi32>
// CHECK-NEXT:    %[[START:.*]] = arith.constant dense<16> : vector<1xi32>
// CHECK-NEXT:    %r = arith.addi %[[TB]], %[[START]] : vector<1xi32>
// CHECK-NEXT:    %a = simt.load %x[%r] {vec = 1 : i32} : !tile.ptr<f32>, vector<1xi32> -> vector<1xf32>
// CHECK-NEXT:    %[[I:.*]] = arith.trunci %i : i64 to i32
// CHECK-NEXT:    %v = simt.load %x[%[[I]]] {vec = 1 : i32} : !tile.ptr<f32>, i32 -> f32
// CHECK-NEXT:    %vs = vector.broadcast %v : f32 to vector<1xf32>
// CHECK-NEXT:    %s = arith.addf %a, %vs : vector<1xf32>
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : i32
// CHECK-NEXT:    %[[REP:.*]] = arith.andi %[[TID]], %[[C64]] : i32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    %[[FIRST:.*]] = tile.cmpi "eq", %[[REP]], %[[ZERO]] : i32 -> i1
// CHECK-NEXT:    %[[OWN:.*]] = vector.broadcast %[[FIRST]] : i1 to vector<1xi1>
// CHECK-NEXT:    simt.store %x[%r], %s mask %[[OWN]] : vector<1xi1> {vec = 1 : i32} : !tile.ptr<f32>, vector<1xi32>, vector<1xf32>
// CHECK-NEXT:    %[[C127:.*]] = arith.constant 127 : i32
// CHECK-NEXT:    %[[T0:.*]] = arith.andi %[[TID]], %[[C127]] : i32
// CHECK-NEXT:    %[[ONE:.*]] = tile.cmpi "eq", %[[T0]], %[[ZERO]] : i32 -> i1
// CHECK-NEXT:    simt.store %x[%[[ZERO]]], %v mask %[[ONE]] : i1 {vec = 1 : i32} : !tile.ptr<f32>, i32, f32
// 64 threads: no repetition, so no mask on the thread id.
// W2-LABEL:    func.func @small(
// W2-NEXT:       %[[TID:.*]] = simt.thread_id : i32
// W2-NEXT:       %{{.*}} = vector.broadcast %[[TID]] : i32 to vector<1xi32>

// 4096 f16 over 128 threads: 8 at a time (128 bits), wrapping around 4 times.
func.func @wide(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 4096 : tensor<4096xi32>
  %xs = tile.splat %x : !tile.ptr<f16> -> tensor<4096x!tile.ptr<f16>>
  %xp = tile.addptr %xs, %r : tensor<4096x!tile.ptr<f16>>, tensor<4096xi32>
  %a = tile.load %xp : tensor<4096x!tile.ptr<f16>> -> tensor<4096xf16>
  tile.store %xp, %a : tensor<4096x!tile.ptr<f16>>, tensor<4096xf16>
  func.return
}
// CHECK-LABEL: func.func @wide(
// CHECK:         arith.constant 8 : i32
// CHECK:         arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031, 2048, {{.*}}, 3079]> : vector<32xi32>
// CHECK:         %a = simt.load %x[%r] {vec = 8 : i32} : !tile.ptr<f16>, vector<32xi32> -> vector<32xf16>
// CHECK-NEXT:    simt.store %x[%r], %a {vec = 8 : i32} : !tile.ptr<f16>, vector<32xi32>, vector<32xf16>

// Loop-carried tiles: scf.for keeps its form on the per-thread vectors.
func.func @loop(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) {
  %r = tile.range 0, 256 : tensor<256xi32>
  %z = arith.constant dense<0.0> : tensor<256xf32>
  %lb = arith.constant 0 : i32
  %ub = arith.constant 4 : i32
  %st = arith.constant 1 : i32
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<256x!tile.ptr<f32>>
  %acc = scf.for %i = %lb to %ub step %st iter_args(%a = %z) -> (tensor<256xf32>) : i32 {
    %c = arith.constant 256 : i32
    %o = arith.muli %i, %c : i32
    %os = tile.splat %o : i32 -> tensor<256xi32>
    %offs = arith.addi %os, %r : tensor<256xi32>
    %p = tile.addptr %xs, %offs : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
    %v = tile.load %p : tensor<256x!tile.ptr<f32>> -> tensor<256xf32>
    %s = arith.addf %a, %v : tensor<256xf32>
    scf.yield %s : tensor<256xf32>
  }
  %p0 = tile.addptr %xs, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %p0, %acc : tensor<256x!tile.ptr<f32>>, tensor<256xf32>
  func.return
}
// CHECK-LABEL: func.func @loop(
// CHECK:         %z = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK:         %acc = scf.for %i = %lb to %ub step %st iter_args(%a = %z) -> (vector<2xf32>) : i32 {
// CHECK:           %v = simt.load %x[%offs] {vec = 2 : i32} : !tile.ptr<f32>, vector<2xi32> -> vector<2xf32>
// CHECK-NEXT:      %s = arith.addf %a, %v : vector<2xf32>
// CHECK-NEXT:      scf.yield %s : vector<2xf32>
// CHECK:         simt.store %x[%r], %acc {vec = 2 : i32} : !tile.ptr<f32>, vector<2xi32>, vector<2xf32>
