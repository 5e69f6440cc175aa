// tile-to-simt of tile.dot on tensor cores: with assign-layouts' mma option (set by the PTX
// target) an f16 or i8 dot takes #tile.mma; a and b are staged in shared memory in their
// own type (B as K x N for 16-bit operands, read with ldmatrix trans, else as N x K; a
// thread's run along a staged row is one store, vec), and each k step, in line for a
// dot of up to 8 steps, else in one scf.for over k that carries them, updates one
// vector<4> per (m16, n8) tile of the warp with ldmatrix + mma; the 4-vectors become
// the accumulator again after it.
// RUN: %opt %s -p 'assign-layouts{mma=80}' | filecheck %s --check-prefix=LAYOUT
// RUN: %opt %s -p assign-layouts | filecheck %s --check-prefix=FMA
// RUN: %opt %s -p 'assign-layouts{mma=80},tile-to-simt,canonicalize,cse' | filecheck %s

func.func @f16(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
%k = arith.constant 32 : i32
%n = arith.constant 32 : i32
%ao_r = tile.range 0, 32 : tensor<32xi32>
%ao_c = tile.range 0, 32 : tensor<32xi32>
%ao_re = tile.expand_dims %ao_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
%ao_s = tile.splat %k : i32 -> tensor<32x1xi32>
%ao_rs = arith.muli %ao_re, %ao_s : tensor<32x1xi32>
%ao_ce = tile.expand_dims %ao_c, 0 : tensor<32xi32> -> tensor<1x32xi32>
%ao_rb = tile.broadcast %ao_rs : tensor<32x1xi32> -> tensor<32x32xi32>
%ao_cb = tile.broadcast %ao_ce : tensor<1x32xi32> -> tensor<32x32xi32>
%ao = arith.addi %ao_rb, %ao_cb : tensor<32x32xi32>
%bo_r = tile.range 0, 32 : tensor<32xi32>
%bo_c = tile.range 0, 32 : tensor<32xi32>
%bo_re = tile.expand_dims %bo_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
%bo_s = tile.splat %n : i32 -> tensor<32x1xi32>
%bo_rs = arith.muli %bo_re, %bo_s : tensor<32x1xi32>
%bo_ce = tile.expand_dims %bo_c, 0 : tensor<32xi32> -> tensor<1x32xi32>
%bo_rb = tile.broadcast %bo_rs : tensor<32x1xi32> -> tensor<32x32xi32>
%bo_cb = tile.broadcast %bo_ce : tensor<1x32xi32> -> tensor<32x32xi32>
%bo = arith.addi %bo_rb, %bo_cb : tensor<32x32xi32>
%oo_r = tile.range 0, 32 : tensor<32xi32>
%oo_c = tile.range 0, 32 : tensor<32xi32>
%oo_re = tile.expand_dims %oo_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
%oo_s = tile.splat %n : i32 -> tensor<32x1xi32>
%oo_rs = arith.muli %oo_re, %oo_s : tensor<32x1xi32>
%oo_ce = tile.expand_dims %oo_c, 0 : tensor<32xi32> -> tensor<1x32xi32>
%oo_rb = tile.broadcast %oo_rs : tensor<32x1xi32> -> tensor<32x32xi32>
%oo_cb = tile.broadcast %oo_ce : tensor<1x32xi32> -> tensor<32x32xi32>
%oo = arith.addi %oo_rb, %oo_cb : tensor<32x32xi32>
%a_s = tile.splat %a : !tile.ptr<f16> -> tensor<32x32x!tile.ptr<f16>>
%a_p = tile.addptr %a_s, %ao : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
%a_v = tile.load %a_p : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
%b_s = tile.splat %b : !tile.ptr<f16> -> tensor<32x32x!tile.ptr<f16>>
%b_p = tile.addptr %b_s, %bo : tensor<32x32x!tile.ptr<f16>>, tensor<32x32xi32>
%b_v = tile.load %b_p : tensor<32x32x!tile.ptr<f16>> -> tensor<32x32xf16>
%zero = arith.constant 0.0 : f32
%init = tile.splat %zero : f32 -> tensor<32x32xf32>
%d = tile.dot %a_v, %b_v, %init precision "ieee" : tensor<32x32xf16>, tensor<32x32xf16> -> tensor<32x32xf32>
%o_s = tile.splat %o : !tile.ptr<f32> -> tensor<32x32x!tile.ptr<f32>>
%o_p = tile.addptr %o_s, %oo : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xi32>
tile.store %o_p, %d : tensor<32x32x!tile.ptr<f32>>, tensor<32x32xf32>
func.return
}
// LAYOUT-LABEL: func.func @f16(
// LAYOUT:         tile.dot {{.*}} -> tensor<32x32xf32, #tile.mma<version = 2, warps = [2, 2]>>
// LAYOUT:         tile.store %o_p, %d {vec = 2 : i32}
// FMA-LABEL:    func.func @f16(
// FMA:            tile.dot {{.*}} -> tensor<32x32xf32, #tile.blocked<
// CHECK-LABEL: func.func @f16(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<2560xf16, 3 : i32>
// CHECK:         simt.shared_store %[[BUF]][%{{.*}}], %a_v {vec = 4 : i32} : memref<2560xf16, 3 : i32>, vector<8xi32>, vector<8xf16>
// CHECK-NEXT:    simt.shared_store %[[BUF]][%{{.*}}], %b_v {vec = 4 : i32} : memref<2560xf16, 3 : i32>, vector<8xi32>, vector<8xf16>
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %[[C0:.*]] = vector.shuffle %init, %init [0, 1, 4, 5] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:    %[[C1:.*]] = vector.shuffle %init, %init [2, 3, 6, 7] : vector<8xf32>, vector<8xf32>
// Two k steps (K 32), in line:
// CHECK-NEXT:    %[[A:.*]] = simt.ldmatrix %[[BUF]][%{{.*}}] : memref<2560xf16, 3 : i32> -> vector<8xf16>
// CHECK-NEXT:    %[[B:.*]] = simt.ldmatrix %[[BUF]][%{{.*}}] trans : memref<2560xf16, 3 : i32> -> vector<8xf16>
// CHECK-NEXT:    %[[B0:.*]] = vector.shuffle %[[B]], %[[B]] [0, 1, 2, 3]
// CHECK-NEXT:    %[[B1:.*]] = vector.shuffle %[[B]], %[[B]] [4, 5, 6, 7]
// CHECK-NEXT:    %[[M0:.*]] = simt.mma "m16n8k16" %[[A]], %[[B0]], %[[C0]] : vector<8xf16>, vector<4xf16>, vector<4xf32>
// CHECK-NEXT:    %[[M1:.*]] = simt.mma "m16n8k16" %[[A]], %[[B1]], %[[C1]] : vector<8xf16>, vector<4xf16>, vector<4xf32>
// CHECK:         %[[A2:.*]] = simt.ldmatrix %[[BUF]][%{{.*}}] : memref<2560xf16, 3 : i32> -> vector<8xf16>
// CHECK:         %[[B2:.*]] = simt.ldmatrix %[[BUF]][%{{.*}}] trans : memref<2560xf16, 3 : i32> -> vector<8xf16>
// CHECK-NEXT:    %[[B20:.*]] = vector.shuffle %[[B2]], %[[B2]] [0, 1, 2, 3]
// CHECK-NEXT:    %[[B21:.*]] = vector.shuffle %[[B2]], %[[B2]] [4, 5, 6, 7]
// CHECK-NEXT:    %[[R0:.*]] = simt.mma "m16n8k16" %[[A2]], %[[B20]], %[[M0]] : vector<8xf16>, vector<4xf16>, vector<4xf32>
// CHECK-NEXT:    %[[R1:.*]] = simt.mma "m16n8k16" %[[A2]], %[[B21]], %[[M1]] : vector<8xf16>, vector<4xf16>, vector<4xf32>
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %[[J:.*]] = vector.shuffle %[[R0]], %[[R1]] [0, 1, 2, 3, 4, 5, 6, 7]
// CHECK-NEXT:    %d = vector.shuffle %[[J]], %[[J]] [0, 1, 4, 5, 2, 3, 6, 7] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:    simt.store %o[%oo], %d {vec = 2 : i32} : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>

func.func @i8(%a: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %b: !tile.ptr<i8> {tile.divisibility = 16 : i32}, %o: !tile.ptr<i32> {tile.divisibility = 16 : i32}, %c: !tile.ptr<i32> {tile.divisibility = 16 : i32}) {
%k = arith.constant 512 : i32
%n = arith.constant 16 : i32
%ao_r = tile.range 0, 32 : tensor<32xi32>
%ao_c = tile.range 0, 512 : tensor<512xi32>
%ao_re = tile.expand_dims %ao_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
%ao_s = tile.splat %k : i32 -> tensor<32x1xi32>
%ao_rs = arith.muli %ao_re, %ao_s : tensor<32x1xi32>
%ao_ce = tile.expand_dims %ao_c, 0 : tensor<512xi32> -> tensor<1x512xi32>
%ao_rb = tile.broadcast %ao_rs : tensor<32x1xi32> -> tensor<32x512xi32>
%ao_cb = tile.broadcast %ao_ce : tensor<1x512xi32> -> tensor<32x512xi32>
%ao = arith.addi %ao_rb, %ao_cb : tensor<32x512xi32>
%bo_r = tile.range 0, 512 : tensor<512xi32>
%bo_c = tile.range 0, 16 : tensor<16xi32>
%bo_re = tile.expand_dims %bo_r, 1 : tensor<512xi32> -> tensor<512x1xi32>
%bo_s = tile.splat %n : i32 -> tensor<512x1xi32>
%bo_rs = arith.muli %bo_re, %bo_s : tensor<512x1xi32>
%bo_ce = tile.expand_dims %bo_c, 0 : tensor<16xi32> -> tensor<1x16xi32>
%bo_rb = tile.broadcast %bo_rs : tensor<512x1xi32> -> tensor<512x16xi32>
%bo_cb = tile.broadcast %bo_ce : tensor<1x16xi32> -> tensor<512x16xi32>
%bo = arith.addi %bo_rb, %bo_cb : tensor<512x16xi32>
%oo_r = tile.range 0, 32 : tensor<32xi32>
%oo_c = tile.range 0, 16 : tensor<16xi32>
%oo_re = tile.expand_dims %oo_r, 1 : tensor<32xi32> -> tensor<32x1xi32>
%oo_s = tile.splat %n : i32 -> tensor<32x1xi32>
%oo_rs = arith.muli %oo_re, %oo_s : tensor<32x1xi32>
%oo_ce = tile.expand_dims %oo_c, 0 : tensor<16xi32> -> tensor<1x16xi32>
%oo_rb = tile.broadcast %oo_rs : tensor<32x1xi32> -> tensor<32x16xi32>
%oo_cb = tile.broadcast %oo_ce : tensor<1x16xi32> -> tensor<32x16xi32>
%oo = arith.addi %oo_rb, %oo_cb : tensor<32x16xi32>
%a_s = tile.splat %a : !tile.ptr<i8> -> tensor<32x512x!tile.ptr<i8>>
%a_p = tile.addptr %a_s, %ao : tensor<32x512x!tile.ptr<i8>>, tensor<32x512xi32>
%a_v = tile.load %a_p : tensor<32x512x!tile.ptr<i8>> -> tensor<32x512xi8>
%b_s = tile.splat %b : !tile.ptr<i8> -> tensor<512x16x!tile.ptr<i8>>
%b_p = tile.addptr %b_s, %bo : tensor<512x16x!tile.ptr<i8>>, tensor<512x16xi32>
%b_v = tile.load %b_p : tensor<512x16x!tile.ptr<i8>> -> tensor<512x16xi8>
%c_s = tile.splat %c : !tile.ptr<i32> -> tensor<32x16x!tile.ptr<i32>>
%c_p = tile.addptr %c_s, %oo : tensor<32x16x!tile.ptr<i32>>, tensor<32x16xi32>
%c_v = tile.load %c_p : tensor<32x16x!tile.ptr<i32>> -> tensor<32x16xi32>
%d = tile.dot %a_v, %b_v, %c_v precision "ieee" : tensor<32x512xi8>, tensor<512x16xi8> -> tensor<32x16xi32>
%o_s = tile.splat %o : !tile.ptr<i32> -> tensor<32x16x!tile.ptr<i32>>
%o_p = tile.addptr %o_s, %oo : tensor<32x16x!tile.ptr<i32>>, tensor<32x16xi32>
tile.store %o_p, %d : tensor<32x16x!tile.ptr<i32>>, tensor<32x16xi32>
func.return
}
// i8: B is staged N x K (rows of 512 + 16 bytes of padding) and read without trans; 16
// k steps, so a loop; one m16 x n8 tile per warp, so the loaded accumulator is the loop's
// only carried value.
// LAYOUT-LABEL: func.func @i8(
// LAYOUT:         %c_v = tile.load %c_p {vec = 2 : i32} : {{.*}} -> tensor<32x16xi32, #tile.mma<version = 2, warps = [2, 2]>>
// LAYOUT:         tile.dot {{.*}} -> tensor<32x16xi32, #tile.mma<version = 2, warps = [2, 2]>>
// CHECK-LABEL: func.func @i8(
// CHECK:         %[[BUF:.*]] = simt.shared_alloc : memref<25344xi8, 3 : i32>
// CHECK:         simt.shared_store %[[BUF]][%{{.*}}], %a_v {vec = 16 : i32} : memref<25344xi8, 3 : i32>, vector<128xi32>, vector<128xi8>
// CHECK-NEXT:    simt.shared_store %[[BUF]][%{{.*}}], %b_v : memref<25344xi8, 3 : i32>, vector<64xi32>, vector<64xi8>
// CHECK-NEXT:    simt.barrier
// CHECK:         %d = scf.for %{{.*}} = %{{.*}} to %k step %{{.*}} iter_args(%[[ACC:[0-9]+]] = %c_v) -> (vector<4xi32>) : i32 {
// CHECK:           %[[A:.*]] = simt.ldmatrix %[[BUF]][%{{.*}}] : memref<25344xi8, 3 : i32> -> vector<16xi8>
// CHECK:           %[[B:.*]] = simt.ldmatrix %[[BUF]][%{{.*}}] : memref<25344xi8, 3 : i32> -> vector<8xi8>
// CHECK-NEXT:      %[[M:.*]] = simt.mma "m16n8k32" %[[A]], %[[B]], %[[ACC]] : vector<16xi8>, vector<8xi8>, vector<4xi32>
// CHECK-NEXT:      scf.yield %[[M]] : vector<4xi32>
// CHECK-NEXT:    }
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    simt.store %o[%oo], %d {vec = 2 : i32} : !tile.ptr<i32>, vector<4xi32>, vector<4xi32>
