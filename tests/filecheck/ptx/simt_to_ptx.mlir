// simt-to-ptx: SIMT IR -> ptx dialect, one ptx op per SIMT op (lanes stay vectors).
// RUN: %opt %s -p simt-to-ptx | filecheck %s

func.func @add(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32) attributes {simt.num_warps = 4 : i32} {
  %pid = tile.program_id 0 : i32
  %tid = simt.thread_id : i32
  %tb = vector.broadcast %tid : i32 to vector<8xi32>
  %lanes = arith.constant dense<[0, 1, 2, 3, 512, 513, 514, 515]> : vector<8xi32>
  %offs = arith.addi %tb, %lanes : vector<8xi32>
  %nb = vector.broadcast %n : i32 to vector<8xi32>
  %m = tile.cmpi "slt", %offs, %nb : vector<8xi32> -> vector<8xi1>
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %a = simt.load %x[%offs] mask %m : vector<8xi1> other %zero {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32> -> vector<8xf32>
  %e = math.exp %a : vector<8xf32>
  simt.store %o[%offs], %e mask %m : vector<8xi1> {vec = 4 : i32} : !tile.ptr<f32>, vector<8xi32>, vector<8xf32>
  func.return
}
// CHECK-LABEL: func.func @add(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>, %n: i32)
// CHECK-SAME:    attributes {ptx.maxntid = 128 : i32}
// CHECK-NEXT:    %[[XP:.*]] = ptx.ld_param %x : !tile.ptr<f32> -> i64
// CHECK-NEXT:    %[[X:.*]] = ptx.inst "cvta.to.global.u64" %[[XP]] : (i64) -> i64
// CHECK:         %[[N:.*]] = ptx.ld_param %n : i32 -> i32
// CHECK-NEXT:    %{{.*}} = ptx.sreg "%ctaid.x" : i32
// CHECK-NEXT:    %[[TID:.*]] = ptx.sreg "%tid.x" : i32
// CHECK-NEXT:    %[[TB:.*]] = ptx.lanes %[[TID]] [0, 0, 0, 0, 0, 0, 0, 0] : i32 -> vector<8xi32>
// CHECK-NEXT:    %[[L:.*]] = ptx.mov_imm dense<[0, 1, 2, 3, 512, 513, 514, 515]> : vector<8xi32>
// CHECK-NEXT:    %[[OFFS:.*]] = ptx.inst "add.s32" %[[TB]], %[[L]] : (vector<8xi32>, vector<8xi32>) -> vector<8xi32>
// CHECK:         %[[M:.*]] = ptx.inst "setp.lt.s32" %[[OFFS]], %{{.*}} : (vector<8xi32>, vector<8xi32>) -> vector<8xi1>
// CHECK-NEXT:    %[[Z:.*]] = ptx.mov_imm 0.000000e+00 : f32
// CHECK-NEXT:    %[[ZV:.*]] = ptx.lanes %[[Z]] [0, 0, 0, 0, 0, 0, 0, 0] : f32 -> vector<8xf32>
// CHECK-NEXT:    %[[I:.*]] = ptx.lanes %[[OFFS]] [0, 4] : vector<8xi32> -> vector<2xi32>
// CHECK-NEXT:    %[[SZ:.*]] = ptx.mov_imm 4 : i32
// CHECK-NEXT:    %[[OFF:.*]] = ptx.inst "mul.wide.s32" %[[I]], %[[SZ]] : (vector<2xi32>, i32) -> vector<2xi64>
// CHECK-NEXT:    %[[ADDR:.*]] = ptx.inst "add.s64" %[[X]], %[[OFF]] : (i64, vector<2xi64>) -> vector<2xi64>
// CHECK-NEXT:    %[[G:.*]] = ptx.lanes %[[M]] [0, 4] : vector<8xi1> -> vector<2xi1>
// CHECK-NEXT:    %[[A:.*]] = ptx.ld_global %[[ADDR]] if %[[G]] : vector<2xi1> other %[[ZV]] {vec = 4 : i32} : vector<2xi64> -> vector<8xf32>
// CHECK-NEXT:    %[[LOG2E:.*]] = ptx.mov_imm 1.44269502 : f32
// CHECK-NEXT:    %[[T:.*]] = ptx.inst "mul.f32" %[[A]], %[[LOG2E]] : (vector<8xf32>, f32) -> vector<8xf32>
// CHECK-NEXT:    %[[E:.*]] = ptx.inst "ex2.approx.ftz.f32" %[[T]] : (vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    %[[OADDR:.*]] = ptx.inst "add.s64" %{{.*}}, %[[OFF]] : (i64, vector<2xi64>) -> vector<2xi64>
// CHECK-NEXT:    ptx.st_global %[[OADDR]], %[[E]] if %[[G]] : vector<2xi1> {vec = 4 : i32} : vector<2xi64>, vector<8xf32>
// CHECK-NEXT:    func.return

// 64-bit elements: at most 128 bits per access, so vec = 4 becomes two .v2 accesses.
func.func @wide(%x: !tile.ptr<f64>, %i: vector<4xi32>) attributes {simt.num_warps = 1 : i32} {
  %v = simt.load %x[%i] {vec = 4 : i32} : !tile.ptr<f64>, vector<4xi32> -> vector<4xf64>
  simt.store %x[%i], %v {vec = 4 : i32} : !tile.ptr<f64>, vector<4xi32>, vector<4xf64>
  func.return
}
// CHECK-LABEL: func.func @wide(
// CHECK:         ptx.lanes %{{.*}} [0, 2] : vector<4xi32> -> vector<2xi32>
// CHECK:         ptx.mov_imm 8 : i32
// CHECK:         ptx.ld_global %{{.*}} {vec = 2 : i32} : vector<2xi64> -> vector<4xf64>
// CHECK:         ptx.st_global %{{.*}}, %{{.*}} {vec = 2 : i32} : vector<2xi64>, vector<4xf64>

// f16 division runs in f32 (one f32 rounding, then one to f16: NumPy's result).
func.func @half(%a: vector<2xf16>, %b: vector<2xf16>, %o: !tile.ptr<f16>, %i: vector<2xi32>) attributes {simt.num_warps = 1 : i32} {
  %q = arith.divf %a, %b : vector<2xf16>
  %s = arith.addf %q, %b : vector<2xf16>
  simt.store %o[%i], %s : !tile.ptr<f16>, vector<2xi32>, vector<2xf16>
  func.return
}
// CHECK-LABEL: func.func @half(
// CHECK:         %[[A:.*]] = ptx.inst "cvt.f32.f16" %{{.*}} : (vector<2xf16>) -> vector<2xf32>
// CHECK-NEXT:    %[[B:.*]] = ptx.inst "cvt.f32.f16" %{{.*}} : (vector<2xf16>) -> vector<2xf32>
// CHECK-NEXT:    %[[Q:.*]] = ptx.inst "div.rn.f32" %[[A]], %[[B]] : (vector<2xf32>, vector<2xf32>) -> vector<2xf32>
// CHECK-NEXT:    %[[H:.*]] = ptx.inst "cvt.rn.f16.f32" %[[Q]] : (vector<2xf32>) -> vector<2xf16>
// CHECK-NEXT:    ptx.inst "add.rn.f16" %[[H]], %{{.*}} : (vector<2xf16>, vector<2xf16>) -> vector<2xf16>

// Bools are predicates in registers and bytes in memory.
func.func @bools(%x: !tile.ptr<i1>, %i: i32, %f: i1) attributes {simt.num_warps = 1 : i32} {
  %b = simt.load %x[%i] : !tile.ptr<i1>, i32 -> i1
  %c = arith.xori %b, %f : i1
  simt.store %x[%i], %c : !tile.ptr<i1>, i32, i1
  func.return
}
// CHECK-LABEL: func.func @bools(
// CHECK:         %[[FB:.*]] = ptx.ld_param %f : i1 -> i8
// CHECK-NEXT:    %[[ZERO:.*]] = ptx.mov_imm 0 : i8
// CHECK-NEXT:    %[[F:.*]] = ptx.inst "setp.ne.u16" %[[FB]], %[[ZERO]] : (i8, i8) -> i1
// CHECK:         %[[RAW:.*]] = ptx.ld_global %{{.*}} {vec = 1 : i32} : i64 -> i8
// CHECK-NEXT:    %[[B:.*]] = ptx.inst "setp.ne.u16" %[[RAW]], %[[ZERO]] : (i8, i8) -> i1
// CHECK-NEXT:    %[[C:.*]] = ptx.inst "xor.pred" %[[B]], %[[F]] : (i1, i1) -> i1
// CHECK:         %[[BYTE:.*]] = ptx.inst "selp.b16" %{{.*}}, %[[ZERO]], %[[C]] : (i8, i8, i1) -> i8
// CHECK:         ptx.st_global %{{.*}}, %[[BYTE]] {vec = 1 : i32} : i64, i8

// A truncf toward zero (fp_downcast_rounding="rtz") is cvt.rz, to bf16 too (through f32
// from f64: truncating twice truncates once); the default rounds to nearest even.
func.func @narrow(%a: vector<2xf32>, %d: f64) attributes {simt.num_warps = 1 : i32} {
  %z = arith.truncf %a "toward_zero" : vector<2xf32> to vector<2xf16>
  %n = arith.truncf %a : vector<2xf32> to vector<2xf16>
  %b = arith.truncf %d "toward_zero" : f64 to bf16
  func.return
}
// CHECK-LABEL: func.func @narrow
// CHECK:         ptx.inst "cvt.rz.f16.f32" %{{.*}} : (vector<2xf32>) -> vector<2xf16>
// CHECK:         ptx.inst "cvt.rn.f16.f32" %{{.*}} : (vector<2xf32>) -> vector<2xf16>
// CHECK:         %[[F:.*]] = ptx.inst "cvt.rz.f32.f64" %{{.*}} : (f64) -> f32
// CHECK-NEXT:    ptx.inst "cvt.rz.bf16.f32" %[[F]] : (f32) -> bf16
