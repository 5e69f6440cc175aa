// assign-layouts cuts the store of a tensor-core dot's result off the dot's layout when
// the store is outside loops, of 16 or more elements a thread, and a coalesced layout
// moves more per access: the accumulator's lanes hold two neighbouring columns (8 bytes
// of f32 an access), the coalesced layout four (16 bytes). tile-to-simt moves the tile
// through shared memory between them, its rows padded by 8 words (40 apart, so the 8
// rows a warp's accumulator lanes write fall in different banks): 8-byte stores, 16-byte
// loads. Below 16 elements a thread the store keeps the dot's layout (as in
// tile_to_simt_mma_dot.mlir: 32 x 32 over 4 warps).
// RUN: %opt %s -p 'assign-layouts{num-warps=1 mma=80}' | filecheck %s --check-prefix=LAYOUT
// RUN: %opt %s -p 'assign-layouts{num-warps=1 mma=80},tile-to-simt{narrow-shared=1},canonicalize,cse' | filecheck %s

func.func @epilogue(%a: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %b: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
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
// LAYOUT-LABEL: func.func @epilogue(
// LAYOUT:         %d = tile.dot {{.*}} -> tensor<32x32xf32, #tile.mma<version = 2, warps = [1, 1]>>
// LAYOUT:         %[[E:.*]] = tile.convert_layout %d : tensor<32x32xf32, #tile.mma<version = 2, warps = [1, 1]>> -> tensor<32x32xf32, #tile.blocked<spt = [1, 4], tpw = [4, 8], wpc = [1, 1]>>
// LAYOUT-NEXT:    tile.store %o_p, %[[E]] {vec = 4 : i32}
// CHECK-LABEL: func.func @epilogue(
// CHECK:         %[[X:.*]] = simt.shared_alloc : memref<1272xi32, 3 : i32>
// CHECK:         %[[W:.*]] = arith.bitcast %d : vector<32xf32> to vector<32xi32>
// CHECK-NEXT:    simt.shared_store %[[X]][%{{.*}}], %[[W]] {vec = 2 : i32}
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %[[V:.*]] = simt.shared_load %[[X]][%{{.*}}] {vec = 4 : i32}
// CHECK-NEXT:    simt.barrier
// CHECK-NEXT:    %[[F:.*]] = arith.bitcast %[[V]] : vector<32xi32> to vector<32xf32>
// CHECK-NEXT:    simt.store %o[%{{.*}}], %[[F]] {vec = 4 : i32} : !tile.ptr<f32>, vector<32xi32>, vector<32xf32>
