// Every ptx op printed, re-parsed and printed again, in custom and generic form.
// RUN: %opt %s | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | %opt | filecheck %s
// RUN: %opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

func.func @k(%x: !tile.ptr<f32>, %n: i32, %h: f16, %b: i1) attributes {ptx.maxntid = 128 : i32} {
  %p = ptx.ld_param %x : !tile.ptr<f32> -> i64
  %n1 = ptx.ld_param %n : i32 -> i32
  %h1 = ptx.ld_param %h : f16 -> f16
  %b1 = ptx.ld_param %b : i1 -> i8
  %g = ptx.inst "cvta.to.global.u64" %p : (i64) -> i64
  %t = ptx.sreg "%tid.x" : i32
  %c = ptx.sreg "%nctaid.z" : i32
  %l = ptx.mov_imm dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
  %one = ptx.mov_imm 1.000000e+00 : f32
  %yes = ptx.mov_imm true
  %i = ptx.inst "add.s32" %t, %l : (i32, vector<8xi32>) -> vector<8xi32>
  %m = ptx.inst "setp.lt.s32" %i, %n1 : (vector<8xi32>, i32) -> vector<8xi1>
  %i2 = ptx.lanes %i [0, 4] : vector<8xi32> -> vector<2xi32>
  %m2 = ptx.lanes %m [0, 4] : vector<8xi1> -> vector<2xi1>
  %four = ptx.mov_imm 4 : i32
  %off = ptx.inst "mul.wide.s32" %i2, %four : (vector<2xi32>, i32) -> vector<2xi64>
  %a = ptx.inst "add.s64" %g, %off : (i64, vector<2xi64>) -> vector<2xi64>
  %o = ptx.lanes %one [0, 0, 0, 0, 0, 0, 0, 0] : f32 -> vector<8xf32>
  %v = ptx.ld_global %a if %m2 : vector<2xi1> other %o {vec = 4 : i32} : vector<2xi64> -> vector<8xf32>
  %w = ptx.ld_global %g : i64 -> f32
  ptx.st_global %a, %v if %m2 : vector<2xi1> {vec = 4 : i32} : vector<2xi64>, vector<8xf32>
  ptx.st_global %g, %w : i64, f32
  func.return
}
// CHECK-LABEL: func.func @k(
// CHECK-SAME:    attributes {ptx.maxntid = 128 : i32}
// CHECK-NEXT:    %p = ptx.ld_param %x : !tile.ptr<f32> -> i64
// CHECK-NEXT:    %n1 = ptx.ld_param %n : i32 -> i32
// CHECK-NEXT:    %h1 = ptx.ld_param %h : f16 -> f16
// CHECK-NEXT:    %b1 = ptx.ld_param %b : i1 -> i8
// CHECK-NEXT:    %g = ptx.inst "cvta.to.global.u64" %p : (i64) -> i64
// CHECK-NEXT:    %t = ptx.sreg "%tid.x" : i32
// CHECK-NEXT:    %c = ptx.sreg "%nctaid.z" : i32
// CHECK-NEXT:    %l = ptx.mov_imm dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
// CHECK-NEXT:    %one = ptx.mov_imm 1.000000e+00 : f32
// CHECK-NEXT:    %yes = ptx.mov_imm true
// CHECK-NEXT:    %i = ptx.inst "add.s32" %t, %l : (i32, vector<8xi32>) -> vector<8xi32>
// CHECK-NEXT:    %m = ptx.inst "setp.lt.s32" %i, %n1 : (vector<8xi32>, i32) -> vector<8xi1>
// CHECK-NEXT:    %i2 = ptx.lanes %i [0, 4] : vector<8xi32> -> vector<2xi32>
// CHECK-NEXT:    %m2 = ptx.lanes %m [0, 4] : vector<8xi1> -> vector<2xi1>
// CHECK-NEXT:    %four = ptx.mov_imm 4 : i32
// CHECK-NEXT:    %off = ptx.inst "mul.wide.s32" %i2, %four : (vector<2xi32>, i32) -> vector<2xi64>
// CHECK-NEXT:    %a = ptx.inst "add.s64" %g, %off : (i64, vector<2xi64>) -> vector<2xi64>
// CHECK-NEXT:    %o = ptx.lanes %one [0, 0, 0, 0, 0, 0, 0, 0] : f32 -> vector<8xf32>
// CHECK-NEXT:    %v = ptx.ld_global %a if %m2 : vector<2xi1> other %o {vec = 4 : i32} : vector<2xi64> -> vector<8xf32>
// CHECK-NEXT:    %w = ptx.ld_global %g : i64 -> f32
// CHECK-NEXT:    ptx.st_global %a, %v if %m2 : vector<2xi1> {vec = 4 : i32} : vector<2xi64>, vector<8xf32>
// CHECK-NEXT:    ptx.st_global %g, %w : i64, f32
// CHECK-NEXT:    func.return
// GENERIC:       "ptx.inst"(%{{.*}}) <{opcode = "cvta.to.global.u64"}> : (i64) -> i64
// GENERIC:       "ptx.sreg"() <{reg = "%tid.x"}> : () -> i32
// GENERIC:       "ptx.lanes"(%{{.*}}) <{indices = array<i64: 0, 4>}> : (vector<8xi32>) -> vector<2xi32>
// GENERIC:       "ptx.ld_global"(%{{.*}}, %{{.*}}, %{{.*}}) <{vec = 4 : i32, operandSegmentSizes = array<i32: 1, 1, 1>}>
