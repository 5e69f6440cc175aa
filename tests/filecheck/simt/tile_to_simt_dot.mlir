// tile-to-simt of tile.dot (the FMA path): the result and accumulator take a blocked
// layout of 2-D per-thread blocks; a and b keep their load layouts and go through shared
// memory (a transposed, k-major, rows padded); one scf.for over k reads a thread's rows
// of A and columns of B, spreads them with vector.shuffle and accumulates with one fma.
// B keeps its rows contiguous, so a thread's runs of columns are stored and read as one
// access each (vec); A^T's padded rows are not aligned, so A moves lane by lane.
// RUN: %opt %s -p assign-layouts | filecheck %s --check-prefix=LAYOUT
// RUN: %opt %s -p assign-layouts,tile-to-simt,canonicalize,cse | filecheck %s

func.func @f32(%a: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  %k = arith.constant 16 : i32
  %n = arith.constant 64 : i32
  %ao_r = tile.range 0, 32 : tensor<32xi32>
  %ao_c = tile.range 0, 16 : tensor<16xi32>
  %ao_re = tile.expand_dims %ao_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
  %ao_s = tile.splat %k : i32 -> tensor<32x1xi32>
  %ao_rs = arith.muli %ao_re, %ao_s : tensor<32x1xi32>
  %ao_ce = tile.expand_dims %ao_c, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %ao_rb = tile.broadcast %ao_rs : tensor<32x1xi32> -> tensor<32x16xi32>
  %ao_cb = tile.broadcast %ao_ce : tensor<1x16xi32> -> tensor<32x16xi32>
  %ao = arith.addi %ao_rb, %ao_cb : tensor<32x16xi32>
  %bo_r = tile.range 0, 16 : tensor<16xi32>
  %bo_c = tile.range 0, 64 : tensor<64xi32>
  %bo_re = tile.expand_dims %bo_r, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %bo_s = tile.splat %n : i32 -> tensor<16x1xi32>
  %bo_rs = arith.muli %bo_re, %bo_s : tensor<16x1xi32>
  %bo_ce = tile.expand_dims %bo_c, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %bo_rb = tile.broadcast %bo_rs : tensor<16x1xi32> -> tensor<16x64xi32>
  %bo_cb = tile.broadcast %bo_ce : tensor<1x64xi32> -> tensor<16x64xi32>
  %bo = arith.addi %bo_rb, %bo_cb : tensor<16x64xi32>
  %oo_r = tile.range 0, 32 : tensor<32xi32>
  %oo_c = tile.range 0, 64 : tensor<64xi32>
  %oo_re = tile.expand_dims %oo_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
  %oo_s = tile.splat %n : i32 -> tensor<32x1xi32>
  %oo_rs = arith.muli %oo_re, %oo_s : tensor<32x1xi32>
  %oo_ce = tile.expand_dims %oo_c, 0 : tensor<64xi32> -> tensor<1x64xi32>
  %oo_rb = tile.broadcast %oo_rs : tensor<32x1xi32> -> tensor<32x64xi32>
  %oo_cb = tile.broadcast %oo_ce : tensor<1x64xi32> -> tensor<32x64xi32>
  %oo = arith.addi %oo_rb, %oo_cb : tensor<32x64xi32>
  %a_s = tile.splat %a : !tile.ptr<f32> -> tensor<32x16x!tile.ptr<f32>>
  %a_p = tile.addptr %a_s, %ao : tensor<32x16x!tile.ptr<f32>>, tensor<32x16xi32>
  %a_v = tile.load %a_p : tensor<32x16x!tile.ptr<f32>> -> tensor<32x16xf32>
  %b_s = tile.splat %b : !tile.ptr<f32> -> tensor<16x64x!tile.ptr<f32>>
  %b_p = tile.addptr %b_s, %bo : tensor<16x64x!tile.ptr<f32>>, tensor<16x64xi32>
  %b_v = tile.load %b_p : tensor<16x64x!tile.ptr<f32>> -> tensor<16x64xf32>
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> tensor<32x64xf32>
  %d = tile.dot %a_v, %b_v, %init precision "ieee" : tensor<32x16xf32>, tensor<16x64xf32> -> tensor<32x64xf32>
  %o_s = tile.splat %o : !tile.ptr<f32> -> tensor<32x64x!tile.ptr<f32>>
  %o_p = tile.addptr %o_s, %oo : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xi32>
  tile.store %o_p, %d : tensor<32x64x!tile.ptr<f32>>, tensor<32x64xf32>
  func.return
}
// LAYOUT-LABEL: func.func @f32(
// LAYOUT:         %d = tile.dot %a_v, %b_v, %init precision "ieee" : tensor<32x16xf32, #tile.blocked<spt = [1, 4], tpw = [8, 4], wpc = [4, 1]>>, tensor<16x64xf32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>> -> tensor<32x64xf32, #tile.blocked<spt = [4, 4], tpw = [4, 8], wpc = [2, 2]>>
// LAYOUT:         tile.store %o_p, %d {vec = 4 : i32}
// LAYOUT-NOT:     tile.convert_layout

// CHECK-LABEL: func.func @f32(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<1552xi32, 3 : i32>
// CHECK:         %[[A:.*]] = arith.bitcast %a_v : vector<4xf32> to vector<4xi32>
// CHECK:         %[[B:.*]] = arith.bitcast %b_v : vector<8xf32> to vector<8xi32>
// CHECK:         simt.shared_store %[[BUF]][%{{.*}}], %[[A]] : memref<1552xi32, 3 : i32>, vector<4xi32>, vector<4xi32>
// CHECK:         simt.shared_store %[[BUF]][%{{.*}}], %[[B]] {vec = 4 : i32} : memref<1552xi32, 3 : i32>, vector<8xi32>, vector<8xi32>
// CHECK-NEXT:    simt.barrier
// CHECK:         %d = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %init) -> (vector<16xf32>) : i32 {
// CHECK:           %[[AV:.*]] = simt.shared_load %[[BUF]][%{{.*}}] : memref<1552xi32, 3 : i32>, vector<4xi32> -> vector<4xi32>
// CHECK:           %[[AF:.*]] = arith.bitcast %[[AV]] : vector<4xi32> to vector<4xf32>
// CHECK:           %[[AS:.*]] = vector.shuffle %[[AF]], %[[AF]] [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
// CHECK:           %[[BV:.*]] = simt.shared_load %[[BUF]][%{{.*}}] {vec = 4 : i32} : memref<1552xi32, 3 : i32>, vector<4xi32> -> vector<4xi32>
// CHECK:           %[[BF:.*]] = arith.bitcast %[[BV]] : vector<4xi32> to vector<4xf32>
// CHECK:           %[[BS:.*]] = vector.shuffle %[[BF]], %[[BF]] [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
// CHECK:           %[[F:.*]] = math.fma %[[AS]], %[[BS]], %[[ACC]] : vector<16xf32>
// CHECK-NEXT:      scf.yield %[[F]] : vector<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    simt.barrier
// CHECK:         simt.store %o[%{{.*}}], %d {vec = 4 : i32} : !tile.ptr<f32>, vector<16xi32>, vector<16xf32>

func.func @i8(%a: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %b: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %o: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %c: !tile.ptr<i32> {tile.divisibility = 16 : i32}) {
  %k = arith.constant 32 : i32
  %n = arith.constant 16 : i32
  %ao_r = tile.range 0, 16 : tensor<16xi32>
  %ao_c = tile.range 0, 32 : tensor<32xi32>
  %ao_re = tile.expand_dims %ao_r, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %ao_s = tile.splat %k : i32 -> tensor<16x1xi32>
  %ao_rs = arith.muli %ao_re, %ao_s : tensor<16x1xi32>
  %ao_ce = tile.expand_dims %ao_c, 0 : tensor<32xi32> -> tensor<1x32xi32>
  %ao_rb = tile.broadcast %ao_rs : tensor<16x1xi32> -> tensor<16x32xi32>
  %ao_cb = tile.broadcast %ao_ce : tensor<1x32xi32> -> tensor<16x32xi32>
  %ao = arith.addi %ao_rb, %ao_cb : tensor<16x32xi32>
  %bo_r = tile.range 0, 32 : tensor<32xi32>
  %bo_c = tile.range 0, 16 : tensor<16xi32>
  %bo_re = tile.expand_dims %bo_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
  %bo_s = tile.splat %n : i32 -> tensor<32x1xi32>
  %bo_rs = arith.muli %bo_re, %bo_s : tensor<32x1xi32>
  %bo_ce = tile.expand_dims %bo_c, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %bo_rb = tile.broadcast %bo_rs : tensor<32x1xi32> -> tensor<32x16xi32>
  %bo_cb = tile.broadcast %bo_ce : tensor<1x16xi32> -> tensor<32x16xi32>
  %bo = arith.addi %bo_rb, %bo_cb : tensor<32x16xi32>
  %oo_r = tile.range 0, 16 : tensor<16xi32>
  %oo_c = tile.range 0, 16 : tensor<16xi32>
  %oo_re = tile.expand_dims %oo_r, 1 : tensor<16xi32> -> tensor<16x1xi32>
  %oo_s = tile.splat %n : i32 -> tensor<16x1xi32>
  %oo_rs = arith.muli %oo_re, %oo_s : tensor<16x1xi32>
  %oo_ce = tile.expand_dims %oo_c, 0 : tensor<16xi32> -> tensor<1x16xi32>
  %oo_rb = tile.broadcast %oo_rs : tensor<16x1xi32> -> tensor<16x16xi32>
  %oo_cb = tile.broadcast %oo_ce : tensor<1x16xi32> -> tensor<16x16xi32>
  %oo = arith.addi %oo_rb, %oo_cb : tensor<16x16xi32>
  %a_s = tile.splat %a : !tile.ptr<i8> -> tensor<16x32x!tile.ptr<i8>>
  %a_p = tile.addptr %a_s, %ao : tensor<16x32x!tile.ptr<i8>>, tensor<16x32xi32>
  %a_v = tile.load %a_p : tensor<16x32x!tile.ptr<i8>> -> tensor<16x32xi8>
  %b_s = tile.splat %b : !tile.ptr<i8> -> tensor<32x16x!tile.ptr<i8>>
  %b_p = tile.addptr %b_s, %bo : tensor<32x16x!tile.ptr<i8>>, tensor<32x16xi32>
  %b_v = tile.load %b_p : tensor<32x16x!tile.ptr<i8>> -> tensor<32x16xi8>
  %c_s = tile.splat %c : !tile.ptr<i32> -> tensor<16x16x!tile.ptr<i32>>
  %c_p = tile.addptr %c_s, %oo : tensor<16x16x!tile.ptr<i32>>, tensor<16x16xi32>
  %c_v = tile.load %c_p : tensor<16x16x!tile.ptr<i32>> -> tensor<16x16xi32>
  %d = tile.dot %a_v, %b_v, %c_v precision "ieee" : tensor<16x32xi8>, tensor<32x16xi8> -> tensor<16x16xi32>
  %o_s = tile.splat %o : !tile.ptr<i32> -> tensor<16x16x!tile.ptr<i32>>
  %o_p = tile.addptr %o_s, %oo : tensor<16x16x!tile.ptr<i32>>, tensor<16x16xi32>
  tile.store %o_p, %d : tensor<16x16x!tile.ptr<i32>>, tensor<16x16xi32>
  func.return
}
// The accumulator loaded from memory takes the dot layout; i8 widens to i32 before the
// trip through shared memory, and the loop multiplies and adds.
// LAYOUT-LABEL: func.func @i8(
// LAYOUT:         %c_v = tile.load %c_p {vec = 2 : i32} : {{.*}} -> tensor<16x16xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [4, 1]>>
// LAYOUT:         tile.dot {{.*}} -> tensor<16x16xi32, #tile.blocked<spt = [1, 2], tpw = [4, 8], wpc = [4, 1]>>
// CHECK-LABEL: func.func @i8(
// CHECK:         arith.extsi %a_v : vector<4xi8> to vector<4xi32>
// CHECK:         arith.extsi %b_v : vector<4xi8> to vector<4xi32>
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %c_v) -> (vector<2xi32>) : i32 {
// CHECK:           %[[P:.*]] = arith.muli %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[P]], %[[ACC]] : vector<2xi32>
// CHECK-NEXT:      scf.yield %[[S]] : vector<2xi32>

func.func @f16(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  %k = arith.constant 128 : i32
  %n = arith.constant 32 : i32
  %ao_r = tile.range 0, 64 : tensor<64xi32>
  %ao_c = tile.range 0, 128 : tensor<128xi32>
  %ao_re = tile.expand_dims %ao_r, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %ao_s = tile.splat %k : i32 -> tensor<64x1xi32>
  %ao_rs = arith.muli %ao_re, %ao_s : tensor<64x1xi32>
  %ao_ce = tile.expand_dims %ao_c, 0 : tensor<128xi32> -> tensor<1x128xi32>
  %ao_rb = tile.broadcast %ao_rs : tensor<64x1xi32> -> tensor<64x128xi32>
  %ao_cb = tile.broadcast %ao_ce : tensor<1x128xi32> -> tensor<64x128xi32>
  %ao = arith.addi %ao_rb, %ao_cb : tensor<64x128xi32>
  %bo_r = tile.range 0, 128 : tensor<128xi32>
  %bo_c = tile.range 0, 32 : tensor<32xi32>
  %bo_re = tile.expand_dims %bo_r, 1 : tensor<128xi32> -> tensor<128x1xi32>
  %bo_s = tile.splat %n : i32 -> tensor<128x1xi32>
  %bo_rs = arith.muli %bo_re, %bo_s : tensor<128x1xi32>
  %bo_ce = tile.expand_dims %bo_c, 0 : tensor<32xi32> -> tensor<1x32xi32>
  %bo_rb = tile.broadcast %bo_rs : tensor<128x1xi32> -> tensor<128x32xi32>
  %bo_cb = tile.broadcast %bo_ce : tensor<1x32xi32> -> tensor<128x32xi32>
  %bo = arith.addi %bo_rb, %bo_cb : tensor<128x32xi32>
  %oo_r = tile.range 0, 64 : tensor<64xi32>
  %oo_c = tile.range 0, 32 : tensor<32xi32>
  %oo_re = tile.expand_dims %oo_r, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %oo_s = tile.splat %n : i32 -> tensor<64x1xi32>
  %oo_rs = arith.muli %oo_re, %oo_s : tensor<64x1xi32>
  %oo_ce = tile.expand_dims %oo_c, 0 : tensor<32xi32> -> tensor<1x32xi32>
  %oo_rb = tile.broadcast %oo_rs : tensor<64x1xi32> -> tensor<64x32xi32>
  %oo_cb = tile.broadcast %oo_ce : tensor<1x32xi32> -> tensor<64x32xi32>
  %oo = arith.addi %oo_rb, %oo_cb : tensor<64x32xi32>
  %a_s = tile.splat %a : !tile.ptr<f16> -> tensor<64x128x!tile.ptr<f16>>
  %a_p = tile.addptr %a_s, %ao : tensor<64x128x!tile.ptr<f16>>, tensor<64x128xi32>
  %a_v = tile.load %a_p : tensor<64x128x!tile.ptr<f16>> -> tensor<64x128xf16>
  %b_s = tile.splat %b : !tile.ptr<f16> -> tensor<128x32x!tile.ptr<f16>>
  %b_p = tile.addptr %b_s, %bo : tensor<128x32x!tile.ptr<f16>>, tensor<128x32xi32>
  %b_v = tile.load %b_p : tensor<128x32x!tile.ptr<f16>> -> tensor<128x32xf16>
  %zero = arith.constant 0.0 : f32
  %init = tile.splat %zero : f32 -> tensor<64x32xf32>
  %d = tile.dot %a_v, %b_v, %init precision "ieee" : tensor<64x128xf16>, tensor<128x32xf16> -> tensor<64x32xf32>
  %o_s = tile.splat %o : !tile.ptr<f32> -> tensor<64x32x!tile.ptr<f32>>
  %o_p = tile.addptr %o_s, %oo : tensor<64x32x!tile.ptr<f32>>, tensor<64x32xi32>
  tile.store %o_p, %d : tensor<64x32x!tile.ptr<f32>>, tensor<64x32xf32>
  func.return
}
// f16 operands widen to f32 (as i32 bits in shared memory). A (64 x 128, rows of 65) and
// B (128 x 32) exceed one 4096-element trip: an outer loop moves 32 rows of k at a time,
// each thread storing its elements of that window (an unsigned compare of the shifted
// index).
// CHECK-LABEL: func.func @f16(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<3104xi32, 3 : i32>
// CHECK:         %[[AE:.*]] = arith.extf %a_v : vector<64xf16> to vector<64xf32>
// CHECK:         %d = scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %init) -> (vector<16xf32>) : i32 {
// CHECK:           %[[IN:.*]] = tile.cmpi "ult", %{{.*}}, %{{.*}} : vector<64xi32> -> vector<64xi1>
// CHECK:           simt.shared_store %[[BUF]][%{{.*}}], %{{.*}} mask %[[IN]] : vector<64xi1> :
// CHECK:           simt.shared_store %[[BUF]][%{{.*}}], %{{.*}} mask %{{.*}} : vector<32xi1> {vec = 4 : i32}
// CHECK:           simt.barrier
// CHECK:           %[[R:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[OUT]]) -> (vector<16xf32>) : i32 {
// CHECK:             math.fma {{.*}} : vector<16xf32>
// CHECK:           }
// CHECK-NEXT:      simt.barrier
// CHECK-NEXT:      scf.yield %[[R]] : vector<16xf32>
// CHECK-NEXT:    }
