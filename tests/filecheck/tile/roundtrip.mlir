// Every tile op and type printed, re-parsed and printed again, in custom and generic form.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @ids() -> (i32, i32, i32, i32) {
  %p0 = tile.program_id 0 : i32
  %p1 = tile.program_id 1 : i32
  %p2 = tile.program_id 2 : i32
  %n0 = tile.num_programs 2 : i32
  func.return %p0, %p1, %p2, %n0 : i32, i32, i32, i32
}
// CHECK-LABEL: func.func @ids() -> (i32, i32, i32, i32) {
// CHECK-NEXT:    %p0 = tile.program_id 0 : i32
// CHECK-NEXT:    %p1 = tile.program_id 1 : i32
// CHECK-NEXT:    %p2 = tile.program_id 2 : i32
// CHECK-NEXT:    %n0 = tile.num_programs 2 : i32
// CHECK-NEXT:    func.return %p0, %p1, %p2, %n0 : i32, i32, i32, i32
// GENERIC:       "tile.program_id"() <{axis = 1 : i32}> : () -> i32
// GENERIC:       "tile.num_programs"() <{axis = 2 : i32}> : () -> i32

func.func @ranges_splats(%a: i32, %b: f16, %p: !tile.ptr<i8>) {
  %r = tile.range 0, 128 : tensor<128xi32>
  %r2 = tile.range 16, 48 : tensor<32xi32>
  %s = tile.splat %a : i32 -> tensor<128xi32>
  %h = tile.splat %b : f16 -> tensor<4x8xf16>
  %ps = tile.splat %p : !tile.ptr<i8> -> tensor<64x!tile.ptr<i8>>
  func.return
}
// CHECK-LABEL: func.func @ranges_splats(%a: i32, %b: f16, %p: !tile.ptr<i8>) {
// CHECK-NEXT:    %r = tile.range 0, 128 : tensor<128xi32>
// CHECK-NEXT:    %r2 = tile.range 16, 48 : tensor<32xi32>
// CHECK-NEXT:    %s = tile.splat %a : i32 -> tensor<128xi32>
// CHECK-NEXT:    %h = tile.splat %b : f16 -> tensor<4x8xf16>
// CHECK-NEXT:    %ps = tile.splat %p : !tile.ptr<i8> -> tensor<64x!tile.ptr<i8>>
// CHECK-NEXT:    func.return
// GENERIC:       "tile.range"() <{start = 16 : i32, end = 48 : i32}> : () -> tensor<32xi32>

func.func @memory(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<i64>, %n: i32) {
  %pid = tile.program_id 0 : i32
  %xp = tile.addptr %x, %pid : !tile.ptr<f32>, i32
  %v = tile.load %xp : !tile.ptr<f32> -> f32
  tile.store %xp, %v : !tile.ptr<f32>, f32
  %r = tile.range 0, 64 : tensor<64xi32>
  %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
  %xt = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %xu = tile.addptr %xt, %n : tensor<64x!tile.ptr<f32>>, i32
  %ns = tile.splat %n : i32 -> tensor<64xi32>
  %m = tile.cmpi "slt", %r, %ns : tensor<64xi32> -> tensor<64xi1>
  %zero = arith.constant 0.0 : f32
  %zs = tile.splat %zero : f32 -> tensor<64xf32>
  %a = tile.load %xu : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %b = tile.load %xu mask %m : tensor<64xi1> : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  %c = tile.load %xu mask %m : tensor<64xi1> other %zs {vec = 4 : i32} : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
  tile.store %xt, %a : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  tile.store %xt, %b mask %m : tensor<64xi1> {vec = 2 : i32} : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
  %k = arith.constant 7 : i64
  %ks = tile.splat %k : i64 -> tensor<64xi64>
  %ys = tile.splat %y : !tile.ptr<i64> -> tensor<64x!tile.ptr<i64>>
  %yp = tile.addptr %ys, %ks : tensor<64x!tile.ptr<i64>>, tensor<64xi64>
  tile.store %yp, %ks mask %m : tensor<64xi1> : tensor<64x!tile.ptr<i64>>, tensor<64xi64>
  func.return
}
// CHECK-LABEL: func.func @memory(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<i64>, %n: i32) {
// CHECK-NEXT:    %pid = tile.program_id 0 : i32
// CHECK-NEXT:    %xp = tile.addptr %x, %pid : !tile.ptr<f32>, i32
// CHECK-NEXT:    %v = tile.load %xp : !tile.ptr<f32> -> f32
// CHECK-NEXT:    tile.store %xp, %v : !tile.ptr<f32>, f32
// CHECK-NEXT:    %r = tile.range 0, 64 : tensor<64xi32>
// CHECK-NEXT:    %xs = tile.splat %x : !tile.ptr<f32> -> tensor<64x!tile.ptr<f32>>
// CHECK-NEXT:    %xt = tile.addptr %xs, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
// CHECK-NEXT:    %xu = tile.addptr %xt, %n : tensor<64x!tile.ptr<f32>>, i32
// CHECK-NEXT:    %ns = tile.splat %n : i32 -> tensor<64xi32>
// CHECK-NEXT:    %m = tile.cmpi "slt", %r, %ns : tensor<64xi32> -> tensor<64xi1>
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %zs = tile.splat %zero : f32 -> tensor<64xf32>
// CHECK-NEXT:    %a = tile.load %xu : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
// CHECK-NEXT:    %b = tile.load %xu mask %m : tensor<64xi1> : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
// CHECK-NEXT:    %c = tile.load %xu mask %m : tensor<64xi1> other %zs {vec = 4 : i32} : tensor<64x!tile.ptr<f32>> -> tensor<64xf32>
// CHECK-NEXT:    tile.store %xt, %a : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
// CHECK-NEXT:    tile.store %xt, %b mask %m : tensor<64xi1> {vec = 2 : i32} : tensor<64x!tile.ptr<f32>>, tensor<64xf32>
// CHECK-NEXT:    %k = arith.constant 7 : i64
// CHECK-NEXT:    %ks = tile.splat %k : i64 -> tensor<64xi64>
// CHECK-NEXT:    %ys = tile.splat %y : !tile.ptr<i64> -> tensor<64x!tile.ptr<i64>>
// CHECK-NEXT:    %yp = tile.addptr %ys, %ks : tensor<64x!tile.ptr<i64>>, tensor<64xi64>
// CHECK-NEXT:    tile.store %yp, %ks mask %m : tensor<64xi1> : tensor<64x!tile.ptr<i64>>, tensor<64xi64>
// CHECK-NEXT:    func.return
// GENERIC:       "tile.load"(%xu, %m, %zs) <{vec = 4 : i32, operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC:       "tile.store"(%xt, %b, %m) <{vec = 2 : i32, operandSegmentSizes = array<i32: 1, 1, 1>}>

func.func @compare_select(%a: tensor<32xf32>, %b: tensor<32xf32>, %i: i32, %j: i32, %f: f32) -> tensor<32xf32> {
  %lt = tile.cmpf "olt", %a, %b : tensor<32xf32> -> tensor<32xi1>
  %un = tile.cmpf "uno", %f, %f : f32 -> i1
  %ge = tile.cmpi "uge", %i, %j : i32 -> i1
  %mx = tile.select %lt, %b, %a : tensor<32xi1>, tensor<32xf32>
  %s = tile.select %ge, %i, %j : i1, i32
  func.return %mx : tensor<32xf32>
}
// CHECK-LABEL: func.func @compare_select(%a: tensor<32xf32>, %b: tensor<32xf32>, %i: i32, %j: i32, %f: f32) -> tensor<32xf32> {
// CHECK-NEXT:    %lt = tile.cmpf "olt", %a, %b : tensor<32xf32> -> tensor<32xi1>
// CHECK-NEXT:    %un = tile.cmpf "uno", %f, %f : f32 -> i1
// CHECK-NEXT:    %ge = tile.cmpi "uge", %i, %j : i32 -> i1
// CHECK-NEXT:    %mx = tile.select %lt, %b, %a : tensor<32xi1>, tensor<32xf32>
// CHECK-NEXT:    %s = tile.select %ge, %i, %j : i1, i32
// CHECK-NEXT:    func.return %mx : tensor<32xf32>
// GENERIC:       "tile.cmpf"(%a, %b) <{predicate = "olt"}> : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xi1>
// GENERIC:       "tile.select"(%lt, %b, %a) : (tensor<32xi1>, tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>

func.func @umulhi(%a: tensor<32xi32>, %i: i32, %l: i64) -> tensor<32xi32> {
  %h = tile.umulhi %a, %a : tensor<32xi32>
  %s = tile.umulhi %i, %i : i32
  %w = tile.umulhi %l, %l : i64
  func.return %h : tensor<32xi32>
}
// CHECK-LABEL: func.func @umulhi(%a: tensor<32xi32>, %i: i32, %l: i64) -> tensor<32xi32> {
// CHECK-NEXT:    %h = tile.umulhi %a, %a : tensor<32xi32>
// CHECK-NEXT:    %s = tile.umulhi %i, %i : i32
// CHECK-NEXT:    %w = tile.umulhi %l, %l : i64
// CHECK-NEXT:    func.return %h : tensor<32xi32>
// GENERIC:       "tile.umulhi"(%a, %a) : (tensor<32xi32>, tensor<32xi32>) -> tensor<32xi32>

func.func @libm(%a: tensor<32xf32>, %n: tensor<32xi32>, %d: f64, %i: i64) -> tensor<32xf32> {
  %g = tile.libm "lgamma"(%a) : (tensor<32xf32>) -> tensor<32xf32>
  %h = tile.libm "hypot"(%a, %g) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %l = tile.libm "ldexp"(%a, %n) : (tensor<32xf32>, tensor<32xi32>) -> tensor<32xf32>
  %e = tile.libm "exp10"(%d) : (f64) -> f64
  %b = tile.brev %i : i64
  %f = tile.arith_fence %h : tensor<32xf32>
  func.return %f : tensor<32xf32>
}
// CHECK-LABEL: func.func @libm(%a: tensor<32xf32>, %n: tensor<32xi32>, %d: f64, %i: i64) -> tensor<32xf32> {
// CHECK-NEXT:    %g = tile.libm "lgamma"(%a) : (tensor<32xf32>) -> tensor<32xf32>
// CHECK-NEXT:    %h = tile.libm "hypot"(%a, %g) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
// CHECK-NEXT:    %l = tile.libm "ldexp"(%a, %n) : (tensor<32xf32>, tensor<32xi32>) -> tensor<32xf32>
// CHECK-NEXT:    %e = tile.libm "exp10"(%d) : (f64) -> f64
// CHECK-NEXT:    %b = tile.brev %i : i64
// CHECK-NEXT:    %f = tile.arith_fence %h : tensor<32xf32>
// CHECK-NEXT:    func.return %f : tensor<32xf32>
// GENERIC:       "tile.libm"(%a, %n) <{fn = "ldexp"}> : (tensor<32xf32>, tensor<32xi32>) -> tensor<32xf32>
// GENERIC:       "tile.brev"(%i) : (i64) -> i64
// GENERIC:       "tile.arith_fence"(%h) : (tensor<32xf32>) -> tensor<32xf32>

func.func @layouts(%x: !tile.ptr<f16>) {
  %r = tile.range 0, 256 : tensor<256xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
  %xs = tile.splat %x : !tile.ptr<f16> -> tensor<256x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
  %xp = tile.addptr %xs, %r : tensor<256x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>, tensor<256xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
  %v = tile.load %xp {vec = 2 : i32} : tensor<256x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>> -> tensor<256xf16, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
  %c = arith.constant 1.0 : f32
  %t = tile.splat %c : f32 -> tensor<16x64xf32, #tile.blocked<spt = [1, 4], tpw = [4, 8], wpc = [4, 1]>>
  func.return
}
// CHECK-LABEL: func.func @layouts(%x: !tile.ptr<f16>) {
// CHECK-NEXT:    %r = tile.range 0, 256 : tensor<256xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
// CHECK-NEXT:    %xs = tile.splat %x : !tile.ptr<f16> -> tensor<256x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
// CHECK-NEXT:    %xp = tile.addptr %xs, %r : tensor<256x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>, tensor<256xi32, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
// CHECK-NEXT:    %v = tile.load %xp {vec = 2 : i32} : tensor<256x!tile.ptr<f16>, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>> -> tensor<256xf16, #tile.blocked<spt = [2], tpw = [32], wpc = [4]>>
// CHECK-NEXT:    %c = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %t = tile.splat %c : f32 -> tensor<16x64xf32, #tile.blocked<spt = [1, 4], tpw = [4, 8], wpc = [4, 1]>>
// CHECK-NEXT:    func.return
