// assign-layouts on 1-D tiles: one blocked layout per tile shape, and vec on every tile access
// (2-D tiles, slices and conversions: shape_layouts.mlir).
// RUN: %opt %s -p assign-layouts | filecheck %s
// RUN: %opt %s -p 'assign-layouts{num-warps=8 vector-bits=32}' | filecheck %s --check-prefix=W8

// n divisible by 16 and 16-byte aligned pointers: masked accesses are 128 bits wide.
func.func @aligned(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) {
  %pid = tile.program_id 0 : i32
  %c = arith.constant 1024 : i32
  %s = arith.muli %pid, %c : i32
  %r = tile.range 0, 1024 : tensor<1024xi32>
  %ss = tile.splat %s : i32 -> tensor<1024xi32>
  %offs = arith.addi %ss, %r : tensor<1024xi32>
  %ns = tile.splat %n : i32 -> tensor<1024xi32>
  %m = tile.cmpi "slt", %offs, %ns : tensor<1024xi32> -> tensor<1024xi1>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %offs : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %a = tile.load %xp mask %m : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %e = math.exp %a : tensor<1024xf32>
  tile.store %xp, %e mask %m : tensor<1024xi1> : tensor<1024x!tile.ptr<f32>>, tensor<1024xf32>
  func.return
}
// CHECK-LABEL: func.func @aligned(
// CHECK-SAME:    attributes {simt.num_warps = 4 : i32}
// CHECK:         %r = tile.range 0, 1024 : tensor<1024xi32, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>
// CHECK:         %m = tile.cmpi "slt", %offs, %ns {tile.uniform_runs = 4 : i32} : tensor<1024xi32, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>> -> tensor<1024xi1, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>
// CHECK:         %xs = tile.splat %x : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>
// CHECK:         %a = tile.load %xp mask %m : {{.*}} {vec = 4 : i32} :
// CHECK:         %e = math.exp %a : tensor<1024xf32, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>
// CHECK:         tile.store %xp, %e mask %m : {{.*}} {vec = 4 : i32} :
// W8-LABEL:    func.func @aligned(
// W8-SAME:       attributes {simt.num_warps = 8 : i32}
// W8:            %r = tile.range 0, 1024 : tensor<1024xi32, #tile.blocked<spt = [1], tpw = [32], wpc = [8]>>
// W8:            %a = tile.load {{.*}} {vec = 1 : i32} :

// n of unknown divisibility: the mask may flip at any element, so masked accesses are
// scalar; the unmasked load stays wide.
func.func @unaligned_n(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) {
  %r = tile.range 0, 512 : tensor<512xi32>
  %ns = tile.splat %n : i32 -> tensor<512xi32>
  %m = tile.cmpi "slt", %r, %ns : tensor<512xi32> -> tensor<512xi1>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %a = tile.load %xp mask %m : tensor<512xi1> : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  %b = tile.load %xp : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  func.return
}
// CHECK-LABEL: func.func @unaligned_n(
// CHECK:         %a = tile.load %xp mask %m : {{.*}} {vec = 1 : i32} :
// CHECK:         %b = tile.load %xp {vec = 4 : i32} : tensor<512x!tile.ptr<f32>, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>

// f16: eight elements make 128 bits (two make 32).
func.func @half(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 1024 : tensor<1024xi32>
  %xs = tile.splat %x : !tile.ptr<f16> -> tensor<1024x!tile.ptr<f16>>
  %xp = tile.addptr %xs, %r : tensor<1024x!tile.ptr<f16>>, tensor<1024xi32>
  %a = tile.load %xp : tensor<1024x!tile.ptr<f16>> -> tensor<1024xf16>
  func.return
}
// CHECK-LABEL: func.func @half(
// CHECK:         %a = tile.load %xp {vec = 8 : i32} : tensor<1024x!tile.ptr<f16>, #tile.blocked<spt = [8], tpw = [32], wpc = [4]>>
// W8-LABEL:    func.func @half(
// W8:            %a = tile.load %xp {vec = 2 : i32} : tensor<1024x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [8]>>

// A tile smaller than the program's threads: one element each, threads repeat.
func.func @small(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 64 : tensor<64xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %a = tile.load %xp : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  func.return
}
// CHECK-LABEL: func.func @small(
// CHECK:         %a = tile.load %xp {vec = 1 : i32} : tensor<64x!tile.ptr<f32>, #tile.blocked<spt = [1], tpw = [32], wpc = [4]>>

// 2-D: the last dim is fastest (4 per thread, 16 threads), warps go down dim 0.
func.func @two_d(%v: f32, %c: i32) {
  %f = tile.splat %v : f32 -> tensor<64x64xf32>
  %k = arith.constant dense<2.0> : tensor<64x64xf32>
  %g = arith.mulf %f, %k : tensor<64x64xf32>
  func.return
}
// CHECK-LABEL: func.func @two_d(
// CHECK:         %k = arith.constant dense<2.000000e+00> : tensor<64x64xf32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>
// CHECK:         %g = arith.mulf %f, %k : tensor<64x64xf32, #tile.blocked<spt = [1, 4], tpw = [2, 16], wpc = [4, 1]>>

// A scan crosses the lanes once per run of a thread's elements, so a scan where a thread
// would hold many runs keeps runs of 128 bits even where the target's accesses are
// narrower (with 32-bit accesses at 8 warps: four f32 a run for 8192 elements, 32 runs of
// one; one f32 a run for 1024, only 4 runs of one). The unscanned tile keeps its layout.
func.func @scan_runs(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}) {
  %r = tile.range 0, 8192 : tensor<8192xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<8192x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %r : tensor<8192x!tile.ptr<f32>>, tensor<8192xi32>
  %a = tile.load %xp : tensor<8192x!tile.ptr<f32>> -> tensor<8192xf32>
  %s = tile.scan %a axis 0 : tensor<8192xf32> -> tensor<8192xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %c = arith.addf %e0, %e1 : f32
    tile.yield %c : f32
  }
  tile.store %xp, %s : tensor<8192x!tile.ptr<f32>>, tensor<8192xf32>
  %k = tile.range 0, 1024 : tensor<1024xi32>
  %ys = tile.splat %y : !tile.ptr<f32> -> tensor<1024x!tile.ptr<f32>>
  %yp = tile.addptr %ys, %k : tensor<1024x!tile.ptr<f32>>, tensor<1024xi32>
  %b = tile.load %yp : tensor<1024x!tile.ptr<f32>> -> tensor<1024xf32>
  %t = tile.scan %b axis 0 : tensor<1024xf32> -> tensor<1024xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %c = arith.addf %e0, %e1 : f32
    tile.yield %c : f32
  }
  %w = tile.range 0, 512 : tensor<512xi32>
  %ws = tile.splat %y : !tile.ptr<f32> -> tensor<512x!tile.ptr<f32>>
  %wp = tile.addptr %ws, %w : tensor<512x!tile.ptr<f32>>, tensor<512xi32>
  %u = tile.load %wp : tensor<512x!tile.ptr<f32>> -> tensor<512xf32>
  func.return
}
// CHECK-LABEL: func.func @scan_runs(
// CHECK:         %a = tile.load %xp {vec = 4 : i32} : tensor<8192x!tile.ptr<f32>, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>
// CHECK:         %b = tile.load %yp {vec = 4 : i32} : tensor<1024x!tile.ptr<f32>, #tile.blocked<spt = [4], tpw = [32], wpc = [4]>>
// W8-LABEL:    func.func @scan_runs(
// W8:            %a = tile.load %xp {vec = 1 : i32} : tensor<8192x!tile.ptr<f32>, #tile.blocked<spt = [4], tpw = [32], wpc = [8]>>
// W8:            %s = tile.scan %a axis 0 : tensor<8192xf32, #tile.blocked<spt = [4], tpw = [32], wpc = [8]>>
// W8:            %b = tile.load %yp {vec = 1 : i32} : tensor<1024x!tile.ptr<f32>, #tile.blocked<spt = [1], tpw = [32], wpc = [8]>>
// W8:            %t = tile.scan %b axis 0 : tensor<1024xf32, #tile.blocked<spt = [1], tpw = [32], wpc = [8]>>
// W8:            %u = tile.load %wp {vec = 1 : i32} : tensor<512x!tile.ptr<f32>, #tile.blocked<spt = [1], tpw = [32], wpc = [8]>>

// A scan along dim 0 of a 2-D tile: the layout's runs lie along the last dim, so the
// layout stays the default one (at 8 warps, 32-bit accesses: one element a run).
func.func @scan_columns(%v: f32) {
  %x = tile.splat %v : f32 -> tensor<64x128xf32>
  %s = tile.scan %x axis 0 : tensor<64x128xf32> -> tensor<64x128xf32> {
  ^bb0(%e0: f32, %e1: f32):
    %c = arith.addf %e0, %e1 : f32
    tile.yield %c : f32
  }
  func.return
}
// W8-LABEL:    func.func @scan_columns(
// W8:            %s = tile.scan %x axis 0 : tensor<64x128xf32, #tile.blocked<spt = [1, 1], tpw = [1, 32], wpc = [8, 1]>>
