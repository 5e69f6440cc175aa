// tile.assume_facts and tile.barrier printed, re-parsed and printed again, in custom and
// generic form; assign-layouts reads the facts (vec) and tile-to-simt drops them (the value
// is the operand) and turns the barrier into simt.barrier.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: %opt %s -p assign-layouts | filecheck %s --check-prefix=VEC
// RUN: %opt %s -p assign-layouts,tile-to-simt | filecheck %s --check-prefix=SIMT

// An offset read from memory, promised a multiple of 4 (and its runs contiguous over the
// tile): the accesses through it become 128 bits wide. A pointer's divisibility is in bytes.
func.func @hinted(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %s: !tile.ptr<i32>, %q: !tile.ptr<f32>) {
  %start = tile.load %s : !tile.ptr<i32> -> i32
  %m4 = tile.assume_facts %start divisibility [4] : i32
  %r = tile.range 0, 512 : tensor<512xi32>
  %ss = tile.splat %m4 : i32 -> tensor<512xi32>
  %o = arith.addi %ss, %r : tensor<512xi32>
  %offs = tile.assume_facts %o contiguity [512] constancy [1] : tensor<512xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %offs : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %a = tile.load %xp : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %qa = tile.assume_facts %q divisibility [16] : !tile.ptr<f32>
  %qs = tile.splat %qa : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %qp = tile.addptr %qs, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  tile.barrier
  tile.store %qp, %a : tensor<512x!tile.ptr<f32>>, tensor<512xf32>
  func.return
}
// CHECK-LABEL: func.func @hinted(
// CHECK:         %m4 = tile.assume_facts %start divisibility [4] : i32
// CHECK:         %offs = tile.assume_facts %o contiguity [512] constancy [1] : tensor<512xi32>
// CHECK:         %qa = tile.assume_facts %q divisibility [16] : !tile.ptr<f32>
// CHECK:         tile.barrier
// CHECK-NEXT:    tile.store %qp, %a
// GENERIC:       "tile.assume_facts"(%{{.*}}) <{divisibility = array<i64: 4>}> : (i32) -> i32
// GENERIC:       "tile.assume_facts"(%{{.*}}) <{contiguity = array<i64: 512>, constancy = array<i64: 1>}>
// GENERIC:       "tile.barrier"() : () -> ()
// VEC-LABEL:   func.func @hinted(
// VEC:           %a = tile.load %xp {vec = 4 : i32} :
// VEC:           tile.store %qp, %a {vec = 4 : i32} :
// SIMT-LABEL:  func.func @hinted(
// SIMT-NOT:      tile.assume_facts
// SIMT:          %[[SUM:.*]] = arith.addi %start, %{{.*}} : i32
// SIMT-NEXT:     %[[SPREAD:.*]] = vector.broadcast %[[SUM]] : i32 to vector<4xi32>
// SIMT-NEXT:     %o = arith.addi %[[SPREAD]], %{{.*}} : vector<4xi32>
// SIMT-NEXT:     %a = simt.load %x[%o] {vec = 4 : i32}
// SIMT-NEXT:     simt.barrier
// SIMT-NEXT:     simt.store %q[%r], %a {vec = 4 : i32}

// Without the facts the same accesses move one element at a time.
func.func @plain(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %s: !tile.ptr<i32>, %q: !tile.ptr<f32>) {
  %start = tile.load %s : !tile.ptr<i32> -> i32
  %r = tile.range 0, 512 : tensor<512xi32>
  %ss = tile.splat %start : i32 -> tensor<512xi32>
  %o = arith.addi %ss, %r : tensor<512xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %o : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %a = tile.load %xp : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %qs = tile.splat %q : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %qp = tile.addptr %qs, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  tile.store %qp, %a : tensor<512x!tile.ptr<f32>>, tensor<512xf32>
  func.return
}
// VEC-LABEL:   func.func @plain(
// VEC:           %a = tile.load %xp {vec = 1 : i32} :
// VEC:           tile.store %qp, %a {vec = 1 : i32} :
